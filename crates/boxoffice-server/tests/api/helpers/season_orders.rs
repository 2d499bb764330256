//! A season's hold, its order and a night released, as the tests of seasons and of
//! changes make them.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{As, TestApp};

pub(crate) async fn hold(app: &TestApp, season: &str, who: &str, body: Value) -> String {
    let (status, held) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season}/holds"),
            &app.buyer(who),
            Some(&body),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    held["hold_token"].as_str().unwrap().to_owned()
}

pub(crate) async fn order(
    app: &TestApp,
    season: &str,
    who: &As,
    token: &str,
) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/seasons/{season}/orders"),
        who,
        Some(&json!({ "hold_token": token })),
    )
    .await
}

pub(crate) async fn release(
    app: &TestApp,
    order: &str,
    event: &str,
    who: &As,
) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/orders/{order}/events/{event}/release"),
        who,
        None,
    )
    .await
}
