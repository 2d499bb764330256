//! Seasons: create (admin), list, read, a season's seats, season holds and orders (buyer).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{
    CheckoutBody, Extended, SeasonCreated, SeasonHoldBody, SeasonHoldView, SeasonList,
    SeasonOrderList, SeasonOrderView, SeasonSales, SeasonSeats,
};
use boxoffice_core::ids::SeasonId;
use boxoffice_core::season::{Season, SeasonSpec};
use boxoffice_service::seasons;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::{Buyer, Staff};
use crate::error::{ApiError, Problem};
use crate::extract::{Json, PassHeader};
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
        (status = 404, description = "`organization_id` names no organization, or another one than the key's", body = Problem),
        (status = 422, description = "Invalid season: events of different venues or in another season, a partial naming an event outside the season, a code repeated", body = Problem),
    ))]
pub async fn create_season(
    staff: Staff,
    State(state): State<AppState>,
    Json(spec): Json<SeasonSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let organization = staff.placing(&state, spec.organization_id).await?;
    let id = seasons::create(&state, organization, spec, &staff.actor()).await?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/seasons/{id}"))],
        axum::Json(SeasonCreated { id }),
    ))
}

/// The query of `GET /v1/seasons`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeasonsQuery {
    /// One organization's seasons only, by its id or slug.
    organization: Option<String>,
}

/// Every season, newest first; with `?organization=`, one organization's.
#[utoipa::path(get, path = "/v1/seasons", tag = "seasons",
    params(SeasonsQuery),
    responses(
        (status = 200, description = "Seasons", body = SeasonList),
        (status = 404, description = "No such organization", body = Problem),
    ))]
pub async fn list_seasons(
    State(state): State<AppState>,
    query: Result<axum::extract::Query<SeasonsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<SeasonList>, ApiError> {
    let Ok(axum::extract::Query(query)) = query else {
        return Err(ApiError::invalid("organization", "name one organization"));
    };
    let organization = super::organizations::named(&state, query.organization.as_deref())
        .await?
        .map(|o| o.organization_id);
    let seasons = seasons::list(&state, organization).await?;
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

/// A season hold's token from a path; a malformed one names no hold.
fn hold_token(text: &str) -> Result<Uuid, ApiError> {
    boxoffice_core::ids::parse_canonical_uuid(text).ok_or(ApiError::NotFound {
        code: "not_found",
        detail: "no live hold with this token".into(),
    })
}

/// Holds the seats in every event the season (or the partial) covers, under one token,
/// all or nothing. Where a covered event's waiting room is on, `Boxoffice-Pass` carries
/// the buyer's pass of it (several passes comma-separated).
#[utoipa::path(post, path = "/v1/seasons/{id}/holds", tag = "seasons", request_body = SeasonHoldBody,
    params(("id" = String, Path, description = "Season id"),
           ("Boxoffice-Pass" = Option<String>, Header, description = "The buyer's waiting-room passes of the covered events whose queue is on, comma-separated")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Held in every event covered", body = SeasonHoldView),
        (status = 400, description = "Malformed JSON, or an event covered has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "`queue_required`: a covered event's waiting room is on, and no valid pass of this buyer for it was shown", body = Problem),
        (status = 404, description = "No such season, or no such partial of it", body = Problem),
        (status = 409, description = "`seat_unavailable` (each seat with the event where it is not to be had) or `hold_limit_exceeded` (a covered event's limit); nothing is held anywhere", body = Problem),
        (status = 422, description = "Empty, repeated, unknown or too many seats", body = Problem),
    ))]
pub async fn create_season_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    PassHeader(passes): PassHeader,
    Json(body): Json<SeasonHoldBody>,
) -> Result<(StatusCode, axum::Json<SeasonHoldView>), ApiError> {
    let id = season_id(&id)?;
    let passes: Vec<&str> = passes
        .as_deref()
        .map(|p| p.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let hold = seasons::hold_seats(&state, id, &user, &body, &passes).await?;
    Ok((StatusCode::CREATED, axum::Json(hold)))
}

/// A live season hold of the caller's.
#[utoipa::path(get, path = "/v1/seasons/{id}/holds/{token}", tag = "seasons",
    params(("id" = String, Path, description = "Season id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 200, description = "The hold", body = SeasonHoldView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such season, or the token holds nothing live", body = Problem),
    ))]
