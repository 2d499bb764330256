//! What every handler shares: the pool, the hold store, auth and the seat-map cache.

use std::ops::Deref;
use std::sync::Arc;

use boxoffice_store::hold_store::HoldStore;
use sqlx::PgPool;

use crate::auth::Auth;
use crate::seat_map::SeatMapCache;

/// Shared application state; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// The parts of [`AppState`].
pub struct Inner {
    /// Postgres, the source of truth.
    pub pool: PgPool,
    /// Where live holds are kept.
    pub holds: Arc<dyn HoldStore>,
    /// Token verification and minting.
    pub auth: Auth,
    /// Rendered seat maps of recently read events.
    pub seat_maps: SeatMapCache,
    /// Best-available choices, one at a time per event on this instance.
    pub chooser: crate::service::best_available::Chooser,
    /// Whether `POST /v1/sessions` is enabled.
    pub anonymous_sessions: bool,
    /// The sale-day gate in front of general-admission bookings, when it is on.
    pub gate: Option<boxoffice_store::gate::Gate>,
    /// This server's metrics.
    pub metrics: crate::metrics::Metrics,
    /// Live updates: this instance's stream subscribers and its way onto the bus.
    pub live: crate::live::Live,
    /// Abuse limits (sessions per address, holds per user).
    pub rate_limits: crate::limits::RateLimits,
    /// Every event's waiting-room line (in Redis, whichever hold store is in use).
    pub waiting_room: boxoffice_store::queue::WaitingRoom,
    /// Waiting-room passes and the queue settings holds and bookings are checked against.
    pub admission: crate::admission::Admission,
    /// A streaming replica seat maps are read from, if one is configured.
    pub replica: Option<Arc<crate::replica::Replica>>,
}

impl AppState {
    /// Wraps the parts.
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }

    /// Where reads that decide nothing go: the replica while it is up and in step, else
    /// the primary.
    pub fn reads(&self) -> &PgPool {
        self.replica
            .as_deref()
            .and_then(crate::replica::Replica::pool)
            .unwrap_or(&self.pool)
    }
}

impl Deref for AppState {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}
