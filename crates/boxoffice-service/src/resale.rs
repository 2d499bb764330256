//! Resale: a buyer offers sold seats of their order again; any buyer holds and buys them
//! as free seats, and the order that buys one takes it from the seller's
//! ([`sales::resale`]). Best available never picks them.

use boxoffice_core::availability::SeatStatus;
use boxoffice_store::journal::audit::By;
use boxoffice_store::sales;
use chrono::Utc;
use uuid::Uuid;

use crate::changes::refusal;
use crate::live::Change;
use crate::{Error, Services};

/// Most seats listed in one request.
pub const MAX_LISTED: usize = 100;

/// Lists `seats` of the paid order `id` for resale (its buyer, or staff: `by`), before the
/// event starts; answers every seat of the order listed now.
pub async fn list(
    state: &Services,
    id: Option<Uuid>,
    seats: &[String],
    by: By<'_>,
) -> Result<Vec<String>, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    if seats.is_empty() || seats.len() > MAX_LISTED {
        return Err(Error::invalid(
            "seats",
            &format!("must list 1 to {MAX_LISTED} seats"),
        ));
    }
    let mut sorted: Vec<String> = seats.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid("seats", "a seat is listed twice"));
    }
    let order = sales::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    let policy = crate::layouts::event_policy(state, order.event_id).await?;
    if policy.starts_at <= Utc::now() {
        return Err(Error::EventStarted);
    }
    let listed = sales::resale::list(&state.pool, &*state.holds, id, &sorted, by)
        .await?
        .map_err(|refused| refusal(refused, None))?;
    let now: Vec<&str> = sorted
        .iter()
        .map(String::as_str)
        .filter(|s| listed.iter().any(|l| l == s))
        .collect();
    state
        .live
        .publish(order.event_id, Change::now(now, SeatStatus::Resale))
        .await;
    Ok(listed)
}

/// Takes the listing of `seat` by the order `id` back (its buyer, or staff: `by`): the
/// seat is the order's alone again, unless someone holds it now (`409 seat_unavailable`).
pub async fn withdraw(
    state: &Services,
    id: Option<Uuid>,
    seat: &str,
    by: By<'_>,
) -> Result<(), Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    let order = sales::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    let map = crate::layouts::event_layout(state, order.event_id).await?;
    let event = sales::resale::withdraw(&state.pool, &*state.holds, id, seat, by)
        .await?
        .map_err(|refused| refusal(refused, Some(&map)))?;
    state
        .live
        .publish(event, Change::now([seat], SeatStatus::Sold))
        .await;
    Ok(())
}

/// The seats the order `id` lists for resale.
pub async fn listed(state: &Services, id: Uuid) -> Result<Vec<String>, Error> {
    let mut conn = state
        .pool
        .acquire()
        .await
        .map_err(boxoffice_store::StoreError::from)?;
    Ok(sales::resale::listed_of(&mut conn, id).await?)
}
