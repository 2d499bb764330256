//! Reads from a replica (`BOXOFFICE_DATABASE_REPLICA_URL`): used while it answers and is in
//! step, the primary otherwise, and never for what decides a sale. (A real streaming
//! replica runs in `deploy/cluster.sh`; here the "replica" is the primary's database seen
//! through a schema that tells it apart, another server's database, or a port where
//! nothing listens.)

use std::time::{Duration, Instant};

use reqwest::StatusCode;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

async fn replica_in_use(app: &TestApp) -> f64 {
    app.counter("boxoffice_replica_in_use").await
}

async fn wait_for_replica(app: &TestApp, want: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while replica_in_use(app).await != want {
        assert!(
            Instant::now() < deadline,
            "replica in use never became {want}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A sale through the server: a seat held and bought; the seat map shows it sold.
async fn sell_and_read(app: &TestApp) {
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app.post_holds(&event, &alice, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, order) = app
        .post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-B-1"])
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "the primary decides: sold once"
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-B-1"], "sold");
}

#[tokio::test]
async fn reads_go_to_a_replica_in_step() {
    // The "replica" is the primary's own database seen through a schema of its own, first
    // on its connections' search path, where `order_seat` is a view that adds one sale the
    // primary never made: a seat that reads sold only when the map was read from the
    // replica.
    let app = spawn_app_with(|s| {
        let mut replica = s.stores.database.clone();
        replica.url = format!("{}?options[search_path]=replica_only,public", replica.url);
        s.stores.replica = Some((replica, Duration::from_secs(1)));
    })
    .await;
    // Before the first read through the replica, so no statement of its was planned
    // against `public.order_seat`.
    sqlx::raw_sql(
        "create schema replica_only;
         create view replica_only.order_seat as
             select * from public.order_seat
             union all
             select e.event_id, '00000000-0000-4000-8000-000000000000'::uuid, 'stalls-A-1',
                    t.code, t.price_cents, false, gen_random_uuid(), null::timestamptz
               from public.event e
              cross join lateral (select code, price_cents from public.ticket_type t
                                   where t.event_id = e.event_id
                                   order by position limit 1) t",
    )
    .execute(&app.db)
    .await
    .unwrap();
    wait_for_replica(&app, 1.0).await;
    sell_and_read(&app).await;
    let event: String = sqlx::query_scalar("select event_id::text from event")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        statuses["stalls-A-1"], "sold",
        "the map was read from the primary, not the replica"
    );
    // What decides a sale is the primary's: the seat the replica calls sold is held.
    let (status, hold) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
}

#[tokio::test]
async fn without_the_replica_reads_fall_back_to_the_primary() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let app = spawn_app_with(move |s| {
        let mut replica = s.stores.database.clone();
        replica.url = format!("postgres://postgres@127.0.0.1:{port}/nowhere");
        replica.acquire_timeout = Duration::from_millis(200);
        s.stores.replica = Some((replica, Duration::from_secs(1)));
    })
    .await;
    // Checked at least once, and found down.
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.counter("boxoffice_replica_checks_total").await < 1.0 {
        assert!(Instant::now() < deadline, "the replica was never checked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = app.metrics().await;
    assert!(
        metrics.lines().any(|l| l == "boxoffice_replica_in_use 0"),
        "{metrics}"
    );
    sell_and_read(&app).await;
    assert_eq!(
        app.get("/readyz").await.0,
        StatusCode::OK,
        "the replica is optional"
    );
}

#[tokio::test]
async fn an_event_the_replica_has_not_replayed_yet_is_read_from_the_primary() {
    // The "replica" is another server's database: migrated and in step, but without the
    // events this server creates, like a streaming replica that has not replayed them yet.
    let behind = spawn_app().await;
    let replica_url = behind.database_url.clone();
    let app = spawn_app_with(move |s| {
        let mut replica = s.stores.database.clone();
        replica.url = replica_url;
        s.stores.replica = Some((replica, Duration::from_secs(1)));
    })
    .await;
    wait_for_replica(&app, 1.0).await;

    let event = app.create_event().await;
    let (status, body) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], event.as_str());
    sell_and_read(&app).await;
    let (status, body) = app
        .get(&format!("/v1/events/{}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "event_not_found");
    assert_eq!(replica_in_use(&app).await, 1.0, "the replica stays in use");
}
