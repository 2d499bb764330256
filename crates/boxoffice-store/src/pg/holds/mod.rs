//! The Postgres hold store (docs/design/holds-in-postgres.md): one `reservation` row per
//! (event, seat). (A long file: the `HoldStore` methods, each a statement or two; the
//! claim, growing, batches and transactions are files of their own.)

use async_trait::async_trait;
use boxoffice_core::availability::HeldSeat;
use boxoffice_core::hold::{
    AcquireOutcome, CancelOutcome, CheckoutOutcome, ClaimedSeat, ExtendOutcome, GrowOutcome, Hold,
    Order, PayOutcome, ReleaseOutcome, ShrinkOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::Constraint;
use crate::hold_store::{existing, HoldRequest, HoldStore};
use crate::pg::orders::{self, record_expiry, CancelStep};
use crate::pg::waitlist;
use crate::StoreError;

mod answer;
mod basket;
mod claim;
mod together;
mod tx;
use claim::Contested;
use together::Together;
use tx::{begin_locked, retry_contention};

/// Holds as rows of the `reservation` table (docs/design/holds-in-postgres.md).
#[derive(Clone, Debug)]
pub struct PgHoldStore {
    pool: PgPool,
    /// Seats this instance refused lately: asked again, they are checked before any
    /// transaction is begun.
    contested: Arc<Contested>,
    /// The lanes that send claims together.
    together: Arc<Together>,
}

impl PgHoldStore {
    /// A hold store on this pool.
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            contested: Arc::default(),
            together: Arc::default(),
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
    async fn try_pay(&self, order_id: Uuid, reference: &str) -> Result<PayOutcome, StoreError> {
        // Orders keep synchronous commit.
        let mut tx = self.pool.begin().await?;
        let order = match orders::lock_for_payment(&mut tx, order_id, reference).await? {
            Ok(order) => order,
            Err(answer) => return Ok(answer),
        };
        // The order's seats are still its holds and live at this statement's start, and its
        // deadline (the order's, whatever the sweep kept the rows for) has not passed, or it
        // has: under each row's lock, so a claim taking a row over after the
        // deadline either committed first (and the row is no longer the order's) or waits
        // and finds the row reserved.
        let kept: Vec<String> = sqlx::query_scalar(
            "update reservation set status = 'R'
              where event_id = $1 and hold_token = $2 and status = 'H'
                and expires_at > statement_timestamp() and $3 > statement_timestamp()
             returning seat_id",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(order.payment.as_ref().map(|p| p.pay_by))
        .fetch_all(&mut *tx)
        .await?;
        if kept.len() != order.seats.len() {
            tx.rollback().await?;
            return record_expiry(&self.pool, order_id, reference).await;
        }
        let order = orders::pay_in_tx(&mut tx, order, reference).await?;
        tx.commit().await?;
        Ok(PayOutcome::Paid(order))
    }

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
                               and status = 'H' and expires_at > now())",
        )
        .bind(event.0)
        .bind(token)
        .bind(user.as_str())
        .fetch_one(&mut *conn)
        .await?)
    }

    async fn try_checkout(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        window_seconds: u32,
    ) -> Result<CheckoutOutcome, StoreError> {
        // Orders keep synchronous commit: success is answered only once the order is durable.
        let mut tx = self.pool.begin().await?;
        if let Some(order) = orders::find_by_token(&mut tx, event, token).await? {
            return Ok(existing(order, user));
        }
        // Every precondition is in the WHERE: still a hold, this token, this user, and live
        // at the statement's start. A row another writer changes meanwhile is re-checked
        // against these conditions once that writer commits; a hold that had expired when
        // this statement began matches nothing, so a checkout racing its own expiry can
        // never sell a seat someone else has just taken over. With a payment window the rows
        // stay holds, of the order (its id as their token) until its deadline; else they are
        // reserved for the sale.
        let order_id = Uuid::new_v4();
        let reserved: Vec<(String, String, i64, Option<Uuid>)> = sqlx::query_as(
            "update reservation
                set status = case when $5 > 0 then 'H' else 'R' end,
                    hold_token = case when $5 > 0 then $4 else hold_token end,
                    expires_at = case when $5 > 0
                                      then date_trunc('milliseconds', now() + make_interval(secs => $5))
                                      else expires_at end
              where event_id = $1 and hold_token = $2 and user_id = $3
                and status = 'H' and expires_at > statement_timestamp()
             returning seat_id, ticket_type, price_cents, pass_ticket",
        )
        .bind(event.0)
        .bind(token)
        .bind(user.as_str())
        .bind(order_id)
        .bind(f64::from(window_seconds))
        .fetch_all(&mut *tx)
        .await?;
        if reserved.is_empty() {
            // A concurrent checkout of the same token may have committed while we waited.
            if let Some(order) = orders::find_by_token(&mut tx, event, token).await? {
                return Ok(existing(order, user));
            }
            let other = Self::held_by_other(&mut tx, event, token, user).await?;
            return Ok(if other {
                CheckoutOutcome::Forbidden
            } else {
                CheckoutOutcome::NotLive
            });
        }
        // All of the hold or nothing: every row this token still has must have been live.
        let left: i64 = sqlx::query_scalar(
            "select count(*) from reservation
              where event_id = $1 and hold_token = $2 and status = 'H'",
        )
        .bind(event.0)
        .bind(token)
        .fetch_one(&mut *tx)
        .await?;
        if left > 0 {
            tx.rollback().await?;
            return Ok(CheckoutOutcome::NotLive);
        }
        let pass = reserved.iter().find_map(|(.., pass)| *pass);
        let mut seats: Vec<ClaimedSeat> = reserved
            .into_iter()
            .map(|(seat_id, ticket_type, price_cents, _)| ClaimedSeat {
                seat_id,
                ticket_type,
                price_cents,
            })
            .collect();
        seats.sort_by(|a, b| a.seat_id.cmp(&b.seat_id));
        let order = match orders::insert_order(
            &mut tx,
            event,
            user,
            token,
            &seats,
            order_id,
            window_seconds,
        )
        .await
        {
            Ok(order) => order,
            // The hold store and the orders disagree (a seat is already in a live order):
            // Postgres decides, and this checkout does not happen.
            Err(StoreError::Conflict {
                constraint: Constraint::SeatSold,
            }) => {
                tx.rollback().await?;
                return Ok(CheckoutOutcome::NotLive);
            }
            // A waiting-list offer past its deadline: its hold lives on only while the
            // sweep passes its seats to the next buyer in line.
            Err(StoreError::Conflict {
                constraint: Constraint::OfferLapsed,
            }) => {
                tx.rollback().await?;
                return Ok(CheckoutOutcome::NotLive);
            }
            Err(e) => return Err(e),
        };
        if let Some(ticket) = pass {
            // In the order's transaction: a claim under this pass sees either this hold
            // still held (and counts it) or the pass ended (`sql/claim.sql`).
            end_pass(&mut tx, event, ticket).await?;
        }
        tx.commit().await?;
        Ok(CheckoutOutcome::Created(order))
    }
}

