//! Tickets and entry: the buyer's tickets (JSON, PDF, a QR code each), the organization's
//! entry keys and revocation list for scanners, check-ins and the door's counts.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use boxoffice_api::{
    CheckinBody, CheckinSummary, CheckinView, EntryKeyView, EntryKeys, RevokedList, TicketList,
    TicketView,
};
use boxoffice_core::ids::parse_canonical_uuid;
use boxoffice_service::tickets;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::{Caller, Staff};
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

fn order_not_found() -> ApiError {
    boxoffice_service::Error::OrderNotFound.into()
}

fn booking_not_found() -> ApiError {
    boxoffice_service::Error::BookingNotFound.into()
}

async fn order_tickets(
    caller: &Caller,
    state: &AppState,
    id: &str,
) -> Result<(Uuid, Vec<TicketView>), ApiError> {
    let id = parse_canonical_uuid(id).ok_or_else(order_not_found)?;
    Ok((id, tickets::of_order(state, id, caller.user()).await?))
}

async fn booking_tickets(
    caller: &Caller,
    state: &AppState,
    id: &str,
) -> Result<(Uuid, Vec<TicketView>), ApiError> {
    let id = parse_canonical_uuid(id).ok_or_else(booking_not_found)?;
    Ok((id, tickets::of_booking(state, id, caller.user()).await?))
}

/// A PDF answer, a page per ticket.
async fn pdf_answer(
    state: &AppState,
    name: &str,
    tickets: Vec<TicketView>,
) -> Result<Response, ApiError> {
    let pdf = tickets::pdf(state, tickets).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/pdf".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{name}.pdf\""),
            ),
            (header::CACHE_CONTROL, "private, no-store".to_owned()),
        ],
        pdf,
    )
        .into_response())
}

/// An order's tickets: a seat each (a season order: a seat each night), with the secret
/// its QR code carries. None until the order is paid; revoked ones say so.
#[utoipa::path(get, path = "/v1/orders/{id}/tickets", tag = "tickets",
    params(("id" = String, Path, description = "Order id (an event's or a season's)")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The tickets", body = TicketList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
    ))]
pub async fn order_ticket_list(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<TicketList>, ApiError> {
    let (_, tickets) = order_tickets(&caller, &state, &id).await?;
    Ok(axum::Json(TicketList { tickets }))
}

/// An order's tickets as a PDF: a page per ticket with the event, time, venue, seat, ticket
/// type, holder and QR code.
#[utoipa::path(get, path = "/v1/orders/{id}/tickets.pdf", tag = "tickets",
    params(("id" = String, Path, description = "Order id (an event's or a season's)")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The tickets, a page each", content_type = "application/pdf", body = Vec<u8>),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's order", body = Problem),
        (status = 404, description = "No such order", body = Problem),
        (status = 429, description = "The holder has 2 PDFs drawing already", body = Problem),
    ))]
pub async fn order_ticket_pdf(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (id, tickets) = order_tickets(&caller, &state, &id).await?;
    pdf_answer(&state, &format!("tickets-{id}"), tickets).await
}

/// A GA booking's tickets: a place each.
#[utoipa::path(get, path = "/v1/bookings/{id}/tickets", tag = "tickets",
    params(("id" = String, Path, description = "Booking id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The tickets", body = TicketList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's booking", body = Problem),
        (status = 404, description = "No such booking", body = Problem),
    ))]
pub async fn booking_ticket_list(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<TicketList>, ApiError> {
    let (_, tickets) = booking_tickets(&caller, &state, &id).await?;
    Ok(axum::Json(TicketList { tickets }))
}

/// A GA booking's tickets as a PDF, a page per place.
#[utoipa::path(get, path = "/v1/bookings/{id}/tickets.pdf", tag = "tickets",
    params(("id" = String, Path, description = "Booking id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The tickets, a page each", content_type = "application/pdf", body = Vec<u8>),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "Another user's booking", body = Problem),
        (status = 404, description = "No such booking", body = Problem),
        (status = 429, description = "The holder has 2 PDFs drawing already", body = Problem),
    ))]
pub async fn booking_ticket_pdf(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (id, tickets) = booking_tickets(&caller, &state, &id).await?;
    pdf_answer(&state, &format!("tickets-{id}"), tickets).await
}

/// A ticket's QR code alone, as SVG.
#[utoipa::path(get, path = "/v1/tickets/{id}/qr.svg", tag = "tickets",
    params(("id" = String, Path, description = "Ticket id")),
    security(("user" = []), ("admin" = [])),
    responses(
        (status = 200, description = "The QR code of the ticket's secret", content_type = "image/svg+xml", body = String),
        (status = 401, description = "Missing or invalid token, or a buyer of another organization", body = Problem),
        (status = 403, description = "Another user's ticket", body = Problem),
        (status = 404, description = "No such ticket", body = Problem),
    ))]
