//! Orders: checkout of a live hold, read, cancel.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use boxoffice_api::{
    AnyOrder, CheckoutBody, MyOrder, MyOrderKind, MyOrdersView, OrderView, PaymentBody,
    ReleasedNight,
};
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::EventId;

use crate::auth::{Buyer, Caller, Staff};
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;
use boxoffice_service::orders::{self, Checkout, Mine};
use boxoffice_service::seasons;

/// Checks out a live hold: its seats are sold, with the order and its outbox row, in one
/// transaction. The same token again finds the same order (200).
#[utoipa::path(post, path = "/v1/events/{id}/orders", tag = "orders", request_body = CheckoutBody,
    params(("id" = String, Path, description = "Event id")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Ordered", body = OrderView),
        (status = 200, description = "This hold was checked out before: that order", body = OrderView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "The hold expired or was released", body = Problem),
        (status = 422, description = "Invalid body", body = Problem),
    ))]
pub async fn create_order(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<CheckoutBody>,
) -> Result<(StatusCode, axum::Json<OrderView>), ApiError> {
    let event = super::event_id(&id)?;
    Ok(
        match orders::checkout(&state, event, body.hold_token, &user).await? {
            Checkout::Created(order) => (StatusCode::CREATED, axum::Json(order.into())),
            Checkout::Existing(order) => (StatusCode::OK, axum::Json(order.into())),
        },
    )
}

/// An order, for its owner or an admin: an event's, or a season's (also found by the id of
/// one of its events' orders).
#[utoipa::path(get, path = "/v1/orders/{id}", tag = "orders",
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The order", body = AnyOrder),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn get_order(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<AnyOrder>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    if let Some(id) = id {
        if let Some(season) = seasons::find_order(&state, id, caller.user()).await? {
            return Ok(axum::Json(AnyOrder::Season(season)));
        }
    }
    Ok(axum::Json(AnyOrder::Event(
        orders::get_order(&state, id, caller.user()).await?.into(),
    )))
}

/// Records an order's payment (the platform's server, once its payment provider
/// confirmed): a pending order is paid and its seats sold, before its `pay_by`.
#[utoipa::path(post, path = "/v1/orders/{id}/payment", tag = "orders", request_body = PaymentBody,
    params(("id" = String, Path, description = "Order id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Paid (now, or before with this reference)", body = OrderView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token: a buyer can never mark an order paid", body = Problem),
        (status = 404, description = "No such order", body = Problem),
        (status = 409, description = "`already_paid` with another reference, or `payment_window_closed`: `pay_by` passed (the order expired) or it was cancelled", body = Problem),
        (status = 422, description = "An amount other than the order's total, or no reference", body = Problem),
    ))]
pub async fn pay_order(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<PaymentBody>,
) -> Result<axum::Json<OrderView>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    Ok(axum::Json(
        orders::pay_order(
            &state,
            id,
            &body.reference,
            body.amount_cents,
            Some(&staff.actor()),
        )
        .await?
        .into(),
    ))
}

/// Cancels an order (owner or admin); its seats are on sale again (a season order's in
/// every event where they were not released). Cancelling a cancelled order answers the
/// order as it is.
#[utoipa::path(post, path = "/v1/orders/{id}/cancel", tag = "orders",
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Cancelled", body = AnyOrder),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn cancel_order(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<AnyOrder>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    if let Some(id) = id {
        if let Some(season) = seasons::cancel_order(&state, id, caller.acting().by()).await? {
            return Ok(axum::Json(AnyOrder::Season(season)));
        }
    }
    Ok(axum::Json(AnyOrder::Event(
        orders::cancel_order(&state, id, caller.acting().by())
            .await?
            .into(),
    )))
}

/// Releases a season order's seats for one event (owner or admin): they go on sale in
/// that event alone, offered first to its waiting list; the order keeps every other event.
#[utoipa::path(post, path = "/v1/orders/{id}/events/{event_id}/release", tag = "orders",
    params(
        ("id" = String, Path, description = "Season order id"),
        ("event_id" = String, Path, description = "One of the events it covers"),
    ),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Released: the seats, on sale again in that event", body = ReleasedNight),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such season order, or it covers no such event", body = Problem),
        (status = 409, description = "`already_released`: released for this event before, or the order was cancelled", body = Problem),
    ))]
pub async fn release_night(
    caller: Caller,
    State(state): State<AppState>,
    Path((id, event_id)): Path<(String, String)>,
) -> Result<axum::Json<ReleasedNight>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    let event = boxoffice_core::ids::parse_canonical_uuid(&event_id).map(EventId);
    Ok(axum::Json(
        seasons::release_night(&state, id, event, caller.acting().by()).await?,
    ))
}

/// What `GET /v1/me/orders` may be asked.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MineQuery {
    /// Only this event's orders and bookings.
    event: Option<String>,
}

/// The buyer's own orders of seats and bookings of standing places, newest first: a
/// pending one with its `pay_by`, a paid one with the number of its tickets.
#[utoipa::path(get, path = "/v1/me/orders", tag = "orders",
    params(MineQuery),
    security(("user" = [])),
    responses(
        (status = 200, description = "The buyer's orders and bookings", body = MyOrdersView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "`event` is not an event id", body = Problem),
    ))]
pub async fn my_orders(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    query: Result<Query<MineQuery>, QueryRejection>,
) -> Result<axum::Json<MyOrdersView>, ApiError> {
    let Ok(Query(query)) = query else {
        return Err(ApiError::invalid("event", "name one event"));
    };
    let event = query.event.as_deref().map(super::event_id).transpose()?;
    let orders = orders::mine(&state, &user, event)
        .await?
        .into_iter()
        .map(|mine| match mine {
            Mine::Order(order, tickets) => {
                let o = order.order;
                MyOrder {
                    kind: MyOrderKind::Order,
                    id: o.order_id,
                    event_id: o.event_id,
                    status: o.status,
                    pay_by: pending_until(o.status, o.payment.as_ref().map(|p| p.pay_by)),
                    seats: Some(order.seats),
                    area: None,
                    quantity: None,
                    total_cents: o.total_cents,
                    currency: o.currency,
                    tickets,
                }
            }
            Mine::Booking(b) => MyOrder {
                kind: MyOrderKind::Booking,
                id: b.booking_id,
                event_id: b.event_id,
                status: b.status,
                pay_by: pending_until(b.status, b.pay_by),
                seats: None,
                tickets: if b.status == OrderStatus::Paid {
                    b.quantity
                } else {
                    0
                },
                area: Some(b.area),
                quantity: Some(b.quantity),
                total_cents: b.total_cents,
                currency: b.currency,
            },
        })
        .collect();
    Ok(axum::Json(MyOrdersView { orders }))
}

/// `pay_by` while the order is pending, and nothing after.
fn pending_until(
    status: OrderStatus,
    pay_by: Option<chrono::DateTime<chrono::Utc>>,
) -> Option<chrono::DateTime<chrono::Utc>> {
    pay_by.filter(|_| status == OrderStatus::PendingPayment)
}
