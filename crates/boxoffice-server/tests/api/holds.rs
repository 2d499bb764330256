//! Holds: all or nothing, read, extend (capped), release (compare-and-delete), and every
//! bad input of API.md's Holds section.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{sell_directly, spawn_app, As, TestApp};

async fn reservations(app: &TestApp) -> Vec<(String, String, String)> {
    sqlx::query_as(
        "select seat_id, hold_token::text, status::text from reservation order by seat_id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// Moves every hold of `token` `seconds` into the past, as if that much time had gone by.
pub async fn age_hold(app: &TestApp, token: &str, seconds: i64) {
    sqlx::query(
        "update reservation set created_at = created_at - make_interval(secs => $2),
                                expires_at = expires_at - make_interval(secs => $2)
          where hold_token = $1::uuid",
    )
    .bind(token)
    .bind(seconds as f64)
    .execute(&app.db)
    .await
    .unwrap();
}

#[tokio::test]
async fn a_hold_takes_every_seat_asked_for_and_quotes_their_prices() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-2", "stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(hold["event_id"], event.as_str());
    assert_eq!(
        hold["seats"],
        json!([{"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "ticket_type": "premium", "price_cents": 9000},
               {"id": "stalls-B-2", "label": "Stalls, Row B, Seat 2", "ticket_type": "standard", "price_cents": 4500}])
    );
    assert_eq!(
        (hold["total_cents"].clone(), hold["currency"].clone()),
        (json!(13500), json!("EUR"))
    );
    let expires: chrono::DateTime<chrono::Utc> =
        hold["expires_at"].as_str().unwrap().parse().unwrap();
    let left = expires - chrono::Utc::now();
    assert!(
        left > chrono::Duration::seconds(100) && left <= chrono::Duration::seconds(120),
        "{left}"
    );

    let token = hold["hold_token"].as_str().unwrap();
    let (status, read) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read, hold);

    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-1"].as_str(),
            statuses["stalls-B-2"].as_str()
        ),
        ("held", "held")
    );
}

#[tokio::test]
async fn a_basket_with_one_taken_seat_holds_nothing_and_names_that_seat() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-C-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let before = reservations(&app).await;

    let (status, problem) = app
        .post_holds(
            &event,
            &app.buyer("alice"),
            &["stalls-C-1", "stalls-C-2", "stalls-C-3", "stalls-C-4"],
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    assert_eq!(
        problem["seats"],
        json!([{"id": "stalls-C-3", "label": "Stalls, Row C, Seat 3"}])
    );
    assert_eq!(problem["detail"], "Stalls, Row C, Seat 3 just went");
    assert_eq!(
        reservations(&app).await,
        before,
        "nothing of the basket is held"
    );
}

