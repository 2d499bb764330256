//! What a hold request is refused for: bad input of docs/api.md's holds, an event that
//! has started, another user's hold, and the per-user limit judged before the seats the
//! store judges (a seat known taken is refused first: see
//! `a_seat_refused_lately_is_held_as_soon_as_it_comes_free`).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{another_instance, held, spawn_app_on, As, TestApp};

async fn bad_hold_requests_answer_their_4xx_and_change_nothing(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let holds = format!("/v1/events/{event}/holds");
    let cases: Vec<(As, Value, StatusCode, &str)> = vec![
        (
            As::Nobody,
            json!({"seats": ["stalls-A-1"]}),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            As::Token("nope".into()),
            json!({"seats": ["stalls-A-1"]}),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            As::Admin,
            json!({"seats": ["stalls-A-1"]}),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            alice.clone(),
            json!({"seats": []}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"seats": ["stalls-A-1", "stalls-A-1"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"seats": ["stalls-Q-1"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"seats": ["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4", "stalls-B-1"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"seats": "stalls-A-1"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
    ];
    for (who, body, status, code) in cases {
        let (got, problem) = app.send(Method::POST, &holds, &who, Some(&body)).await;
        assert_eq!(
            (got, problem["code"].as_str()),
            (status, Some(code)),
            "{body} as {who:?}: {problem}"
        );
    }
    let response = app
        .request(Method::POST, &holds, &alice)
        .header("content-type", "application/json")
        .body("{\"seats\": [")
        .send()
        .await
        .unwrap();
    assert_eq!(
        crate::helpers::read(response).await.0,
        StatusCode::BAD_REQUEST
    );
    let (status, problem) = app
        .post_holds(
            "6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c",
            &alice,
            &["stalls-A-1"],
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
    assert!(held(&app, &event).await.is_empty());

    let unknown = uuid::Uuid::new_v4().to_string();
    let (status, _) = app
        .hold_call(Method::GET, &event, &unknown, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, problem) = app
        .hold_call(Method::POST, &event, &unknown, "/extend", &alice)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
}

async fn holds_are_refused_once_the_event_has_started(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    sqlx::query("update event set starts_at = now() - interval '1 minute'")
        .execute(&app.db)
        .await
        .unwrap();
    let (status, problem) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-A-1"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("event_started"))
    );
    assert!(held(&app, &event).await.is_empty());
}

async fn another_users_hold_cannot_be_read(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (_, hold) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-A-4"])
        .await;
    let path = format!(
        "/v1/events/{event}/holds/{}",
        hold["hold_token"].as_str().unwrap()
    );
    assert_eq!(
        app.send(Method::GET, &path, &app.buyer("bob"), None)
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        app.send(Method::GET, &path, &As::Nobody, None).await.0,
        StatusCode::UNAUTHORIZED
    );
}

/// Of seats the store judges, the limit comes first. (Bob holds his seat through another
/// instance, so this one has not had the store's word that it is taken.)
async fn the_limit_is_judged_before_the_seats(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await; // max_seats_per_user = 4
    let other = another_instance(&app, store).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (status, _) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2", "stalls-B-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = other.post_holds(&event, &bob, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    // One free seat and one of bob's: alice would go over her limit either way.
    refused(
        &app,
        &event,
        &alice,
        &["stalls-C-1", "stalls-C-2"],
        "hold_limit_exceeded",
    )
    .await;
    // Within her limit, the taken seat is what she is told about.
    refused(&app, &event, &alice, &["stalls-C-1"], "seat_unavailable").await;
    assert_eq!(
        held(&app, &event).await,
        ["stalls-B-1", "stalls-B-2", "stalls-B-3", "stalls-C-1"]
    );
}

/// Asks for `seats` as `who`, expecting a 409 with `code`; returns the problem.
async fn refused(app: &TestApp, event: &str, who: &As, seats: &[&str], code: &str) -> Value {
    let (status, problem) = app.post_holds(event, who, seats).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some(code)),
        "{problem}"
    );
    problem
}

/// A seat held or refused lately, which the change feed says is taken, is refused without
/// asking the store, even to a buyer at their limit; a seat that comes free is held at
/// once.
async fn a_seat_refused_lately_is_held_as_soon_as_it_comes_free(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await; // max_seats_per_user = 4
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (status, hold) = app.post_holds(&event, &bob, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    for _ in 0..3 {
        let problem = refused(
            &app,
            &event,
            &alice,
            &["stalls-C-1", "stalls-C-2"],
            "seat_unavailable",
        )
        .await;
        assert_eq!(problem["seats"][0]["id"], "stalls-C-1", "{problem}");
        assert_eq!(problem["seats"].as_array().unwrap().len(), 1, "{problem}");
    }
    // The store held it here: none of the refusals asked it.
    assert_eq!(
        app.counter("boxoffice_holds_refused_unasked_total").await,
        3.0
    );
    // At her limit, alice is told the seat is taken: it was known before her limit.
    let (status, _) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2", "stalls-B-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    refused(
        &app,
        &event,
        &alice,
        &["stalls-C-1", "stalls-C-2"],
        "seat_unavailable",
    )
    .await;
    // Seats the store must judge: the limit comes first.
    refused(
        &app,
        &event,
        &alice,
        &["stalls-C-2", "stalls-C-3"],
        "hold_limit_exceeded",
    )
    .await;
    // Released: the next ask gets it at once.
    let token = hold["hold_token"].as_str().unwrap();
    let (status, _) = app.hold_call(Method::DELETE, &event, token, "", &bob).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.post_holds(&event, &alice, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        held(&app, &event).await,
        ["stalls-B-1", "stalls-B-2", "stalls-B-3", "stalls-C-1"]
    );
}

crate::helpers::stores::conformance!(
    a_seat_refused_lately_is_held_as_soon_as_it_comes_free,
    bad_hold_requests_answer_their_4xx_and_change_nothing,
    holds_are_refused_once_the_event_has_started,
    another_users_hold_cannot_be_read,
    the_limit_is_judged_before_the_seats,
);
