//! `POST /v1/sessions`: anonymous buyer tokens.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{hall, held, race, spawn_app, spawn_app_with, tally, As};

#[tokio::test]
async fn a_session_mints_a_user_token_that_is_a_buyer_not_an_admin() {
    let app = spawn_app().await;
    let (status, session) = app
        .send(Method::POST, "/v1/sessions", &As::Nobody, None)
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let user_id = session["user_id"].as_str().unwrap();
    assert!(!user_id.is_empty() && user_id.len() <= 128);
    let expires_at: DateTime<Utc> = session["expires_at"].as_str().unwrap().parse().unwrap();
    assert!(expires_at > Utc::now() + chrono::Duration::hours(23));

    let token = session["token"].as_str().unwrap().to_owned();
    let (status, problem) = app
        .send(Method::POST, "/v1/venues", &As::Token(token), Some(&hall()))
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );

    let (_, other) = app
        .send(Method::POST, "/v1/sessions", &As::Nobody, None)
        .await;
    assert_ne!(
        other["user_id"], session["user_id"],
        "two sessions one after the other are two buyers"
    );
}

/// One address is at most `sessions_per_address` buyers, however many sessions it makes:
/// with two, four sessions racing for three seats each hold two baskets (the event's limit
/// of four seats a buyer refuses the others), so the address holds six seats of the
/// fourteen it asked for. Another address is other buyers.
#[tokio::test]
async fn an_address_is_a_few_buyers_however_many_sessions_it_makes() {
    let app = spawn_app_with(|s| {
        s.server.anonymous_sessions = true;
        s.limits.sessions_per_address = 2;
        s.server.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    let event = app.create_event().await;
    let session = |address: &'static str| {
        let request = app
            .request(Method::POST, "/v1/sessions", &As::Nobody)
            .header("x-forwarded-for", address);
        async move { crate::helpers::read(request.send().await.unwrap()).await.1 }
    };
    let mut sessions = Vec::new();
    for _ in 0..4 {
        sessions.push(session("198.51.100.7").await);
    }
    let users: BTreeSet<&str> = sessions
        .iter()
        .map(|s| s["user_id"].as_str().unwrap())
        .collect();
    assert_eq!(users.len(), 2, "{sessions:?}");
    let elsewhere = session("203.0.113.9").await;
    assert!(!users.contains(elsewhere["user_id"].as_str().unwrap()));

    let baskets = [
        ["stalls-A-1", "stalls-A-2", "stalls-A-3"],
        ["stalls-B-1", "stalls-B-2", "stalls-B-3"],
        ["stalls-C-1", "stalls-C-2", "stalls-C-3"],
        ["stalls-A-4", "stalls-B-4", "stalls-C-4"],
    ];
    let holds = sessions.iter().zip(baskets).map(|(session, seats)| {
        let token = session["token"].as_str().unwrap().to_owned();
        app.request(
            Method::POST,
            &format!("/v1/events/{event}/holds"),
            &As::Token(token),
        )
        .json(&json!({ "seats": seats }))
    });
    let answers = race(holds.collect()).await;
    assert_eq!(
        tally(&answers),
        BTreeMap::from([(201, 2), (409, 2)]),
        "{answers:?}"
    );
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "hold_limit_exceeded"));
    assert_eq!(held(&app, &event).await.len(), 6);
}

#[tokio::test]
async fn sessions_can_be_disabled() {
    let app = spawn_app_with(|s| s.server.anonymous_sessions = false).await;
    let (status, problem) = app
        .send(Method::POST, "/v1/sessions", &As::Nobody, None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}
