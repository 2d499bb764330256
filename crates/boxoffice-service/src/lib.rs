//! Boxoffice's service layer: the flows between the API and the stores.
//!
//! A service takes typed input (ids, the buyer, a basket), uses the stores, the seat-map
//! cache and the live bus, and answers a domain outcome or an [`Error`]. This crate
//! depends on no HTTP crate: the server's routes extract a request, call one service
//! function with the [`Services`] and map what it answers to a status and a body.
//!
//! # Layout
//!
//! - [`Services`]: what the flows share (the pool, the hold store, the caches, the bus).
//! - The flows, one module each:
//!   - [`availability`]: seat status composed from the seat map, Postgres and the hold
//!     store.
//!   - [`holds`]: holding a basket, reading, extending and releasing holds;
//!     [`basket`]: a hold grown and shrunk a seat at a time.
//!   - [`best_available`]: the server chooses the best seats free now and holds them.
//!   - `asking`: the one way every flow asks the hold store for seats (a buyer admitted,
//!     or an order's change), quoting them again when the allocations changed.
//!   - [`orders`]: checkout, reading and cancelling orders.
//!   - [`changes`]: moves and swaps of sold seats, a season night taken back;
//!     [`resale`]: sold seats offered again and bought off the map.
//!   - [`tickets`]: tickets, their secrets, QR codes and PDFs, and check-in at the door.
//!   - [`bookings`]: general-admission bookings, the sale-day gate in front of Postgres.
//!   - [`seasons`]: seasons set up, their seats, holds and orders across their events.
//!   - [`queue`]: the waiting room: joining, polling, admission and its pass.
//!   - [`waitlist`]: the waiting list: joining, leaving, offers of seats that come back.
//!   - [`events`]: events as an organizer sets them up: created, read with their seat
//!     counts, their waiting room set, their allocations changed.
//!   - [`venues`]: venues stored with their seats, read back, listed.
//!   - [`organizations`]: organizations, and the keys their staff call with;
//!     [`webhooks`]: where each organization's events are delivered.
//!   - [`admin`]: what the console reads: orders a page at a time, sales as CSV, reports.
//!   - [`audit`]: reading the audit log (each change writes its entry in its own
//!     transaction, in the store).
//!   - [`housekeeping`]: unpaid orders recorded expired, old rows swept (the server's
//!     workers call it on their intervals).
//!   - [`health`]: whether the stores answer and the outbox keeps up, for readiness and
//!     metrics.
//! - [`layouts`]: what every flow reads of an event's seat map (the cached map, a
//!   channel's view, hold settings, quotes, seats' labels).
//! - [`live`]: live updates: changes published onto a Postgres `NOTIFY` bus by the flows,
//!   fanned out to each instance's stream subscribers, one channel per event; and the
//!   seats this instance knows taken. `freed`: what seats a hold lets go of read now.
//! - [`seat_map`]: per-server cache of rendered seat maps, invalidated by allocation
//!   version.
//! - [`admission`] and [`pass`]: the waiting room's pass and the queue settings holds and
//!   bookings are checked against.
//! - [`limits`]: abuse limits (sessions per client address, holds per user), in Redis
//!   when it is configured.
//! - [`overload`]: the adaptive concurrency limit around the store calls of holds,
//!   bookings, checkouts and payments.
//! - [`keyring`]: every live key in memory, reloaded when the keys change anywhere.
//! - [`replica`]: a streaming replica that reads deciding nothing may go to.
//! - [`metrics`]: one server's Prometheus recorder.
//! - [`error`]: [`Error`], why a service could not do what it was asked; `secret`:
//!   [`Secret`], a value kept out of logs.

pub mod admin;
pub mod admission;
mod asking;
pub mod audit;
pub mod availability;
pub mod basket;
pub mod best_available;
pub mod bookings;
pub mod changes;
pub mod error;
pub mod events;
mod freed;
pub mod health;
pub mod holds;
pub mod housekeeping;
pub mod keyring;
pub mod layouts;
pub mod limits;
pub mod live;
pub mod metrics;
pub mod orders;
pub mod organizations;
pub mod overload;
pub mod pass;
pub mod queue;
pub mod replica;
pub mod resale;
pub mod seasons;
pub mod seat_map;
mod secret;
pub mod tickets;
pub mod venues;
pub mod waitlist;
pub mod webhooks;

use std::num::NonZeroUsize;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

pub use boxoffice_api::SeatRef;
use boxoffice_store::hold_store::HoldStore;
use boxoffice_store::redis::link::RedisConfig;
use sqlx::PgPool;

pub use error::Error;
pub use secret::Secret;

/// What the flows share; cheap to clone.
#[derive(Clone)]
pub struct Services(Arc<Parts>);

