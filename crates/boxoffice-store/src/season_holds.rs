//! Season holds: one seat basket held in every event a season covers at once, all or
//! nothing, by the same rules as an event's hold. In each event the season's seats are
//! ordinary holds of the buyer, under a token of that event's own (the server derives
//! them from the season hold's token with a key of its own, so no event route ever
//! reaches one of them: a season hold is read, extended and released whole, through the
//! season). Each hold store implements [`SeasonHolds`]: the postgres store claims every
//! event in one statement, the redis store marks the seats in each event and then holds
//! them (`redis::holds::season`).

use async_trait::async_trait;
use boxoffice_core::hold::HoldPass;
use boxoffice_core::ids::{EventId, SeasonId, UserId};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StoreError;

/// One event a season hold covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeasonEventHold {
    /// The event.
    pub event: EventId,
    /// The season hold's token in that event.
    pub token: Uuid,
    /// The event's limit of live held seats per buyer.
    pub max_seats_per_user: u32,
    /// The buyer's waiting-room pass of the event, where its waiting room is on: kept with
    /// the seats as an event's hold keeps it (its checkout ends the pass, and nothing is
    /// held under a pass that has ended).
    pub pass: Option<HoldPass>,
}

/// A season hold to claim.
#[derive(Clone, Copy, Debug)]
pub struct SeasonHoldRequest<'a> {
    /// The season, whose allocations and prices the seats are held at.
    pub season: SeasonId,
    /// The partial season asked for, whose prices apply where it sets one.
    pub partial: Option<&'a str>,
    /// The buyer.
    pub user: &'a UserId,
    /// Every event covered, each with its token.
    pub events: &'a [SeasonEventHold],
    /// Seat ids, sorted and distinct.
    pub seats: &'a [String],
    /// Lifetime of the hold in every event.
    pub ttl_seconds: u32,
    /// The buyer's hold rate, as [`crate::hold_store::HoldRequest::holds_per_minute`]: a
    /// season hold counts as a hold in each event it covers.
    pub holds_per_minute: u32,
}

/// One seat held in one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeasonSeatHeld {
    /// The event.
    pub event: EventId,
    /// The seat.
    pub seat_id: String,
    /// The season's ticket type of the seat.
    pub ticket_type: String,
    /// The season's (or the partial's) price of the seat, for the whole series.
    pub price_cents: i64,
    /// When the hold was made.
    pub created_at: DateTime<Utc>,
    /// When it lapses.
    pub expires_at: DateTime<Utc>,
}

/// What a season claim did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeasonAcquire {
    /// Every seat in every event, in (event, seat) order.
    Held(Vec<SeasonSeatHeld>),
    /// Nothing: these events have started.
    Started(Vec<EventId>),
    /// Nothing: the buyer's live held seats in these events would pass their limit.
    LimitExceeded(Vec<EventId>),
    /// Nothing: the buyer's waiting-room passes of these events have ended.
    PassEnded(Vec<EventId>),
    /// Nothing: these seats are not to be had in these events (not the season's, or
    /// taken there).
    Unavailable(Vec<(EventId, String)>),
    /// Nothing: the buyer asks for holds faster than the rate allows in one of the events
    /// (counted by a store that limits the hold rate itself); the next ask is allowed
    /// after this long.
    RateLimited(std::time::Duration),
}

/// What releasing a season hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeasonRelease {
    /// These seats were freed, per event.
    Released(Vec<(EventId, Vec<String>)>),
    /// No live seat of the hold was left to free.
    NotLive,
    /// The hold is another buyer's; nothing was freed.
    Forbidden,
}

/// A store that holds seats across a season's events at once.
#[async_trait]
pub trait SeasonHolds: Send + Sync {
    /// Holds every seat of `request` in every event of it, or nothing anywhere.
    async fn acquire_season(
        &self,
        request: &SeasonHoldRequest<'_>,
    ) -> Result<SeasonAcquire, StoreError>;

    /// The live seats of the season hold whose tokens in its events are `events`, whoever
    /// holds them, with the buyer.
    async fn season_hold(
        &self,
        events: &[(EventId, Uuid)],
    ) -> Result<Vec<(UserId, SeasonSeatHeld)>, StoreError>;

    /// Frees the seats the season hold still owns in every event, if it is `user`'s
    /// (compare-and-delete in each), in one transaction.
    async fn release_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonRelease, StoreError>;

    /// Extends the season hold in every event at once, if it is `user`'s: to now +
    /// `ttl_seconds`, never past its creation + `max_hold_seconds`, nor shorter than it was.
    async fn extend_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<SeasonExtend, StoreError>;

    /// Makes the live seats of `user`'s season hold (whose tokens in its events are among
    /// `events`) the season order's, in every event it holds them in or none, and begins
    /// the order's transaction on `pool` (see [`crate::sales::SaleSeats::take_for_order`]).
    async fn take_for_season_order(
        &self,
        pool: &PgPool,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonTaken, StoreError>;

    /// The season order of `seats` (taken by [`SeasonHolds::take_for_season_order`] under
    /// `events`) committed: the seats are sold in every event. A store whose holds are rows
    /// of the order's transaction has nothing left to do; a failure here is logged, as an
    /// event order's (see [`crate::sales::SaleSeats::ordered`]).
    async fn season_sold(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        seats: &[SeasonSeatHeld],
    ) {
        let _ = (events, user, seats);
    }

    /// The season order's transaction did not commit: the hold is given back as it was in
    /// every event, or dropped when Postgres refused the order because a seat is sold
    /// (`sold`).
    async fn season_given_back(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        seats: &[SeasonSeatHeld],
        sold: bool,
    ) {
        let _ = (events, user, seats, sold);
    }
}

/// What extending a season hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeasonExtend {
    /// Extended until `expires_at` in every event; the seats, per event.
    Extended {
        /// The new expiry.
        expires_at: DateTime<Utc>,
        /// The seats extended, per event.
        seats: Vec<(EventId, Vec<String>)>,
    },
    /// No live seat of the hold was left.
    NotLive,
    /// The hold is another buyer's.
    Forbidden,
}

/// What a season hold store answers when a season checkout asks for the hold's seats.
pub enum SeasonTaken {
    /// The hold was live and these are its seats in every event it covers, in (event,
    /// seat) order: the checkout's until the order's transaction `tx` ends.
    Seats {
        /// The seats held, each in each event.
        seats: Vec<SeasonSeatHeld>,
        /// The waiting-room pass each event's seats were held under, where there was
        /// one: the order ends them in its transaction.
        passes: Vec<(EventId, Uuid)>,
        /// The order's transaction.
        tx: sqlx::Transaction<'static, sqlx::Postgres>,
    },
    /// No live season hold has these tokens.
    NotLive,
    /// The hold is another buyer's.
    Forbidden,
}
