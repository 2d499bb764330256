//! The middleware every request passes: compression, the request id and its span, CORS,
//! the head-size check, the request timeout, and a write's work run to its end. (The adaptive limit is the service's: it
//! covers the store's part of a request alone, see `boxoffice_service::overload`.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::HttpBody;
use axum::extract::{Request, State};
use axum::http::{header, Extensions, HeaderMap};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::compression::{CompressionLayer, CompressionLevel};

use crate::error::ApiError;

/// How answers are compressed for clients that offer zstd, brotli or gzip: at the fastest
/// level, where a 100,000-seat map goes from 19 MB to about 400 KB in tens of milliseconds.
///
/// A small answer that any cache may keep (`Cache-Control: public`, under 1 KiB: a waiting
/// room's status) is sent as it is, without `Vary: accept-encoding`, so that an HTTP cache
/// in front keeps one copy for everyone.
pub(crate) fn compression() -> CompressionLayer<impl Predicate> {
    CompressionLayer::new()
        .quality(CompressionLevel::Fastest)
        .compress_when(DefaultPredicate::new().and(
            |status, version, headers: &HeaderMap, extensions: &Extensions| {
                let _ = (status, version, extensions);
                !small_and_public(headers)
            },
        ))
}

/// Whether an answer is public for caches and under 1 KiB (by a `Content-Length` its route
/// set).
fn small_and_public(headers: &HeaderMap) -> bool {
    let public = headers
        .get(header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|d| d.trim() == "public"));
    let small = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n < 1024);
    public && small
}

pub(crate) static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The span a request is served in: its id, method and path (never the query, which may
/// carry a token).
pub(crate) fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        path = %request.uri().path(),
    )
}

/// CORS for pages on `origins` (a platform's checkout embedding the map): they may call
/// every route with a token and read the answers, the stream included; a preflight is
/// answered here, before any route. Any other origin gets no CORS header at all; with no
/// origin named there is no layer (an `OPTIONS` is answered as without CORS).
pub(crate) fn cors(origins: &[HeaderValue]) -> Option<tower_http::cors::CorsLayer> {
    use axum::http::{header, Method};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let layer = CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().cloned()))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static(crate::extract::PASS_HEADER),
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::RETRY_AFTER,
            header::LOCATION,
            header::ETAG,
            HeaderName::from_static("boxoffice-holds"),
        ])
        .max_age(Duration::from_secs(600));
    Some(layer)
}

/// Refuses a request whose head is larger than [`crate::serve::MAX_HEAD_BYTES`] (431).
/// hyper refuses such a head only while it is still arriving; one that arrives complete in
/// a few large reads is parsed whole, and is refused here instead.
pub(crate) async fn head_size(req: Request, next: Next) -> Response {
    // The request line and every header line as sent (`name: value\r\n`).
    let uri = req.uri();
    let target = uri.scheme_str().map_or(0, |s| s.len() + 3)
        + uri.authority().map_or(0, |a| a.as_str().len())
        + uri.path_and_query().map_or(1, |p| p.as_str().len());
    let line = req.method().as_str().len() + target + 11;
    let headers: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if line + headers > crate::serve::MAX_HEAD_BYTES {
        return ApiError::HeaderTooLarge.into_response();
    }
    next.run(req).await
}

/// Runs a request that may write (any method but `GET`, `HEAD` and `OPTIONS`) to its end in
/// a task of its own, apart from the connection that asked: a client that hangs up, or the
/// request timeout around this layer, drops only the wait for the answer, never the work
/// half done. A write is never cut between its statements (a transaction begun and left
/// open on a pooled connection, a hold store's step taken and its undo never run), and
/// an answer of `201` always means committed. A panic in the task is raised again here, as
/// if it had happened in place.
pub(crate) async fn run_to_end(req: Request, next: Next) -> Response {
    use tracing::Instrument;
    if matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
    ) {
        return next.run(req).await;
    }
    let work = next.run(req).instrument(tracing::Span::current());
    match tokio::spawn(work).await {
        Ok(response) => response,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => ApiError::Internal(format!("a request's task ended early: {e}")).into_response(),
    }
}

/// Abandons a request that takes longer than the limit, so a stuck store or a slow client
/// never leaves a request hanging: 408 if its body had not arrived in full by then (the
/// client was slow), 503 if it had (the server was).
pub(crate) async fn timeout(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let received = Arc::new(AtomicBool::new(body.is_end_stream()));
    let body = axum::body::Body::new(Received {
        inner: body,
        received: received.clone(),
    });
    match tokio::time::timeout(limit, next.run(Request::from_parts(parts, body))).await {
        Ok(response) => response,
        Err(_) if !received.load(Ordering::Acquire) => ApiError::RequestTimeout.into_response(),
        Err(_) => ApiError::Unavailable {
            reason: "request timed out".into(),
            retry_after: Duration::from_secs(1),
        }
        .into_response(),
    }
}

/// A request body that says when it has been read to its end.
struct Received {
    inner: axum::body::Body,
    received: Arc<AtomicBool>,
}

impl hyper::body::Body for Received {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, std::task::Poll::Ready(None)) || self.inner.is_end_stream() {
            self.received.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
