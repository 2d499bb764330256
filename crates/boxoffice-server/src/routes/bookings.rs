//! General admission: bookings by quantity, and their cancellation.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use boxoffice_core::ids::EventId;
use boxoffice_store::bookings::{self, Booking, BookingCancel, BookingOutcome, BookingRequest};
use boxoffice_store::gate::GateTake;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::{Buyer, Caller};
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

/// Longest idempotency key accepted.
const MAX_KEY_LEN: usize = 255;

/// Body of `POST /v1/events/{id}/bookings`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BookingBody {
    /// Area code.
    pub area: String,
    /// Places wanted, 1 to the area's `max_per_booking`.
    pub quantity: u32,
}

/// A general-admission booking.
#[derive(Debug, Serialize, ToSchema)]
pub struct BookingView {
    /// Booking id.
    pub booking_id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// Area code.
    pub area: String,
    /// Places booked.
    pub quantity: u32,
    /// Price of all the places.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// `confirmed`, or `cancelled` once cancelled.
    pub status: String,
}

impl From<Booking> for BookingView {
    fn from(b: Booking) -> Self {
        Self {
            booking_id: b.booking_id,
            event_id: b.event_id,
            area: b.area,
            quantity: b.quantity,
            total_cents: b.total_cents,
            currency: b.currency,
            status: b.status,
        }
    }
}

/// The error a non-booking outcome answers with.
fn refusal(outcome: BookingOutcome) -> ApiError {
    match outcome {
        BookingOutcome::SoldOut { left } => ApiError::SoldOut(left),
        BookingOutcome::EventNotFound => ApiError::event_not_found(),
        BookingOutcome::AreaNotFound => ApiError::NotFound {
            code: "area_not_found",
            detail: "the event has no such area".into(),
        },
        BookingOutcome::EventStarted => ApiError::EventStarted,
        BookingOutcome::TooMany { max } => ApiError::invalid(
            "quantity",
            &format!("at most {max} places per booking in this area"),
        ),
        BookingOutcome::KeyReused => ApiError::invalid(
            "Idempotency-Key",
            "this key was used before for a different request",
        ),
        BookingOutcome::Booked(_) | BookingOutcome::Replay { .. } => {
            ApiError::Internal("not a refusal".into())
        }
    }
}

/// The answer to keep for an idempotency key: the booking, or a sold-out refusal. Invalid
/// requests keep nothing, so the key can be used again once the request is put right.
fn remember(outcome: &BookingOutcome) -> Option<(u16, serde_json::Value)> {
    match outcome {
        BookingOutcome::Booked(b) => {
            let view = BookingView::from(b.clone());
            Some((
                201,
                serde_json::to_value(view).expect("a booking serializes"),
            ))
        }
        BookingOutcome::SoldOut { left } => {
            let problem = ApiError::SoldOut(*left).problem_json();
            Some((409, problem))
        }
        _ => None,
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
        .map(Some)
        .ok_or_else(|| {
            ApiError::invalid("Idempotency-Key", "must be 1–255 visible ASCII characters")
        })
}

/// Books general-admission places. A repeated `Idempotency-Key` from the same user gets
/// the first answer again.
#[utoipa::path(post, path = "/v1/events/{id}/bookings", tag = "general admission", request_body = BookingBody,
    params(("id" = String, Path, description = "Event id"),
           ("Idempotency-Key" = Option<String>, Header, description = "Repeat-safe key, per user")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Booked", body = BookingView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "No such event or area", body = Problem),
        (status = 409, description = "Sold out: fewer places left than asked", body = Problem),
        (status = 422, description = "Quantity out of range, or a reused key", body = Problem),
    ))]
