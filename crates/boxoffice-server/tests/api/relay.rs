//! The outbox relay against a real local HTTP receiver. (A long file: delivery, order,
//! retries, leases and a database lost mid-pass are one relay's behaviour, each needing the
//! receiver and the rows of the others' setups; the receiver itself is `helpers::webhooks`.)

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use boxoffice_server::config::Secret;
use boxoffice_server::relay::{signature, PassReport, Relay, RelayConfig};
use boxoffice_store::journal::outbox;
use serde_json::{json, Value};

use crate::helpers::proxy::{postgres_addr, ChaosProxy};
use crate::helpers::webhooks::{make_changes, Receiver};
use crate::helpers::{spawn_app, spawn_app_with, TestApp};

fn config(url: &str) -> RelayConfig {
    let mut config = RelayConfig::new(vec![url.to_owned()], Secret::new("whsec-test"));
    config.backoff_base = Duration::from_millis(50);
    config
}

/// Writes an outbox row of topic `test` under `event`, as a change's transaction would.
async fn write_row(app: &TestApp, event: uuid::Uuid, payload: Value) {
    sqlx::query("insert into outbox (event_id, topic, payload) values ($1, 'test', $2)")
        .bind(event)
        .bind(sqlx::types::Json(payload))
        .execute(&app.db)
        .await
        .unwrap();
}

/// Passes until one finds nothing due, adding up what they did.
async fn drain(relay: &Relay) -> PassReport {
    let mut total = PassReport::default();
    loop {
        let report = relay.pass().await.unwrap();
        if report.delivered + report.failed == 0 {
            return total;
        }
        total.delivered += report.delivered;
        total.failed += report.failed;
    }
}

