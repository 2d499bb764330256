//! The database going away: 503 with Retry-After, never 500, and recovery when it returns.

use std::time::Duration;

use reqwest::StatusCode;

use crate::helpers::proxy::{postgres_addr, ChaosProxy};
use crate::helpers::{fresh_database_name, spawn_app_with};

#[tokio::test]
async fn a_lost_database_answers_503_and_the_server_recovers_when_it_returns() {
    let proxy = ChaosProxy::start(postgres_addr().await).await;
    let name = fresh_database_name();
    let url = format!("postgres://postgres@{}/{name}", proxy.addr);
    let app = spawn_app_with(move |s| {
        s.stores.database.url = url;
        s.stores.database.acquire_timeout = Duration::from_millis(500);
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
    // A pooled connection that died with the link is found on its next use (that request
    // answers 503 and the pool drops it), so allow a few answers before recovery.
    let mut ready = false;
    for _ in 0..20 {
        if app.get("/readyz").await.0 == StatusCode::OK {
            ready = true;
            break;
        }
    }
    assert!(
        ready,
        "the server recovers by itself once the database is back"
    );
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
        s.stores.database.url = url;
        // Longer than the request timeout, so only the request timeout can answer.
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.request_timeout = Duration::from_millis(300);
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

#[tokio::test]
async fn a_hold_stuck_behind_a_lock_answers_503_at_the_lock_timeout_and_holds_nothing() {
    let app = spawn_app_with(|s| s.stores.database.lock_timeout = Duration::from_millis(200)).await;
    let event = app.create_event().await;
    let lock = app.user_locks(&event, &["alice"]).await;

    let response = app
        .request(
            reqwest::Method::POST,
            &format!("/v1/events/{event}/holds"),
            &app.buyer("alice"),
        )
        .json(&serde_json::json!({"seats": ["stalls-A-1"]}))
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key("retry-after"));
    let (status, problem) = crate::helpers::read(response).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );
    assert_eq!(app.count("reservation").await, 0);
    // Other users are not queued behind alice's lock.
    assert_eq!(
        app.post_holds(&event, &app.buyer("bob"), &["stalls-A-2"])
            .await
            .0,
        StatusCode::CREATED
    );

    lock.commit().await.unwrap();
    assert_eq!(
        app.post_holds(&event, &app.buyer("alice"), &["stalls-A-1"])
            .await
            .0,
        StatusCode::CREATED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_answers_503_and_recovers() {
    let app = spawn_app_with(|s| {
        s.stores.database.pool_size = 1;
        s.stores.database.acquire_timeout = Duration::from_millis(300);
        s.stores.database.lock_timeout = Duration::from_secs(20);
    })
    .await;
    let event = app.create_event().await;
    let lock = app.user_locks(&event, &["alice"]).await;
    // Alice's hold takes the server's only connection and waits on the lock: first in a
    // batch of claims, which gives up on a lock soon, then claimed alone, which waits.
    let stuck = tokio::spawn({
        let request = app
            .request(
                reqwest::Method::POST,
                &format!("/v1/events/{event}/holds"),
                &app.buyer("alice"),
            )
            .json(&serde_json::json!({"seats": ["stalls-A-1"]}));
        async move { request.send().await.unwrap().status() }
    });
    loop {
        let waiting: bool = sqlx::query_scalar(
            "select exists (select 1 from pg_locks l join pg_stat_activity a using (pid)
                             where l.locktype = 'advisory' and not l.granted
                               and l.database = (select oid from pg_database where datname = current_database())
                               and a.query like '%boxoffice_claim_hold(%')",
        )
        .fetch_one(&app.db)
        .await
        .unwrap();
        if waiting {
            break;
        }
        tokio::task::yield_now().await;
    }

    let (status, problem) = app.get(&format!("/v1/events/{event}/availability")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );

    lock.commit().await.unwrap();
    assert_eq!(
        stuck.await.unwrap(),
        StatusCode::CREATED,
        "the queued hold goes through once the lock is free"
    );
    assert_eq!(
        app.get(&format!("/v1/events/{event}/availability")).await.0,
        StatusCode::OK
    );
}
