//! The redis store when Redis itself fails: going away and coming back, a cluster master
//! restarting empty, and a frozen Redis. Each test runs its own Redis server, so stopping
//! or freezing it touches no other test.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::{PrivateCluster, PrivateRedis};
use crate::helpers::{held, read, spawn_app_with, As, TestApp};
use crate::helpers::{spawn_on, spawn_on_redis, token};
use boxoffice_server::config::HoldStoreKind;

/// Retries a hold until Redis answers it, for at most ten seconds.
async fn hold_once_redis_is_back(app: &TestApp, event: &str, who: &As, seat: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = app.post_holds(event, who, &[seat]).await;
        match status {
            StatusCode::CREATED => return body,
            StatusCode::SERVICE_UNAVAILABLE if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => panic!("the hold answered {other}: {body}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_going_away_gives_503s_and_the_server_recovers_by_itself() {
    let mut redis = PrivateRedis::start();
    // The server even starts while Redis is down.
    redis.stop();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, problem) = app.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );
    assert_eq!(app.get("/readyz").await.0, StatusCode::SERVICE_UNAVAILABLE);

    redis.start_again();
    let hold = hold_once_redis_is_back(&app, &event, &alice, "stalls-A-1").await;
    assert_eq!(app.get("/readyz").await.0, StatusCode::OK);
    let (_, sold) = app.post_holds(&event, &alice, &["stalls-A-2"]).await;
    assert_eq!(
        app.post_orders(&event, &alice, token(&sold)).await.0,
        StatusCode::CREATED
    );

    // Mid-sale, Redis goes away: every hold call is a 503, never a 500...
    redis.stop();
    let bob = app.buyer("bob");
    let paths = [
        (
            Method::POST,
            format!("/v1/events/{event}/holds"),
            Some(json!({"seats": ["stalls-B-1"]})),
        ),
        (
            Method::GET,
            format!("/v1/events/{event}/holds/{}", token(&hold)),
            None,
        ),
        (
            Method::POST,
            format!("/v1/events/{event}/holds/{}/extend", token(&hold)),
            None,
        ),
        (
            Method::DELETE,
            format!("/v1/events/{event}/holds/{}", token(&hold)),
            None,
        ),
        (
            Method::POST,
            format!("/v1/events/{event}/orders"),
            Some(json!({"hold_token": token(&hold)})),
        ),
    ];
    for (method, path, body) in &paths {
        let who = if *method == Method::POST && path.ends_with("/holds") {
            &bob
        } else {
            &alice
        };
        let (status, problem) = app.send(method.clone(), path, who, body.as_ref()).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable")),
            "{method} {path}"
        );
    }
    // ...while what Postgres can answer still works: the seat map (without holds, and
    // saying so), the event, the order.
    let response = app
        .client
        .get(format!("{}/v1/events/{event}/seats", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["boxoffice-holds"], "unavailable");
    let seats: Value = response.json().await.unwrap();
    let status_of = |id: &str| {
        seats["seats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status_of("stalls-A-2"), "sold");
    assert_eq!(
        app.get(&format!("/v1/events/{event}")).await.0,
        StatusCode::OK
    );
    assert_eq!(app.count("ticket_order").await, 1);

    // Redis comes back empty: alice's hold is gone, the sold seat stays sold, and holds
    // work again without a restart.
    redis.start_again();
    hold_once_redis_is_back(&app, &event, &bob, "stalls-B-1").await;
    let (status, _) = app.post_holds(&event, &bob, &["stalls-A-2"]).await;
    assert_eq!(status, StatusCode::CONFLICT, "the sold seat stays sold");
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-1"].as_str(),
            statuses["stalls-B-1"].as_str()
        ),
        ("available", "held")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_master_restarting_empty_gives_503s_then_holds_on_the_truth() {
    let mut cluster = PrivateCluster::start();
    let app = spawn_on_redis(cluster.url(), true).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, sold) = app.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(
        app.post_orders(&event, &alice, token(&sold)).await.0,
        StatusCode::CREATED
    );
    let (status, _) = app.post_holds(&event, &bob, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED);

    // The master serving the event's slot goes down: its holds answer 503.
    let node = cluster.node_of(&format!("sync:{{{event}}}"));
    node.stop();
    let (status, problem) = app.post_holds(&event, &bob, &["stalls-B-2"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );

    // It comes back empty (it keeps nothing on disk) and rejoins with its slots.
    node.start_again();
    cluster.wait_until_ok();
    hold_once_redis_is_back(&app, &event, &bob, "stalls-B-2").await;
    let (status, _) = app.post_holds(&event, &bob, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CONFLICT, "the sold seat stays sold");
    assert_eq!(
        held(&app, &event).await,
        ["stalls-B-2"],
        "the hold the master lost is gone"
    );
    assert_eq!(app.count("order_seat").await, 1);
}

/// Sends `request` and waits at most `bound` for its answer. The bound is not a speed
/// claim: it is far above what a frozen Redis is allowed to cost (the Redis timeout) and
/// far below what waiting on it did before there was one (3 s a request).
async fn answered_within(bound: Duration, request: reqwest::RequestBuilder) -> reqwest::Response {
    tokio::time::timeout(bound, request.send())
        .await
        .expect("answered without waiting on the frozen redis")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_redis_makes_holds_503_and_reads_200_without_waiting_then_recovers() {
    let redis = PrivateRedis::start();
    // The default Redis timeout, as a production server has it.
    let url = redis.url();
    let app = spawn_app_with(move |s| {
        s.stores.hold_store = HoldStoreKind::Redis;
        s.stores.redis = boxoffice_store::redis::link::RedisConfig::new(url);
    })
    .await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");

    redis.freeze();
    let bound = Duration::from_secs(2);
    for i in 0..20 {
        let response = answered_within(
            bound,
            app.request(
                Method::POST,
                &format!("/v1/events/{event}/holds"),
                &app.buyer(&format!("b{i}")),
            )
            .json(&json!({"seats": ["stalls-B-1"]})),
        )
        .await;
        let (status, problem) = read(response).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable")),
            "hold {i}"
        );
        for path in [
            format!("/v1/events/{event}/seats"),
            format!("/v1/events/{event}/availability"),
            format!("/v1/events/{event}"),
        ] {
            let response =
                answered_within(bound, app.request(Method::GET, &path, &As::Nobody)).await;
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_eq!(
                response
                    .headers()
                    .get("boxoffice-holds")
                    .map(|v| v.to_str().unwrap()),
                Some("unavailable"),
                "{path} says its counts were made without the hold store"
            );
        }
    }
    assert_eq!(app.get("/readyz").await.0, StatusCode::SERVICE_UNAVAILABLE);

    // Redis answers again: the service recovers by itself, and alice's hold is still hers.
    redis.thaw();
    hold_once_redis_is_back(&app, &event, &app.buyer("carol"), "stalls-C-1").await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("dave"), &["stalls-A-1"])
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "alice's hold survived the freeze"
    );
    // A hold that timed out may have reached Redis and run once it thawed; the buyer was
    // told 503, so the server releases it by itself.
    let deadline = Instant::now() + Duration::from_secs(10);
    while held(&app, &event).await != ["stalls-A-1", "stalls-C-1"] {
        assert!(
            Instant::now() < deadline,
            "a hold answered 503 is still held: {:?}",
            held(&app, &event).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let response = app
        .client
        .get(format!("{}/v1/events/{event}", app.base))
        .send()
        .await
        .unwrap();
    assert!(response.headers().get("boxoffice-holds").is_none());
    let (_, body) = read(response).await;
    assert_eq!(body["counts"]["held"], 2, "{body}");
}