/// Drains again while rows wait out their backoff, until `want` are delivered or two
/// seconds pass; how many were.
async fn drain_until(relay: &Relay, want: usize) -> usize {
    let mut delivered = 0;
    for _ in 0..100 {
        delivered += drain(relay).await.delivered;
        if delivered >= want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    delivered
}

#[tokio::test]
async fn every_committed_change_reaches_the_webhook_signed_and_as_committed() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    let event = make_changes(&app).await;
    let relay = Relay::new(app.db.clone(), config(&receiver.url));
    assert_eq!(
        drain(&relay).await,
        PassReport {
            delivered: 3,
            failed: 0
        }
    );

    let committed: Vec<(i64, String, Value)> =
        sqlx::query_as("select outbox_id, topic, payload from outbox order by outbox_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let got = receiver.got.lock().unwrap().clone();
    assert_eq!(got.len(), 3);
    for ((headers, body), (id, topic, payload)) in got.iter().zip(&committed) {
        assert_eq!(
            (&body["id"], &body["topic"], &body["payload"]),
            (&json!(id), &json!(topic), payload)
        );
        assert_eq!(body["event_id"], event.as_str());
        assert_eq!(headers["boxoffice-delivery"], id.to_string().as_str());
        let sent = headers["boxoffice-signature"].to_str().unwrap();
        let timestamp: i64 = sent
            .strip_prefix("t=")
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let raw = headers["x-raw-body"].to_str().unwrap();
        assert_eq!(
            sent,
            signature(&Secret::new("whsec-test"), timestamp, raw.as_bytes()),
            "the signature verifies"
        );
    }
    let topics: Vec<_> = got
        .iter()
        .map(|(_, b)| b["topic"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        topics,
        ["order.created", "booking.created", "booking.cancelled"]
    );
    let undelivered: i64 =
        sqlx::query_scalar("select count(*) from outbox where delivered_at is null")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(undelivered, 0);
}

#[tokio::test]
async fn with_the_receiver_down_rows_wait_and_are_delivered_after_it_returns() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    make_changes(&app).await;
    let relay = Relay::new(app.db.clone(), config(&receiver.url));

    receiver.up.store(false, Ordering::SeqCst);
    assert_eq!(
        relay.pass().await.unwrap(),
        PassReport {
            delivered: 0,
            failed: 1
        }
    );
    // The first row failed, and the rows after it wait behind it: order per event.
    assert_eq!(
        relay.pass().await.unwrap(),
        PassReport::default(),
        "nothing is due during the backoff"
    );
    let (attempts, error): (i32, Option<String>) =
        sqlx::query_as("select attempts, last_error from outbox order by outbox_id limit 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(attempts, 1);
    assert!(error.unwrap().contains("503"));
    assert!(receiver.ids().is_empty());

    receiver.up.store(true, Ordering::SeqCst);
    assert_eq!(drain_until(&relay, 3).await, 3);
    let ids = receiver.ids();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "delivered in order: {ids:?}"
    );
}

#[tokio::test]
async fn an_unreachable_receiver_is_a_failed_attempt_not_a_lost_row() {
    let app = spawn_app().await;
    make_changes(&app).await;
    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let relay = Relay::new(app.db.clone(), config(&format!("http://{closed}/hook")));
    assert_eq!(
        relay.pass().await.unwrap(),
        PassReport {
            delivered: 0,
            failed: 1
        }
    );
    let pending: i64 = sqlx::query_scalar("select count(*) from outbox where delivered_at is null")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(pending, 3);
}

/// A sale's backlog in one event goes out a run a pass, in order; a failure stops the run
/// there and gives the rows after it back, so they wait behind it unleased.
#[tokio::test]
async fn one_events_backlog_goes_out_a_run_a_pass_in_order_and_stops_at_a_failure() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    let event = uuid::Uuid::new_v4();
    for n in 0..30 {
        write_row(&app, event, json!({"n": n})).await;
    }
    let mut settings = config(&receiver.url);
    settings.run = 20;
    let relay = Relay::new(app.db.clone(), settings);
    let leased = || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox where locked_until > now()")
            .fetch_one(&app.db)
            .await
            .unwrap()
    };

    assert_eq!(
        relay.pass().await.unwrap(),
        PassReport {
            delivered: 20,
            failed: 0
        }
    );
    receiver.up.store(false, Ordering::SeqCst);
    assert_eq!(
        relay.pass().await.unwrap(),
        PassReport {
            delivered: 0,
            failed: 1
        }
    );
    assert_eq!(leased().await, 0, "the rows after the failure went back");
    assert_eq!(
        receiver.arrived.load(Ordering::SeqCst),
        21,
        "the run stopped at it"
    );

    receiver.up.store(true, Ordering::SeqCst);
    assert_eq!(drain_until(&relay, 10).await, 10);
    let ns: Vec<i64> = receiver
        .got
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b["payload"]["n"].as_i64().unwrap())
        .collect();
    assert_eq!(ns, (0..30).collect::<Vec<_>>(), "each once, in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_relays_never_deliver_the_same_row_twice_in_one_pass() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    // Five changes in each of eight events.
    for e in 0..8 {
        let event = uuid::Uuid::new_v4();
        for n in 0..5 {
            write_row(&app, event, json!({"event": e, "n": n})).await;
        }
    }
    let (a, b) = (
        Relay::new(app.db.clone(), config(&receiver.url)),
        Relay::new(app.db.clone(), config(&receiver.url)),
    );
    let mut rounds = 0;
    loop {
        let before = receiver.ids().len();
        let (ra, rb) = tokio::join!(a.pass(), b.pass());
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        let ids = receiver.ids();
        let this_round = &ids[before..];
        let mut distinct = this_round.to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            this_round.len(),
            "a row was delivered twice in one pass: {this_round:?}"
        );
        assert_eq!(ra.delivered + rb.delivered, this_round.len());
        if ra.delivered + rb.delivered == 0 {
            break;
        }
        rounds += 1;
        assert!(
            rounds <= 5,
            "one row per event per round: five rounds at most"
        );
    }
    let got = receiver.got.lock().unwrap().clone();
    assert_eq!(got.len(), 40, "every row exactly once");
    for e in 0..8 {
        let ns: Vec<i64> = got
            .iter()
            .filter(|(_, b)| b["payload"]["event"] == e)
            .map(|(_, b)| b["payload"]["n"].as_i64().unwrap())
            .collect();
        assert_eq!(ns, [0, 1, 2, 3, 4], "event {e} in order");
    }
}

