//! `POST /v1/venues`, `GET /v1/venues`, `GET /v1/venues/{id}`.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{VenueCreated, VenueList, VenueListItem, VenueView};
use boxoffice_core::ids::VenueId;
use boxoffice_core::venue::VenueSpec;
use boxoffice_store::pg::venues;

use crate::auth::Admin;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

/// Creates a venue: sections, rows given by seat count or as explicit seats.
#[utoipa::path(post, path = "/v1/venues", tag = "venues", request_body = VenueSpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = VenueCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 413, description = "Body too large", body = Problem),
        (status = 422, description = "Invalid venue", body = Problem),
    ))]
pub async fn create_venue(
    _: Admin,
    State(state): State<AppState>,
    Json(spec): Json<VenueSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let layout = spec.into_layout()?;
    let id = VenueId::new();
    venues::insert_venue(&state.pool, id, &layout).await?;
    let created = VenueCreated {
        id,
        seat_count: layout.seat_count(),
    };
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/venues/{id}"))],
        axum::Json(created),
    ))
}

/// Every venue, newest first, with its seat count.
#[utoipa::path(get, path = "/v1/venues", tag = "venues",
    security(("admin" = [])),
    responses(
        (status = 200, description = "Venues", body = VenueList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
    ))]
pub async fn list_venues(
    _: Admin,
    State(state): State<AppState>,
) -> Result<axum::Json<VenueList>, ApiError> {
    let venues = venues::list_venues(&state.pool)
        .await?
        .into_iter()
        .map(|(id, name, seat_count)| VenueListItem {
            id,
            name,
            seat_count,
        })
        .collect();
    Ok(axum::Json(VenueList { venues }))
}

/// A venue with its sections, rows and seats.
#[utoipa::path(get, path = "/v1/venues/{id}", tag = "venues",
    params(("id" = String, Path, description = "Venue id")),
    responses(
        (status = 200, description = "The venue", body = VenueView),
        (status = 404, description = "No such venue", body = Problem),
    ))]
pub async fn get_venue(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<VenueView>, ApiError> {
    let id = super::venue_id(&id)?;
    let layout = venues::get_venue(&state.pool, id)
        .await?
        .ok_or_else(super::venue_not_found)?;
    Ok(axum::Json(VenueView {
        id,
        seat_count: layout.seat_count(),
        layout,
    }))
}
