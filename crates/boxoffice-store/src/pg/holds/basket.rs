//! A hold that grows and shrinks a seat at a time on the postgres store, as a page that
//! holds each seat as it is clicked builds its basket.
//!
//! Growing claims the new seats with the claim itself (`boxoffice_claim_hold`,
//! `sql/claim.sql`), in a transaction under the buyer's lock, as a basket of their own
//! under the hold's token: so every rule of a claim applies to them, the buyer's live held
//! seats (this hold's included) counted against the limit. The hold's own rows are locked
//! first, for update, so a checkout or release of the hold waits for the growing to end,
//! or the growing for them (and then finds the hold no longer live). A release and the
//! taking out of a seat take the buyer's lock too.

use boxoffice_core::hold::{AcquireOutcome, GrowOutcome, Hold, ShrinkOutcome};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::answer::{self, ClaimRow};
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
              where event_id = $1 and hold_token = $2 and boxoffice_live_hold(status, expires_at)
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
            // The new seats are claimed as a hold alone is, by `boxoffice_claim_hold`
            // (sql/claim.sql, where every rule of a claim is written), under this hold's
            // token for the time it has left; then they take the hold's own times.
            let rows: Vec<ClaimRow> = sqlx::query_as(
                "select * from boxoffice_claim_hold(
                     $1, $2, $3, extract(epoch from $4::timestamptz - now())::double precision,
                     $5, $6, $7, $8)",
            )
            .bind(r.event.0)
            .bind(token)
            .bind(r.user.as_str())
            .bind(expires_at)
            .bind(&adding)
            .bind(i64::from(r.max_seats_per_user))
            .bind(r.pass.map(|p| p.ticket))
            .bind(r.channel)
            .fetch_all(&mut *tx)
            .await?;
            // The transaction rolls back on drop, should the claim have refused.
            match answer::outcome(r, token, rows)? {
                AcquireOutcome::Held(_) => {}
                refused => return Ok(GrowOutcome::Acquire(refused)),
            }
            sqlx::query(
                "update reservation set created_at = $3, expires_at = $4
                  where event_id = $1 and hold_token = $2 and seat_id = any($5)",
            )
            .bind(r.event.0)
            .bind(token)
            .bind(created_at)
            .bind(expires_at)
            .bind(&adding)
            .execute(&mut *tx)
            .await?;
        }
        let hold = hold_in(&mut tx, r.event, token).await?;
        tx.commit().await?;
        Ok(match hold {
            Some(hold) => GrowOutcome::Acquire(AcquireOutcome::Held(hold)),
            None => GrowOutcome::NotLive,
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
                and boxoffice_live_hold(status, expires_at)
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
          where event_id = $1 and hold_token = $2 and boxoffice_live_hold(status, expires_at)
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
