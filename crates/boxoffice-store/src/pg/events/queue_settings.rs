//! An event's settings that change after creation: its waiting room (the line itself
//! lives in Redis), how its tickets are let in, and who may change its sold seats.

use boxoffice_core::event::{ChangeSettings, EntrySettings, QueueSettings};
use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};

use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;

/// Writes the event's waiting room in the caller's transaction.
pub(super) async fn write_queue(
    conn: &mut PgConnection,
    id: EventId,
    queue: &QueueSettings,
) -> Result<(), StoreError> {
    sqlx::query(
        "insert into event_queue (event_id, enabled, opens_at, admit_per_minute, session_seconds,
                                  shuffle_at_open)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (event_id) do update
            set enabled = excluded.enabled, opens_at = excluded.opens_at,
                admit_per_minute = excluded.admit_per_minute,
                session_seconds = excluded.session_seconds,
                shuffle_at_open = excluded.shuffle_at_open",
    )
    .bind(id.0)
    .bind(queue.enabled)
    .bind(queue.opens_at)
    .bind(queue.admit_per_minute as i32)
    .bind(queue.session_seconds as i32)
    .bind(queue.shuffle_at_open)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Sets (or, with `None`, removes) the event's waiting room; false if there is no such
/// event.
pub async fn set_queue(
    pool: &PgPool,
    id: EventId,
    queue: Option<&QueueSettings>,
    actor: Option<&Actor>,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let exists: Option<i32> =
        sqlx::query_scalar("select 1 from event where event_id = $1 for key share")
            .bind(id.0)
            .fetch_optional(&mut *tx)
            .await?;
    if exists.is_none() {
        return Ok(false);
    }
    let before = self::queue(&mut *tx, id).await?;
    match queue {
        Some(queue) => write_queue(&mut tx, id, queue).await?,
        None => {
            sqlx::query("delete from event_queue where event_id = $1")
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
    }
    if let (Some(actor), true) = (actor, before.as_ref() != queue) {
        let change = Change {
            action: Action::EventUpdated,
            target_id: id.to_string(),
            changes: serde_json::json!({ "queue": [before, queue] }),
        };
        audit::write(&mut tx, actor, &change).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Sets how the event's tickets are let in; false if there is no such event.
pub async fn set_entry(
    pool: &PgPool,
    id: EventId,
    entry: EntrySettings,
    actor: Option<&Actor>,
) -> Result<bool, StoreError> {
    let setting = Setting {
        name: "entry",
        column: "entry_reentry",
        settings: |reentry| EntrySettings { reentry },
    };
    set_column(pool, id, setting, entry.reentry, actor).await
}

/// Sets who may change the event's sold seats; false if there is no such event.
pub async fn set_changes(
    pool: &PgPool,
    id: EventId,
    changes: ChangeSettings,
    actor: Option<&Actor>,
) -> Result<bool, StoreError> {
    let setting = Setting {
        name: "changes",
        column: "buyer_moves_until",
        settings: |buyer_moves_until| ChangeSettings { buyer_moves_until },
    };
    set_column(pool, id, setting, changes.buyer_moves_until, actor).await
}

/// Who may change the event's sold seats; `None` if there is no such event.
pub async fn changes(pool: &PgPool, id: EventId) -> Result<Option<ChangeSettings>, StoreError> {
    let row: Option<Option<DateTime<Utc>>> =
        sqlx::query_scalar("select buyer_moves_until from event where event_id = $1")
            .bind(id.0)
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|buyer_moves_until| ChangeSettings { buyer_moves_until }))
}

/// An event setting kept in one column of `event`.
struct Setting<T, S> {
    /// Its name in the API (and the audit entry).
    name: &'static str,
    /// The column.
    column: &'static str,
    /// The settings the column's value makes.
    settings: fn(T) -> S,
}

/// Sets one column of the event to `value`, with staff's audit entry of the settings
/// before and after when it changes; false if there is no such event.
async fn set_column<T, S>(
    pool: &PgPool,
    id: EventId,
    setting: Setting<T, S>,
    value: T,
    actor: Option<&Actor>,
) -> Result<bool, StoreError>
where
    T: Copy + PartialEq + Send + Unpin,
    T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + for<'q> sqlx::Encode<'q, sqlx::Postgres>,
    T: sqlx::Type<sqlx::Postgres>,
    S: serde::Serialize,
{
    let column = setting.column;
    let mut tx = pool.begin().await?;
    let before: Option<T> = sqlx::query_scalar(AssertSqlSafe(format!(
        "select {column} from event where event_id = $1 for no key update"
    )))
    .bind(id.0)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(before) = before else {
        return Ok(false);
    };
    if before != value {
        sqlx::query(AssertSqlSafe(format!(
            "update event set {column} = $2 where event_id = $1"
        )))
        .bind(id.0)
        .bind(value)
        .execute(&mut *tx)
        .await?;
        if let Some(actor) = actor {
            let change = Change {
                action: Action::EventUpdated,
                target_id: id.to_string(),
                changes: serde_json::json!({
                    setting.name: [(setting.settings)(before), (setting.settings)(value)]
                }),
            };
            audit::write(&mut tx, actor, &change).await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// The event's waiting room, if it has one.
pub async fn queue<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    id: EventId,
) -> Result<Option<QueueSettings>, StoreError> {
    type Row = (bool, DateTime<Utc>, i32, i32, bool);
    let row: Option<Row> = sqlx::query_as(
        "select enabled, opens_at, admit_per_minute, session_seconds, shuffle_at_open
           from event_queue where event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(executor)
    .await?;
    Ok(row.map(
        |(enabled, opens_at, admit_per_minute, session_seconds, shuffle_at_open)| QueueSettings {
            enabled,
            opens_at,
            admit_per_minute: admit_per_minute as u32,
            session_seconds: session_seconds as u32,
            shuffle_at_open,
        },
    ))
}

/// The events whose waiting room is on, at most `limit` of them, the latest to open first.
pub async fn queued_events(pool: &PgPool, limit: i64) -> Result<Vec<EventId>, StoreError> {
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar(
        "select event_id from event_queue where enabled order by opens_at desc limit $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(ids.into_iter().map(EventId).collect())
}
