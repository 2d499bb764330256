//! The waiting room over HTTP: joining, polling, admission and the pass it gives.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{gala, spawn_app, As, TestApp};

/// Creates the test event with a waiting room opening `opens_in` from now at `rate` a
/// minute; returns its id.
async fn event_with_queue(app: &TestApp, opens_in: chrono::Duration, rate: u32) -> String {
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["queue"] = json!({"enabled": true, "opens_at": Utc::now() + opens_in,
        "admit_per_minute": rate, "session_seconds": 300});
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

async fn join(app: &TestApp, event: &str, who: &As) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/queue"),
        who,
        None,
    )
    .await
}

async fn poll(app: &TestApp, event: &str, ticket: &str, who: &As) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/events/{event}/queue/{ticket}"),
        who,
        None,
    )
    .await
}

#[tokio::test]
async fn a_buyer_joins_before_opening_waits_and_is_admitted_with_a_pass() {
    let app = spawn_app().await;
    let event = event_with_queue(&app, chrono::Duration::milliseconds(800), 600_000).await;
    let alice = app.buyer("alice");
    let (status, joined) = join(&app, &event, &alice).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(
        (&joined["position"], &joined["estimated_wait_seconds"]),
        (&Value::Null, &Value::Null),
        "no place is shown before the order is drawn: {joined}"
    );
    let ticket = joined["ticket"].as_str().unwrap().to_owned();
    assert_eq!(
        join(&app, &event, &alice).await.1["ticket"],
        ticket.as_str()
    );

    // Bob cannot poll Alice's ticket; nobody can poll one that does not exist.
    let (status, problem) = poll(&app, &event, &ticket, &app.buyer("bob")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );
    let (status, _) = poll(&app, &event, "not-a-ticket", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = poll(&app, &event, &ticket, &As::Nobody).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let admitted = loop {
        let (status, standing) = poll(&app, &event, &ticket, &alice).await;
        assert_eq!(status, StatusCode::OK, "{standing}");
        if standing["admitted"] == true {
            break standing;
        }
        assert!(tokio::time::Instant::now() < deadline, "never admitted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let pass = admitted["pass"].as_str().expect("a pass");
    assert!(!pass.is_empty());
    let expires: DateTime<Utc> = admitted["pass_expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let left = expires - Utc::now();
    assert!(
        left > chrono::Duration::seconds(290) && left <= chrono::Duration::seconds(300),
        "a session of 300 s: {admitted}"
    );
    // Polled again, the same pass; joined again, the same ticket, at the front.
    assert_eq!(poll(&app, &event, &ticket, &alice).await.1["pass"], pass);
    let (_, again) = join(&app, &event, &alice).await;
    assert_eq!(
        (again["ticket"].as_str(), again["position"].as_u64()),
        (Some(ticket.as_str()), Some(0))
    );
}

#[tokio::test]
async fn places_and_waits_follow_the_line_and_the_rate() {
    let app = spawn_app().await;
    // One a minute, open now: the first in line is next, the second a minute behind.
    let event = event_with_queue(&app, chrono::Duration::zero(), 1).await;
    let mut places = Vec::new();
    for who in ["alice", "bob", "carol"] {
        let (status, joined) = join(&app, &event, &app.buyer(who)).await;
        assert_eq!(status, StatusCode::CREATED, "{joined}");
        places.push((
            joined["position"].clone(),
            joined["estimated_wait_seconds"].clone(),
        ));
    }
    // The first joiner may have been let in at once if a token had accrued; the others
    // queue behind in arrival order.
    let (bob, carol) = (&places[1], &places[2]);
    assert_eq!(carol.0.as_u64().unwrap(), bob.0.as_u64().unwrap() + 1);
    assert_eq!(carol.1.as_u64().unwrap(), bob.1.as_u64().unwrap() + 60);
}

#[tokio::test]
async fn an_event_without_an_open_waiting_room_has_no_line() {
    let app = spawn_app().await;
    let plain = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, problem) = join(&app, &plain, &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("queue_not_found"))
    );
    let (status, problem) = join(&app, &uuid::Uuid::new_v4().to_string(), &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
    // Switched off, it answers as if there were none.
    let event = event_with_queue(&app, chrono::Duration::zero(), 60).await;
    let (status, _) = app
        .send(
            Method::PATCH,
            &format!("/v1/events/{event}"),
            &As::Admin,
            Some(&json!({"queue": {"enabled": false, "opens_at": Utc::now(), "admit_per_minute": 60}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, problem) = join(&app, &event, &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("queue_not_found"))
    );
}
