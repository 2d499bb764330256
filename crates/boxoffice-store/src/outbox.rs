//! The outbox: rows written with every order, booking and cancellation, claimed and marked
//! by relays.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use crate::StoreError;

/// One outbox row.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct OutboxRow {
    /// Increasing id: the order of commits (per event).
    pub outbox_id: i64,
    /// The event the change belongs to.
    pub event_id: Uuid,
    /// What happened: `order.created`, `order.cancelled`, `booking.created`, `booking.cancelled`.
    pub topic: String,
    /// The change, as committed.
    pub payload: sqlx::types::Json<Value>,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// Deliveries tried so far.
    pub attempts: i32,
}

/// Leases the oldest undelivered row of up to `limit` events whose row is due, for
/// `lease`, and commits: the rows are then delivered outside any transaction.
///
/// Why rows are delivered once per pass and in order per event: only each event's oldest
/// undelivered row can be claimed (a later row waits until every earlier one is
/// delivered, leased or not), a leased row is not claimed again until its lease lapses,
/// and the claim locks its rows `for update skip locked`, so a second relay claiming at
/// the same moment passes over them instead of leasing them too.
pub async fn lease_heads(
    pool: &PgPool,
    limit: i64,
    lease: std::time::Duration,
) -> Result<Vec<OutboxRow>, StoreError> {
    let mut rows: Vec<OutboxRow> = sqlx::query_as(
        "with due as (
             select o.outbox_id
               from outbox o
              where o.delivered_at is null and o.next_attempt_at <= now()
                and (o.locked_until is null or o.locked_until <= now())
                and not exists (select 1 from outbox p
                                 where p.event_id = o.event_id and p.delivered_at is null
                                   and p.outbox_id < o.outbox_id)
              order by o.outbox_id
              limit $1
                for update skip locked)
         update outbox o set locked_until = now() + make_interval(secs => $2)
           from due
          where o.outbox_id = due.outbox_id
         returning o.outbox_id, o.event_id, o.topic, o.payload, o.created_at, o.attempts",
    )
    .bind(limit)
    .bind(lease.as_secs_f64())
    .fetch_all(pool)
    .await?;
    rows.sort_by_key(|r| r.outbox_id);
    Ok(rows)
}

/// Marks a row delivered and ends its lease.
pub async fn mark_delivered(pool: &PgPool, outbox_id: i64) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set delivered_at = now(), attempts = attempts + 1, last_error = null,
                           locked_until = null
          where outbox_id = $1",
    )
    .bind(outbox_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records a failed delivery: the attempt, the error, and when to try again; ends the
/// lease.
pub async fn mark_failed(
    pool: &PgPool,
    outbox_id: i64,
    error: &str,
    retry_in: std::time::Duration,
) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set attempts = attempts + 1, last_error = $2, locked_until = null,
                           next_attempt_at = now() + make_interval(secs => $3)
          where outbox_id = $1",
    )
    .bind(outbox_id)
    .bind(error)
    .bind(retry_in.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(())
}
