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
    let route = req.extensions().get::<MatchedPath>().cloned();
    let method = req.method().clone();
    let response = next.run(req).await;
    state.metrics.request(
        method.as_str(),
        route.as_ref().map_or("unmatched", MatchedPath::as_str),
        response.status().as_u16(),
        start.elapsed(),
    );
    response
}
