//! `GET /v1/events/{id}/seats` and `GET /v1/events/{id}/availability`.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use boxoffice_api::{AvailabilityView, GaAvailability, SeatsView};
use boxoffice_core::availability::SeatCounts;

use crate::error::{ApiError, Problem};
use crate::service::availability::event_availability;
use crate::state::AppState;

/// Every seat with its status, composed from Postgres and the hold store at read time.
#[utoipa::path(get, path = "/v1/events/{id}/seats", tag = "availability",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "Seats", body = SeatsView, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the hold store could not be reached: held seats then read as available"))),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn get_seats(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let id = super::event_id(&id)?;
    let availability = event_availability(&state, id).await?;
    let body = availability.map.render_seats(id, &availability.states);
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        holds_unknown(availability.holds_unknown),
        body,
    ))
}

/// Seat counts per status and general-admission places left.
#[utoipa::path(get, path = "/v1/events/{id}/availability", tag = "availability",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "Counts", body = AvailabilityView, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the hold store could not be reached: held seats then count as available"))),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn get_availability(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let id = super::event_id(&id)?;
    let availability = event_availability(&state, id).await?;
    let unknown = holds_unknown(availability.holds_unknown);
    Ok((
        unknown,
        axum::Json(AvailabilityView {
            counts: SeatCounts::of(&availability.states),
            ga: availability
                .ga
                .into_iter()
                .map(|g| GaAvailability {
                    code: g.code,
                    capacity: g.capacity,
                    left: g.left,
                })
                .collect(),
        }),
    ))
}

/// Header (and its value) on an answer composed without the hold store, which was
/// unreachable: sold and not-for-sale seats are exact, held seats read as available (no
/// hold can be taken or bought meanwhile either).
pub const HOLDS_UNKNOWN: (&str, &str) = ("boxoffice-holds", "unavailable");

/// The [`HOLDS_UNKNOWN`] header when availability was composed without the hold store.
pub(crate) fn holds_unknown(
    unknown: bool,
) -> axum::response::AppendHeaders<Option<(&'static str, &'static str)>> {
    axum::response::AppendHeaders(unknown.then_some(HOLDS_UNKNOWN))
}
