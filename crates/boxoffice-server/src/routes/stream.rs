//! `GET /v1/events/{id}/stream`: the event's seats as Server-Sent Events, a snapshot first
//! and then every change as it reaches this instance.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use boxoffice_core::ids::EventId;
use futures::StreamExt;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::availability::holds_unknown;
use crate::error::{ApiError, Problem};
use crate::state::AppState;
use boxoffice_service::availability::{seats_snapshot, sse_event, SeatsSnapshot, SnapshotKind};
use boxoffice_service::gzip::GzipStream;
use boxoffice_service::limits::StreamSlot;
use boxoffice_service::live::{Frame, Subscription};

/// How long a client waits before reconnecting after the stream ends.
const RECONNECT: Duration = Duration::from_secs(2);
/// [`RECONNECT`] for the client's `EventSource`, sent after the first snapshot (a block
/// without data sets the time and dispatches nothing).
const RETRY: &[u8] = b"retry: 2000\n\n";

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
///
/// What an open stream costs the server is bounded: its snapshot is the one shared by the
/// event's streams on this instance (built once, bytes and all), a stream behind by more
/// than the event's queue of frames starts again from a snapshot, and one client address
/// may have `BOXOFFICE_STREAMS_PER_ADDRESS` streams open.
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
        (status = 429, description = "`rate_limited`: this client address has `BOXOFFICE_STREAMS_PER_ADDRESS` streams open; see Retry-After", body = Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
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
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok());
    let client = state.rate_limits.client_address(peer, forwarded);
    let slot = state
        .streams()
        .take(client)
        .ok_or(ApiError::RateLimited(RECONNECT))?;
    let (subscription, snapshot, since) = opened(&state, event).await?;
    let holds_unknown_now = snapshot.holds_unknown();
    let mut follower = Follower {
        heartbeat: state.live.heartbeat(),
        state,
        event,
        kind,
        subscription,
        since: since.into(),
        gzip: accepts_gzip(&headers).then(GzipStream::default),
        ended: false,
        _slot: slot,
    };
    let mut head = Vec::with_capacity(3);
    if follower.gzip.is_some() {
        head.push(Ok::<_, Infallible>(GzipStream::header()));
    }
    head.push(Ok(follower.snapshot(&snapshot)));
    head.push(Ok(follower.piece(RETRY)));
    drop(snapshot);
    let gzip = follower.gzip.is_some();
    let body = futures::stream::iter(head).chain(futures::stream::unfold(follower, next_chunk));
    let mut response = (
        holds_unknown(holds_unknown_now),
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::VARY, "accept-encoding"),
            // Proxies that buffer answers (nginx) pass this one through as it comes.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(body),
    )
        .into_response();
    if gzip {
        response.headers_mut().insert(
            header::CONTENT_ENCODING,
            header::HeaderValue::from_static("gzip"),
        );
    }
    Ok(response)
}

/// Whether the client takes gzip (`Accept-Encoding`, not at `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0))
            });
            coding.eq_ignore_ascii_case("gzip") && !refused
        })
}

/// A subscription to `event` and the seats as of its start: the snapshot shared on this
/// instance and the frames since, or, if there is none to share, one composed now (and
/// shared from then on).
async fn opened(
    state: &AppState,
    event: EventId,
) -> Result<(Subscription, Arc<SeatsSnapshot>, Vec<Frame>), boxoffice_service::Error> {
    // Subscribe before composing: a change made in between arrives after the snapshot.
    let (subscription, shared) = state.live.subscribe(event);
    if let Some(shared) = shared {
        return Ok((subscription, shared.snapshot, shared.since));
    }
    let snapshot = Arc::new(seats_snapshot(state, event).await?);
    state.live.share(&subscription, &snapshot);
    Ok((subscription, snapshot, Vec::new()))
}

/// What one subscriber's stream follows.
struct Follower {
    state: AppState,
    event: EventId,
    kind: SnapshotKind,
    subscription: Subscription,
    /// Frames to send before the subscription's own: those after a shared snapshot.
    since: VecDeque<Frame>,
    heartbeat: Duration,
    /// The stream is gzip: its snapshots go as compressed once for every stream, the rest
    /// as stored blocks.
    gzip: Option<GzipStream>,
    /// The gzip stream's end has been sent.
    ended: bool,
    _slot: StreamSlot,
}

impl Follower {
    /// `data` (an event, a comment line) as the stream's next piece.
    fn piece(&mut self, data: &[u8]) -> Bytes {
        match &mut self.gzip {
            Some(gzip) => gzip.stored(data),
            None => Bytes::copy_from_slice(data),
        }
    }

    /// `snapshot` as the stream's next piece, in the bytes every stream shares.
    fn snapshot(&mut self, snapshot: &SeatsSnapshot) -> Bytes {
        let name = snapshot_name(self.kind);
        match &mut self.gzip {
            Some(gzip) => gzip.deflated(&snapshot.event_deflated(self.kind, name)),
            None => snapshot.event(self.kind, name),
        }
    }
}

/// The next chunk of a subscriber's stream: an event, or a comment line when it has been
/// quiet for a heartbeat. `None` ends it (the server is shutting down, or a snapshot it
/// needs cannot be composed: the client reconnects).
async fn next_chunk(mut follower: Follower) -> Option<(Result<Bytes, Infallible>, Follower)> {
    if follower.ended {
        return None;
    }
    let frame = match follower.since.pop_front() {
        Some(frame) => Ok(frame),
        None => {
            let heartbeat = follower.heartbeat;
            let Subscription {
                frames, closing, ..
            } = &mut follower.subscription;
            let next = tokio::select! {
                frame = frames.recv() => Next::Frame(frame),
                _ = closing.wait_for(|closing| *closing) => Next::Closing,
                _ = tokio::time::sleep(heartbeat) => Next::Quiet,
            };
            match next {
                Next::Frame(frame) => frame,
                Next::Quiet => {
                    let beat = follower.piece(b":\n\n");
                    return Some((Ok(beat), follower));
                }
                // A gzip stream sends its end first.
                Next::Closing => {
                    let end = follower.gzip.as_ref()?.end();
                    follower.ended = true;
                    return Some((Ok(end), follower));
                }
            }
        }
    };
    let chunk = match frame {
        Ok(Frame::Seats(data)) => follower.piece(&sse_event("seats", &data)),
        Ok(Frame::Ga(data)) => follower.piece(&sse_event("ga", &data)),
        Ok(Frame::Snapshot(snapshot)) => follower.snapshot(&snapshot),
        Ok(Frame::Resync) | Err(RecvError::Lagged(_)) => {
            // Behind, or frames were missed: start again from a snapshot (shared if one
            // is). Boxed: rare, and its future is large; inline, every idle stream would
            // carry room for it.
            let (subscription, snapshot, since) = Box::pin(opened(&follower.state, follower.event))
                .await
                .ok()?;
            follower.subscription = subscription;
            follower.since = since.into();
            follower.snapshot(&snapshot)
        }
        Err(RecvError::Closed) => return None,
    };
    Some((Ok(chunk), follower))
}

/// What a quiet wait for the next frame came to.
enum Next {
    Frame(Result<Frame, RecvError>),
    Quiet,
    Closing,
}

/// The name of the stream event that carries a snapshot of this kind.
fn snapshot_name(kind: SnapshotKind) -> &'static str {
    match kind {
        SnapshotKind::Full => "snapshot",
        SnapshotKind::Statuses => "statuses",
    }
}
