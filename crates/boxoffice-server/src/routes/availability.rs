//! `GET /v1/events/{id}/seats`, `GET /v1/events/{id}/layout` and
//! `GET /v1/events/{id}/availability`.

use axum::extract::{Path, State};
use std::convert::Infallible;

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderValue, Request, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use boxoffice_api::{AvailabilityView, GaAvailability, LayoutView, SeatsView};
use boxoffice_core::availability::{SeatCounts, SeatState};
use http_body_util::{BodyExt, Full};
use sha2::{Digest, Sha256};
use tower::{Layer, ServiceExt};

use crate::auth::TokenChannel;
use crate::encoded::{Encoded, EncodedAnswers};
use crate::error::{ApiError, Problem};
use crate::middleware::compression;
use crate::state::AppState;
use boxoffice_service::availability::{event_availability_in, layout, layout_version};
use boxoffice_service::seat_map::RenderedSeatMap;

/// What the seat answers vary by: how they are compressed, and the reader's sales channel
/// (a channel's seats read `not_for_sale` to all but that channel's buyers).
const VARY: &str = "accept-encoding, authorization";

/// Every seat with its status, composed from Postgres and the hold store at read time.
///
/// The answer carries an `ETag` of the seat map's version and every seat's status; a
/// request whose `If-None-Match` names it gets `304 Not Modified` without the body. The
/// compressed answer is kept while the tag stands: repeat loads of a quiet seat map cost
/// neither rendering nor compressing it again.
///
/// A reader whose user token puts them in one of the event's sales channels sees that
/// channel's seats on sale; everyone else sees them `not_for_sale`.
#[utoipa::path(get, path = "/v1/events/{id}/seats", tag = "availability",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "Seats", body = SeatsView, headers(
            ("etag" = String, description = "Changes whenever the layout or any seat's status does (absent when the hold store could not be reached)"),
            ("boxoffice-holds" = String, description = "`unavailable` when the hold store could not be reached: held seats then read as available"))),
        (status = 304, description = "Unchanged since the `If-None-Match` ETag"),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn get_seats(
    State(state): State<AppState>,
    TokenChannel(channel): TokenChannel,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = super::event_id(&id)?;
    let availability = event_availability_in(&state, id, channel.as_deref()).await?;
    // Without the hold store the answer is incomplete: never let a client keep it.
    let etag = (!availability.holds_unknown).then(|| {
        let etag = seats_etag(availability.map.version, &availability.states);
        of_view(&availability.map, etag)
    });
    if let Some(etag) = etag.as_deref().filter(|etag| known(&headers, etag)) {
        return Ok(not_modified(etag));
    }
    let map = &availability.map;
    let (content_encoding, body) = match &etag {
        // A seat map whose statuses stand is compressed once for each way clients ask.
        Some(etag) => {
            let render = || map.render_seats(id, &availability.states).into();
            let answers = state.encoded().of(id);
            let kept = kept_for(map, &answers.seats);
            encoded(kept, etag, &headers, render).await?
        }
        None => (None, map.render_seats(id, &availability.states).into()),
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, REVALIDATE),
            (header::VARY, VARY),
        ],
        AppendHeaders(etag.map(|e| (header::ETAG, e))),
        AppendHeaders(content_encoding.map(|e| (header::CONTENT_ENCODING, e))),
        holds_unknown(availability.holds_unknown),
        body,
    )
        .into_response())
}

/// `etag` of a channel's view names the channel: the same seats read differently in
/// another view.
fn of_view(map: &RenderedSeatMap, etag: String) -> String {
    match &map.channel {
        Some(channel) => etag.replacen("W/\"", &format!("W/\"{channel}:"), 1),
        None => etag,
    }
}

/// Where the answers of `map`'s view are kept: the event's `kept` for buyers in no
/// channel; a channel's view is compressed for each request and not kept.
fn kept_for<'a>(map: &RenderedSeatMap, kept: &'a EncodedAnswers) -> Option<&'a EncodedAnswers> {
    map.channel.is_none().then_some(kept)
}

/// `body` compressed as every other answer is for a client that sends `accept` (the same
/// layer, run here so that the result can be kept).
async fn encode(body: Bytes, accept: &HeaderValue) -> Result<Encoded, ApiError> {
    let pass = tower::service_fn(|request: Request<Full<Bytes>>| async move {
        let mut response = Response::new(request.into_body());
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Ok::<_, Infallible>(response)
    });
    let mut request = Request::new(Full::new(body));
    request
        .headers_mut()
        .insert(header::ACCEPT_ENCODING, accept.clone());
    let Ok(response) = compression().layer(pass).oneshot(request).await;
    let content_encoding = response.headers().get(header::CONTENT_ENCODING).cloned();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| ApiError::Internal(format!("compressing the seat map: {e}")))?
        .to_bytes();
    Ok(Encoded {
        content_encoding,
        body,
    })
}

