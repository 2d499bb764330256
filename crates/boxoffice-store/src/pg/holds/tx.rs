//! The transaction discipline every Postgres hold path follows: how it begins, which
//! lock serializes one buyer's requests (an aborted attempt is tried again by
//! [`crate::error::retry_contention`]).

use boxoffice_core::ids::{EventId, UserId};
use sqlx::PgPool;

use crate::StoreError;

/// Starts a hold transaction that holds the per-user lock of (`event`, `user`):
/// explicit READ COMMITTED (the per-user limit relies on each statement seeing what
/// committed before it; under REPEATABLE READ the snapshot taken before the advisory lock
/// would hide the holds it waited for) and asynchronous commit (a hold is ephemeral, so a
/// crash may lose the last moments of holds, never an order) travel with the BEGIN; the
/// lock follows as a statement of its own. (Sent with the BEGIN, a lock that timed out
/// would leave the connection in an aborted transaction the pool cannot see, and the next
/// request on it would fail.)
///
/// The lock serializes every path that creates or extends holds for one (event, user)
/// pair, until the transaction ends. One key recipe for every caller,
/// `boxoffice_buyer_lock` (`sql/claim.sql`). A hash collision only makes two unrelated
/// pairs take turns; it never lets two requests of the same pair past each other.
pub(super) async fn begin_locked(
    pool: &PgPool,
    event: EventId,
    user: &UserId,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
    let mut tx = pool
        .begin_with("begin isolation level read committed; set local synchronous_commit = off")
        .await?;
    sqlx::query("select pg_advisory_xact_lock(boxoffice_buyer_lock($1, $2))")
        .bind(event.0)
        .bind(user.as_str())
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}
