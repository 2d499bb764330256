//! Holds: create (all or nothing), read, extend, release.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use boxoffice_api::{AddSeatsBody, Extended, HoldBody, HoldView};
use uuid::Uuid;

use crate::auth::{Buyer, TokenChannel};
use crate::error::{ApiError, Problem};
use crate::extract::{Json, PassHeader};
use crate::state::AppState;
use boxoffice_service::best_available;
use boxoffice_service::{basket, holds};

/// A hold token from a path; a malformed one names no hold.
fn token(text: &str) -> Option<Uuid> {
    boxoffice_core::ids::parse_canonical_uuid(text)
}

/// Holds every seat asked for under one new token, or none; or, given `best_available`,
/// the best seats free now, side by side in one row where any row has enough. While the
/// event's waiting room is on, only with a valid pass of the buyer's (`Boxoffice-Pass`).
#[utoipa::path(post, path = "/v1/events/{id}/holds", tag = "holds", request_body = HoldBody,
    params(("id" = String, Path, description = "Event id"),
           ("Boxoffice-Pass" = Option<String>, Header, description = "The waiting room's pass, while the event's queue is on")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Held", body = HoldView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "`queue_required`: the event's waiting room is on, and no valid pass of this buyer was shown", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "A seat is unavailable (for best available: not enough seats, or the choice was taken every time), or the user's limit is reached", body = Problem),
        (status = 422, description = "Empty, repeated, unknown or too many seats; a best-available quantity or ticket type the event does not allow", body = Problem),
        (status = 429, description = "Too many holds by this user; see Retry-After", body = Problem),
        (status = 503, description = "A store is unavailable", body = Problem),
    ))]
pub async fn create_hold(
    Buyer(user): Buyer,
    TokenChannel(channel): TokenChannel,
    State(state): State<AppState>,
    Path(id): Path<String>,
    PassHeader(pass): PassHeader,
    Json(body): Json<HoldBody>,
) -> Result<(StatusCode, axum::Json<HoldView>), ApiError> {
    let event = super::event_id(&id)?;
    let view = match (body.seats, body.best_available) {
        (Some(seats), None) => holds::create_hold(
            &state,
            event,
            &user,
            channel.as_deref(),
            pass.as_deref(),
            &seats,
        )
        .await?
        .into(),
        (None, Some(ask)) => {
            let best = best_available::hold_best_available(
                &state,
                event,
                &user,
                channel.as_deref(),
                pass.as_deref(),
                best_available::BestAsk {
                    quantity: ask.quantity,
                    ticket_type: ask.ticket_type.as_deref(),
                    accessible: ask.accessible,
                },
            )
            .await?;
            HoldView {
                adjacent: Some(best.adjacent),
                ..best.hold.into()
            }
        }
        _ => {
            return Err(ApiError::invalid(
                "seats",
                "give either seats or best_available",
            ))
        }
    };
    Ok((StatusCode::CREATED, axum::Json(view)))
}

/// The hold, if it is live and the caller's.
#[utoipa::path(get, path = "/v1/events/{id}/holds/{token}", tag = "holds",
    params(("id" = String, Path, description = "Event id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 200, description = "The live hold", body = HoldView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such event, or no live hold with this token", body = Problem),
    ))]
pub async fn get_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token_text)): Path<(String, String)>,
) -> Result<axum::Json<HoldView>, ApiError> {
    let event = super::event_id(&id)?;
    let hold = holds::get_hold(&state, event, token(&token_text), &user).await?;
    Ok(axum::Json(hold.into()))
}

/// Extends a live hold by the event's hold TTL, capped at creation + `max_hold_seconds`.
#[utoipa::path(post, path = "/v1/events/{id}/holds/{token}/extend", tag = "holds",
    params(("id" = String, Path, description = "Event id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 200, description = "Extended", body = Extended),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "The hold expired or was used", body = Problem),
    ))]
pub async fn extend_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token_text)): Path<(String, String)>,
) -> Result<axum::Json<Extended>, ApiError> {
    let event = super::event_id(&id)?;
    let expires_at = holds::extend_hold(&state, event, token(&token_text), &user).await?;
    Ok(axum::Json(Extended { expires_at }))
}

/// Adds seats to a live hold of the caller's, under its token and expiry, all or none (the
/// same refusals as a new hold; the per-user limit counts the whole hold). Seats the hold
/// has already stay as they are. While the event's waiting room is on, only with a valid
/// pass of the buyer's.
#[utoipa::path(post, path = "/v1/events/{id}/holds/{token}/seats", tag = "holds", request_body = AddSeatsBody,
    params(("id" = String, Path, description = "Event id"), ("token" = String, Path, description = "Hold token"),
           ("Boxoffice-Pass" = Option<String>, Header, description = "The waiting room's pass, while the event's queue is on")),
    security(("user" = [])),
    responses(
        (status = 200, description = "The hold, grown", body = HoldView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold, or `queue_required`", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "`seat_unavailable`, `hold_limit_exceeded`, or `hold_not_live` (the hold expired, was released or used)", body = Problem),
        (status = 422, description = "Empty, repeated, unknown or too many seats", body = Problem),
        (status = 429, description = "Too many holds by this user; see Retry-After", body = Problem),
    ))]
pub async fn add_seats(
    Buyer(user): Buyer,
    TokenChannel(channel): TokenChannel,
    State(state): State<AppState>,
    Path((id, token_text)): Path<(String, String)>,
    PassHeader(pass): PassHeader,
    Json(body): Json<AddSeatsBody>,
) -> Result<axum::Json<HoldView>, ApiError> {
    let event = super::event_id(&id)?;
    let hold = basket::add_seats(
        &state,
        event,
        token(&token_text),
        &user,
        channel.as_deref(),
        pass.as_deref(),
        &body.seats,
    )
    .await?;
    Ok(axum::Json(hold.into()))
}

/// Takes one seat out of a live hold of the caller's and frees it; the hold keeps its
/// expiry. Taking out the last seat ends the hold (204), as a release does.
#[utoipa::path(delete, path = "/v1/events/{id}/holds/{token}/seats/{seat}", tag = "holds",
    params(("id" = String, Path, description = "Event id"), ("token" = String, Path, description = "Hold token"),
           ("seat" = String, Path, description = "Seat id")),
    security(("user" = [])),
    responses(
        (status = 200, description = "The hold without the seat", body = HoldView),
        (status = 204, description = "That was the hold's last seat: the hold is gone"),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such event, no live hold with this token, or no such seat in it", body = Problem),
    ))]
pub async fn drop_seat(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token_text, seat)): Path<(String, String, String)>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let event = super::event_id(&id)?;
    Ok(
        match basket::drop_seat(&state, event, token(&token_text), &user, &seat).await? {
            Some(hold) => axum::Json(HoldView::from(hold)).into_response(),
            None => StatusCode::NO_CONTENT.into_response(),
        },
    )
}

/// Releases the seats this token still owns (compare-and-delete). Releasing the buyer's
/// last hold ends their waiting-room pass.
#[utoipa::path(delete, path = "/v1/events/{id}/holds/{token}", tag = "holds",
    params(("id" = String, Path, description = "Event id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 204, description = "Released"),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such event, or the token owns no live seats", body = Problem),
    ))]
pub async fn release_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token_text)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let event = super::event_id(&id)?;
    holds::release_hold(&state, event, token(&token_text), &user).await?;
    Ok(StatusCode::NO_CONTENT)
}
