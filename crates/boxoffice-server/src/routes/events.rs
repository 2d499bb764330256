//! Events: create, list, read; allocation changes.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{
    AllocationsChanged, AllocationsRequest, ChannelReleased, EventCreated, EventList,
    EventListItem, EventPatch, EventView,
};
use boxoffice_core::event::{EventSpec, WithdrawSpec};
use boxoffice_service::events;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

/// Creates an event on a venue with ticket types, allocations and GA areas.
#[utoipa::path(post, path = "/v1/events", tag = "events", request_body = EventSpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = EventCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "`organization_id` names no organization, or another one than the key's", body = Problem),
        (status = 422, description = "Invalid event", body = Problem),
    ))]
pub async fn create_event(
    staff: Staff,
    State(state): State<AppState>,
    Json(spec): Json<EventSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let organization = staff.placing(&state, spec.organization_id).await?;
    let id = events::create(&state, organization, spec, &staff.actor()).await?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/events/{id}"))],
        axum::Json(EventCreated { id }),
    ))
}

/// The query of `GET /v1/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// One organization's events only, by its id or slug.
    organization: Option<String>,
}

/// Every event, soonest first; with `?organization=`, one organization's.
#[utoipa::path(get, path = "/v1/events", tag = "events",
    params(EventsQuery),
    responses(
        (status = 200, description = "Events", body = EventList),
        (status = 404, description = "No such organization", body = Problem),
    ))]
pub async fn list_events(
    State(state): State<AppState>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<axum::Json<EventList>, ApiError> {
    let Ok(Query(query)) = query else {
        return Err(ApiError::invalid("organization", "name one organization"));
    };
    let organization = super::organizations::named(&state, query.organization.as_deref())
        .await?
        .map(|o| o.organization_id);
    let events = boxoffice_service::events::list(&state, organization)
        .await?
        .into_iter()
        .map(|e| EventListItem {
            id: e.event_id,
            name: e.name,
            venue_id: e.venue_id,
            starts_at: e.starts_at,
            organization_id: e.organization_id,
            time_zone: e.time_zone,
        })
        .collect();
    Ok(axum::Json(EventList { events }))
}

/// One event with its ticket types, GA areas and seat counts.
#[utoipa::path(get, path = "/v1/events/{id}", tag = "events",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "The event", body = EventView, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the hold store could not be reached: held seats then count as available"))),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn get_event(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let id = super::event_id(&id)?;
    let (view, holds_unknown) = events::view(&state, id).await?;
    Ok((
        super::availability::holds_unknown(holds_unknown),
        axum::Json(view),
    ))
}

/// Changes an event's settings: its waiting room (`{"queue": {...}}`, or `null` for none)
/// how its tickets are let in (`{"entry": {"reentry": true}}`) and until when buyers may
/// move their seats (`{"changes": {"buyer_moves_until": "<RFC 3339>"}}`).
/// Answers the event as `GET /v1/events/{id}` does.
#[utoipa::path(patch, path = "/v1/events/{id}", tag = "events", request_body = EventPatch,
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The event as changed", body = EventView),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "Invalid settings", body = Problem),
    ))]
pub async fn patch_event(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(patch): Json<EventPatch>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    if let Some(queue) = &patch.queue {
        events::set_queue(&state, event, queue.as_ref(), Some(&staff.actor())).await?;
    }
    if let Some(entry) = patch.entry {
        events::set_entry(&state, event, entry, Some(&staff.actor())).await?;
    }
    if let Some(changes) = patch.changes {
        events::set_changes(&state, event, changes, Some(&staff.actor())).await?;
    }
    get_event(State(state), Path(id)).await
}

/// Puts seats on sale or changes their ticket type; held and sold seats are left alone and
/// listed back.
#[utoipa::path(put, path = "/v1/events/{id}/allocations", tag = "events", request_body = AllocationsRequest,
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Applied", body = AllocationsChanged),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "Invalid entries", body = Problem),
    ))]
pub async fn put_allocations(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<AllocationsRequest>,
) -> Result<axum::Json<AllocationsChanged>, ApiError> {
    let id = super::event_id(&id)?;
    Ok(axum::Json(
        events::put_allocations(&state, id, &body, &staff.actor()).await?,
    ))
}

/// Takes seats off sale; held and sold seats are left alone and listed back.
#[utoipa::path(post, path = "/v1/events/{id}/allocations/withdraw", tag = "events", request_body = WithdrawSpec,
    params(("id" = String, Path, description = "Event id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Withdrawn", body = AllocationsChanged),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "Invalid selection", body = Problem),
    ))]
pub async fn withdraw_allocations(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<WithdrawSpec>,
) -> Result<axum::Json<AllocationsChanged>, ApiError> {
    let id = super::event_id(&id)?;
    Ok(axum::Json(
        events::withdraw_allocations(&state, id, &body, &staff.actor()).await?,
    ))
}

/// Puts a sales channel's seats that are neither held nor sold on general sale, at once
/// (live pages see them turn available); held and sold ones stay in the channel.
#[utoipa::path(post, path = "/v1/events/{id}/channels/{code}/release", tag = "events",
    params(
        ("id" = String, Path, description = "Event id"),
        ("code" = String, Path, description = "The channel's code"),
    ),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Released", body = ChannelReleased),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such event, or the event has no such channel", body = Problem),
    ))]
pub async fn release_channel(
    staff: Staff,
    State(state): State<AppState>,
    Path((id, code)): Path<(String, String)>,
) -> Result<axum::Json<ChannelReleased>, ApiError> {
    let id = super::event_id(&id)?;
    Ok(axum::Json(
        events::release_channel(&state, id, &code, &staff.actor()).await?,
    ))
}