/// Every seat without its status, in the order the stream's `statuses` events follow.
///
/// It changes only when the event's allocations do: the answer's `ETag` names the
/// allocation version, and a request whose `If-None-Match` names the current one gets
/// `304 Not Modified` (a page keeps the layout of a 100,000-seat venue and revalidates it
/// for a few hundred bytes).
#[utoipa::path(get, path = "/v1/events/{id}/layout", tag = "availability",
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 200, description = "The seats", body = LayoutView, headers(
            ("etag" = String, description = "Changes whenever the event's allocations do"))),
        (status = 304, description = "Unchanged since the `If-None-Match` ETag"),
        (status = 404, description = "No such event", body = Problem),
    ))]
pub async fn get_layout(
    State(state): State<AppState>,
    TokenChannel(channel): TokenChannel,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = super::event_id(&id)?;
    let version = layout_version(&state, id).await?;
    let map = layout(&state, id, channel.as_deref(), version).await?;
    let etag = of_view(&map, layout_etag(map.version));
    if known(&headers, &etag) {
        return Ok(not_modified(&etag));
    }
    let render = || map.layout(id);
    let answers = state.encoded().of(id);
    let kept = kept_for(&map, &answers.layout);
    let (content_encoding, body) = encoded(kept, &etag, &headers, render).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::CACHE_CONTROL, REVALIDATE.to_owned()),
            (header::VARY, VARY.to_owned()),
            (header::ETAG, etag),
        ],
        AppendHeaders(content_encoding.map(|e| (header::CONTENT_ENCODING, e))),
        body,
    )
        .into_response())
}

/// The answer of `etag` for the request's `Accept-Encoding`: kept in `answers` from an
/// earlier request, or rendered and compressed now and kept (if there is somewhere to keep
/// it); not compressed (nor kept) if the request offers no encoding.
async fn encoded(
    answers: Option<&EncodedAnswers>,
    etag: &str,
    headers: &HeaderMap,
    render: impl FnOnce() -> Bytes,
) -> Result<(Option<HeaderValue>, Bytes), ApiError> {
    let Some(accept) = headers.get(header::ACCEPT_ENCODING) else {
        return Ok((None, render()));
    };
    let answer = match answers.and_then(|a| a.get(etag, accept)) {
        Some(kept) => kept,
        None => {
            let answer = encode(render(), accept).await?;
            if let Some(answers) = answers {
                answers.keep(etag, accept.clone(), answer.clone());
            }
            answer
        }
    };
    Ok((answer.content_encoding, answer.body))
}

/// A weak ETag of the layout at `version` (weak: compressed answers differ in bytes).
fn layout_etag(version: i64) -> String {
    format!("W/\"layout-{version}\"")
}

/// Whether the request's `If-None-Match` names `etag` (or any representation).
pub(crate) fn known(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == etag || tag.trim() == "*")
}

fn not_modified(etag: &str) -> Response {
    (
        StatusCode::NOT_MODIFIED,
        [
            (header::ETAG, etag.to_owned()),
            (header::CACHE_CONTROL, REVALIDATE.to_owned()),
        ],
    )
        .into_response()
}

/// Seat maps change from moment to moment: a client may keep one but must ask again.
const REVALIDATE: &str = "no-cache";

/// A weak ETag of a seat map at `version` with these states: SHA-256 over every seat's
/// status and hold expiry, so any change on any seat changes it, and every instance
/// computes the same tag.
fn seats_etag(version: i64, states: &[SeatState]) -> String {
    let mut hash = Sha256::new();
    hash.update(version.to_be_bytes());
    for state in states {
        hash.update([state.status as u8]);
        let until = state.held_until.map_or(0, |t| t.timestamp_micros());
        hash.update(until.to_be_bytes());
    }
    let digest = hash.finalize();
    format!("W/\"{version}-{}\"", hex::encode(&digest[..12]))
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
    TokenChannel(channel): TokenChannel,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let id = super::event_id(&id)?;
    let availability = event_availability_in(&state, id, channel.as_deref()).await?;
    let unknown = holds_unknown(availability.holds_unknown);
    Ok((
        unknown,
        [(header::VARY, VARY)],
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
