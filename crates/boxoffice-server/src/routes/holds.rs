//! Holds: create (all or nothing), read, extend, release.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use boxoffice_core::hold::{
    validate_basket, AcquireOutcome, ClaimedSeat, ExtendOutcome, Hold, PricedSeat, ReleaseOutcome,
};
use boxoffice_core::ids::EventId;
use std::sync::Arc;

use boxoffice_store::hold_store::HoldRequest;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::Buyer;
use crate::error::{ApiError, Problem, SeatRef};
use crate::extract::Json;
use crate::seat_map::RenderedSeatMap;
use crate::state::AppState;

/// Body of `POST /v1/events/{id}/holds`: either seats by id, or best available.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldBody {
    /// Seat ids to hold, all or none.
    pub seats: Option<Vec<String>>,
    /// Let the server pick adjacent seats.
    pub best_available: Option<BestAvailable>,
}

/// A best-available request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BestAvailable {
    /// How many seats.
    pub quantity: u32,
    /// Only seats of this ticket type.
    pub ticket_type: Option<String>,
}

/// A live hold.
#[derive(Debug, Serialize, ToSchema)]
pub struct HoldView {
    /// Proof of ownership: extend, release and check out with it.
    pub hold_token: Uuid,
    /// The event.
    pub event_id: EventId,
    /// The held seats with the prices quoted.
    pub seats: Vec<PricedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// When the hold lapses unless extended.
    pub expires_at: DateTime<Utc>,
}

/// Answer to an extension.
#[derive(Debug, Serialize, ToSchema)]
pub struct Extended {
    /// The new expiry.
    pub expires_at: DateTime<Utc>,
}

/// The event's seat map and hold settings, cached; 404 if there is no such event.
pub(crate) async fn event_layout(
    state: &AppState,
    event: EventId,
) -> Result<Arc<RenderedSeatMap>, ApiError> {
    state
        .seat_maps
        .get_any(&state.pool, event)
        .await?
        .ok_or_else(ApiError::event_not_found)
}

/// Labels for seat ids, from the event's seat map.
pub(crate) fn priced(
    map: &RenderedSeatMap,
    seats: &[boxoffice_core::hold::ClaimedSeat],
) -> Vec<PricedSeat> {
    seats
        .iter()
        .map(|s| PricedSeat {
            label: map
                .map
                .get(&s.seat_id)
                .map(|m| m.label.clone())
                .unwrap_or_default(),
            id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect()
}

fn view(map: &RenderedSeatMap, hold: Hold, currency: String) -> HoldView {
    HoldView {
        hold_token: hold.token,
        event_id: hold.event_id,
        total_cents: hold.seats.iter().map(|s| s.price_cents).sum(),
        seats: priced(map, &hold.seats),
        currency,
        expires_at: hold.expires_at,
    }
}

/// How often a hold quotes its seats again from a newer seat map before giving up.
const MAX_LAYOUT_RELOADS: usize = 3;

/// What the seat map quotes for each seat of the basket: its ticket type and price, or
/// `None` if it is not on sale.
fn quotes(map: &RenderedSeatMap, basket: &[String]) -> Vec<Option<ClaimedSeat>> {
    basket
        .iter()
        .map(|id| {
            let seat = map.map.get(id)?;
            Some(ClaimedSeat {
                seat_id: id.clone(),
                ticket_type: seat.ticket_type.clone()?,
                price_cents: seat.price_cents?,
            })
        })
        .collect()
}

fn token(text: &str) -> Option<Uuid> {
    boxoffice_core::ids::parse_canonical_uuid(text)
}

fn hold_not_found() -> ApiError {
    ApiError::NotFound {
        code: "not_found",
        detail: "no live hold with this token".into(),
    }
}

/// Holds every seat asked for under one new token, or none.
#[utoipa::path(post, path = "/v1/events/{id}/holds", tag = "holds", request_body = HoldBody,
    params(("id" = String, Path, description = "Event id")),
    security(("user" = [])),
    responses(
        (status = 201, description = "Held", body = HoldView),
        (status = 400, description = "Malformed JSON, or the event has started", body = Problem),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "No such event", body = Problem),
        (status = 409, description = "A seat is unavailable, or the user's limit is reached", body = Problem),
        (status = 422, description = "Empty, repeated, unknown or too many seats", body = Problem),
        (status = 429, description = "Too many holds by this user; see Retry-After", body = Problem),
        (status = 503, description = "A store is unavailable", body = Problem),
    ))]
