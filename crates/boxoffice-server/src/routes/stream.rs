//! `GET /v1/events/{id}/stream`: the event's seats as Server-Sent Events, a snapshot first
//! and then every change as it reaches this instance.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use boxoffice_core::ids::EventId;
use futures::StreamExt;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::availability::holds_unknown;
use crate::error::{ApiError, Problem};
use crate::state::AppState;
use boxoffice_service::availability::{seats_snapshot, SnapshotKind};
use boxoffice_service::live::{Frame, Subscription};

/// How long a client waits before reconnecting after the stream ends.
const RECONNECT: Duration = Duration::from_secs(2);

/// Which snapshot a stream sends.
#[derive(Debug, Default, Deserialize)]
pub struct StreamQuery {
    /// `full` (the default) or `statuses`.
    #[serde(default)]
    snapshot: Option<String>,
}

/// The event's seats, then their changes, as Server-Sent Events: `snapshot` (the body of
/// `GET /v1/events/{id}/seats`), `seats` (`{"seats": [{"id", "status", "held_until"?}]}`)
/// and `ga` (`{"code", "left"}`). A hold that expires sends nothing: clients turn the seat
/// available at its `held_until`. A new snapshot may come at any time (the allocations
/// changed, or this subscriber fell behind) and replaces everything before it.
///
/// With `?snapshot=statuses` every snapshot is a `statuses` event instead: each seat's
/// status alone, compactly, in the order of `GET /v1/events/{id}/layout` at its `version`
/// (a few bytes per seat rather than two hundred, for a client that keeps the layout).
#[utoipa::path(get, path = "/v1/events/{id}/stream", tag = "availability",
    params(
        ("id" = String, Path, description = "Event id"),
        ("snapshot" = Option<String>, Query, description = "`full` (default): snapshots are `snapshot` events with every seat; `statuses`: snapshots are compact `statuses` events"),
    ),
    responses(
        (status = 200, description = "Server-Sent Events: `snapshot` (or `statuses`), then `seats` and `ga` changes",
            content_type = "text/event-stream", body = String, headers(
            ("boxoffice-holds" = String, description = "`unavailable` when the snapshot was composed without the hold store"))),
        (status = 404, description = "No such event", body = Problem),
        (status = 422, description = "`snapshot` is neither `full` nor `statuses`", body = Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<StreamQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    let kind = match query.ok().map(|q| q.0.snapshot) {
        Some(None) => SnapshotKind::Full,
        Some(Some(kind)) if kind == "full" => SnapshotKind::Full,
        Some(Some(kind)) if kind == "statuses" => SnapshotKind::Statuses,
        _ => return Err(ApiError::invalid("snapshot", "must be full or statuses")),
    };
    // Subscribe before composing the snapshot: a change made in between arrives after it.
    let subscription = state.live.subscribe(event);
    let heartbeat = state.live.heartbeat();
    let snapshot = seats_snapshot(&state, event).await?;
    let first = Event::default()
        .event(snapshot_name(kind))
        .retry(RECONNECT)
        .data(snapshot.body(kind));
    let holds_unknown_now = snapshot.holds_unknown();
    drop(snapshot);
    let changes = futures::stream::unfold(
        Follower {
            state,
            event,
            kind,
            subscription,
        },
        next_event,
    );
    let events = futures::stream::once(async { Ok::<_, Infallible>(first) }).chain(changes);
    Ok((
        holds_unknown(holds_unknown_now),
        [
            (header::CACHE_CONTROL, "no-cache"),
            // Proxies that buffer answers (nginx) pass this one through as it comes.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Sse::new(events).keep_alive(KeepAlive::new().interval(heartbeat)),
    ))
}

/// What one subscriber's stream follows.
struct Follower {
    state: AppState,
    event: EventId,
    kind: SnapshotKind,
    subscription: Subscription,
}

/// The next event of a subscriber's stream; `None` ends it (the server is shutting down,
/// or a snapshot it needs cannot be composed: the client reconnects).
async fn next_event(mut follower: Follower) -> Option<(Result<Event, Infallible>, Follower)> {
    let kind = follower.kind;
    let frame = {
        let Subscription {
            frames, closing, ..
        } = &mut follower.subscription;
        tokio::select! {
            frame = frames.recv() => frame,
            _ = closing.wait_for(|closing| *closing) => return None,
        }
    };
    let sse = match frame {
        Ok(Frame::Seats(data)) => Event::default().event("seats").data(&*data),
        Ok(Frame::Ga(data)) => Event::default().event("ga").data(&*data),
        Ok(Frame::Snapshot(snapshot)) => Event::default()
            .event(snapshot_name(kind))
            .data(snapshot.body(kind)),
        Ok(Frame::Resync) | Err(RecvError::Lagged(_)) => {
            // Boxed: composing a snapshot is rare, and its future is large. Inline, every
            // idle stream would carry room for it.
            let snapshot = Box::pin(seats_snapshot(&follower.state, follower.event))
                .await
                .ok()?;
            Event::default()
                .event(snapshot_name(kind))
                .data(snapshot.body(kind))
        }
        Err(RecvError::Closed) => return None,
    };
    Some((Ok(sse), follower))
}

/// The name of the stream event that carries a snapshot of this kind.
fn snapshot_name(kind: SnapshotKind) -> &'static str {
    match kind {
        SnapshotKind::Full => "snapshot",
        SnapshotKind::Statuses => "statuses",
    }
}
