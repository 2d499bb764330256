//! The hold-store interface: what every place that keeps live holds answers.
//!
//! A hold is a buyer's short-lived, all-or-nothing claim on a basket of seats. Two stores
//! implement it: [`crate::pg::holds`] (one `reservation` row per seat,
//! docs/design/holds-in-postgres.md) and [`crate::redis::holds`] (a key per seat with a
//! TTL, docs/design/holds-in-redis.md). Either way Postgres decides what is sold: the
//! flows of [`crate::sales`] write the order under the `order_seat_sold` unique index, and
//! the hold store decides only who may try (its part in a sale is [`SaleSeats`]).

use async_trait::async_trait;
use boxoffice_core::availability::HeldSeat;
use boxoffice_core::hold::{
    AcquireOutcome, ClaimedSeat, ExtendOutcome, GrowOutcome, Hold, ReleaseOutcome, ShrinkOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::sales::SaleSeats;
use crate::StoreError;

/// A request for a basket of seats.
#[derive(Clone, Copy, Debug)]
pub struct HoldRequest<'a> {
    /// The event.
    pub event: EventId,
    /// The buyer.
    pub user: &'a UserId,
    /// Seat ids, sorted and distinct (see `boxoffice_core::hold::validate_basket`).
    pub seats: &'a [String],
    /// What the event's seat map quotes for each seat of `seats`, in the same order: its
    /// ticket type and price, or `None` if it is not on sale.
    pub quotes: &'a [Option<ClaimedSeat>],
    /// The allocation version (`layout_version`) the quotes come from. A store that keeps
    /// the quotes with the hold answers [`AcquireOutcome::LayoutChanged`] when it is not
    /// the event's current version; a store that reads them from Postgres in the claim
    /// ignores both.
    pub layout_version: i64,
    /// Lifetime of the new hold.
    pub ttl_seconds: u32,
    /// The event's limit of live held seats per user.
    pub max_seats_per_user: u32,
    /// How many holds the user may ask for in this event a minute (all at once, at most);
    /// 0 for no limit. Only a store whose [`HoldStore::limits_hold_rate`] is true applies
    /// it; the server applies it in front of the others.
    pub holds_per_minute: u32,
    /// The waiting-room pass the hold is asked under, while the event's queue is on. The
    /// store refuses the hold ([`AcquireOutcome::PassEnded`]) if that pass has ended, in
    /// the claim itself, and keeps the pass with the hold: its checkout ends the pass, and
    /// so does its release when it was the buyer's last hold.
    pub pass: Option<HoldPass>,
    /// The sales channel the buyer is in (their token's `channel` claim), if any: a seat
    /// allocated to another channel is not on sale to them. A store that keeps the quotes
    /// finds it in them (quoted from the buyer's channel's view of the seat map); a store
    /// that reads the allocations in the claim judges it there.
    pub channel: Option<&'a str>,
}

/// A waiting-room pass, as the hold store knows it.
pub use boxoffice_core::hold::HoldPass;

/// The live holds of an event as an allocation change begins, and what ends the change's
/// hold on the store.
#[derive(Debug)]
pub struct AllocationFence {
    /// Every live hold when the change began: the change leaves these seats alone.
    pub held: Vec<HeldSeat>,
    /// Set by stores that keep new holds out until the fence is lifted.
    pub id: Option<Uuid>,
}

