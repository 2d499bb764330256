//! Orders: checkout of a live hold, reading and cancelling orders.

use boxoffice_core::hold::{CancelOutcome, CheckoutOutcome, Order, PricedSeat};
use boxoffice_core::ids::{EventId, UserId};
use uuid::Uuid;

use super::holds::{event_layout, priced};
use super::Error;
use crate::state::AppState;

/// An order with its seats' labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelledOrder {
    /// The order.
    pub order: Order,
    /// Its seats with labels and the prices charged.
    pub seats: Vec<PricedSeat>,
}

/// What a checkout came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checkout {
    /// The hold became this order now.
    Created(LabelledOrder),
    /// The hold had become this order before (a repeat, perhaps concurrent).
    Existing(LabelledOrder),
}

async fn labelled(state: &AppState, order: Order) -> Result<LabelledOrder, Error> {
    let map = event_layout(state, order.event_id).await?;
    Ok(LabelledOrder {
        seats: priced(&map, &order.seats),
        order,
    })
}

/// Turns `user`'s live hold `token` into an order: its seats are sold, with the order and
/// its outbox row, in one transaction. The same token again finds the same order.
pub async fn checkout(
    state: &AppState,
    event: EventId,
    token: Uuid,
    user: &UserId,
) -> Result<Checkout, Error> {
    event_layout(state, event).await?;
    match state.holds.checkout(event, token, user).await? {
        CheckoutOutcome::Created(order) => Ok(Checkout::Created(labelled(state, order).await?)),
        CheckoutOutcome::Existing(order) => Ok(Checkout::Existing(labelled(state, order).await?)),
        CheckoutOutcome::NotLive => Err(Error::HoldNotLive),
        CheckoutOutcome::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}

/// The order `id`, for its owner (`by`) or an admin (`None`).
pub async fn get_order(
    state: &AppState,
    id: Option<Uuid>,
    by: Option<&UserId>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    let order = boxoffice_store::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if by.is_some_and(|u| u != &order.user_id) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    labelled(state, order).await
}

/// Cancels the order `id` (its owner `by`, or an admin: `None`); its seats are on sale
/// again. A cancelled order is answered as it is.
pub async fn cancel_order(
    state: &AppState,
    id: Option<Uuid>,
    by: Option<&UserId>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    match state.holds.cancel(id, by).await? {
        CancelOutcome::Cancelled(order) => labelled(state, order).await,
        CancelOutcome::NotFound => Err(Error::OrderNotFound),
        CancelOutcome::Forbidden => Err(Error::Forbidden("this order belongs to another user")),
    }
}
