//! Housekeeping: deleting what is only kept for a while, in small batches so no sweep
//! holds a long lock or a long transaction.

use std::time::Duration;

use sqlx::PgPool;

use crate::StoreError;

/// Rows one statement of a sweep deletes at most.
pub const BATCH: i64 = 1000;

/// How long what a sweep removes is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Remembered answers to `Idempotency-Key` requests.
    pub idempotency: Duration,
    /// Outbox rows, counted from their delivery (undelivered rows are never swept).
    pub delivered_outbox: Duration,
}

impl Retention {
    /// Default [`Retention::idempotency`], in hours.
    pub const DEFAULT_IDEMPOTENCY_HOURS: u64 = 24;
    /// Default [`Retention::delivered_outbox`], in hours (7 days).
    pub const DEFAULT_OUTBOX_HOURS: u64 = 7 * 24;
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            idempotency: Duration::from_secs(Self::DEFAULT_IDEMPOTENCY_HOURS * 3600),
            delivered_outbox: Duration::from_secs(Self::DEFAULT_OUTBOX_HOURS * 3600),
        }
    }
}

/// What one sweep deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Idempotency rows.
    pub idempotency: u64,
    /// Delivered outbox rows.
    pub outbox: u64,
    /// Ended waiting-room passes, a day after they ended (no pass lives longer).
    pub passes: u64,
    /// Outbox rows that waited [`UNDELIVERED_KEPT`] for their organization to set a
    /// webhook, never tried.
    pub waited: u64,
}

/// How long an outbox row of an organization without a webhook waits for one: 7 days.
/// A row a relay has tried (a webhook that fails) is never swept undelivered.
pub const UNDELIVERED_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);

/// How long an ended pass is remembered: the longest a pass can live
/// (`session_seconds` is at most a day).
const PASS_ENDED_KEPT: Duration = Duration::from_secs(24 * 3600);

/// Deletes idempotency rows and delivered outbox rows older than `retention`, passes
/// ended more than a day ago, and outbox rows never tried that waited
/// [`UNDELIVERED_KEPT`] while their organization had no webhook, a batch per
/// statement (each its own short transaction) until none is left. Rows another sweep (on
/// another server) is deleting right now are skipped, not waited for.
pub async fn sweep(pool: &PgPool, retention: Retention) -> Result<Swept, StoreError> {
    Ok(Swept {
        idempotency: delete_in_batches(
            pool,
            "delete from idempotency
              where (event_id, user_id, key) in (select event_id, user_id, key from idempotency
                                        where created_at < now() - make_interval(secs => $1)
                                        limit $2
                                          for update skip locked)",
            retention.idempotency,
        )
        .await?,
        outbox: delete_in_batches(
            pool,
            "delete from outbox
              where outbox_id in (select outbox_id from outbox
                                   where delivered_at < now() - make_interval(secs => $1)
                                   order by delivered_at
                                   limit $2
                                     for update skip locked)",
            retention.delivered_outbox,
        )
        .await?,
        passes: delete_in_batches(
            pool,
            "delete from pass_ended
              where (event_id, ticket) in (select event_id, ticket from pass_ended
                                            where ended_at < now() - make_interval(secs => $1)
                                            limit $2
                                              for update skip locked)",
            PASS_ENDED_KEPT,
        )
        .await?,
        waited: delete_in_batches(
            pool,
            "delete from outbox
              where outbox_id in (select o.outbox_id from outbox o
                                    left join event e on e.event_id = o.event_id
                                   where o.delivered_at is null and o.attempts = 0
                                     and o.created_at < now() - make_interval(secs => $1)
                                     and not exists (
                                           select 1 from organization_webhook w
                                            where w.organization_id = coalesce(
                                                    e.organization_id,
                                                    '00000000-0000-0000-0000-000000000001'))
                                   order by o.created_at
                                   limit $2
                                     for update of o skip locked)",
            UNDELIVERED_KEPT,
        )
        .await?,
    })
}

/// Runs `delete` (whose `$1` is an age in seconds and `$2` the batch size) until a batch
/// deletes fewer rows than it may; answers how many rows went.
async fn delete_in_batches(
    pool: &PgPool,
    delete: &'static str,
    age: Duration,
) -> Result<u64, StoreError> {
    let mut deleted = 0;
    loop {
        let n = sqlx::query(delete)
            .bind(age.as_secs_f64())
            .bind(BATCH)
            .execute(pool)
            .await?
            .rows_affected();
        deleted += n;
        if n < BATCH as u64 {
            return Ok(deleted);
        }
    }
}
