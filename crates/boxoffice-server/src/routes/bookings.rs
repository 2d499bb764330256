//! General admission: bookings by quantity, and their cancellation.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use boxoffice_api::{BookingBody, BookingView, PaymentBody};
use boxoffice_store::pg::bookings::Booking;

use crate::auth::{Buyer, Caller, Staff};
use crate::error::{ApiError, Problem};
use crate::extract::{Json, PassHeader};
use crate::state::AppState;
use boxoffice_service::bookings::{self, PlacesWanted};

/// Longest idempotency key accepted.
const MAX_KEY_LEN: usize = 255;

/// A booking as the API shows it.
pub(crate) fn booking_view(b: Booking) -> BookingView {
    BookingView {
        booking_id: b.booking_id,
        event_id: b.event_id,
        area: b.area,
        quantity: b.quantity,
        total_cents: b.total_cents,
        currency: b.currency,
        status: b.status,
        pay_by: b.pay_by,
        paid_at: b.paid_at,
        payment_reference: b.payment_reference,
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
/// the first answer again. While the event's waiting room is on, only with a valid pass of
/// the buyer's (`Boxoffice-Pass`). A booking leaves the pass running, so that a repeat
/// with the same key still finds the first answer.
#[utoipa::path(post, path = "/v1/events/{id}/bookings", tag = "general admission", request_body = BookingBody,
    params(("id" = String, Path, description = "Event id"),
           ("Idempotency-Key" = Option<String>, Header, description = "Repeat-safe key, per user"),
           ("Boxoffice-Pass" = Option<String>, Header, description = "The waiting room's pass, while the event's queue is on")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Booked", body = BookingView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "`queue_required`: the event's waiting room is on, and no valid pass of this buyer was shown", body = Problem),
        (status = 404, description = "No such event or area", body = Problem),
        (status = 409, description = "`sold_out`: fewer places left than asked; `limit_exceeded`: the buyer's bookings of the area would pass its `max_per_user`", body = Problem),
        (status = 422, description = "Quantity out of range, or a reused key", body = Problem),
    ))]
pub async fn create_booking(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    PassHeader(pass): PassHeader,
    Json(body): Json<BookingBody>,
) -> Result<(StatusCode, axum::Json<BookingView>), ApiError> {
    let event = super::event_id(&id)?;
    let key = idempotency_key(&headers)?;
    let wanted = PlacesWanted {
        area: &body.area,
        quantity: body.quantity,
        idempotency_key: key,
        pass: pass.as_deref(),
    };
    let booking = bookings::create_booking(&state, event, &user, wanted).await?;
    Ok((StatusCode::CREATED, axum::Json(booking_view(booking))))
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
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    let booking = bookings::cancel_booking(&state, id, caller.acting().by()).await?;
    Ok(axum::Json(booking_view(booking)))
}

/// Records a booking's payment (the platform's server, once its payment provider
/// confirmed): a pending booking is paid and its tickets issued, before its `pay_by`.
#[utoipa::path(post, path = "/v1/bookings/{id}/payment", tag = "general admission", request_body = PaymentBody,
    params(("id" = String, Path, description = "Booking id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Paid (now, or before with this reference)", body = BookingView),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token: a buyer can never mark a booking paid", body = Problem),
        (status = 404, description = "No such booking", body = Problem),
        (status = 409, description = "`already_paid` with another reference (or paid at once), or `payment_window_closed`: `pay_by` passed (the booking expired) or it was cancelled", body = Problem),
        (status = 422, description = "An amount other than the booking's total, or no reference", body = Problem),
    ))]
pub async fn pay_booking(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<PaymentBody>,
) -> Result<axum::Json<BookingView>, ApiError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(&id);
    let actor = staff.actor();
    let booking =
        bookings::pay_booking(&state, id, &body.reference, body.amount_cents, Some(&actor)).await?;
    Ok(axum::Json(booking_view(booking)))
}