pub async fn create_hold(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<HoldBody>,
) -> Result<(StatusCode, axum::Json<HoldView>), ApiError> {
    let event = super::event_id(&id)?;
    // A store that limits the rate inside the hold's own round trip is left to it.
    if !state.holds.limits_hold_rate() {
        state
            .rate_limits
            .check(&state.rate_limits.holds, &format!("{event}:{user}"))
            .await?;
    }
    let seats = match (body.seats, body.best_available) {
        (Some(seats), None) => seats,
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "best_available",
                "best-available selection is not offered yet; name the seats",
            ))
        }
        _ => {
            return Err(ApiError::invalid(
                "seats",
                "give either seats or best_available",
            ))
        }
    };
    let mut map = event_layout(&state, event).await?;
    let mut basket = validate_basket(&seats, &map.map, map.policy.max_seats_per_user)?;
    let mut reloads = 0;
    let outcome = loop {
        let quotes = quotes(&map, &basket);
        let policy = &map.policy;
        let outcome = state
            .holds
            .acquire(&HoldRequest {
                event,
                user: &user,
                seats: &basket,
                quotes: &quotes,
                layout_version: map.version,
                ttl_seconds: policy.hold_ttl_seconds,
                max_seats_per_user: policy.max_seats_per_user,
                holds_per_minute: state.rate_limits.holds.per_minute(),
            })
            .await?;
        match outcome {
            // The allocations changed since this server cached the map: quote again.
            AcquireOutcome::LayoutChanged(version) if reloads < MAX_LAYOUT_RELOADS => {
                reloads += 1;
                map = state
                    .seat_maps
                    .get(&state.pool, event, version)
                    .await?
                    .ok_or_else(ApiError::event_not_found)?;
                basket = validate_basket(&seats, &map.map, map.policy.max_seats_per_user)?;
            }
            outcome => break outcome,
        }
    };
    let policy = &map.policy;
    match outcome {
        AcquireOutcome::Held(hold) => Ok((
            StatusCode::CREATED,
            axum::Json(view(
                &map,
                hold,
                policy.currency.clone().unwrap_or_default(),
            )),
        )),
        AcquireOutcome::Unavailable(ids) => Err(ApiError::SeatUnavailable(
            ids.into_iter()
                .map(|id| SeatRef {
                    label: map
                        .map
                        .get(&id)
                        .map(|s| s.label.clone())
                        .unwrap_or_default(),
                    id,
                })
                .collect(),
        )),
        AcquireOutcome::EventStarted => Err(ApiError::EventStarted),
        AcquireOutcome::LimitExceeded => {
            Err(ApiError::HoldLimitExceeded(policy.max_seats_per_user))
        }
        AcquireOutcome::RateLimited(wait) => {
            state.rate_limits.holds.refused();
            Err(ApiError::RateLimited(wait))
        }
        AcquireOutcome::LayoutChanged(_) => Err(ApiError::Unavailable {
            reason: "the event's allocations keep changing".into(),
            retry_after: std::time::Duration::from_secs(1),
        }),
    }
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
    let map = event_layout(&state, event).await?;
    let token = token(&token_text).ok_or_else(hold_not_found)?;
    let hold = state
        .holds
        .get(event, token)
        .await?
        .ok_or_else(hold_not_found)?;
    if hold.user_id != user {
        return Err(ApiError::Forbidden("this hold belongs to another user"));
    }
    let currency = map.policy.currency.clone().unwrap_or_default();
    Ok(axum::Json(view(&map, hold, currency)))
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
    let policy = event_layout(&state, event).await?.policy.clone();
    let token = token(&token_text).ok_or(ApiError::HoldNotLive)?;
    match state
        .holds
        .extend(
            event,
            token,
            &user,
            policy.hold_ttl_seconds,
            policy.max_hold_seconds,
        )
        .await?
    {
        ExtendOutcome::Extended(expires_at) => Ok(axum::Json(Extended { expires_at })),
        ExtendOutcome::NotLive => Err(ApiError::HoldNotLive),
        ExtendOutcome::Forbidden => Err(ApiError::Forbidden("this hold belongs to another user")),
    }
}

/// Releases the seats this token still owns (compare-and-delete).
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
    event_layout(&state, event).await?;
    let token = token(&token_text).ok_or_else(hold_not_found)?;
    match state.holds.release(event, token, &user).await? {
        ReleaseOutcome::Released => Ok(StatusCode::NO_CONTENT),
        ReleaseOutcome::NotLive => Err(hold_not_found()),
        ReleaseOutcome::Forbidden => Err(ApiError::Forbidden("this hold belongs to another user")),
    }
}
