//! Events: create, list, read; allocation changes.

use std::collections::{HashMap, HashSet};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_core::availability::{SeatCounts, SeatStatus};
use boxoffice_core::event::{
    resolve_allocations, AllocationEntry, EventSpec, GaArea, TicketType, WithdrawSpec,
};
use boxoffice_core::ids::{EventId, VenueId};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_core::venue::VenueLayout;
use boxoffice_store::events::{self, AllocationChange, AllocationOutcome, EventRecord};
use boxoffice_store::venues;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Admin;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::service::availability::event_availability;
use crate::state::AppState;

/// Answer to `POST /v1/events`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventCreated {
    /// The new event's id.
    pub id: EventId,
}

/// One event in a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventListItem {
    /// Event id.
    pub id: EventId,
    /// Display name.
    pub name: String,
    /// Venue id.
    pub venue_id: VenueId,
    /// Start time.
    pub starts_at: DateTime<Utc>,
}

/// Answer to `GET /v1/events`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventList {
    /// Every event, soonest first.
    pub events: Vec<EventListItem>,
}

/// A general-admission area with the places left.
#[derive(Debug, Serialize, ToSchema)]
pub struct GaAreaView {
    /// The area.
    #[serde(flatten)]
    pub area: GaArea,
    /// Places not yet booked.
    pub left: u32,
}

/// Answer to `GET /v1/events/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventView {
    /// Event id.
    pub id: EventId,
    /// Venue id.
    pub venue_id: VenueId,
    /// Display name.
    pub name: String,
    /// Start time.
    pub starts_at: DateTime<Utc>,
    /// Hold lifetime in seconds.
    pub hold_ttl_seconds: u32,
    /// Cap on a hold's lifetime with extensions, in seconds.
    pub max_hold_seconds: u32,
    /// Live held seats one user may have at once.
    pub max_seats_per_user: u32,
    /// Every section, best first.
    pub section_order: Vec<String>,
    /// Ticket types.
    pub ticket_types: Vec<TicketType>,
    /// General-admission areas.
    pub ga_areas: Vec<GaAreaView>,
    /// Seats per status right now.
    pub counts: SeatCounts,
}

/// Body of `PUT /v1/events/{id}/allocations`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationsRequest {
    /// Entries applied in order; later ones override earlier ones for the same seat.
    pub allocations: Vec<AllocationEntry>,
}

/// A seat an allocation change left alone.
#[derive(Debug, Serialize, ToSchema)]
pub struct SkippedSeat {
    /// Seat id.
    pub id: String,
    /// Seat label.
    pub label: String,
    /// Why it was left alone: `held` or `sold`.
    pub status: SeatStatus,
}

/// Answer to an allocation change.
#[derive(Debug, Serialize, ToSchema)]
pub struct AllocationsChanged {
    /// Seats put on sale, re-priced or withdrawn.
    pub changed: u64,
    /// Seats not changed because they are held or sold.
    pub skipped: Vec<SkippedSeat>,
}

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
    });
    Ok((unknown, view))
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
    Ok(axum::Json(changed(&venue, outcome)))
}
