//! Abuse limits: anonymous sessions per client address, holds per user, on one instance
//! and across instances sharing Redis.

use std::collections::BTreeMap;

use boxoffice_server::config::HoldStoreKind;
use boxoffice_server::Settings;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{held, spawn_app_with, As, TestApp};
use crate::races::{race, tally};
use crate::stores::{test_redis, PrivateRedis};

/// A client address of this test's own, so its counts are nobody else's.
fn fresh_address() -> String {
    let b = uuid::Uuid::new_v4().into_bytes();
    format!("10.{}.{}.{}", b[0], b[1], b[2])
}

fn session_request(app: &TestApp, forwarded_for: &str) -> reqwest::RequestBuilder {
    app.request(Method::POST, "/v1/sessions", &As::Nobody)
        .header("x-forwarded-for", forwarded_for)
}

/// Five a minute: a burst of five, then one every 12 s, far longer than any of these
/// tests takes, so the counts below are exact.
fn limited(s: &mut Settings) {
    s.sessions_per_minute = 5;
    s.holds_per_minute = 5;
    s.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_are_limited_per_client_address_with_retry_after() {
    let app = spawn_app_with(limited).await;
    let client = fresh_address();
    let answers = race((0..30).map(|_| session_request(&app, &client)).collect()).await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 25)]));
    let response = session_request(&app, &client).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let (_, problem) = crate::helpers::read(response).await;
    assert_eq!(problem["code"], "rate_limited");
    assert_eq!(app.counter("sessions_rate_limited_total").await, 26.0);

    // Another client has its own budget.
    let other = session_request(&app, &fresh_address())
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_forwarded_address_from_an_untrusted_peer_is_ignored() {
    let app = spawn_app_with(|s| {
        limited(s);
        s.trusted_proxies = Vec::new();
    })
    .await;
    // Each request claims another address, but the peer is what counts.
    let mut statuses = BTreeMap::new();
    for _ in 0..8 {
        let response = session_request(&app, &fresh_address())
            .send()
            .await
            .unwrap();
        *statuses.entry(response.status().as_u16()).or_insert(0) += 1;
    }
    assert_eq!(statuses, BTreeMap::from([(201, 5), (429, 3)]));
}

/// A server with the low limits on `store`, counting in a Redis of its own (kept alive by
/// the returned handle).
async fn spawn_limited(store: HoldStoreKind) -> (TestApp, PrivateRedis) {
    let redis = PrivateRedis::start();
    let url = redis.url();
    let app = spawn_app_with(move |s| {
        limited(s);
        s.hold_store = store;
        s.redis = test_redis(url, false);
    })
    .await;
    (app, redis)
}

async fn holds_are_limited_per_user(store: HoldStoreKind) {
    let (app, _redis) = spawn_limited(store).await;
    let event = app.create_event().await;
    let user = format!("churner-{}", uuid::Uuid::new_v4());
    let churner = app.buyer(&user);
    let seats = [
        "stalls-A-1",
        "stalls-A-2",
        "stalls-A-3",
        "stalls-A-4",
        "stalls-B-1",
        "stalls-B-2",
        "stalls-B-3",
    ];
    let answers = race(
        seats
            .iter()
            .map(|seat| {
                app.request(Method::POST, &format!("/v1/events/{event}/holds"), &churner)
                    .json(&json!({"seats": [seat]}))
            })
            .collect(),
    )
    .await;
    // Five holds are allowed; the per-user seat limit (4) refuses one of them, the rate
    // limit the last two.
    assert_eq!(
        tally(&answers),
        BTreeMap::from([(201, 4), (409, 1), (429, 2)])
    );
    assert_eq!(held(&app, &event).await.len(), 4);
    // Another buyer is not limited by the churner.
    let (status, _) = app
        .post_holds(&event, &app.buyer("someone-else"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holds_are_limited_per_user_on_the_postgres_store() {
    holds_are_limited_per_user(HoldStoreKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holds_are_limited_per_user_on_the_redis_store() {
    holds_are_limited_per_user(HoldStoreKind::Redis).await;
}

/// Refusals of a seat known taken, answered without the hold store, count against the
/// buyer's hold rate like the holds the store answers.
async fn refusals_of_a_seat_known_taken_count_against_the_rate(store: HoldStoreKind) {
    let (app, _redis) = spawn_limited(store).await;
    let event = app.create_event().await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("holder"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let asker = app.buyer(&format!("asker-{}", uuid::Uuid::new_v4()));
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(
            app.post_holds(&event, &asker, &["stalls-C-1"])
                .await
                .0
                .as_u16(),
        );
    }
    assert_eq!(statuses, [409, 409, 409, 409, 409, 429, 429]);
    assert_eq!(
        app.counter("boxoffice_holds_refused_unasked_total").await,
        5.0
    );
    assert_eq!(app.counter("holds_rate_limited_total").await, 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_of_a_seat_known_taken_count_against_the_rate_on_the_postgres_store() {
    refusals_of_a_seat_known_taken_count_against_the_rate(HoldStoreKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_of_a_seat_known_taken_count_against_the_rate_on_the_redis_store() {
    refusals_of_a_seat_known_taken_count_against_the_rate(HoldStoreKind::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_sharing_redis_share_one_limit() {
    let mut redis = PrivateRedis::start();
    let url = redis.url();
    let spawn = |url: String| {
        spawn_app_with(move |s| {
            limited(s);
            s.ga_gate = true;
            s.redis = test_redis(url, false);
        })
    };
    let one = spawn(url.clone()).await;
    let two = spawn(url).await;
    let client = fresh_address();
    let answers = race(
        (0..40)
            .map(|i| session_request(if i % 2 == 0 { &one } else { &two }, &client))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 35)]));

    // Without Redis each instance still limits on its own, and answers never fail.
    redis.stop();
    let client = fresh_address();
    let answers = race((0..8).map(|_| session_request(&one, &client)).collect()).await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 3)]));
}
