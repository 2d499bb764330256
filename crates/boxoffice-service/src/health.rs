//! Whether this instance can serve, as `/readyz` and `/metrics` ask: the stores answer,
//! the outbox keeps up, and whether any event's waiting room is on.

use boxoffice_core::ids::EventId;

use crate::{Error, Services};

/// Postgres and the hold store both answer.
pub async fn ping(state: &Services) -> Result<(), Error> {
    tokio::try_join!(
        boxoffice_store::pg::db::ping(&state.pool),
        state.holds.ping()
    )?;
    Ok(())
}

/// The outbox rows not yet delivered, and the age in seconds of the oldest.
pub async fn outbox_backlog(state: &Services) -> Result<(i64, f64), Error> {
    Ok(boxoffice_store::journal::outbox::backlog(&state.pool).await?)
}

/// Up to `limit` events whose waiting room is on, latest opened first.
pub async fn queued_events(state: &Services, limit: i64) -> Result<Vec<EventId>, Error> {
    Ok(boxoffice_store::pg::events::queued_events(&state.pool, limit).await?)
}
