//! The Postgres hold store (docs/design/holds-in-postgres.md): one `reservation` row per
//! (event, seat). The `HoldStore` methods are here, each a statement or two; the claim,
//! growing, batches, transactions and the store's part in a sale are files of their own.

use async_trait::async_trait;
use boxoffice_core::availability::HeldSeat;
use boxoffice_core::hold::{
    AcquireOutcome, ClaimedSeat, ExtendOutcome, GrowOutcome, Hold, ReleaseOutcome, ShrinkOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::retry_contention;
use crate::hold_store::{HoldRequest, HoldStore};
use crate::StoreError;

mod answer;
mod basket;
mod checkouts;
mod claim;
mod sale;
mod season;
mod together;
mod tx;
use together::Together;
use tx::begin_locked;

/// Holds as rows of the `reservation` table (docs/design/holds-in-postgres.md).
#[derive(Clone, Debug)]
pub struct PgHoldStore {
    pool: PgPool,
    /// The lanes that send claims together.
    together: Arc<Together>,
    /// The lanes that commit checkouts together.
    checkouts: Arc<crate::sales::together::Checkouts>,
}

impl PgHoldStore {
    /// A hold store on this pool.
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            together: Arc::default(),
            checkouts: Arc::new(crate::sales::together::Checkouts::new(checkouts::batch)),
        }
    }
}

/// A reservation row as the hold paths read it back.
#[derive(sqlx::FromRow)]
struct ReservationRow {
    seat_id: String,
    user_id: String,
    ticket_type: String,
    price_cents: i64,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

impl ReservationRow {
    fn claimed(self) -> ClaimedSeat {
        ClaimedSeat {
            seat_id: self.seat_id,
            ticket_type: self.ticket_type,
            price_cents: self.price_cents,
        }
    }
}

impl PgHoldStore {
    /// Whether a live hold with this token exists and belongs to someone other than `user`.
    async fn held_by_other(
        conn: &mut PgConnection,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query_scalar(
            "select exists (select 1 from reservation
                             where event_id = $1 and hold_token = $2 and user_id <> $3
                               and boxoffice_live_hold(status, expires_at))",
        )
        .bind(event.0)
        .bind(token)
        .bind(user.as_str())
        .fetch_one(&mut *conn)
        .await?)
    }
}

