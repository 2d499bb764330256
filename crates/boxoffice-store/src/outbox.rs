//! The outbox: rows written with every order, booking and cancellation, claimed and marked
//! by relays.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgConnection;
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

/// Claims, for this transaction, the oldest undelivered row of up to `limit` events whose
/// row is due.
///
/// Why rows are delivered once per pass and in order per event: only each event's oldest
/// undelivered row can be claimed (a later row waits until every earlier one is
/// delivered), and claimed rows are locked `for update skip locked`, so a second relay
/// running at the same time passes over them instead of claiming them too.
pub async fn claim_heads(tx: &mut PgConnection, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
    Ok(sqlx::query_as(
        "select o.outbox_id, o.event_id, o.topic, o.payload, o.created_at, o.attempts
           from outbox o
          where o.delivered_at is null and o.next_attempt_at <= now()
            and not exists (select 1 from outbox p
                             where p.event_id = o.event_id and p.delivered_at is null
                               and p.outbox_id < o.outbox_id)
          order by o.outbox_id
          limit $1
            for update skip locked",
    )
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?)
}

/// Marks a row delivered.
pub async fn mark_delivered(tx: &mut PgConnection, outbox_id: i64) -> Result<(), StoreError> {
    sqlx::query("update outbox set delivered_at = now(), attempts = attempts + 1, last_error = null where outbox_id = $1")
        .bind(outbox_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Records a failed delivery: the attempt, the error, and when to try again.
pub async fn mark_failed(
    tx: &mut PgConnection,
    outbox_id: i64,
    error: &str,
    retry_in: std::time::Duration,
) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set attempts = attempts + 1, last_error = $2,
                           next_attempt_at = now() + make_interval(secs => $3)
          where outbox_id = $1",
    )
    .bind(outbox_id)
    .bind(error)
    .bind(retry_in.as_secs_f64())
    .execute(&mut *tx)
    .await?;
    Ok(())
}
