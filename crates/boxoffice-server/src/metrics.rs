//! Request metrics: counts and latency histograms by route and status, recorded into the
//! server's [`boxoffice_service::metrics::Metrics`].

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::state::AppState;

/// Middleware: counts each request and records its latency under its route template (not
/// the raw path, so ids do not explode the label set).
pub async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = req.method().to_string();
    let response = next.run(req).await;
    let labels = [
        ("method", method),
        ("route", route),
        ("status", response.status().as_u16().to_string()),
    ];
    state.metrics.record(|| {
        metrics::counter!("http_requests_total", &labels).increment(1);
        metrics::histogram!("http_request_duration_seconds", &labels)
            .record(start.elapsed().as_secs_f64());
    });
    response
}
