//! Orders: checkout of a live hold, reading and cancelling orders.

use boxoffice_core::hold::{CancelOutcome, CheckoutOutcome, Order, PricedSeat};
use boxoffice_core::ids::{EventId, UserId};
use uuid::Uuid;

use crate::holds::{event_layout, priced};
use crate::live::Change;
use crate::Error;
use crate::Services;
use boxoffice_api::SeatChange;
use boxoffice_core::availability::SeatStatus;

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

async fn labelled(state: &Services, order: Order) -> Result<LabelledOrder, Error> {
    let map = event_layout(state, order.event_id).await?;
    Ok(LabelledOrder {
        seats: priced(&map, &order.seats),
        order,
    })
}

/// Turns `user`'s live hold `token` into an order: its seats are sold, with the order and
/// its outbox row, in one transaction. The same token again finds the same order. A
/// checkout ends the buyer's waiting-room pass, if the event's queue admitted them.
pub async fn checkout(
    state: &Services,
    event: EventId,
    token: Uuid,
    user: &UserId,
) -> Result<Checkout, Error> {
    event_layout(state, event).await?;
    match state.holds.checkout(event, token, user).await? {
        CheckoutOutcome::Created(order) => {
            let seats = order.seats.iter().map(|s| s.seat_id.as_str());
            let change = Change::now(seats, SeatStatus::Sold);
            state.live.publish(event, change).await;
            crate::queue::done(state, event, user).await;
            Ok(Checkout::Created(labelled(state, order).await?))
        }
        CheckoutOutcome::Existing(order) => Ok(Checkout::Existing(labelled(state, order).await?)),
        CheckoutOutcome::NotLive => Err(Error::HoldNotLive),
        CheckoutOutcome::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}

/// The order `id`, for its owner (`by`) or an admin (`None`).
pub async fn get_order(
    state: &Services,
    id: Option<Uuid>,
    by: Option<&UserId>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    let order = boxoffice_store::pg::orders::load_order(&state.pool, id)
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
    state: &Services,
    id: Option<Uuid>,
    by: Option<&UserId>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    match state.holds.cancel(id, by).await? {
        CancelOutcome::Cancelled(order) => {
            let map = event_layout(state, order.event_id).await?;
            // Back on sale, unless the seat has since been taken off sale.
            let change = Change::Seats(
                order
                    .seats
                    .iter()
                    .map(|s| SeatChange {
                        id: s.seat_id.clone(),
                        status: match map.map.get(&s.seat_id) {
                            Some(seat) if seat.ticket_type.is_some() => SeatStatus::Available,
                            _ => SeatStatus::NotForSale,
                        },
                        held_until: None,
                    })
                    .collect(),
            );
            state.live.publish(order.event_id, change).await;
            labelled(state, order).await
        }
        CancelOutcome::NotFound => Err(Error::OrderNotFound),
        CancelOutcome::Forbidden => Err(Error::Forbidden("this order belongs to another user")),
    }
}

/// What the API answers for it.
impl From<LabelledOrder> for boxoffice_api::OrderView {
    fn from(o: LabelledOrder) -> Self {
        let order = o.order;
        Self {
            order_id: order.order_id,
            event_id: order.event_id,
            user_id: order.user_id.to_string(),
            seats: o.seats,
            total_cents: order.total_cents,
            currency: order.currency,
            status: order.status,
            created_at: order.created_at,
        }
    }
}
