//! A hold that grows and shrinks a seat at a time on the postgres store, as a page that
//! holds each seat as it is clicked builds its basket.
//!
//! Growing claims the new seats by the rules of `boxoffice_claim` (migrations 0011, 0012
//! and 0016), in a transaction under the buyer's lock: the seats allocated (on general
//! sale or in the buyer's channel) and share-locked, not taken in the statement's
//! snapshot, taken over only from an expired hold, the event not started, the pass not
//! ended, and the buyer's live held seats (this hold's included) within the limit. The hold's own rows are locked first, for update, so a
//! checkout or release of the hold waits for the growing to end, or the growing for them
//! (and then finds the hold no longer live). A release and the taking out of a seat take
//! the buyer's lock too.

use boxoffice_core::hold::{AcquireOutcome, GrowOutcome, Hold, ShrinkOutcome};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::tx::begin_locked;
use super::{end_pass_unless_holding, PgHoldStore, ReservationRow};
use crate::error::stored_user_id;
use crate::hold_store::HoldRequest;
use crate::StoreError;

impl PgHoldStore {
    pub(super) async fn try_grow(
        &self,
        token: Uuid,
        r: &HoldRequest<'_>,
    ) -> Result<GrowOutcome, StoreError> {
        let mut tx = begin_locked(&self.pool, r.event, r.user).await?;
        let rows: Vec<(String, String, DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(
            "select seat_id, user_id, created_at, expires_at from reservation
              where event_id = $1 and hold_token = $2 and status = 'H' and expires_at > now()
              order by seat_id
                for update",
        )
        .bind(r.event.0)
        .bind(token)
        .fetch_all(&mut *tx)
        .await?;
        let Some((_, owner, created_at, expires_at)) = rows.first().cloned() else {
            return Ok(GrowOutcome::NotLive);
        };
        if owner != r.user.as_str() {
            return Ok(GrowOutcome::Forbidden);
        }
        let adding: Vec<&String> = r
            .seats
            .iter()
            .filter(|seat| !rows.iter().any(|(held, ..)| held == *seat))
            .collect();
        if !adding.is_empty() {
            let claimed: Vec<String> = sqlx::query_scalar(
                "with want as (select unnest($4::text[]) as seat_id)
                 insert into reservation
                        (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                         created_at, expires_at, pass_ticket)
                 select a.event_id, a.seat_id, $2, $3, 'H', a.ticket_type, t.price_cents,
                        $5, $6, $8
                   from want
                  cross join lateral (select * from seat_allocation s
                                       where s.event_id = $1 and s.seat_id = want.seat_id
                                         and (s.channel is null or s.channel = $9)
                                       limit 1) a
                   join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
                   join event e on e.event_id = a.event_id
                  cross join lateral boxoffice_seat_taken(a.event_id, a.seat_id) st
                  cross join lateral boxoffice_live_holds($1, $3, $7) lh
                  where e.starts_at > now()
                    and not st.taken
                    and lh.live + cardinality($4::text[]) <= $7
                    and not exists (select 1 from pass_ended pe
                                     where pe.event_id = $1 and pe.ticket = $8)
                  order by a.seat_id
                    for share of a
                 on conflict on constraint reservation_pkey do update
                    set hold_token = excluded.hold_token, user_id = excluded.user_id,
                        status = 'H', ticket_type = excluded.ticket_type,
                        price_cents = excluded.price_cents, created_at = excluded.created_at,
                        expires_at = excluded.expires_at, pass_ticket = excluded.pass_ticket
                  where reservation.status = 'H' and reservation.expires_at <= now()
                 returning reservation.seat_id",
            )
            .bind(r.event.0)
            .bind(token)
            .bind(r.user.as_str())
            .bind(&adding)
            .bind(created_at)
            .bind(expires_at)
            .bind(i64::from(r.max_seats_per_user))
            .bind(r.pass.map(|p| p.ticket))
            .bind(r.channel)
            .fetch_all(&mut *tx)
            .await?;
            if claimed.len() < adding.len() {
                // Why, judged under the buyer's lock; the transaction rolls back on drop.
                let refusal = if claimed.is_empty() {
                    self.refusal_in(&mut tx, r, adding.len()).await?
                } else {
                    None
                };
                let taken = adding
                    .into_iter()
                    .filter(|seat| !claimed.contains(seat))
                    .cloned()
                    .collect();
                return Ok(GrowOutcome::Acquire(
                    refusal.unwrap_or(AcquireOutcome::Unavailable(taken)),
                ));
            }
        }
        let hold = hold_in(&mut tx, r.event, token).await?;
        tx.commit().await?;
        Ok(match hold {
            Some(hold) => GrowOutcome::Acquire(AcquireOutcome::Held(hold)),
            None => GrowOutcome::NotLive,
        })
    }

    /// Why a claim of `asking` seats claimed none, other than the seats being taken: the
    /// event started, the pass ended, or the buyer at the limit.
    async fn refusal_in(
        &self,
        tx: &mut sqlx::PgConnection,
        r: &HoldRequest<'_>,
        asking: usize,
    ) -> Result<Option<AcquireOutcome>, StoreError> {
        let (started, live, ended): (bool, i64, bool) = sqlx::query_as(
            "select e.starts_at <= now(), lh.live,
                    exists (select 1 from pass_ended pe where pe.event_id = $1 and pe.ticket = $4)
               from event e, boxoffice_live_holds($1, $2, $3) lh
              where e.event_id = $1",
        )
        .bind(r.event.0)
        .bind(r.user.as_str())
        .bind(i64::from(r.max_seats_per_user))
        .bind(r.pass.map(|p| p.ticket))
        .fetch_optional(&mut *tx)
        .await?
        .unwrap_or((true, 0, false));
        Ok(if started {
            Some(AcquireOutcome::EventStarted)
        } else if ended {
            Some(AcquireOutcome::PassEnded)
        } else if live + asking as i64 > i64::from(r.max_seats_per_user) {
            Some(AcquireOutcome::LimitExceeded)
        } else {
            None
        })
    }

    pub(super) async fn try_shrink(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seat: &str,
    ) -> Result<ShrinkOutcome, StoreError> {
        // Compare-and-delete, as a release is, of the one seat, under the buyer's lock.
        let mut conn = begin_locked(&self.pool, event, user).await?;
        let freed: Option<Option<Uuid>> = sqlx::query_scalar(
            "delete from reservation
              where event_id = $1 and hold_token = $2 and user_id = $3 and seat_id = $4
                and status = 'H' and expires_at > now()
             returning pass_ticket",
        )
        .bind(event.0)
        .bind(token)
        .bind(user.as_str())
        .bind(seat)
        .fetch_optional(&mut *conn)
        .await?;
        let hold = hold_in(&mut conn, event, token).await?;
        let outcome = match (freed, hold) {
            (Some(_), Some(hold)) => ShrinkOutcome::Kept(hold),
            (Some(pass), None) => {
                let pass_ended = match pass {
                    Some(ticket) => end_pass_unless_holding(&mut conn, event, user, ticket).await?,
                    None => false,
                };
                ShrinkOutcome::Emptied { pass_ended }
            }
            (None, Some(hold)) if &hold.user_id == user => ShrinkOutcome::NotInHold,
            (None, Some(_)) => ShrinkOutcome::Forbidden,
            (None, None) => ShrinkOutcome::NotLive,
        };
        conn.commit().await?;
        Ok(outcome)
    }
}

/// The live hold `token`, read on `conn`.
pub(super) async fn hold_in(
    conn: &mut sqlx::PgConnection,
    event: EventId,
    token: Uuid,
) -> Result<Option<Hold>, StoreError> {
    let rows: Vec<ReservationRow> = sqlx::query_as(
        "select seat_id, user_id, ticket_type, price_cents, created_at, expires_at
           from reservation
          where event_id = $1 and hold_token = $2 and status = 'H' and expires_at > now()
          order by seat_id",
    )
    .bind(event.0)
    .bind(token)
    .fetch_all(conn)
    .await?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let user_id = stored_user_id(&first.user_id)?;
    let (created_at, expires_at) = (first.created_at, first.expires_at);
    Ok(Some(Hold {
        token,
        event_id: event,
        user_id,
        seats: rows.into_iter().map(ReservationRow::claimed).collect(),
        created_at,
        expires_at,
    }))
}
