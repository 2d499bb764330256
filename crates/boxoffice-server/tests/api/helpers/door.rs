//! Tickets read back, the door's counts, a scan, and who holds a seat sold: what the tests
//! of entry, moves and resale check.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{As, TestApp};

pub(crate) async fn tickets_of(app: &TestApp, path: &str, who: &As) -> Vec<Value> {
    let (status, body) = app.send(Method::GET, path, who, None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body["tickets"].as_array().unwrap().clone()
}

pub(crate) async fn summary(app: &TestApp, event: &str, who: &As) -> Value {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/checkins/summary"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The orders holding `seat` sold (not released) in `event`.
pub(crate) async fn holders(app: &TestApp, event: &str, seat: &str) -> Vec<String> {
    sqlx::query_scalar(
        "select order_id::text from order_seat
          where event_id = $1::uuid and seat_id = $2 and not released",
    )
    .bind(event)
    .bind(seat)
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// Checks a ticket in at the door; its status and problem code.
pub(crate) async fn scan(
    app: &TestApp,
    event: &str,
    secret: &Value,
) -> (StatusCode, Option<String>) {
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/checkins"),
            &As::Admin,
            Some(&json!({"secret": secret, "nonce": uuid::Uuid::new_v4().to_string()})),
        )
        .await;
    (status, body["code"].as_str().map(str::to_owned))
}