/// The parts of [`Services`].
pub struct Parts {
    /// Postgres, the source of truth.
    pub pool: PgPool,
    /// Where live holds are kept.
    pub holds: Arc<dyn HoldStore>,
    /// Rendered seat maps of recently read events.
    pub seat_maps: seat_map::SeatMapCache,
    /// Best-available choices, one at a time per event on this instance.
    pub chooser: best_available::Chooser,
    /// The sale-day gate in front of general-admission bookings, when it is on.
    pub gate: Option<boxoffice_store::redis::gate::Gate>,
    /// This server's metrics.
    pub metrics: metrics::Metrics,
    /// Live updates: this instance's stream subscribers and its way onto the bus.
    pub live: live::Live,
    /// Abuse limits (sessions per address, holds per user).
    pub rate_limits: limits::RateLimits,
    /// Every event's waiting-room line (in Redis, whichever hold store is in use).
    pub waiting_room: boxoffice_store::redis::queue::WaitingRoom,
    /// Waiting-room passes and the queue settings holds and bookings are checked against.
    pub admission: admission::Admission,
    /// The waiting-room lines this instance follows.
    pub lines: queue::line::Lines,
    /// Signs and checks waiting-room tickets.
    pub tickets: queue::ticket::Tickets,
    /// A streaming replica seat maps are read from, if one is configured.
    pub replica: Option<Arc<replica::Replica>>,
    /// The adaptive concurrency limit in front of holds, bookings and checkouts.
    pub overload: Arc<overload::Overload>,
    /// Each event's token of a season hold, derived from the season hold's token.
    pub season_tokens: seasons::SeasonTokens,
    /// Every live key staff and servers call with, and every buyer-token signing key.
    pub keys: keyring::KeyRing,
    /// Which organization each event read so far belongs to.
    pub event_owners: organizations::EventOwners,
    /// The threads tickets' PDFs are drawn on.
    pub printer: tickets::printer::Printer,
}

impl Services {
    /// Wraps the parts.
    pub fn new(parts: Parts) -> Self {
        Self(Arc::new(parts))
    }

    /// The services over `pool` and the hold store `holds`, with the defaults of
    /// `boxoffice serve` for everything else; the builder's methods change them. Redis at
    /// `redis` is asked only when something needs it (a waiting room, the gate, limits
    /// counted there); user tokens and waiting-room passes are signed with `jwt_secret`.
    pub fn builder(
        pool: PgPool,
        holds: Arc<dyn HoldStore>,
        redis: &RedisConfig,
        jwt_secret: &Secret,
    ) -> ServicesBuilder {
        ServicesBuilder {
            pool,
            holds,
            redis: redis.clone(),
            jwt_secret: jwt_secret.clone(),
            gate: None,
            rate_limits: None,
            heartbeat: Duration::from_millis(live::DEFAULT_HEARTBEAT_MS),
            known_taken: Duration::from_millis(live::DEFAULT_KNOWN_TAKEN_MS),
            overload: None,
            replica: None,
        }
    }
}

/// How many events' rendered seat maps (and best-available choosers) one server keeps.
pub const CACHED_EVENTS: NonZeroUsize = NonZeroUsize::new(32).expect("non-zero");

/// Builds [`Services`]: see [`Services::builder`].
pub struct ServicesBuilder {
    pool: PgPool,
    holds: Arc<dyn HoldStore>,
    redis: RedisConfig,
    jwt_secret: Secret,
    gate: Option<boxoffice_store::redis::gate::Gate>,
    rate_limits: Option<limits::RateLimits>,
    heartbeat: Duration,
    known_taken: Duration,
    overload: Option<overload::OverloadSettings>,
    replica: Option<Arc<replica::Replica>>,
}

impl ServicesBuilder {
    /// The sale-day gate in front of general-admission bookings (none by default).
    pub fn gate(mut self, gate: boxoffice_store::redis::gate::Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The abuse limits (by default: `boxoffice serve`'s, counted on this instance).
    pub fn rate_limits(mut self, limits: limits::RateLimits) -> Self {
        self.rate_limits = Some(limits);
        self
    }

    /// How often a quiet stream sends a heartbeat, and how long this instance refuses a
    /// seat the store called taken ([`live::Live::new`]).
    pub fn live(mut self, heartbeat: Duration, known_taken: Duration) -> Self {
        self.heartbeat = heartbeat;
        self.known_taken = known_taken;
        self
    }

    /// The adaptive concurrency limit (none unless given: the server gives its settings,
    /// on by default).
    pub fn overload(mut self, settings: Option<overload::OverloadSettings>) -> Self {
        self.overload = settings;
        self
    }

    /// A streaming replica seat maps are read from (none by default).
    pub fn replica(mut self, replica: replica::Replica) -> Self {
        self.replica = Some(Arc::new(replica));
        self
    }

    /// The services.
    pub fn build(self) -> Result<Services, boxoffice_store::StoreError> {
        Ok(Services::new(Parts {
            pool: self.pool,
            holds: self.holds,
            seat_maps: seat_map::SeatMapCache::new(CACHED_EVENTS),
            chooser: best_available::Chooser::new(CACHED_EVENTS),
            gate: self.gate,
            metrics: metrics::Metrics::new(),
            live: live::Live::new(self.heartbeat, self.known_taken),
            rate_limits: self.rate_limits.unwrap_or_else(|| {
                limits::RateLimits::new(
                    limits::DEFAULT_SESSIONS_PER_MINUTE,
                    limits::DEFAULT_HOLDS_PER_MINUTE,
                    None,
                )
            }),
            // Connects on first use: an event without a waiting room never needs Redis.
            waiting_room: boxoffice_store::redis::queue::WaitingRoom::new(&self.redis)?,
            admission: admission::Admission::new(&self.jwt_secret),
            lines: queue::line::Lines::new(),
            tickets: queue::ticket::Tickets::new(&self.jwt_secret),
            season_tokens: seasons::SeasonTokens::new(&self.jwt_secret),
            overload: overload::Overload::new(self.overload),
            replica: self.replica,
            keys: keyring::KeyRing::new(),
            event_owners: organizations::EventOwners::default(),
            printer: tickets::printer::Printer::new(tickets::printer::Printer::threads()),
        }))
    }
}

impl Deref for Services {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}
