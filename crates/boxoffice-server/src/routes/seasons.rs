//! Seasons: create (admin), list, read, and a season's seats.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{SeasonCreated, SeasonList, SeasonSeats};
use boxoffice_core::ids::SeasonId;
use boxoffice_core::season::{Season, SeasonSpec};
use boxoffice_service::seasons;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Admin;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::state::AppState;

/// The season a path names; a malformed id is as unknown as a missing one (404).
fn season_id(text: &str) -> Result<SeasonId, ApiError> {
    SeasonId::parse(text).ok_or_else(|| ApiError::NotFound {
        code: "not_found",
        detail: "no such season".into(),
    })
}

/// Creates a season: events of one venue sold together, with its ticket types,
/// allocations and partial seasons.
#[utoipa::path(post, path = "/v1/seasons", tag = "seasons", request_body = SeasonSpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = SeasonCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 422, description = "Invalid season: events of different venues or in another season, a partial naming an event outside the season, a code repeated", body = Problem),
    ))]
pub async fn create_season(
    _: Admin,
    State(state): State<AppState>,
    Json(spec): Json<SeasonSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let id = seasons::create(&state, spec).await?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/seasons/{id}"))],
        axum::Json(SeasonCreated { id }),
    ))
}

/// Every season, newest first.
#[utoipa::path(get, path = "/v1/seasons", tag = "seasons",
    responses((status = 200, description = "Seasons", body = SeasonList)))]
pub async fn list_seasons(
    State(state): State<AppState>,
) -> Result<axum::Json<SeasonList>, ApiError> {
    let seasons = seasons::list(&state).await?;
    Ok(axum::Json(SeasonList { seasons }))
}

/// One season with its events, ticket types and partial seasons.
#[utoipa::path(get, path = "/v1/seasons/{id}", tag = "seasons",
    params(("id" = String, Path, description = "Season id")),
    responses(
        (status = 200, description = "The season", body = Season),
        (status = 404, description = "No such season", body = Problem),
    ))]
pub async fn get_season(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<Season>, ApiError> {
    let id = season_id(&id)?;
    Ok(axum::Json(seasons::view(&state, id).await?))
}

/// The query of `GET /v1/seasons/{id}/seats`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeasonSeatsQuery {
    /// A partial season's code: its events, at its prices.
    #[param(pattern = "^[A-Za-z0-9_]{1,32}$")]
    partial: Option<String>,
}

/// The season's seats with its ticket types and prices, each `available` only where the
/// season sells it and no event covered has it sold or held.
#[utoipa::path(get, path = "/v1/seasons/{id}/seats", tag = "seasons",
    params(("id" = String, Path, description = "Season id"), SeasonSeatsQuery),
    responses(
        (status = 200, description = "Seats", body = SeasonSeats, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the hold store could not be reached: held seats then read as free"))),
        (status = 404, description = "No such season, or no such partial of it", body = Problem),
        (status = 422, description = "The query cannot be read", body = Problem),
    ))]
pub async fn get_season_seats(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<SeasonSeatsQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let id = season_id(&id)?;
    let Query(query) =
        query.map_err(|e| ApiError::invalid("partial", &format!("cannot read the query: {e}")))?;
    let (seats, holds_unknown) = seasons::seats(&state, id, query.partial.as_deref()).await?;
    Ok((
        super::availability::holds_unknown(holds_unknown),
        axum::Json(seats),
    ))
}