/// Where live holds are kept.
///
/// Every implementation judges expiry by one clock of its own store (Postgres `now()`, or
/// Redis' `TIME`), never by a server's clock, so several server instances agree.
/// A withdrawal must never race a hold on the same seat: an implementation either takes a
/// share lock on a seat's allocation row while claiming it (the change locks those rows
/// for update), or keeps new holds out between [`HoldStore::fence_allocations`] and
/// [`HoldStore::lift_fence`]. See [`crate::pg::events::change_allocations`].
#[async_trait]
pub trait HoldStore: SaleSeats + Send + Sync + 'static {
    /// The store's name in configuration (`postgres`, `redis`).
    fn kind(&self) -> &'static str;

    /// Whether the store applies [`HoldRequest::holds_per_minute`] itself, inside the
    /// hold's own round trip (answering [`AcquireOutcome::RateLimited`]).
    fn limits_hold_rate(&self) -> bool {
        false
    }

    /// The store's own counters since it was made, by Prometheus name, for `/metrics`.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Holds every seat of the basket under a new token, or none of them.
    async fn acquire(&self, request: &HoldRequest<'_>) -> Result<AcquireOutcome, StoreError>;

    /// The live hold with this token, whoever owns it.
    async fn get(&self, event: EventId, token: Uuid) -> Result<Option<Hold>, StoreError>;

    /// Moves a live hold's expiry to now + `ttl_seconds`, never past its creation plus
    /// `max_hold_seconds`.
    async fn extend(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<ExtendOutcome, StoreError>;

    /// Adds the seats of `request` to the live hold `token` of `request.user`, under the
    /// hold's own token and expiry (`request.ttl_seconds` is not used), all or nothing, by
    /// every rule of [`HoldStore::acquire`]: the per-user limit counts the whole hold. Seats
    /// the hold has already are left as they are. A checkout or release of the hold that
    /// began before it is not changed by it: the grown hold is checked out or released
    /// whole, or the growing finds the hold no longer live.
    async fn grow(&self, token: Uuid, request: &HoldRequest<'_>)
        -> Result<GrowOutcome, StoreError>;

    /// Takes `seat` out of the live hold `token` of `user` and frees it; the hold keeps
    /// its expiry. Taking out the last seat ends the hold as [`HoldStore::release`] does,
    /// the waiting-room pass included.
    async fn shrink(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seat: &str,
    ) -> Result<ShrinkOutcome, StoreError>;

    /// Frees the seats this token still owns (compare-and-delete): a stale token frees
    /// nothing, and never a seat someone else now holds. When the hold was made under a
    /// waiting-room pass and its buyer has no live hold left in the event, the pass ends,
    /// atomically with the release (two releases of a buyer's last holds cannot each see
    /// the other's).
    async fn release(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<ReleaseOutcome, StoreError>;

    /// Ends the waiting-room pass of `ticket` in `event` (its buyer gave the ticket up):
    /// from now on a hold under it is refused as under a pass a checkout ended, on every
    /// instance. `until` is when the pass would have expired, past which it is refused
    /// anyway. Holds made under it before stay their buyer's to check out or release.
    async fn end_pass(
        &self,
        event: EventId,
        ticket: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// Every live hold in the event: one round trip, however many seats are held.
    async fn held_seats(&self, event: EventId) -> Result<Vec<HeldSeat>, StoreError>;

    /// How many seats `user` holds live in the event.
    async fn seats_held_by(&self, event: EventId, user: &UserId) -> Result<u32, StoreError>;

    /// Begins an allocation change of the event, whose allocation rows the caller has
    /// locked for update: returns every live hold at this moment. By default that is all
    /// it does, for stores whose claims share-lock the allocation rows.
    async fn fence_allocations(&self, event: EventId) -> Result<AllocationFence, StoreError> {
        Ok(AllocationFence {
            held: self.held_seats(event).await?,
            id: None,
        })
    }

    /// Ends an allocation change begun by [`HoldStore::fence_allocations`], whether it
    /// committed or not. Called after the change's transaction ends.
    async fn lift_fence(&self, _event: EventId, _fence: AllocationFence) {}

    /// The store's season holds: one basket claimed in every event of a season at once.
    fn season_holds(&self) -> &dyn crate::season_holds::SeasonHolds;

    /// Whether the store answers; `Unavailable` if not.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Whether the store's circuit breaker is failing calls at once (a store reached over a
    /// link that has one); false for the others.
    fn failing_fast(&self) -> bool {
        false
    }
}
