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
//!   - [`holds`]: holding a basket (quoting it again when the allocations changed),
//!     reading, extending and releasing holds.
//!   - [`best_available`]: the server chooses the best seats free now and holds them.
//!   - [`orders`]: checkout, reading and cancelling orders.
//!   - [`bookings`]: general-admission bookings, the sale-day gate in front of Postgres.
//!   - [`queue`]: the waiting room: joining, polling, admission and its pass.
//!   - [`waitlist`]: the waiting list: joining, leaving, offers of seats that come back.
//!   - [`events`]: events as an organizer sets them up: created, read with their seat
//!     counts, their waiting room set, their allocations changed.
//!   - [`housekeeping`]: unpaid orders recorded expired, old rows swept (the server's
//!     workers call it on their intervals).
//! - [`live`]: live updates: changes published onto a Postgres `NOTIFY` bus by the flows,
//!   fanned out to each instance's stream subscribers, one channel per event; and the
//!   seats this instance knows taken.
//! - [`seat_map`]: per-server cache of rendered seat maps, invalidated by allocation
//!   version.
//! - [`admission`] and [`pass`]: the waiting room's pass and the queue settings holds and
//!   bookings are checked against.
//! - [`limits`]: abuse limits (sessions per client address, holds per user), in Redis
//!   when it is configured.
//! - [`overload`]: the adaptive concurrency limit in front of holds, bookings and
//!   checkouts.
//! - [`replica`]: a streaming replica that reads deciding nothing may go to.
//! - [`metrics`]: one server's Prometheus recorder.
//! - [`error`]: [`Error`], why a service could not do what it was asked.

pub mod admission;
pub mod availability;
pub mod basket;
pub mod best_available;
pub mod bookings;
pub mod console;
pub mod error;
pub mod events;
pub mod gzip;
pub mod holds;
pub mod housekeeping;
pub mod limits;
pub mod live;
pub mod metrics;
pub mod orders;
pub mod overload;
pub mod pass;
pub mod queue;
pub mod replica;
pub mod seat_map;
mod secret;
pub mod waitlist;

use std::ops::Deref;
use std::sync::Arc;

pub use boxoffice_api::SeatRef;
use boxoffice_store::hold_store::HoldStore;
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
    /// A streaming replica seat maps are read from, if one is configured.
    pub replica: Option<Arc<replica::Replica>>,
    /// The adaptive concurrency limit in front of holds, bookings and checkouts.
    pub overload: Arc<overload::Overload>,
}

impl Services {
    /// Wraps the parts.
    pub fn new(parts: Parts) -> Self {
        Self(Arc::new(parts))
    }
}

impl Deref for Services {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}
