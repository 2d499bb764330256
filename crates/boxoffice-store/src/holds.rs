//! The hold-store interface, and its Postgres implementation (seed 000).
//!
//! A hold is a buyer's short-lived, all-or-nothing claim on a basket of seats. Two stores
//! implement it: Postgres (one `reservation` row per seat) and Redis (a key per seat with a
//! TTL). Either way Postgres decides what is sold; the hold store decides only who may
//! try to buy a seat next.

use async_trait::async_trait;
use boxoffice_core::availability::HeldSeat;
use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::StoreError;

/// Where live holds are kept.
///
/// Every implementation judges expiry by one clock of its own store (Postgres `now()`, or
/// Redis key TTLs), never by a server's clock, so several server instances agree.
/// Implementations must take a share lock on (or otherwise re-check) a seat's allocation
/// while claiming it, so that a withdrawal never races a hold on the same seat: see
/// [`crate::events::change_allocations`].
#[async_trait]
pub trait HoldStore: Send + Sync + 'static {
    /// The store's name in configuration (`postgres`, `redis`).
    fn kind(&self) -> &'static str;

    /// Every live hold in the event: one round trip, however many seats are held.
    async fn held_seats(&self, event: EventId) -> Result<Vec<HeldSeat>, StoreError>;

    /// Whether the store answers; `Unavailable` if not.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// Holds as rows of the `reservation` table (seed 000).
#[derive(Clone, Debug)]
pub struct PgHoldStore {
    pool: PgPool,
}

impl PgHoldStore {
    /// A hold store on this pool.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl HoldStore for PgHoldStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    async fn held_seats(&self, event: EventId) -> Result<Vec<HeldSeat>, StoreError> {
        // A hold is live while Postgres' clock is before its expiry; an expired row stays
        // until someone takes the seat over, and simply stops being reported here.
        let rows: Vec<(String, DateTime<Utc>)> = sqlx::query_as(
            "select seat_id, expires_at from reservation
              where event_id = $1 and status = 'H' and expires_at > now()",
        )
        .bind(event.0)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seat_id, held_until)| HeldSeat {
                seat_id,
                held_until,
            })
            .collect())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        crate::db::ping(&self.pool).await
    }
}
