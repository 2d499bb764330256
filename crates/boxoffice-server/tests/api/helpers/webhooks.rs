//! A webhook receiver on a local port, the changes that give it something to receive, and
//! waiting for the server's relay to have looked.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};

use super::TestApp;

/// A webhook receiver on a local port that records what it is sent, and can be told to
/// answer 503 as if it were down.
pub(crate) struct Receiver {
    pub(crate) url: String,
    pub(crate) got: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
    pub(crate) up: Arc<AtomicBool>,
    /// While set, each delivery waits this many milliseconds before it is answered.
    pub(crate) stall_ms: Arc<AtomicU64>,
    /// Deliveries that arrived (answered or not).
    pub(crate) arrived: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    pub(crate) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let got: Arc<Mutex<Vec<(HeaderMap, Value)>>> = Arc::default();
        let up = Arc::new(AtomicBool::new(true));
        let stall_ms = Arc::new(AtomicU64::new(0));
        let arrived = Arc::new(AtomicUsize::new(0));
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post({
                let (got, up) = (got.clone(), up.clone());
                let (stall_ms, arrived) = (stall_ms.clone(), arrived.clone());
                move |headers: HeaderMap, body: Bytes| async move {
                    arrived.fetch_add(1, Ordering::SeqCst);
                    let stall = stall_ms.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(stall)).await;
                    if !up.load(Ordering::SeqCst) {
                        return StatusCode::SERVICE_UNAVAILABLE;
                    }
                    // Overlap with whatever else is running, as a real receiver would.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    let mut headers = headers;
                    headers.insert(
                        "x-raw-body",
                        String::from_utf8(body.to_vec()).unwrap().parse().unwrap(),
                    );
                    got.lock()
                        .unwrap()
                        .push((headers, serde_json::from_slice(&body).unwrap()));
                    StatusCode::NO_CONTENT
                }
            }),
        );
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Self {
            url: format!("http://{addr}/hook"),
            got,
            up,
            stall_ms,
            arrived,
            server,
        }
    }

    pub(crate) fn ids(&self) -> Vec<i64> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b["id"].as_i64().unwrap())
            .collect()
    }
}

/// An order, a booking and its cancellation in a new event of the default organization:
/// three outbox rows; the event's id.
pub(crate) async fn make_changes(app: &TestApp) -> String {
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(
        app.post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
            .await
            .0,
        StatusCode::CREATED
    );
    let (status, booking) = app
        .send(
            reqwest::Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &alice,
            Some(&json!({"area": "floor", "quantity": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let cancel = format!(
        "/v1/bookings/{}/cancel",
        booking["booking_id"].as_str().unwrap()
    );
    assert_eq!(
        app.send(reqwest::Method::POST, &cancel, &alice, None)
            .await
            .0,
        StatusCode::OK
    );
    event
}

/// Waits until the server's relay has run two whole passes from now
/// (`boxoffice_relay_passes_total`), so a row committed before the call has been before a
/// pass that began after it: what "nothing was delivered" is asserted after.
pub(crate) async fn two_relay_passes(app: &TestApp) {
    let name = "boxoffice_relay_passes_total";
    let before = app.counter(name).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while app.counter(name).await < before + 2.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the relay ran no two passes in 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
