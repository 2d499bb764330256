//! `GET /v1/events/{id}/stream`: the event's seats as Server-Sent Events, a snapshot first
//! and then every change as it reaches this instance.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use boxoffice_core::ids::EventId;
use futures::StreamExt;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::availability::holds_unknown;
use crate::auth::TokenChannel;
use crate::client::ClientAddress;
use crate::error::{ApiError, Problem};
use crate::gzip::GzipStream;
use crate::sse::{self, snapshot_deflated, snapshot_event};
use crate::state::AppState;
use boxoffice_service::availability::{
    channel_of, seats_snapshot, seats_snapshot_in, SeatsSnapshot, SnapshotKind,
};
use boxoffice_service::limits::StreamSlot;
use boxoffice_service::live::{Frame, Subscription};
use boxoffice_service::seat_map::RenderedSeatMap;

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
///
/// A reader whose user token puts them in one of the event's sales channels sees that
/// channel's seats on sale and follows their changes (their snapshots are their own, not
/// shared); to everyone else those seats are `not_for_sale` and nothing about them is sent.
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
    TokenChannel(channel): TokenChannel,
    ClientAddress(client): ClientAddress,
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
    let slot = state
        .streams()
        .take(client)
        .ok_or(ApiError::RateLimited(RECONNECT))?;
    let channel = channel_of(&state, event, channel.as_deref())
        .await?
        .map(Box::from);
    let (subscription, snapshot, since) = opened(&state, event, channel.as_deref()).await?;
    let holds_unknown_now = snapshot.holds_unknown();
    let mut follower = Follower {
        heartbeat: state.live.heartbeat(),
        view: channel.is_some().then(|| snapshot.map().clone()),
        channel,
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
            (header::VARY, "accept-encoding, authorization"),
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
/// shared from then on). A sales channel's reader composes one of their own.
async fn opened(
    state: &AppState,
    event: EventId,
    channel: Option<&str>,
) -> Result<(Subscription, Arc<SeatsSnapshot>, Vec<Frame>), boxoffice_service::Error> {
    // Subscribe before composing: a change made in between arrives after the snapshot.
    let (subscription, shared) = state.live.subscribe(event);
    if channel.is_some() {
        let snapshot = Arc::new(seats_snapshot_in(state, event, channel).await?);
        return Ok((subscription, snapshot, Vec::new()));
    }
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
    /// The sales channel of the reader, if they are in one of the event's.
    channel: Option<Box<str>>,
    /// The channel's view of the seat map its latest snapshot came from (`None` for a
    /// reader in no channel): which channel seats are its own.
    view: Option<Arc<RenderedSeatMap>>,
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
        if self.view.is_some() {
            self.view = Some(snapshot.map().clone());
        }
        match &mut self.gzip {
            Some(gzip) => gzip.deflated(&snapshot_deflated(snapshot, self.kind)),
            None => snapshot_event(snapshot, self.kind),
        }
    }
}

/// The next chunk of a subscriber's stream: an event, or a comment line when it has been
/// quiet for a heartbeat. `None` ends it (the server is shutting down, or a snapshot it
/// needs cannot be composed: the client reconnects).
async fn next_chunk(mut follower: Follower) -> Option<(Result<Bytes, Infallible>, Follower)> {
    loop {
        if follower.ended {
            return None;
        }
        let (chunk, next) = next_piece(follower).await?;
        match chunk {
            Some(chunk) => return Some((Ok(chunk), next)),
            // A frame that was not this stream's to send.
            None => follower = next,
        }
    }
}

/// The stream's next piece, or `None` beside the follower when the frame it took was not
/// this stream's to send; `None` ends the stream.
async fn next_piece(mut follower: Follower) -> Option<(Option<Bytes>, Follower)> {
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
                    return Some((Some(beat), follower));
                }
                // A gzip stream sends its end first.
                Next::Closing => {
                    let end = follower.gzip.as_ref()?.end();
                    follower.ended = true;
                    return Some((Some(end), follower));
                }
            }
        }
    };
    let chunk = match frame {
        Ok(Frame::Seats(data)) => follower.piece(&sse::event("seats", &data)),
        Ok(Frame::Channel(data)) => {
            let Some(own) = follower
                .view
                .as_deref()
                .and_then(|view| boxoffice_service::live::seen_by_channel(view, &data))
            else {
                return Some((None, follower));
            };
            follower.piece(&sse::event("seats", &own))
        }
        Ok(Frame::Ga(data)) => follower.piece(&sse::event("ga", &data)),
        Ok(Frame::Snapshot(snapshot)) if follower.channel.is_none() => follower.snapshot(&snapshot),
        // The allocations changed (a channel's reader composes their own snapshot), or
        // the stream is behind, or frames were missed: start again from a snapshot (shared
        // if one is). Boxed: rare, and its future is large; inline, every idle stream
        // would carry room for it.
        Ok(Frame::Snapshot(_) | Frame::Resync) | Err(RecvError::Lagged(_)) => {
            let (subscription, snapshot, since) = Box::pin(opened(
                &follower.state,
                follower.event,
                follower.channel.as_deref(),
            ))
            .await
            .ok()?;
            follower.subscription = subscription;
            follower.since = since.into();
            follower.snapshot(&snapshot)
        }
        Err(RecvError::Closed) => return None,
    };
    Some((Some(chunk), follower))
}

/// What a quiet wait for the next frame came to.
enum Next {
    Frame(Result<Frame, RecvError>),
    Quiet,
    Closing,
}
