//! The waiting list: `POST /v1/events/{id}/waitlist`, `GET` and `DELETE
//! /v1/events/{id}/waitlist/{entry}`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use boxoffice_api::{WaitlistEntryView, WaitlistJoin};
use uuid::Uuid;

use crate::auth::Buyer;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;
use boxoffice_service::waitlist;

/// Joins the event's waiting list for a quantity of seats (of one ticket type, if given),
/// or answers the entry the buyer has there already. Seats that come back (an order
/// cancelled, a channel released, seats put on sale, an offer not bought in time) are
/// offered in line order, as a hold of the buyer's (`offer` in the entry, and a
/// `waitlist.offered` webhook), to check out before the offer's `expires_at` (the event's
/// `waitlist_offer_seconds` after it was made).
#[utoipa::path(post, path = "/v1/events/{id}/waitlist", tag = "waiting list", request_body = WaitlistJoin,
    params(("id" = String, Path, description = "Event id")),
    security(("user" = [])),
    responses(
        (status = 201, description = "In line (or the entry the buyer had already)", body = WaitlistEntryView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "A quantity outside 1 to the event's `max_seats_per_user`, or a ticket type the event does not have", body = Problem),
    ))]
pub async fn join_waitlist(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<WaitlistJoin>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    let (entry, _) = waitlist::join(
        &state,
        event,
        &user,
        body.quantity,
        body.ticket_type.as_deref(),
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(entry)))
}

/// The buyer's entry: its place in line while waiting, the offer while it stands.
#[utoipa::path(get, path = "/v1/events/{id}/waitlist/{entry}", tag = "waiting list",
    params(("id" = String, Path, description = "Event id"),
           ("entry" = String, Path, description = "The entry's id")),
    security(("user" = [])),
    responses(
        (status = 200, description = "The entry", body = WaitlistEntryView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another buyer's entry", body = Problem),
        (status = 404, description = "No such event or entry", body = Problem),
    ))]
pub async fn get_entry(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, entry)): Path<(String, String)>,
) -> Result<axum::Json<WaitlistEntryView>, ApiError> {
    let event = super::event_id(&id)?;
    let entry = entry_id(&entry)?;
    Ok(axum::Json(
        waitlist::get(&state, event, entry, &user).await?,
    ))
}

/// Leaves the waiting list; an offer the entry has passes on to the next in line at once.
#[utoipa::path(delete, path = "/v1/events/{id}/waitlist/{entry}", tag = "waiting list",
    params(("id" = String, Path, description = "Event id"),
           ("entry" = String, Path, description = "The entry's id")),
    security(("user" = [])),
    responses(
        (status = 204, description = "Left the list"),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another buyer's entry", body = Problem),
        (status = 404, description = "No such event or entry, or the entry is no longer in line", body = Problem),
    ))]
pub async fn leave_waitlist(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, entry)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let event = super::event_id(&id)?;
    let entry = entry_id(&entry)?;
    waitlist::leave(&state, event, entry, &user).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn entry_id(text: &str) -> Result<Uuid, ApiError> {
    text.parse()
        .map_err(|_| ApiError::from(boxoffice_service::Error::EntryNotFound))
}
