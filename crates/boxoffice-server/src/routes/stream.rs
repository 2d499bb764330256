//! `GET /v1/events/{id}/stream`: the event's seats as Server-Sent Events, a snapshot first
//! and then every change as it reaches this instance.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use boxoffice_core::ids::EventId;
use futures::StreamExt;
use tokio::sync::broadcast::error::RecvError;

use super::availability::holds_unknown;
use crate::error::{ApiError, Problem};
use crate::live::{Frame, Subscription};
use crate::service::availability::seats_snapshot;
use crate::state::AppState;

/// How long a client waits before reconnecting after the stream ends.
const RECONNECT: Duration = Duration::from_secs(2);

/// The event's seats, then their changes, as Server-Sent Events: `snapshot` (the body of
/// `GET /v1/events/{id}/seats`), `seats` (`{"seats": [{"id", "status", "held_until"?}]}`)
/// and `ga` (`{"code", "left"}`). A hold that expires sends nothing: clients turn the seat
/// available at its `held_until`. A new `snapshot` may come at any time (the allocations
/// changed, or this subscriber fell behind) and replaces everything before it.
#[utoipa::path(get, path = "/v1/events/{id}/stream", tag = "availability",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "Server-Sent Events: `snapshot`, then `seats` and `ga` changes",
            content_type = "text/event-stream", body = String, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the snapshot was composed without the hold store"))),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    // Subscribe before composing the snapshot: a change made in between arrives after it.
    let subscription = state.live.subscribe(event);
    let heartbeat = state.live.heartbeat();
    let snapshot = seats_snapshot(&state, event).await?;
    let first = Event::default()
        .event("snapshot")
        .retry(RECONNECT)
        .data(snapshot.body);
    let changes = futures::stream::unfold((state, event, subscription), next_event);
    let events = futures::stream::once(async { Ok::<_, Infallible>(first) }).chain(changes);
    Ok((
        holds_unknown(snapshot.holds_unknown),
        [
            (header::CACHE_CONTROL, "no-cache"),
            // Proxies that buffer answers (nginx) pass this one through as it comes.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Sse::new(events).keep_alive(KeepAlive::new().interval(heartbeat)),
    ))
}

/// The next event of a subscriber's stream; `None` ends it (the server is shutting down,
/// or a snapshot it needs cannot be composed: the client reconnects).
async fn next_event(
    (state, event, mut subscription): (AppState, EventId, Subscription),
) -> Option<(Result<Event, Infallible>, (AppState, EventId, Subscription))> {
    let frame = {
        let Subscription {
            frames, closing, ..
        } = &mut subscription;
        tokio::select! {
            frame = frames.recv() => frame,
            _ = closing.wait_for(|closing| *closing) => return None,
        }
    };
    let sse = match frame {
        Ok(Frame::Event(e)) => Event::default().event(e.0).data(&e.1),
        Ok(Frame::Resync) | Err(RecvError::Lagged(_)) => {
            // Boxed: composing a snapshot is rare, and its future is large. Inline, every
            // idle stream would carry room for it.
            let snapshot = Box::pin(seats_snapshot(&state, event)).await.ok()?;
            Event::default().event("snapshot").data(snapshot.body)
        }
        Err(RecvError::Closed) => return None,
    };
    Some((Ok(sse), (state, event, subscription)))
}
