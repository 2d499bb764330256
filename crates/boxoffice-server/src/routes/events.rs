//! Events: create, list, read; allocation changes.

use boxoffice_api::{
    AllocationsChanged, AllocationsRequest, EventCreated, EventList, EventListItem, EventPatch,
    EventView, GaAreaView, SkippedSeat,
};
use std::collections::{HashMap, HashSet};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_core::availability::SeatCounts;
use boxoffice_core::event::{resolve_allocations, EventSpec, WithdrawSpec};
use boxoffice_core::ids::EventId;
use boxoffice_core::validation::ValidationErrors;
use boxoffice_core::venue::VenueLayout;
use boxoffice_store::events::{self, AllocationChange, AllocationOutcome, EventRecord};
use boxoffice_store::venues;

use crate::auth::Admin;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::service::availability::event_availability;
use crate::state::AppState;

/// Creates an event on a venue with ticket types, allocations and GA areas.
#[utoipa::path(post, path = "/v1/events", tag = "events", request_body = EventSpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = EventCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 422, description = "Invalid event", body = Problem),
    ))]
pub async fn create_event(
    _: Admin,
    State(state): State<AppState>,
    Json(spec): Json<EventSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let venue = venues::get_venue(&state.pool, spec.venue_id)
        .await?
        .ok_or_else(|| ApiError::invalid("venue_id", "no such venue"))?;
    let event = spec.validate(&venue, chrono::Utc::now())?;
    let id = EventId::new();
    events::insert_event(&state.pool, id, &event).await?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/events/{id}"))],
        axum::Json(EventCreated { id }),
    ))
}

/// Every event, soonest first.
#[utoipa::path(get, path = "/v1/events", tag = "events",
    responses((status = 200, description = "Events", body = EventList)))]
pub async fn list_events(State(state): State<AppState>) -> Result<axum::Json<EventList>, ApiError> {
    let events = events::list_events(&state.pool)
        .await?
        .into_iter()
        .map(|e| EventListItem {
            id: e.event_id,
            name: e.name,
            venue_id: e.venue_id,
            starts_at: e.starts_at,
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
    let record = events::get_event(&state.pool, id)
        .await?
        .ok_or_else(ApiError::event_not_found)?;
    let availability = event_availability(&state, id).await?;
    let unknown = super::availability::holds_unknown(availability.holds_unknown);
    let view = axum::Json(EventView {
        id,
        venue_id: record.summary.venue_id,
        name: record.summary.name,
        starts_at: record.summary.starts_at,
        hold_ttl_seconds: record.hold_ttl_seconds,
        max_hold_seconds: record.max_hold_seconds,
        max_seats_per_user: record.max_seats_per_user,
        section_order: record.section_order,
        ticket_types: record.ticket_types,
        ga_areas: record
            .ga_areas
            .into_iter()
            .map(|(area, left)| GaAreaView { area, left })
            .collect(),
        counts: SeatCounts::of(&availability.states),
        queue: record.queue,
    });
    Ok((unknown, view))
}

/// Changes an event's settings: its waiting room (`{"queue": {...}}`, or `null` for none).
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
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(patch): Json<EventPatch>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    if let Some(queue) = &patch.queue {
        if let Some(queue) = queue {
            let mut errors = ValidationErrors::default();
            queue.check("queue", &mut errors);
            errors.into_result(())?;
        }
        if !events::set_queue(&state.pool, event, queue.as_ref()).await? {
            return Err(ApiError::event_not_found());
        }
        crate::service::queue::settings_changed(&state, event).await;
    }
    get_event(State(state), Path(id)).await
}

/// The event and its venue's layout, for validating seat selectors.
async fn event_and_venue(
    state: &AppState,
    id: &str,
) -> Result<(EventId, EventRecord, VenueLayout), ApiError> {
    let id = super::event_id(id)?;
    let record = events::get_event(&state.pool, id)
        .await?
        .ok_or_else(ApiError::event_not_found)?;
    let venue = venues::get_venue(&state.pool, record.summary.venue_id)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("event {id} has no venue")))?;
    Ok((id, record, venue))
}

fn changed(venue: &VenueLayout, outcome: AllocationOutcome) -> AllocationsChanged {
    let skipped_ids: HashSet<&str> = outcome.skipped.iter().map(|(id, _)| id.as_str()).collect();
    let labels: HashMap<&str, &str> = venue
        .seats()
        .filter(|(_, _, s)| skipped_ids.contains(s.id.as_str()))
        .map(|(_, _, s)| (s.id.as_str(), s.label.as_str()))
        .collect();
    AllocationsChanged {
        changed: outcome.changed,
        skipped: outcome
            .skipped
            .iter()
            .map(|(id, status)| SkippedSeat {
                id: id.clone(),
                label: labels
                    .get(id.as_str())
                    .copied()
                    .unwrap_or_default()
                    .to_owned(),
                status: *status,
            })
            .collect(),
    }
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
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<AllocationsRequest>,
) -> Result<axum::Json<AllocationsChanged>, ApiError> {
    let (id, record, venue) = event_and_venue(&state, &id).await?;
    let mut errors = ValidationErrors::default();
    errors.check(
        !body.allocations.is_empty(),
        "allocations",
        "must have at least one entry",
    );
    let codes: HashSet<&str> = record
        .ticket_types
        .iter()
        .map(|t| t.code.as_str())
        .collect();
    let allocations = resolve_allocations(&body.allocations, &venue.index(), &codes, &mut errors);
    let allocations = errors.into_result(allocations)?;
    let outcome = events::change_allocations(
        &state.pool,
        state.holds.as_ref(),
        id,
        AllocationChange::Put(allocations),
    )
    .await?
    .ok_or_else(ApiError::event_not_found)?;
    // Every page of the event takes the new seat map.
    state.live.publish(id, crate::live::Change::Layout).await;
    Ok(axum::Json(changed(&venue, outcome)))
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
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<WithdrawSpec>,
) -> Result<axum::Json<AllocationsChanged>, ApiError> {
    let (id, _, venue) = event_and_venue(&state, &id).await?;
    let seats = body.resolve(&venue.index())?;
    let outcome = events::change_allocations(
        &state.pool,
        state.holds.as_ref(),
        id,
        AllocationChange::Withdraw(seats),
    )
    .await?
    .ok_or_else(ApiError::event_not_found)?;
    // Every page of the event takes the new seat map.
    state.live.publish(id, crate::live::Change::Layout).await;
    Ok(axum::Json(changed(&venue, outcome)))
}