#[tokio::test]
async fn the_server_runs_the_relay_when_webhooks_are_configured() {
    let receiver = Receiver::start().await;
    let url = receiver.url.clone();
    let app = spawn_app_with(move |s| s.operations.relay = config(&url)).await;
    make_changes(&app).await;
    for _ in 0..200 {
        if receiver.ids().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        receiver.ids().len(),
        3,
        "the in-server relay delivered every change"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_receiver_holds_no_transaction_open_and_a_dead_relays_lease_lapses() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    write_row(&app, uuid::Uuid::new_v4(), json!({})).await;
    let mut leased = config(&receiver.url);
    leased.lease = Duration::from_secs(1);
    leased.timeout = Duration::from_secs(60);
    receiver.stall_ms.store(60_000, Ordering::SeqCst);
    let first = Relay::new(app.db.clone(), leased.clone());
    let delivering = tokio::spawn(async move { first.pass().await });
    for _ in 0..400 {
        if receiver.arrived.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        receiver.arrived.load(Ordering::SeqCst),
        1,
        "the delivery is under way"
    );

    // While the receiver takes its time, no transaction is open...
    let open: i64 = sqlx::query_scalar(
        "select count(*) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and xact_start is not null",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(open, 0, "no transaction waits on the receiver");
    // ...and another relay passes the leased row over.
    let second = Relay::new(app.db.clone(), leased);
    assert_eq!(second.pass().await.unwrap(), PassReport::default());

    // The first relay dies mid-delivery; once its lease lapses the row is delivered.
    delivering.abort();
    receiver.stall_ms.store(0, Ordering::SeqCst);
    let mut report = PassReport::default();
    for _ in 0..100 {
        report = second.pass().await.unwrap();
        if report.delivered > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        report,
        PassReport {
            delivered: 1,
            failed: 0
        }
    );
    let undelivered: i64 = sqlx::query_scalar(
        "select count(*) from outbox where delivered_at is null or locked_until is not null",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(undelivered, 0);
}

/// A pass that loses the database after its receiver answered keeps what it could not
/// write: once the database is back, the next pass marks those rows delivered (they are not
/// sent again) and gives back the rest of each run at once, instead of leaving them to wait
/// out a lease of five minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rows_delivered_while_the_database_went_away_are_marked_once_it_returns() {
    let app = spawn_app().await;
    let receiver = Receiver::start().await;
    let events = [uuid::Uuid::new_v4(), uuid::Uuid::new_v4()];
    for n in 0..3 {
        for (e, event) in events.iter().enumerate() {
            write_row(&app, *event, json!({"event": e, "n": n})).await;
        }
    }
    let proxy = ChaosProxy::start(postgres_addr().await).await;
    let database = app.database_url.rsplit('/').next().unwrap();
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_millis(500))
        .connect(&format!("postgres://postgres@{}/{database}", proxy.addr))
        .await
        .unwrap();
    let mut settings = config(&receiver.url);
    settings.lease = Duration::from_secs(300);
    let relay = Arc::new(Relay::new(pool, settings));

    // Each event's first row reaches the receiver; the database goes before it answers.
    receiver.stall_ms.store(500, Ordering::SeqCst);
    let pass = tokio::spawn({
        let relay = relay.clone();
        async move { relay.pass().await }
    });
    for _ in 0..400 {
        if receiver.arrived.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(receiver.arrived.load(Ordering::SeqCst), 2);
    proxy.break_link();
    receiver.stall_ms.store(0, Ordering::SeqCst);
    assert!(
        pass.await.unwrap().is_err(),
        "the pass could not mark what it delivered"
    );
    assert_eq!(receiver.ids().len(), 2, "both first rows were received");
    assert!(relay.pass().await.is_err(), "the database is still away");

    proxy.restore_link();
    let recovered = drain(&relay).await;
    assert_eq!(
        recovered,
        PassReport {
            delivered: 4,
            failed: 0
        },
        "the rest went out at once, not after the lease"
    );
    let got = receiver.got.lock().unwrap().clone();
    assert_eq!(got.len(), 6, "each row once: {:?}", receiver.ids());
    for e in 0..2 {
        let ns: Vec<i64> = got
            .iter()
            .filter(|(_, b)| b["payload"]["event"] == e)
            .map(|(_, b)| b["payload"]["n"].as_i64().unwrap())
            .collect();
        assert_eq!(ns, [0, 1, 2], "event {e} in order");
    }
    let (undelivered, leased): (i64, i64) = sqlx::query_as(
        "select count(*) filter (where delivered_at is null),
                count(*) filter (where locked_until is not null)
           from outbox",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!((undelivered, leased), (0, 0));
}

/// A claim given back late, after its lease lapsed and another relay claimed the rows,
/// leaves the other relay's lease alone; so does a late failure.
#[tokio::test]
async fn a_late_give_back_never_ends_another_relays_lease() {
    let app = spawn_app().await;
    let event = uuid::Uuid::new_v4();
    for n in 0..2 {
        write_row(&app, event, json!({"n": n})).await;
    }
    let default = [boxoffice_core::ids::OrganizationId::DEFAULT];
    let first = outbox::lease_runs(&app.db, &default, 10, 10, Duration::from_millis(200))
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = outbox::lease_runs(&app.db, &default, 10, 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(second.len(), 2, "the lapsed lease was claimed again");

    let ids: Vec<i64> = first.iter().map(|r| r.outbox_id).collect();
    outbox::release(&app.db, event, &ids, first[0].leased_until)
        .await
        .unwrap();
    outbox::mark_failed(
        &app.db,
        ids[0],
        "late",
        Duration::from_secs(1),
        first[0].leased_until,
    )
    .await
    .unwrap();
    let rows: Vec<(i32, Option<chrono::DateTime<chrono::Utc>>)> =
        sqlx::query_as("select attempts, locked_until from outbox order by outbox_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(
        rows,
        second
            .iter()
            .map(|r| (0, Some(r.leased_until)))
            .collect::<Vec<_>>(),
        "the second claim keeps both rows"
    );

    // The second claim's own give back does end it.
    outbox::release(&app.db, event, &ids, second[0].leased_until)
        .await
        .unwrap();
    let leased: i64 =
        sqlx::query_scalar("select count(*) from outbox where locked_until is not null")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(leased, 0);
}
