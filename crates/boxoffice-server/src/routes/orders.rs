//! Orders: checkout of a live hold, read, cancel.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use boxoffice_api::{CheckoutBody, OrderView, PaymentBody};

use crate::auth::{Admin, Buyer, Caller};
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;
use boxoffice_service::orders::{self, Checkout};

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

/// An order, for its owner or an admin.
#[utoipa::path(get, path = "/v1/orders/{id}", tag = "orders",
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The order", body = OrderView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn get_order(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<OrderView>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    Ok(axum::Json(
        orders::get_order(&state, id, caller.user()).await?.into(),
    ))
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
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<PaymentBody>,
) -> Result<axum::Json<OrderView>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    Ok(axum::Json(
        orders::pay_order(&state, id, &body.reference, body.amount_cents)
            .await?
            .into(),
    ))
}

/// Cancels an order (owner or admin); its seats are on sale again. Cancelling a cancelled
/// order answers the order as it is.
#[utoipa::path(post, path = "/v1/orders/{id}/cancel", tag = "orders",
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Cancelled", body = OrderView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn cancel_order(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<OrderView>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    Ok(axum::Json(
        orders::cancel_order(&state, id, caller.user())
            .await?
            .into(),
    ))
}
