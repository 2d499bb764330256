//! The database going away: 503 with Retry-After, never 500, and recovery when it returns.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;

use crate::helpers::{fresh_database_name, spawn_app_with};
use crate::proxy::ChaosProxy;

/// The Postgres server the tests use, as a socket address for the proxy.
async fn postgres_addr() -> SocketAddr {
    let url = crate::helpers::server_url();
    let host_port = url
        .rsplit('@')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    tokio::net::lookup_host(host_port)
        .await
        .unwrap()
        .next()
        .unwrap()
}

#[tokio::test]
async fn a_lost_database_answers_503_and_the_server_recovers_when_it_returns() {
    let proxy = ChaosProxy::start(postgres_addr().await).await;
    let name = fresh_database_name();
    let url = format!("postgres://postgres@{}/{name}", proxy.addr);
    let app = spawn_app_with(move |s| {
        s.database.url = url;
        s.database.acquire_timeout = Duration::from_millis(500);
    })
    .await;
    let event = app.create_event().await;
    assert_eq!(
        app.get(&format!("/v1/events/{event}")).await.0,
        StatusCode::OK
    );

    proxy.break_link();
    for path in [
        "/readyz".to_owned(),
        "/v1/events".to_owned(),
        format!("/v1/events/{event}/seats"),
    ] {
        let response = app
            .client
            .get(format!("{}{path}", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned()),
            Some("1".into()),
            "{path}"
        );
        let (status, problem) = crate::helpers::read(response).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable")),
            "{path}"
        );
    }
    let (status, _) = app.post_venues(&crate::helpers::hall()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        app.get("/healthz").await.0,
        StatusCode::OK,
        "the process itself is up"
    );

    proxy.restore_link();
    assert_eq!(app.get("/readyz").await.0, StatusCode::OK);
    assert_eq!(
        app.get(&format!("/v1/events/{event}")).await.0,
        StatusCode::OK
    );
    assert_eq!(
        app.count("venue").await,
        1,
        "the write made during the outage did not happen"
    );
}

#[tokio::test]
async fn a_request_stuck_on_a_hung_database_is_abandoned_with_503_at_the_request_timeout() {
    let proxy = ChaosProxy::start(postgres_addr().await).await;
    let name = fresh_database_name();
    let url = format!("postgres://postgres@{}/{name}", proxy.addr);
    let app = spawn_app_with(move |s| {
        s.database.url = url;
        // Longer than the request timeout, so only the request timeout can answer.
        s.database.acquire_timeout = Duration::from_secs(30);
        s.request_timeout = Duration::from_millis(300);
    })
    .await;
    assert_eq!(app.get("/v1/events").await.0, StatusCode::OK);

    proxy.stall_link();
    let started = std::time::Instant::now();
    let (status, problem) = app.get("/v1/events").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered by the request timeout, not a store timeout"
    );

    proxy.restore_link();
    let mut recovered = false;
    // The pool replaces the hung connections as their attempts are dropped; bounded wait.
    for _ in 0..50 {
        if app.get("/v1/events").await.0 == StatusCode::OK {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        recovered,
        "the server recovers once the database answers again"
    );
}