pub async fn ticket_qr(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_canonical_uuid(&id)
        .ok_or_else(|| ApiError::from(boxoffice_service::Error::TicketUnknown))?;
    let (ticket, organization) = tickets::ticket(&state, id, caller.user()).await?;
    match &caller {
        Caller::Staff(staff) if !staff.sees(organization) => {
            return Err(boxoffice_service::Error::TicketUnknown.into())
        }
        Caller::User(_, own) if *own != organization => {
            return Err(ApiError::Unauthorized(
                "this buyer's token is of another organization",
            ))
        }
        _ => {}
    }
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "private, no-store"),
        ],
        tickets::print::qr_svg(&ticket.secret),
    )
        .into_response())
}

/// The public keys that check the event's tickets: every entry key of its organization
/// that may have signed one, the signing one last.
#[utoipa::path(get, path = "/v1/events/{id}/entry/keys", tag = "tickets",
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The keys", body = EntryKeys),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "A role that may not check tickets in (`required_roles`)", body = Problem),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn entry_keys(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<EntryKeys>, ApiError> {
    let event = super::event_id(&id)?;
    Ok(axum::Json(EntryKeys {
        keys: tickets::event_entry_keys(&state, event).await?,
    }))
}

/// Makes a new entry key for the organization, which signs tickets from now on; tickets
/// signed before stay valid under their keys.
#[utoipa::path(post, path = "/v1/organizations/{id}/entry-keys", tag = "tickets",
    params(("id" = String, Path, description = "Organization id or slug")),
    security(("admin" = [])),
    responses(
        (status = 201, description = "The new key", body = EntryKeyView),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
    ))]
pub async fn rotate_entry_key(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, axum::Json<EntryKeyView>), ApiError> {
    let organization = super::organizations::visible(&state, &staff, &id).await?;
    let key =
        tickets::rotate_entry_key(&state, organization.organization_id, &staff.actor()).await?;
    Ok((StatusCode::CREATED, axum::Json(key)))
}

/// The query of `GET /v1/events/{id}/entry/revoked`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RevokedQuery {
    /// Only tickets revoked at or after this time (RFC 3339): the `as_of` of the answer
    /// before.
    since: Option<String>,
}

/// The event's revoked tickets, for scanners that check tickets offline.
#[utoipa::path(get, path = "/v1/events/{id}/entry/revoked", tag = "tickets",
    params(("id" = String, Path, description = "Event id"), RevokedQuery),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Revoked since `since`", body = RevokedList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "A role that may not check tickets in (`required_roles`)", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "`since` is not an RFC 3339 time", body = Problem),
    ))]
pub async fn revoked(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<RevokedQuery>, QueryRejection>,
) -> Result<axum::Json<RevokedList>, ApiError> {
    let event = super::event_id(&id)?;
    let Ok(Query(query)) = query else {
        return Err(ApiError::invalid("query", "a parameter is not valid"));
    };
    let since = match query.since.as_deref().map(DateTime::parse_from_rfc3339) {
        None => None,
        Some(Ok(at)) => Some(at.with_timezone(&Utc)),
        Some(Err(_)) => return Err(ApiError::invalid("since", "must be an RFC 3339 time")),
    };
    Ok(axum::Json(tickets::revoked(&state, event, since).await?))
}

/// Lets a ticket in (or out) at the event's door: exactly once however many scanners scan
/// it at once; the same nonce again answers the same; an offline scanner's upload
/// (`force`) is recorded even when the ticket was in already (`duplicate`).
#[utoipa::path(post, path = "/v1/events/{id}/checkins", tag = "tickets", request_body = CheckinBody,
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 201, description = "Let in (`ok`), or an upload of a ticket let in twice (`duplicate`)", body = CheckinView),
        (status = 400, description = "`wrong_event`: a real ticket of another event (`event_id`)", body = Problem),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "`ticket_invalid`: the secret is malformed or its signature does not verify; or a role that may not check in", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "`already_redeemed`: inside already (`first`); `not_inside`: an exit of a ticket that is not inside", body = Problem),
        (status = 410, description = "`ticket_revoked`: cancelled, moved or resold", body = Problem),
        (status = 422, description = "A nonce or gate too long, or `scanned_at` without `force`", body = Problem),
    ))]
pub async fn check_in(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<CheckinBody>,
) -> Result<(StatusCode, axum::Json<CheckinView>), ApiError> {
    let event = super::event_id(&id)?;
    let view = tickets::check_in(&state, event, &body, staff.key_id).await?;
    Ok((StatusCode::CREATED, axum::Json(view)))
}

/// The door's counts: tickets, entered, inside now, duplicates, and entries by gate.
#[utoipa::path(get, path = "/v1/events/{id}/checkins/summary", tag = "tickets",
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The counts", body = CheckinSummary),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "A role that may not read them (`required_roles`)", body = Problem),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn checkin_summary(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<CheckinSummary>, ApiError> {
    let event = super::event_id(&id)?;
    Ok(axum::Json(tickets::summary(&state, event).await?))
}