pub async fn create_booking(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Json(body): Json<BookingBody>,
) -> Result<Response, ApiError> {
    let event = super::event_id(&id)?;
    let key = idempotency_key(&headers)?;
    if body.quantity < 1 {
        return Err(ApiError::invalid("quantity", "must be at least 1"));
    }
    let request = BookingRequest {
        event,
        user: &user,
        area: &body.area,
        quantity: body.quantity,
        idempotency_key: key,
    };
    let through_gate = match pass_gate(&state, event, &body.area, body.quantity).await? {
        Gate::Refused(left) => {
            state.metrics.increment("ga_gate_rejected_total");
            return Err(ApiError::SoldOut(left));
        }
        Gate::Passed => true,
        Gate::Off => false,
    };
    state
        .metrics
        .increment("ga_bookings_reached_postgres_total");
    let outcome = bookings::book(&state.pool, &request, remember).await;
    // Places the gate let through come back to it unless they were really booked.
    if through_gate && !matches!(outcome, Ok(BookingOutcome::Booked(_))) {
        give_back(&state, event, &body.area, body.quantity).await;
    }
    match outcome? {
        BookingOutcome::Booked(booking) => {
            Ok((StatusCode::CREATED, axum::Json(BookingView::from(booking))).into_response())
        }
        BookingOutcome::Replay { status, body } => Ok(replay(status, body)),
        other => Err(refusal(other)),
    }
}

/// What the sale-day gate said.
enum Gate {
    /// No gate (off, or Redis unreachable): Postgres alone decides.
    Off,
    /// Places taken from the gate's counter; on to Postgres.
    Passed,
    /// Sold out as far as the gate knows.
    Refused(u32),
}

/// Takes the places from the gate's counter, building the counter from Postgres the first
/// time (or after Redis lost it). Redis being down never fails a booking: the gate is an
/// optimisation, so the booking goes on to Postgres as if there were no gate.
async fn pass_gate(
    state: &AppState,
    event: EventId,
    area: &str,
    quantity: u32,
) -> Result<Gate, ApiError> {
    let Some(gate) = &state.gate else {
        return Ok(Gate::Off);
    };
    for _ in 0..2 {
        match gate.take(event, area, quantity).await {
            Ok(GateTake::Taken) => return Ok(Gate::Passed),
            Ok(GateTake::Refused { left }) => return Ok(Gate::Refused(left)),
            Ok(GateTake::Missing) => match bookings::area_left(&state.pool, event, area).await? {
                Some(left) => {
                    if let Err(error) = gate.init(event, area, left).await {
                        tracing::warn!(%error, "sale-day gate unavailable; booking without it");
                        return Ok(Gate::Off);
                    }
                }
                // No such event or area: let the booking path say which.
                None => return Ok(Gate::Off),
            },
            Err(error) => {
                tracing::warn!(%error, "sale-day gate unavailable; booking without it");
                return Ok(Gate::Off);
            }
        }
    }
    Ok(Gate::Off)
}

async fn give_back(state: &AppState, event: EventId, area: &str, quantity: u32) {
    if let Some(gate) = &state.gate {
        if let Err(error) = gate.give_back(event, area, quantity).await {
            // The counter is then low until Redis rebuilds it; it refuses early, never oversells.
            tracing::warn!(%error, "could not return places to the sale-day gate");
        }
    }
}

/// The first answer again, exactly as it was sent.
fn replay(status: u16, body: serde_json::Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = if status.is_success() {
        "application/json"
    } else {
        "application/problem+json"
    };
    (
        status,
        [(axum::http::header::CONTENT_TYPE, content_type)],
        body.to_string(),
    )
        .into_response()
}

/// Cancels a booking (owner or admin) and returns its places to the area. Cancelling a
/// cancelled booking answers the booking again.
#[utoipa::path(post, path = "/v1/bookings/{id}/cancel", tag = "general admission",
    params(("id" = String, Path, description = "Booking id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "Cancelled", body = BookingView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's booking", body = Problem),
        (status = 404, description = "No such booking", body = Problem),
    ))]
pub async fn cancel_booking(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<BookingView>, ApiError> {
    let not_found = || ApiError::NotFound {
        code: "not_found",
        detail: "no such booking".into(),
    };
    let id = boxoffice_core::ids::parse_canonical_uuid(&id).ok_or_else(not_found)?;
    match bookings::cancel_booking(&state.pool, id, caller.user()).await? {
        BookingCancel::Cancelled(booking) => {
            give_back(&state, booking.event_id, &booking.area, booking.quantity).await;
            Ok(axum::Json(booking.into()))
        }
        BookingCancel::AlreadyCancelled(booking) => Ok(axum::Json(booking.into())),
        BookingCancel::NotFound => Err(not_found()),
        BookingCancel::Forbidden => {
            Err(ApiError::Forbidden("this booking belongs to another user"))
        }
    }
}
