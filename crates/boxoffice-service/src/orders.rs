//! Orders: checkout of a live hold, reading and cancelling orders.

use boxoffice_core::hold::{
    CancelOutcome, CheckoutOutcome, Offer, Order, OrderStatus, PayOutcome, PricedSeat,
};
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::journal::audit::{Actor, By};
use boxoffice_store::sales;
use uuid::Uuid;

use crate::layouts::{event_layout, priced};
use crate::live::Change;
use crate::overload::{limited, Path};
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

pub(crate) async fn labelled(state: &Services, order: Order) -> Result<LabelledOrder, Error> {
    let map = event_layout(state, order.event_id).await?;
    Ok(LabelledOrder {
        seats: priced(&map, &order.seats),
        order,
    })
}

/// Turns `user`'s live hold `token` into an order: its seats are sold, with the order and
/// its outbox row, in one transaction. The same token again finds the same order. A
/// checkout ends the buyer's waiting-room pass, if the event's queue admitted them. A hold
/// offered from the waiting list is bought only before the offer's deadline, as Postgres'
/// clock judges it in the order's transaction, which records the offer bought.
pub async fn checkout(
    state: &Services,
    event: EventId,
    token: Uuid,
    user: &UserId,
) -> Result<Checkout, Error> {
    let policy = crate::layouts::event_policy(state, event).await?;
    let window = policy.payment_window_seconds;
    let outcome = limited(&state.overload, Path::Checkout, async {
        let began = std::time::Instant::now();
        let outcome = sales::checkout(&state.pool, &*state.holds, event, token, user, window).await;
        let label = match &outcome {
            Ok(CheckoutOutcome::Created(order)) if order.status == OrderStatus::PendingPayment => {
                "pending"
            }
            Ok(CheckoutOutcome::Created(_)) => "sold",
            Ok(CheckoutOutcome::Existing(_)) => "repeated",
            Ok(_) => "refused",
            Err(_) => "error",
        };
        state.metrics.store_call(
            "boxoffice_checkout_duration_seconds",
            state.holds.kind(),
            label,
            began.elapsed(),
        );
        Ok(outcome?)
    })
    .await?;
    match outcome {
        CheckoutOutcome::Created(order) => {
            let seats = order.seats.iter().map(|s| s.seat_id.as_str());
            // A pending order's seats read held until its deadline.
            let change = match &order.payment {
                Some(payment) if order.status == OrderStatus::PendingPayment => {
                    Change::held(seats, payment.pay_by)
                }
                _ => Change::now(seats, SeatStatus::Sold),
            };
            state.live.publish(event, change).await;
            if order.status == OrderStatus::PendingPayment {
                // While anyone waits, the seats stay held past pay_by for the line.
                crate::waitlist::keep_if_waiting(state, event, order.order_id).await;
            }
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
    let order = sales::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if by.is_some_and(|u| u != &order.user_id) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    labelled(state, order).await
}

/// One of a buyer's orders or bookings.
#[derive(Clone, Debug)]
pub enum Mine {
    /// An order of seats, with its labels, and how many valid tickets it has.
    Order(LabelledOrder, u32),
    /// A booking of standing places.
    Booking(boxoffice_store::pg::bookings::Booking),
}

impl Mine {
    fn created_at(&self) -> chrono::DateTime<chrono::Utc> {
        match self {
            Mine::Order(order, _) => order.order.created_at,
            Mine::Booking(booking) => booking.created_at,
        }
    }
}

/// The buyer's own orders and bookings, newest first: of one event, or of every event.
pub async fn mine(
    state: &Services,
    user: &UserId,
    event: Option<EventId>,
) -> Result<Vec<Mine>, Error> {
    let (orders, bookings) = tokio::try_join!(
        sales::orders::of_user(&state.pool, user, event),
        boxoffice_store::pg::bookings::of_user(&state.pool, user, event),
    )?;
    let mut mine = Vec::with_capacity(orders.len() + bookings.len());
    for (order, tickets) in orders {
        mine.push(Mine::Order(labelled(state, order).await?, tickets));
    }
    mine.extend(bookings.into_iter().map(Mine::Booking));
    mine.sort_by_key(|m| std::cmp::Reverse(m.created_at()));
    Ok(mine)
}

/// Cancels the order `id` (its owner, or staff: `by`); its seats are on sale
/// again, offered first to the buyers waiting on the event's waiting list. A cancelled
/// order is answered as it is.
pub async fn cancel_order(
    state: &Services,
    id: Option<Uuid>,
    by: By<'_>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    match sales::cancel(&state.pool, &*state.holds, id, by).await? {
        // An order that expired unpaid is answered as it is: its seats went back on sale
        // at its deadline, and may be someone else's now.
        CancelOutcome::Cancelled(order, _) if order.status == OrderStatus::Expired => {
            labelled(state, order).await
        }
        CancelOutcome::Cancelled(order, offers) => {
            let seats = order.seats.iter().map(|s| s.seat_id.as_str());
            put_back(state, order.event_id, seats, &offers).await?;
            labelled(state, order).await
        }
        CancelOutcome::NotFound => Err(Error::OrderNotFound),
        CancelOutcome::Forbidden => Err(Error::Forbidden("this order belongs to another user")),
    }
}

/// Tells `event`'s followers that `seats` are back on sale (in their channel, for a
/// channel's seat), unless taken off sale since, or offered to the waiting list (`offers`,
/// whose holds are published too).
pub(crate) async fn put_back(
    state: &Services,
    event: EventId,
    seats: impl Iterator<Item = &str>,
    offers: &[Offer],
) -> Result<(), Error> {
    let map = event_layout(state, event).await?;
    let offered = |seat: &str| {
        offers
            .iter()
            .any(|o| o.hold.seats.iter().any(|s| s.seat_id == seat))
    };
    let change = Change::Seats(
        seats
            .filter(|s| !offered(s))
            .map(|s| SeatChange {
                id: s.to_owned(),
                status: match map.map.get(s) {
                    Some(seat) if seat.ticket_type.is_some() || map.is_elsewhere(&seat.id) => {
                        SeatStatus::Available
                    }
                    _ => SeatStatus::NotForSale,
                },
                held_until: None,
            })
            .collect(),
    );
    state.live.publish(event, change).await;
    crate::waitlist::publish(state, event, offers).await;
    Ok(())
}

/// Records that the pending order `id` was paid (by the platform's server, once its
/// payment provider confirmed): `amount_cents` must be its total. Its seats are sold if
/// they are still its own before its `pay_by`; at or after it, the order expired and the
/// payment is refused. The same `reference` again answers the same order.
pub async fn pay_order(
    state: &Services,
    id: Option<Uuid>,
    reference: &str,
    amount_cents: i64,
    actor: Option<&Actor>,
) -> Result<LabelledOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    let reference = payment_reference(reference)?;
    let order = sales::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if amount_cents != order.total_cents {
        return Err(Error::invalid(
            "amount_cents",
            &format!("must be the order's total, {}", order.total_cents),
        ));
    }
    let paid = limited(&state.overload, Path::Checkout, async {
        Ok(sales::pay(&state.pool, &*state.holds, id, reference, actor).await?)
    })
    .await?;
    match paid {
        PayOutcome::Paid(order) => {
            let seats = order.seats.iter().map(|s| s.seat_id.as_str());
            state
                .live
                .publish(order.event_id, Change::now(seats, SeatStatus::Sold))
                .await;
            labelled(state, order).await
        }
        PayOutcome::Repeated(order) => labelled(state, order).await,
        PayOutcome::AlreadyPaid(_) => Err(Error::AlreadyPaid),
        PayOutcome::Closed(order) if order.status == OrderStatus::Cancelled => {
            Err(Error::PaymentWindowClosed("this order was cancelled"))
        }
        // Its seats went back on sale at the deadline: pages saw them held until then.
        PayOutcome::Closed(_) => Err(Error::PaymentWindowClosed(
            "this order's payment window closed: it expired, and its seats went back on sale",
        )),
        PayOutcome::NotFound => Err(Error::OrderNotFound),
    }
}

/// A payment provider's reference as recorded: trimmed, 1 to 200 characters.
pub(crate) fn payment_reference(text: &str) -> Result<&str, Error> {
    let reference = text.trim();
    if reference.is_empty() || reference.chars().count() > 200 {
        return Err(Error::invalid("reference", "must be 1 to 200 characters"));
    }
    Ok(reference)
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
            pay_by: order.payment.as_ref().map(|p| p.pay_by),
            paid_at: order.payment.as_ref().and_then(|p| p.paid_at),
            payment_reference: order.payment.and_then(|p| p.reference),
        }
    }
}
