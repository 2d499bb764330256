//! The waiting-room passes a sale ends, recorded in Postgres (`pass_ended`): the claim
//! refuses a hold under an ended pass (`sql/claim.sql`), and general-admission bookings
//! look here whichever store holds.

use boxoffice_core::ids::EventId;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::StoreError;

/// Ends the waiting-room pass of `ticket` in `event` (a checkout under it, or a release of
/// its buyer's last hold in a store that ends passes elsewhere first).
pub async fn end_pass(
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
