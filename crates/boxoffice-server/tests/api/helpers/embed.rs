//! The embeddable element's host: a platform's page on an origin of its own, and the
//! scripts that drive the element inside it, shared by the embed tests.

use fantoccini::Client;
use serde_json::Value;

use super::{spawn_app_with, TestApp};

/// A platform's web server: `page` at `/`, on a port of its own; its origin.
pub(crate) async fn platform(listener: tokio::net::TcpListener, page: String) {
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let page = page.clone();
            async move { axum::response::Html(page) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
}

pub(crate) async fn listener() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    (listener, origin)
}

/// The host page: the element with the platform's colour, and every event it dispatches
/// kept in `window.seen`.
pub(crate) fn host_page(base: &str, event: &str, token: &str, attributes: &str) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop checkout</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ font-family: sans-serif; margin: 1rem; }} boxoffice-seat-map {{ --bo-available: rgb(0, 170, 85); --bo-selected: rgb(255, 120, 0); }}</style>
<script type="module" src="{base}/embed.js"></script></head>
<body><main><h1>Pick your seats</h1>
<boxoffice-seat-map server="{base}" event="{event}" token="{token}" {attributes}></boxoffice-seat-map>
</main><script>
window.seen = [];
const map = document.querySelector('boxoffice-seat-map');
for (const type of ['ready', 'selectionchange', 'hold', 'holdfailed', 'expired', 'order', 'booking', 'bookingfailed'])
  map.addEventListener(type, (e) => window.seen.push({{type, detail: e.detail}}));
</script></body></html>"#
    )
}

/// A shop's listener and origin, and a server that lets that origin call it, its settings
/// changed by `configure` first.
pub(crate) async fn shop_and_server(
    configure: impl FnOnce(&mut boxoffice_server::Settings),
) -> (tokio::net::TcpListener, String, TestApp) {
    let (shop_listener, shop) = listener().await;
    let origin = shop.clone();
    let app = spawn_app_with(move |s| {
        s.server.allowed_origins = boxoffice_server::config::parse_origins(&[origin]).unwrap();
        configure(s);
    })
    .await;
    (shop_listener, shop, app)
}

/// A server that lets the shop's origin call it, an event, and the shop's page with the
/// element (`attributes` added) for the user `shopper`, the server's settings changed by
/// `configure` first: the server, the event, the shop.
pub(crate) async fn shop_with(
    attributes: &str,
    configure: impl FnOnce(&mut boxoffice_server::Settings),
) -> (TestApp, String, String) {
    let (shop_listener, shop, app) = shop_and_server(configure).await;
    let event = app.create_event().await;
    let token = app.user_token("shopper");
    platform(
        shop_listener,
        host_page(&app.base, &event, &token, attributes),
    )
    .await;
    (app, event, shop)
}

/// Runs `call` (a method call on `map`, returning a promise) and answers what it resolved to.
pub(crate) async fn call(page: &Client, call: &str) -> Value {
    page.execute_async(
        &format!(
            "const done = arguments[arguments.length - 1];
             const map = document.querySelector('boxoffice-seat-map');
             Promise.resolve({call}).then((v) => done(v ?? null), (e) => done('threw: ' + e));"
        ),
        vec![],
    )
    .await
    .unwrap()
}

/// Clicks the seat `id` inside the element.
pub(crate) fn click_seat(id: &str) -> String {
    format!("document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('[data-seat-id=\"{id}\"]')
               .dispatchEvent(new MouseEvent('click', {{bubbles: true, composed: true}})); return 0")
}

/// How many events of `type` the element has dispatched.
pub(crate) fn count_of(kind: &str) -> String {
    format!("return window.seen.filter((e) => e.type === '{kind}').length")
}

pub(crate) fn seat_status(id: &str) -> String {
    format!("return document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('[data-seat-id=\"{id}\"]')?.dataset.status ?? null")
}