#[tokio::test]
async fn sold_and_not_for_sale_seats_are_refused_like_held_ones() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    sell_directly(&app, &event, &["stalls-A-2"]).await;
    let (status, problem) = app
        .post_holds(
            &event,
            &app.buyer("alice"),
            &["stalls-A-2", "circle-A-1", "stalls-A-3"],
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    let named: Vec<_> = problem["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(named, [json!("circle-A-1"), json!("stalls-A-2")]);
    assert!(reservations(&app).await.is_empty());
}

#[tokio::test]
async fn the_per_user_limit_counts_live_holds_only() {
    let app = spawn_app().await;
    let event = app.create_event().await; // max_seats_per_user = 4
    let alice = app.buyer("alice");
    let (status, first) = app
        .post_holds(&event, &alice, &["stalls-A-1", "stalls-A-2", "stalls-A-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_limit_exceeded"))
    );
    assert_eq!(
        app.post_holds(&event, &alice, &["stalls-B-1"]).await.0,
        StatusCode::CREATED
    );
    // Once the first hold has lapsed it no longer counts.
    age_hold(&app, first["hold_token"].as_str().unwrap(), 121).await;
    assert_eq!(
        app.post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2", "stalls-C-3"])
            .await
            .0,
        StatusCode::CREATED
    );
    // Another user has a limit of their own.
    assert_eq!(
        app.post_holds(&event, &app.buyer("bob"), &["stalls-A-1"])
            .await
            .0,
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn an_expired_hold_resells_and_its_stale_token_can_do_nothing() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, old) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    let old = old["hold_token"].as_str().unwrap().to_owned();
    age_hold(&app, &old, 121).await;
    assert_eq!(
        app.seat_statuses(&event).await["stalls-B-1"],
        "available",
        "an expired hold reads as available"
    );

    let (status, new) = app.post_holds(&event, &bob, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{new}");
    let new = new["hold_token"].as_str().unwrap().to_owned();

    let (status, problem) = app.post_orders(&event, &alice, &old).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    let (status, problem) = app
        .hold_call(Method::POST, &event, &old, "/extend", &alice)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &old, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.hold_call(Method::GET, &event, &old, "", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Bob's hold survived all of that, and he can buy.
    let (status, read) = app.hold_call(Method::GET, &event, &new, "", &bob).await;
    assert_eq!(
        (status, read["seats"][0]["id"].clone()),
        (StatusCode::OK, json!("stalls-B-1"))
    );
    let (status, order) = app.post_orders(&event, &bob, &new).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(app.count("order_seat").await, 1);
}

#[tokio::test]
async fn release_frees_only_its_own_live_seats() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();
    let path = format!("/v1/events/{event}/holds/{token}");

    let (status, problem) = app.send(Method::DELETE, &path, &bob, None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let wrong = format!("/v1/events/{event}/holds/{}", uuid::Uuid::new_v4());
    assert_eq!(
        app.send(Method::DELETE, &wrong, &alice, None).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.send(
            Method::DELETE,
            &format!("/v1/events/{event}/holds/nonsense"),
            &alice,
            None
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        reservations(&app).await.len(),
        2,
        "the hold survives wrong tokens and other users"
    );

    assert_eq!(
        app.send(Method::DELETE, &path, &alice, None).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(reservations(&app).await.is_empty());
    assert_eq!(
        app.send(Method::DELETE, &path, &alice, None).await.0,
        StatusCode::NOT_FOUND,
        "a second release is a no-op"
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "available");
}

#[tokio::test]
async fn extending_moves_the_expiry_but_never_past_the_cap() {
    let app = spawn_app().await;
    let event = app.create_event().await; // ttl 120 s, max 900 s
    let alice = app.buyer("alice");
    let (_, hold) = app.post_holds(&event, &alice, &["box-L-1"]).await;
    let token = hold["hold_token"].as_str().unwrap();
    let extend = format!("/v1/events/{event}/holds/{token}/extend");
    let expiry = |v: &Value| {
        v["expires_at"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };

    // Sixty seconds later an extension gives a full TTL from now.
    age_hold(&app, token, 60).await;
    let (status, body) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let left = expiry(&body) - chrono::Utc::now();
    assert!(
        left > chrono::Duration::seconds(110) && left <= chrono::Duration::seconds(120),
        "{left}"
    );

    // Fifty seconds before the cap, an extension stops at creation + 900 s.
    let created: chrono::DateTime<chrono::Utc> = sqlx::query_scalar(
        "update reservation set created_at = now() - interval '850 seconds', expires_at = now() + interval '10 seconds'
          where hold_token = $1::uuid returning created_at",
    )
    .bind(token)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let (status, body) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(expiry(&body), created + chrono::Duration::seconds(900));
    let (_, again) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(
        expiry(&again),
        created + chrono::Duration::seconds(900),
        "the cap holds on every extension"
    );

    let (status, problem) = app
        .send(Method::POST, &extend, &app.buyer("bob"), None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
}

#[tokio::test]
async fn bad_hold_requests_answer_their_4xx_and_change_nothing() {
    let app = spawn_app().await;
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
    assert!(reservations(&app).await.is_empty());

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

#[tokio::test]
async fn holds_are_refused_once_the_event_has_started() {
    let app = spawn_app().await;
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
    assert!(reservations(&app).await.is_empty());
}

#[tokio::test]
async fn another_users_hold_cannot_be_read() {
    let app = spawn_app().await;
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