#[async_trait]
impl HoldStore for PgHoldStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn season_holds(&self) -> &dyn crate::season_holds::SeasonHolds {
        self
    }

    async fn acquire(&self, request: &HoldRequest<'_>) -> Result<AcquireOutcome, StoreError> {
        match retry_contention(|| self.try_acquire(request)).await {
            // Still contended: the seats are in demand right now; nothing was held.
            Err(StoreError::Contention) => Ok(AcquireOutcome::Unavailable(request.seats.to_vec())),
            other => other,
        }
    }

    async fn get(&self, event: EventId, token: Uuid) -> Result<Option<Hold>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        basket::hold_in(&mut conn, event, token).await
    }

    async fn grow(
        &self,
        token: Uuid,
        request: &HoldRequest<'_>,
    ) -> Result<GrowOutcome, StoreError> {
        match retry_contention(|| self.try_grow(token, request)).await {
            // Still contended: the seats are in demand right now; nothing was added.
            Err(StoreError::Contention) => Ok(GrowOutcome::Acquire(AcquireOutcome::Unavailable(
                request.seats.to_vec(),
            ))),
            other => other,
        }
    }

    async fn shrink(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seat: &str,
    ) -> Result<ShrinkOutcome, StoreError> {
        retry_contention(|| self.try_shrink(event, token, user, seat)).await
    }

    async fn extend(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<ExtendOutcome, StoreError> {
        retry_contention(|| async move {
            // Extending keeps a hold alive, so it takes the same per-user lock as creating one.
            let mut tx = begin_locked(&self.pool, event, user).await?;
            let extended: Vec<(String, DateTime<Utc>)> = sqlx::query_as(
                "update reservation
                set expires_at = greatest(expires_at, least(now() + make_interval(secs => $4),
                                                            created_at + make_interval(secs => $5)))
              where event_id = $1 and hold_token = $2 and user_id = $3
                and boxoffice_live_hold(status, expires_at)
             returning seat_id, expires_at",
            )
            .bind(event.0)
            .bind(token)
            .bind(user.as_str())
            .bind(f64::from(ttl_seconds))
            .bind(f64::from(max_hold_seconds))
            .fetch_all(&mut *tx)
            .await?;
            let outcome = match extended.first() {
                Some(&(_, expires_at)) => ExtendOutcome::Extended {
                    expires_at,
                    seats: extended.into_iter().map(|(seat, _)| seat).collect(),
                },
                None => {
                    let other = Self::held_by_other(&mut tx, event, token, user).await?;
                    if other {
                        ExtendOutcome::Forbidden
                    } else {
                        ExtendOutcome::NotLive
                    }
                }
            };
            tx.commit().await?;
            Ok(outcome)
        })
        .await
    }

    async fn release(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<ReleaseOutcome, StoreError> {
        // Compare-and-delete: only rows that are still this token's live hold, for this user.
        // A seat taken over after expiry carries the new holder's token and is untouched.
        // Under the buyer's lock, as growing a hold is: the delete sees every seat a growing
        // added before it, and a growing after it finds the hold gone.
        retry_contention(|| async move {
            let mut conn = begin_locked(&self.pool, event, user).await?;
            let freed: Vec<(String, Option<Uuid>)> = sqlx::query_as(
                "delete from reservation
              where event_id = $1 and hold_token = $2 and user_id = $3
                and boxoffice_live_hold(status, expires_at)
             returning seat_id, pass_ticket",
            )
            .bind(event.0)
            .bind(token)
            .bind(user.as_str())
            .fetch_all(&mut *conn)
            .await?;
            let outcome = if freed.is_empty() {
                if Self::held_by_other(&mut conn, event, token, user).await? {
                    ReleaseOutcome::Forbidden
                } else {
                    ReleaseOutcome::NotLive
                }
            } else {
                let pass = freed.iter().find_map(|(_, pass)| *pass);
                let pass_ended = match pass {
                    Some(ticket) => end_pass_unless_holding(&mut conn, event, user, ticket).await?,
                    None => false,
                };
                ReleaseOutcome::Released {
                    seats: freed.into_iter().map(|(seat, _)| seat).collect(),
                    pass_ended,
                }
            };
            conn.commit().await?;
            Ok(outcome)
        })
        .await
    }

    async fn end_pass(
        &self,
        event: EventId,
        ticket: Uuid,
        _until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        // The claim refuses a pass recorded here (`sql/claim.sql`); the sweep forgets the
        // record once the pass would have expired.
        let mut conn = self.pool.acquire().await?;
        crate::sales::passes::end_pass(&mut conn, event, ticket).await
    }

    async fn held_seats(&self, event: EventId) -> Result<Vec<HeldSeat>, StoreError> {
        // A hold is live while Postgres' clock is before its expiry; an expired row stays
        // until someone takes the seat over, and simply stops being reported here.
        let rows: Vec<(String, DateTime<Utc>)> = sqlx::query_as(
            "select seat_id, expires_at from reservation
              where event_id = $1 and boxoffice_live_hold(status, expires_at)",
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

    async fn seats_held_by(&self, event: EventId, user: &UserId) -> Result<u32, StoreError> {
        let (held,): (i64,) = sqlx::query_as(
            "select count(*) from reservation
              where event_id = $1 and user_id = $2 and boxoffice_live_hold(status, expires_at)",
        )
        .bind(event.0)
        .bind(user.as_str())
        .fetch_one(&self.pool)
        .await?;
        Ok(u32::try_from(held).unwrap_or(u32::MAX))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        crate::pg::db::ping(&self.pool).await
    }
}

/// Ends the pass of `ticket` if `user` has no live hold left in `event`; whether it ended
/// now. Run in the release's transaction under the buyer's lock, after its delete: of two
/// releases of a buyer's last holds, the later one waited for the earlier one to commit,
/// and its statement sees both gone.
pub(super) async fn end_pass_unless_holding(
    conn: &mut PgConnection,
    event: EventId,
    user: &UserId,
    ticket: Uuid,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar::<_, bool>(
        "insert into pass_ended (event_id, ticket)
         select $1, $2
          where not exists (select 1 from reservation r
                             where r.event_id = $1 and r.user_id = $3 and boxoffice_live_hold(r.status, r.expires_at))
         on conflict do nothing
         returning true",
    )
    .bind(event.0)
    .bind(ticket)
    .bind(user.as_str())
    .fetch_optional(conn)
    .await?
    .is_some())
}
