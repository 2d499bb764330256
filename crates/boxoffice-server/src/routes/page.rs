//! `GET /`: the seat-map page buyers use, and its script and style sheet. Plain HTML, CSS
//! and JavaScript, embedded in the binary; no build step.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("../../web/index.html");
const SCRIPT: &str = include_str!("../../web/app.js");
const HALL: &str = include_str!("../../web/hall.js");
const STYLE: &str = include_str!("../../web/app.css");

/// What every page asset is sent with: revalidated on every load (so a new server version
/// is picked up at once), never sniffed, and allowed to load only from this server.
const HEADERS: [(header::HeaderName, &str); 3] = [
    (header::CACHE_CONTROL, "no-cache"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
];

/// The seat-map page: the event list, or one event's map with `?event=<id>`.
#[utoipa::path(get, path = "/", tag = "operations",
    params(("event" = Option<String>, Query, description = "Open this event's seat map directly")),
    responses((status = 200, description = "The seat-map page", content_type = "text/html")))]
pub async fn index() -> impl IntoResponse {
    (
        HEADERS,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        INDEX,
    )
}

/// The page's script.
pub async fn script() -> impl IntoResponse {
    (
        HEADERS,
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

/// The drawing of a hall beside its seats, which the page's script uses.
pub async fn hall() -> impl IntoResponse {
    (
        HEADERS,
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        HALL,
    )
}

/// The page's style sheet.
pub async fn style() -> impl IntoResponse {
    (
        HEADERS,
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        STYLE,
    )
}
