//! The waiting room: an event with one, joining its line, waiting to be admitted, and a
//! hold under the pass it gives.

use std::time::Duration;

use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{gala, As, TestApp};

pub(crate) async fn join(app: &TestApp, event: &str, who: &As) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/queue"),
        who,
        None,
    )
    .await
}

/// Polls `ticket` until it is admitted; answers the pass.
pub(crate) async fn admitted(app: &TestApp, event: &str, ticket: &str, who: &As) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, standing) = poll(app, event, ticket, who).await;
        assert_eq!(status, StatusCode::OK, "{standing}");
        if standing["admitted"] == true {
            return standing["pass"].as_str().expect("a pass").to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "never admitted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Creates the test event with a waiting room opening `opens_in` from now at `rate` a
/// minute; returns its id.
pub(crate) async fn event_with_queue(
    app: &TestApp,
    opens_in: chrono::Duration,
    rate: u32,
) -> String {
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["queue"] = json!({"enabled": true, "opens_at": Utc::now() + opens_in,
        "admit_per_minute": rate, "session_seconds": 300});
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// Joins `who` to the line and waits until they are admitted: their ticket and pass.
pub(crate) async fn join_and_wait(app: &TestApp, event: &str, who: &As) -> (String, String) {
    let (status, joined) = join(app, event, who).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    let ticket = joined["ticket"].as_str().unwrap().to_owned();
    let pass = admitted(app, event, &ticket, who).await;
    (ticket, pass)
}

pub(crate) async fn hold_with_pass(
    app: &TestApp,
    event: &str,
    who: &As,
    pass: &str,
    seat: &str,
) -> (StatusCode, Value) {
    crate::helpers::read(
        app.request(Method::POST, &format!("/v1/events/{event}/holds"), who)
            .header("Boxoffice-Pass", pass)
            .json(&json!({"seats": [seat]}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

pub(crate) async fn poll(
    app: &TestApp,
    event: &str,
    ticket: &str,
    who: &As,
) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/events/{event}/queue/{ticket}"),
        who,
        None,
    )
    .await
}
