//! The reads the organizer console makes, part of the API: an event's orders
//! (`GET /v1/events/{id}/orders`), its sales as CSV (`…/orders.csv`) and its report
//! (`…/report`). Admin only.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use boxoffice_api::{EventReport, OrderList};
use boxoffice_core::hold::OrderStatus;
use boxoffice_service::admin::{self, OrderQuery, DEFAULT_PAGE, MAX_PAGE};
use boxoffice_store::pg::admin::OrderCursor;
use futures::TryStreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::state::AppState;

/// Longest search text.
const MAX_QUERY_LEN: usize = 200;

/// The query of `GET /v1/events/{id}/orders`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrdersQuery {
    /// An order id, a buyer's user id, or (part of) a seat's label or its id.
    #[param(max_length = 200)]
    q: Option<String>,
    /// `confirmed` or `cancelled`.
    #[param(pattern = "^(confirmed|cancelled)$")]
    status: Option<String>,
    /// Orders a page, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next_cursor` of the page before.
    cursor: Option<String>,
}

/// An event's orders, newest first, a page at a time, each with its seats.
#[utoipa::path(get, path = "/v1/events/{id}/orders", tag = "orders",
    params(("id" = String, Path, description = "Event id"), OrdersQuery),
    security(("admin" = [])),
    responses(
        (status = 200, description = "A page of orders", body = OrderList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "`limit`, `status`, `cursor` or `q` invalid", body = Problem),
    ))]
pub async fn list_orders(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<OrdersQuery>, QueryRejection>,
) -> Result<axum::Json<OrderList>, ApiError> {
    let event = super::event_id(&id)?;
    let Query(query) =
        query.map_err(|e| ApiError::invalid("limit", &format!("cannot read the query: {e}")))?;
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::invalid("limit", "must be 1 to 500"));
    }
    let status = match query.status.as_deref() {
        None => None,
        // `confirmed` is what earlier versions called a paid order.
        Some("paid" | "confirmed") => Some(OrderStatus::Paid),
        Some("pending_payment") => Some(OrderStatus::PendingPayment),
        Some("expired") => Some(OrderStatus::Expired),
        Some("cancelled") => Some(OrderStatus::Cancelled),
        Some(_) => {
            return Err(ApiError::invalid(
                "status",
                "must be paid, pending_payment, expired or cancelled",
            ))
        }
    };
    let cursor = match query.cursor.as_deref() {
        None => None,
        Some(text) => Some(OrderCursor::parse(text).ok_or_else(|| {
            ApiError::invalid("cursor", "not a cursor this server gave (next_cursor)")
        })?),
    };
    if query
        .q
        .as_ref()
        .is_some_and(|q| q.chars().count() > MAX_QUERY_LEN || q.chars().any(char::is_control))
    {
        return Err(ApiError::invalid(
            "q",
            "must be at most 200 characters, without control characters",
        ));
    }
    let (orders, next_cursor) = admin::orders(
        &state,
        event,
        OrderQuery {
            q: query.q.as_deref(),
            status,
            limit,
            cursor,
        },
    )
    .await?;
    Ok(axum::Json(OrderList {
        orders: orders.into_iter().map(Into::into).collect(),
        next_cursor,
    }))
}

/// Every seat sold in the event (oldest order first) and every general-admission booking,
/// as CSV: `order_id,created_at,user_id,status,seat_id,label,ticket_type,price_cents,currency`.
/// A booking's line has the area's code as `seat_id`, `<area name> × <places>` as `label`
/// and `area` as `ticket_type`. Sent as it is read, a page of lines at a time.
#[utoipa::path(get, path = "/v1/events/{id}/orders.csv", tag = "orders",
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The sales, one line per seat or booking", content_type = "text/csv", body = String),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn orders_csv(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    let lines = admin::sales_csv(&state, event).await?;
    let body = Body::from_stream(lines.map_err(|e| {
        tracing::warn!(error = %e, "the sales download stopped");
        std::io::Error::other(e.to_string())
    }));
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"orders-{event}.csv\""),
            ),
        ],
        body,
    ))
}

/// Where the event's sale stands: seats sold, held, available and held back (all, and by
/// section), revenue (confirmed orders and bookings) by section, ticket type and area, and
/// seats sold in each of the last 60 minutes.
#[utoipa::path(get, path = "/v1/events/{id}/report", tag = "events",
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The report", body = EventReport),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn report(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<EventReport>, ApiError> {
    let event = super::event_id(&id)?;
    Ok(axum::Json(admin::report(&state, event).await?))
}
