//! The waiting room: `POST /v1/events/{id}/queue` and `GET /v1/events/{id}/queue/{ticket}`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use boxoffice_api::{QueueJoined, QueueStatus};
use uuid::Uuid;

use crate::auth::Buyer;
use crate::error::{ApiError, Problem};
use crate::state::AppState;
use boxoffice_service::queue::{self, Standing};

/// Joins the event's waiting room, or answers the ticket the buyer already has. Before
/// the room opens the place is `null`: everyone who joins by then is put in a random order
/// at opening.
#[utoipa::path(post, path = "/v1/events/{id}/queue", tag = "waiting room",
    params(("id" = String, Path, description = "Event id")),
    security(("user" = [])),
    responses(
        (status = 201, description = "In the line (or already admitted: position 0)", body = QueueJoined),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "No such event, or it has no waiting room open (`queue_not_found`)", body = Problem),
        (status = 503, description = "Redis, which keeps the line, cannot be reached", body = Problem),
    ))]
pub async fn join_queue(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    let (ticket, standing) = queue::join(&state, event, &user).await?;
    let (position, estimated_wait_seconds) = match standing {
        Standing::Waiting {
            position,
            wait_seconds,
        } => (position, wait_seconds),
        Standing::Admitted { .. } => (Some(0), Some(0)),
    };
    Ok((
        StatusCode::CREATED,
        axum::Json(QueueJoined {
            ticket,
            position,
            estimated_wait_seconds,
        }),
    ))
}

/// Where the buyer's ticket stands; polling is the heartbeat that keeps it in the line
/// (a ticket not polled for a minute is dropped when its turn comes). Once admitted, the
/// answer carries the pass for holds and bookings.
#[utoipa::path(get, path = "/v1/events/{id}/queue/{ticket}", tag = "waiting room",
    params(("id" = String, Path, description = "Event id"),
           ("ticket" = String, Path, description = "The ticket `POST /v1/events/{id}/queue` gave")),
    security(("user" = [])),
    responses(
        (status = 200, description = "Waiting, or admitted with the pass", body = QueueStatus),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 404, description = "No such event or waiting room, or no such ticket of this buyer (`ticket_not_found`: join again)", body = Problem),
        (status = 503, description = "Redis, which keeps the line, cannot be reached", body = Problem),
    ))]
pub async fn poll_queue(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, ticket)): Path<(String, String)>,
) -> Result<axum::Json<QueueStatus>, ApiError> {
    let event = super::event_id(&id)?;
    let ticket: Uuid = ticket
        .parse()
        .map_err(|_| ApiError::from(boxoffice_service::Error::TicketNotFound))?;
    let status = match queue::poll(&state, event, &user, ticket).await? {
        Standing::Waiting {
            position,
            wait_seconds,
        } => QueueStatus {
            admitted: false,
            position,
            estimated_wait_seconds: wait_seconds,
            pass: None,
            pass_expires_at: None,
        },
        Standing::Admitted { pass, expires_at } => QueueStatus {
            admitted: true,
            position: None,
            estimated_wait_seconds: None,
            pass: Some(pass),
            pass_expires_at: Some(expires_at),
        },
    };
    Ok(axum::Json(status))
}
