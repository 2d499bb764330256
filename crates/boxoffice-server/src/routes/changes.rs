//! Changing sold seats: moves of an order's seats, swaps between orders, a season night
//! taken back, and resale listings.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use boxoffice_api::{
    ChangedOrder, Listed, MovesBody, ResaleBody, SeasonOrderView, SwapBody, Swapped,
};
use boxoffice_core::ids::{parse_canonical_uuid, EventId};
use boxoffice_service::organizations::Owned;
use boxoffice_service::{changes, resale};
use boxoffice_store::journal::audit::By;

use crate::auth::{Caller, Staff};
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

/// Moves seats of a paid order to other seats, all or none (staff; the buyer while the
/// event's `changes.buyer_moves_until` is in the future). Old tickets are revoked and new
/// ones issued; the seats left go to the waiting list first, then on sale; the outbox says
/// `order.changed`.
#[utoipa::path(post, path = "/v1/orders/{id}/moves", tag = "orders", request_body = MovesBody,
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Moved: the order now, and the new total less the old", body = ChangedOrder),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order, or a buyer past `buyer_moves_until`", body = Problem),
        (status = 404, description = "No such order", body = Problem),
        (status = 409, description = "`seat_unavailable`: a `to` seat is not free to the order (named); `order_not_changeable`: the order is not paid", body = Problem),
        (status = 422, description = "A `from` not in the order, a seat moved twice, or no moves", body = Problem),
    ))]
pub async fn move_seats(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<MovesBody>,
) -> Result<axum::Json<ChangedOrder>, ApiError> {
    let id = parse_canonical_uuid(&id);
    Ok(axum::Json(
        changes::move_seats(&state, id, &body.moves, caller.acting().by()).await?,
    ))
}

/// Swaps a seat of one paid order for a seat of another, in one transaction (staff): each
/// order has the other's seat, tickets reissued, `order.changed` for each.
#[utoipa::path(post, path = "/v1/events/{id}/swaps", tag = "orders", request_body = SwapBody,
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Swapped: both orders now", body = Swapped),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token, or a key whose role may not change orders", body = Problem),
        (status = 404, description = "No such event or order", body = Problem),
        (status = 409, description = "`order_not_changeable`: an order is not paid", body = Problem),
        (status = 422, description = "A seat not in its order, one order twice, or an order of another event", body = Problem),
    ))]
pub async fn swap(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<SwapBody>,
) -> Result<axum::Json<Swapped>, ApiError> {
    let event = super::event_id(&id)?;
    for side in [&body.a, &body.b] {
        staff
            .sees_thing(&state, Owned::Order(side.order_id))
            .await?;
    }
    Ok(axum::Json(
        changes::swap(&state, event, &body.a, &body.b, By::Staff(&staff.actor())).await?,
    ))
}

/// Takes back a season order's night released earlier, while its seats are still free
/// that night (not held, sold, listed or offered to the waiting list): the season order
/// covers the night again, with new tickets.
#[utoipa::path(post, path = "/v1/orders/{id}/events/{event_id}/reclaim", tag = "orders",
    params(
        ("id" = String, Path, description = "Season order id"),
        ("event_id" = String, Path, description = "The event released"),
    ),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Taken back: the season order now", body = SeasonOrderView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such season order, or it covers no such event", body = Problem),
        (status = 409, description = "`seat_unavailable`: a seat is not free that night any more; `order_not_changeable`: the night was not released", body = Problem),
    ))]
pub async fn reclaim_night(
    caller: Caller,
    State(state): State<AppState>,
    Path((id, event_id)): Path<(String, String)>,
) -> Result<axum::Json<SeasonOrderView>, ApiError> {
    let id = parse_canonical_uuid(&id);
    let event = parse_canonical_uuid(&event_id).map(EventId);
    Ok(axum::Json(
        changes::reclaim_night(&state, id, event, caller.acting().by()).await?,
    ))
}

/// Lists seats of a paid order for resale (its buyer, or staff): they read `resale` in
/// availability, the seats list and the stream, and any buyer may hold and buy them (best
/// available never picks them). The order that buys one takes it from this order: the
/// seller's ticket is revoked and the outbox says `order.resold`.
#[utoipa::path(post, path = "/v1/orders/{id}/resale", tag = "orders", request_body = ResaleBody,
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Listed: every seat of the order listed now", body = Listed),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
        (status = 409, description = "`already_redeemed`: a seat's ticket let someone in; `order_not_changeable`: the order is not paid; `event_started`", body = Problem),
        (status = 422, description = "A seat not in the order, a seat twice, or no seats", body = Problem),
    ))]
pub async fn list_for_resale(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<ResaleBody>,
) -> Result<axum::Json<Listed>, ApiError> {
    let id = parse_canonical_uuid(&id);
    let listed = resale::list(&state, id, &body.seats, caller.acting().by()).await?;
    Ok(axum::Json(Listed { listed }))
}

/// The seats an order lists for resale (its buyer, or staff).
#[utoipa::path(get, path = "/v1/orders/{id}/resale", tag = "orders",
    params(("id" = String, Path, description = "Order id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The seats listed", body = Listed),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn listed(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<Listed>, ApiError> {
    let id =
        parse_canonical_uuid(&id).ok_or(ApiError::from(boxoffice_service::Error::OrderNotFound))?;
    // The order's own buyer, or staff: as reading the order.
    boxoffice_service::orders::get_order(&state, Some(id), caller.user()).await?;
    Ok(axum::Json(Listed {
        listed: resale::listed(&state, id).await?,
    }))
}

/// Takes a resale listing back (the order's buyer, or staff): the seat is the order's
/// alone again, unless someone holds it now.
#[utoipa::path(delete, path = "/v1/orders/{id}/resale/{seat_id}", tag = "orders",
    params(
        ("id" = String, Path, description = "Order id"),
        ("seat_id" = String, Path, description = "A seat the order lists"),
    ),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 204, description = "Withdrawn: the seat is the order's alone again"),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order, or it lists no such seat", body = Problem),
        (status = 409, description = "`seat_unavailable`: someone holds the seat now", body = Problem),
    ))]
pub async fn withdraw(
    caller: Caller,
    State(state): State<AppState>,
    Path((id, seat)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let id = parse_canonical_uuid(&id);
    resale::withdraw(&state, id, &seat, caller.acting().by()).await?;
    Ok(StatusCode::NO_CONTENT)
}