#[async_trait]
impl HoldStore for PgHoldStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn offers_in_postgres(&self) -> bool {
        true
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
                and status = 'H' and expires_at > now()
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
                and status = 'H' and expires_at > now()
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

    async fn checkout(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        window_seconds: u32,
    ) -> Result<CheckoutOutcome, StoreError> {
        match retry_contention(|| self.try_checkout(event, token, user, window_seconds)).await {
            // Two checkouts of one token that both found no order insert under the same
            // unique key; the loser finds the winner's order.
            Err(StoreError::Conflict {
                constraint: Constraint::OrderOfToken,
            }) => {
                let mut conn = self.pool.acquire().await?;
                match orders::find_by_token(&mut conn, event, token).await? {
                    Some(order) => Ok(existing(order, user)),
                    None => Ok(CheckoutOutcome::NotLive),
                }
            }
            other => other,
        }
    }

    async fn cancel(
        &self,
        order_id: Uuid,
        by: Option<&UserId>,
    ) -> Result<CancelOutcome, StoreError> {
        retry_contention(|| async move {
            let mut tx = self.pool.begin().await?;
            let step = orders::cancel_in_tx(&mut tx, order_id, by).await?;
            let mut offers = Vec::new();
            if let CancelStep::Cancelled(order) = &step {
                // The reserved rows go with the sale (a pending order's held ones with the
                // order), so the seats can be held again. A row some other hold took over
                // after the order's deadline carries that hold's token and stays. The
                // waiting list has the freed seats first, in this transaction.
                let freed: Vec<String> = sqlx::query_scalar(
                    "delete from reservation
                      where event_id = $1 and hold_token = any($2)
                     returning seat_id",
                )
                .bind(order.event_id.0)
                .bind([order.hold_token, order.order_id])
                .fetch_all(&mut *tx)
                .await?;
                offers = waitlist::offer_in_tx(&mut tx, order.event_id, &freed, true).await?;
            }
            tx.commit().await?;
            Ok(step.into_outcome(offers))
        })
        .await
    }

    async fn pay(&self, order_id: Uuid, reference: &str) -> Result<PayOutcome, StoreError> {
        retry_contention(|| self.try_pay(order_id, reference)).await
    }

    async fn keep_pending(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        // A pending order's rows carry its id as their token; a row some hold took over
        // carries that hold's and stays as it is.
        sqlx::query(
            "update reservation set expires_at = $3
              where event_id = $1 and hold_token = $2 and status = 'H' and expires_at > now()",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(until)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    async fn take_kept(
        &self,
        tx: &mut PgConnection,
        order: &Order,
    ) -> Result<(Uuid, Vec<String>), StoreError> {
        let seats = sqlx::query_scalar(
            "delete from reservation
              where event_id = $1 and hold_token = $2 and status = 'H' and expires_at > now()
             returning seat_id",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .fetch_all(&mut *tx)
        .await?;
        Ok((order.order_id, seats))
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

    async fn seats_held_by(&self, event: EventId, user: &UserId) -> Result<u32, StoreError> {
        let (held,): (i64,) = sqlx::query_as(
            "select count(*) from reservation
              where event_id = $1 and user_id = $2 and status = 'H' and expires_at > now()",
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

/// Ends the waiting-room pass of `ticket` in `event` (a checkout under it). The redis
/// store records its ended passes here too, where general-admission bookings look.
pub(crate) async fn end_pass(
    conn: &mut PgConnection,
    event: EventId,
    ticket: Uuid,
) -> Result<(), StoreError> {
    sqlx::query("insert into pass_ended (event_id, ticket) values ($1, $2) on conflict do nothing")
        .bind(event.0)
        .bind(ticket)
        .execute(conn)
        .await?;
    Ok(())
}

/// Ends the pass of `ticket` if `user` has no live hold left in `event`; whether it ended
/// now. Run in the release's transaction under the buyer's lock, after its delete: of two
/// releases of a buyer's last holds, the later one waited for the earlier one to commit,
/// and its statement sees both gone.
async fn end_pass_unless_holding(
    conn: &mut PgConnection,
    event: EventId,
    user: &UserId,
    ticket: Uuid,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar::<_, bool>(
        "insert into pass_ended (event_id, ticket)
         select $1, $2
          where not exists (select 1 from reservation r
                             where r.event_id = $1 and r.user_id = $3 and r.status = 'H'
                               and r.expires_at > now())
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