pub async fn get_season_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
) -> Result<axum::Json<SeasonHoldView>, ApiError> {
    let id = season_id(&id)?;
    let token = hold_token(&token)?;
    Ok(axum::Json(
        seasons::get_hold(&state, id, token, &user).await?,
    ))
}

/// Frees the seats the season hold still owns in every event (compare-and-delete).
#[utoipa::path(delete, path = "/v1/seasons/{id}/holds/{token}", tag = "seasons",
    params(("id" = String, Path, description = "Season id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 204, description = "Released"),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such season, or the token holds nothing live", body = Problem),
    ))]
pub async fn release_season_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let id = season_id(&id)?;
    let token = hold_token(&token)?;
    seasons::release_hold(&state, id, token, &user).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Extends a live season hold of the caller's in every event at once: by the shortest
/// `hold_ttl_seconds` of its events, capped at creation + their shortest
/// `max_hold_seconds`.
#[utoipa::path(post, path = "/v1/seasons/{id}/holds/{token}/extend", tag = "seasons",
    params(("id" = String, Path, description = "Season id"), ("token" = String, Path, description = "Hold token")),
    security(("user" = [])),
    responses(
        (status = 200, description = "Extended", body = Extended),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such season", body = Problem),
        (status = 409, description = "`hold_not_live`: the hold expired or was used", body = Problem),
    ))]
pub async fn extend_season_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
) -> Result<axum::Json<Extended>, ApiError> {
    let id = season_id(&id)?;
    let token = boxoffice_core::ids::parse_canonical_uuid(&token).ok_or(ApiError::HoldNotLive)?;
    let expires_at = seasons::extend_hold(&state, id, token, &user).await?;
    Ok(axum::Json(Extended { expires_at }))
}

/// Buys a live season hold of the caller's: its seats are sold in every event it holds
/// them in, in one transaction, paid at once. The same token again finds the same order
/// (200).
#[utoipa::path(post, path = "/v1/seasons/{id}/orders", tag = "seasons", request_body = CheckoutBody,
    params(("id" = String, Path, description = "Season id")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Ordered", body = SeasonOrderView),
        (status = 200, description = "This hold was bought before: that order", body = SeasonOrderView),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Another user's hold", body = Problem),
        (status = 404, description = "No such season", body = Problem),
        (status = 409, description = "`hold_not_live`: the hold lapsed or was released", body = Problem),
        (status = 422, description = "Invalid body", body = Problem),
    ))]
pub async fn create_season_order(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<CheckoutBody>,
) -> Result<(StatusCode, axum::Json<SeasonOrderView>), ApiError> {
    let id = season_id(&id)?;
    let bought = seasons::checkout(&state, id, body.hold_token, &user).await?;
    let status = if bought.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(bought.order)))
}

/// The query of `GET /v1/seasons/{id}/orders`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeasonOrdersQuery {
    /// An order id (the season's, or one of its events' orders), a buyer's user id or a
    /// seat id (buyer and seat also by their beginning).
    #[param(max_length = 200)]
    q: Option<String>,
    /// Orders answered, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
}

/// The season's orders, newest first, each with its seats and the events released.
#[utoipa::path(get, path = "/v1/seasons/{id}/orders", tag = "seasons",
    params(("id" = String, Path, description = "Season id"), SeasonOrdersQuery),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Orders", body = SeasonOrderList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such season", body = Problem),
        (status = 422, description = "`limit` or `q` invalid", body = Problem),
    ))]
pub async fn list_season_orders(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<SeasonOrdersQuery>, QueryRejection>,
) -> Result<axum::Json<SeasonOrderList>, ApiError> {
    let id = season_id(&id)?;
    let Query(query) =
        query.map_err(|e| ApiError::invalid("limit", &format!("cannot read the query: {e}")))?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::invalid("limit", "must be 1 to 200"));
    }
    if query.q.as_ref().is_some_and(|q| q.chars().count() > 200) {
        return Err(ApiError::invalid("q", "must be at most 200 characters"));
    }
    Ok(axum::Json(
        seasons::list_orders(&state, id, query.q.as_deref(), i64::from(limit)).await?,
    ))
}

/// The season's sales, orders not cancelled: the whole season and each partial.
#[utoipa::path(get, path = "/v1/seasons/{id}/sales", tag = "seasons",
    params(("id" = String, Path, description = "Season id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Sales", body = SeasonSales),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such season", body = Problem),
    ))]
pub async fn get_season_sales(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<SeasonSales>, ApiError> {
    let id = season_id(&id)?;
    Ok(axum::Json(seasons::sales_of(&state, id).await?))
}
