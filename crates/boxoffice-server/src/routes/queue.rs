//! The waiting room: joining (`POST /v1/events/{id}/queue`), a ticket's poll and its
//! giving up (`GET`/`DELETE /v1/events/{id}/queue/{ticket}`), and the line's public status
//! (`GET /v1/events/{id}/queue/status`), which an HTTP cache may serve to everyone.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use boxoffice_api::{QueueJoined, QueueLine, QueueStatus};

use crate::auth::Buyer;
use crate::error::{ApiError, Problem};
use crate::state::AppState;
use boxoffice_service::queue::line::STATUS_MAX_AGE;
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
    let joined = queue::join(&state, event, &user).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(QueueJoined {
            ticket: joined.ticket,
            position: joined.position,
            estimated_wait_seconds: joined.wait_seconds,
        }),
    ))
}

/// Where the buyer's ticket stands. While it waits, the answer comes from the instance's
/// view of the line, with no store call; no heartbeat is needed. Once admitted, the answer
/// carries the pass for holds and bookings (the same pass each time); an admitted ticket
/// not exchanged within the event's `session_seconds` lapses.
#[utoipa::path(get, path = "/v1/events/{id}/queue/{ticket}", tag = "waiting room",
    params(("id" = String, Path, description = "Event id"),
           ("ticket" = String, Path, description = "The ticket `POST /v1/events/{id}/queue` gave")),
    security(("user" = [])),
    responses(
        (status = 200, description = "Waiting, or admitted with the pass", body = QueueStatus),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Not a ticket the server signed for this event (`ticket_invalid`)", body = Problem),
        (status = 404, description = "No such event or waiting room, or the ticket was given up, lapsed, ended or is another buyer's (`ticket_not_found`: join again)", body = Problem),
        (status = 503, description = "Redis, which keeps the line, cannot be reached", body = Problem),
    ))]
pub async fn poll_queue(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, ticket)): Path<(String, String)>,
) -> Result<axum::Json<QueueStatus>, ApiError> {
    let event = super::event_id(&id)?;
    let status = match queue::poll(&state, event, &user, &ticket).await? {
        Standing::Waiting {
            position,
            wait_seconds,
            reissued,
        } => QueueStatus {
            admitted: false,
            ticket: reissued,
            position,
            estimated_wait_seconds: wait_seconds,
            pass: None,
            pass_expires_at: None,
        },
        Standing::Admitted { pass, expires_at } => QueueStatus {
            admitted: true,
            ticket: None,
            position: None,
            estimated_wait_seconds: None,
            pass: Some(pass),
            pass_expires_at: Some(expires_at),
        },
    };
    Ok(axum::Json(status))
}

/// Gives the ticket's place up: the line steps over it, and the ticket answers
/// `404 ticket_not_found` from then on, on every instance.
#[utoipa::path(delete, path = "/v1/events/{id}/queue/{ticket}", tag = "waiting room",
    params(("id" = String, Path, description = "Event id"),
           ("ticket" = String, Path, description = "The ticket `POST /v1/events/{id}/queue` gave")),
    security(("user" = [])),
    responses(
        (status = 204, description = "The place is given up"),
        (status = 401, description = "Missing or invalid user token", body = Problem),
        (status = 403, description = "Not a ticket the server signed for this event (`ticket_invalid`)", body = Problem),
        (status = 404, description = "No such event or waiting room, or no such ticket of this buyer (`ticket_not_found`)", body = Problem),
        (status = 503, description = "Redis, which keeps the line, cannot be reached", body = Problem),
    ))]
pub async fn leave_queue(
    Buyer(user): Buyer,
    State(state): State<AppState>,
    Path((id, ticket)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let event = super::event_id(&id)?;
    queue::leave(&state, event, &user, &ticket).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The line's public figures: how far admission has come, at what rate and why slower,
/// and how many wait. The same bytes for every reader until a figure changes, with
/// `Cache-Control: public` and an ETag, so an HTTP cache can answer everyone in line.
#[utoipa::path(get, path = "/v1/events/{id}/queue/status", tag = "waiting room",
    params(("id" = String, Path, description = "Event id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag of this status seen before")),
    responses(
        (status = 200, description = "The line's figures", body = QueueLine,
            headers(("ETag" = String, description = "The status's tag"),
                    ("Cache-Control" = String, description = "`public, max-age=N`, 1 ≤ N ≤ 5"))),
        (status = 304, description = "Unchanged since the ETag in `If-None-Match`"),
        (status = 404, description = "No such event (`event_not_found`), or it has no waiting room (`queue_not_found`)", body = Problem),
        (status = 503, description = "Redis, which keeps the line, cannot be reached", body = Problem),
    ))]
pub async fn queue_status(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let event = super::event_id(&id)?;
    let status = queue::status(&state, event).await?;
    let cache = [
        (header::ETAG, status.etag.clone()),
        (
            header::CACHE_CONTROL,
            format!("public, max-age={STATUS_MAX_AGE}"),
        ),
    ];
    if super::availability::known(&headers, &status.etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    // Its length said up front: a small public answer goes uncompressed and without
    // `Vary`, one copy for every cache (crate::middleware::compression).
    Ok((
        cache,
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::CONTENT_LENGTH, status.body.len().to_string()),
        ],
        status.body.clone(),
    )
        .into_response())
}
