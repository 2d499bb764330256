//! `GET /`: the seat-map page buyers use; `GET /admin`: the organizer console; and their
//! scripts and style sheets. Plain HTML, CSS and JavaScript, embedded in the binary; no
//! build step.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("../../web/index.html");
const SCRIPT: &str = include_str!("../../web/app.js");
const HALL: &str = include_str!("../../web/hall.js");
const STYLE: &str = include_str!("../../web/app.css");
const CONSOLE: &str = include_str!("../../web/admin.html");
const CONSOLE_SCRIPT: &str = include_str!("../../web/admin.js");
const CONSOLE_STYLE: &str = include_str!("../../web/admin.css");
/// The element's TypeScript declarations.
const EMBED_TYPES: &str = include_str!("../../web/embed.d.ts");
/// The element a platform embeds: the hall's drawing, then the element.
const EMBED: &str = concat!(
    include_str!("../../web/hall.js"),
    "\n",
    include_str!("../../web/embed.js")
);

/// What every page asset is sent with: revalidated on every load (so a new server version
/// is picked up at once), never sniffed, and allowed to load only from this server.
const HEADERS: [(header::HeaderName, &str); 3] = [
    (header::CACHE_CONTROL, "no-cache"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
];

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

fn asset(kind: &'static str, text: &'static str) -> impl IntoResponse {
    (HEADERS, [(header::CONTENT_TYPE, kind)], text)
}

/// The seat-map page: the event list, or one event's map with `?event=<id>`.
#[utoipa::path(get, path = "/", tag = "operations",
    params(("event" = Option<String>, Query, description = "Open this event's seat map directly")),
    responses((status = 200, description = "The seat-map page", content_type = "text/html")))]
pub async fn index() -> impl IntoResponse {
    asset(HTML, INDEX)
}

/// The organizer console, at `/admin` and every path under it (the console routes in the
/// browser).
pub async fn console() -> impl IntoResponse {
    asset(HTML, CONSOLE)
}

/// The page's script.
pub async fn script() -> impl IntoResponse {
    asset(JAVASCRIPT, SCRIPT)
}

/// The drawing of a hall beside its seats, which the page and the console use.
pub async fn hall() -> impl IntoResponse {
    asset(JAVASCRIPT, HALL)
}

/// The page's style sheet.
pub async fn style() -> impl IntoResponse {
    asset(CSS, STYLE)
}

/// The console's script.
pub async fn console_script() -> impl IntoResponse {
    asset(JAVASCRIPT, CONSOLE_SCRIPT)
}

/// The console's style sheet (over the page's).
pub async fn console_style() -> impl IntoResponse {
    asset(CSS, CONSOLE_STYLE)
}

/// `GET /embed.js`: the `<boxoffice-seat-map>` element, for a platform's own pages. Kept by
/// browsers for five minutes, then revalidated by its ETag (a 304 while it is unchanged).
pub async fn embed(headers: axum::http::HeaderMap) -> axum::response::Response {
    use sha2::{Digest, Sha256};
    use std::sync::LazyLock;
    static ETAG: LazyLock<String> = LazyLock::new(|| {
        let digest = Sha256::digest(EMBED.as_bytes());
        format!("\"{}\"", hex::encode(&digest[..12]))
    });
    let cache = [
        (header::CACHE_CONTROL, "public, max-age=300"),
        (header::ETAG, ETAG.as_str()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == ETAG.as_str()));
    if fresh {
        return (axum::http::StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (cache, [(header::CONTENT_TYPE, JAVASCRIPT)], EMBED).into_response()
}

/// `GET /embed.d.ts`: the element's TypeScript declarations (attributes, events, methods).
pub async fn embed_types() -> impl IntoResponse {
    (
        [
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        [(
            header::CONTENT_TYPE,
            "application/typescript; charset=utf-8",
        )],
        EMBED_TYPES,
    )
}
