//! `POST /v1/sessions`: anonymous buyer tokens.

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};

use crate::helpers::{hall, spawn_app, spawn_app_with, As};

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
        "every session is a new user"
    );
}

#[tokio::test]
async fn sessions_can_be_disabled() {
    let app = spawn_app_with(|s| s.anonymous_sessions = false).await;
    let (status, problem) = app
        .send(Method::POST, "/v1/sessions", &As::Nobody, None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}
