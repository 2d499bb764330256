//! Checkouts committed together, on either store: the checkouts waiting on an instance go
//! in one transaction, each answered as if it came alone. A batch commits only its plain
//! cases; a checkout with nothing to buy (another buyer's hold, an expired one) is made
//! alone and told why, and a batch that meets a seat Postgres has sold rolls back and each
//! of its checkouts is made alone, so the one at fault fails by itself. The postgres store
//! takes the holds' rows in the batch; the redis store has protected each hold's seats in
//! Redis before its order goes in a batch.
//!
//! These servers run without the adaptive limit: what is tested is the store's batch, and
//! a batch needs more checkouts waiting at once than the limit's floor lets through.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{big_event, hold_request, race, read};
use crate::helpers::{sell_directly, spawn_app_with, TestApp};

fn checkout_request(
    app: &TestApp,
    event: &str,
    user: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/orders"),
        &app.buyer(user),
    )
    .json(&json!({ "hold_token": token }))
}

/// `user`'s hold of `seats`; its token.
async fn hold(app: &TestApp, event: &str, user: &str, seats: &[&str]) -> String {
    let seats: Vec<String> = seats.iter().map(|s| (*s).to_owned()).collect();
    let (status, hold) = read(hold_request(app, event, user, &seats).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    hold["hold_token"].as_str().unwrap().to_owned()
}

/// Every lane busy: a checkout of a one-seat hold per lane, waiting to write its order
/// on the event's row, locked here (for update: an order's key share on its event waits)
/// until the lock answered is let go. The checkouts' answers to come.
async fn lanes_stuck(
    app: &TestApp,
    event: &str,
    seats: &[&str],
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    Vec<tokio::task::JoinHandle<StatusCode>>,
) {
    let mut tokens = Vec::new();
    for (i, seat) in seats.iter().enumerate() {
        tokens.push(hold(app, event, &format!("stuck-{seat}-{i}"), &[seat]).await);
    }
    let mut lock = app.db.begin().await.unwrap();
    sqlx::query("select 1 from event where event_id = $1 for update")
        .bind(event.parse::<uuid::Uuid>().unwrap())
        .execute(&mut *lock)
        .await
        .unwrap();
    // One at a time, so each lane takes one (two sent at once could go in one batch).
    let mut stuck = Vec::new();
    for (i, (token, seat)) in tokens.iter().zip(seats).enumerate() {
        let before = waiting_on_a_lock(app).await;
        let request = checkout_request(app, event, &format!("stuck-{seat}-{i}"), token);
        stuck.push(tokio::spawn(async move {
            read(request.send().await.unwrap()).await.0
        }));
        tokio::time::timeout(Duration::from_secs(30), async {
            while waiting_on_a_lock(app).await <= before {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("a lane waits on the locked event");
    }
    (lock, stuck)
}

/// Checkouts waiting for a lane on the app's store.
fn lanes_waiting(app: &TestApp) -> usize {
    match (app.holds.checkouts(), app.holds.taken_checkouts()) {
        (Some(lanes), _) => lanes.waiting(),
        (None, Some(lanes)) => lanes.waiting(),
        (None, None) => panic!("every store commits checkouts together"),
    }
}

/// Sends `requests` at once while every lane is stuck, lets the lanes go once `reaching`
/// of them wait for one, and answers them in order.
async fn sent_while_lanes_wait(
    app: &TestApp,
    event: &str,
    stuck_seats: &[&str],
    requests: Vec<reqwest::RequestBuilder>,
    reaching: usize,
) -> Vec<(StatusCode, Value)> {
    let (lock, stuck) = lanes_stuck(app, event, stuck_seats).await;
    let sent = tokio::spawn(race(requests));
    tokio::time::timeout(Duration::from_secs(30), async {
        while lanes_waiting(app) < reaching {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the checkouts reach the lanes");
    lock.rollback().await.unwrap();
    for stuck in stuck {
        assert_eq!(stuck.await.unwrap(), StatusCode::CREATED);
    }
    sent.await.unwrap()
}

/// In how many transactions the orders of `users` were committed.
async fn transactions_of(app: &TestApp, event: &str, users: &[String]) -> i64 {
    sqlx::query_scalar(
        "select count(distinct xmin::text) from ticket_order where event_id = $1 and user_id = any($2)",
    )
    .bind(event.parse::<uuid::Uuid>().unwrap())
    .bind(users)
    .fetch_one(&app.db)
    .await
    .unwrap()
}

/// Each buyer's seats in live orders.
async fn ordered_seats(app: &TestApp, event: &str) -> BTreeMap<String, i64> {
    sqlx::query_as(
        "select o.user_id, count(s.seat_id) from ticket_order o
           join order_seat s on s.event_id = o.event_id and s.order_id = o.order_id
          where o.event_id = $1 and not s.released group by o.user_id",
    )
    .bind(event.parse::<uuid::Uuid>().unwrap())
    .fetch_all(&app.db)
    .await
    .unwrap()
    .into_iter()
    .collect()
}

fn server(store: Store) -> impl FnOnce(&mut boxoffice_server::Settings) {
    move |s| {
        store.configure(s);
        s.stores.database.pool_size = 8;
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.overload = None;
        // Longer than the whole test: the stuck checkouts wait for the test, however slow
        // the machine.
        s.stores.database.lock_timeout = Duration::from_secs(60);
        s.stores.database.statement_timeout = Duration::from_secs(60);
        s.limits.request_timeout = Duration::from_secs(60);
    }
}

/// Runs each named `async fn(Store)` as a test on the postgres and the redis store.
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::Store::Postgres).await
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::Store::Redis).await
                }
            )*
        }
    };
}

on_both_stores!(
    checkouts_waiting_together_commit_in_one_transaction_each_as_if_alone,
    a_batch_that_meets_a_sold_seat_rolls_back_and_each_checkout_is_made_alone,
);

async fn checkouts_waiting_together_commit_in_one_transaction_each_as_if_alone(store: Store) {
    let app = spawn_app_with(server(store)).await;
    let event = big_event(&app, 2, 60, 4).await;
    // Twenty buyers with holds of one to three seats; one of them buys twice at once, and
    // another user tries to buy one more buyer's hold.
    let mut buyers = Vec::new();
    for n in 0..20 {
        let seats: Vec<String> = (0..=(n % 3))
            .map(|k| format!("floor-R0-{}", 3 * n + k + 1))
            .collect();
        let seats: Vec<&str> = seats.iter().map(String::as_str).collect();
        let user = format!("fan-{n}");
        let token = hold(&app, &event, &user, &seats).await;
        buyers.push((user, token, seats.len() as i64));
    }
    let owned = hold(&app, &event, "owner", &["floor-R1-10"]).await;
    let mut requests: Vec<_> = buyers
        .iter()
        .map(|(user, token, _)| checkout_request(&app, &event, user, token))
        .collect();
    requests.push(checkout_request(&app, &event, "fan-0", &buyers[0].1));
    requests.push(checkout_request(&app, &event, "thief", &owned));
    // Every checkout reaches the lanes but the thief's on the redis store, refused there
    // before (the postgres store's batch finds no row of the thief's and makes it alone).
    let reaching = if store == Store::Postgres { 22 } else { 21 };
    let answers = sent_while_lanes_wait(
        &app,
        &event,
        &["floor-R1-1", "floor-R1-2"],
        requests,
        reaching,
    )
    .await;

    // Each answered as if alone: an order per buyer (the repeat finds the same one),
    // another user's hold forbidden.
    let (fans, rest) = answers.split_at(20);
    for ((status, order), (user, _, seats)) in fans.iter().zip(&buyers) {
        assert!(status.is_success(), "{order}");
        assert_eq!(order["user_id"], user.as_str());
        assert_eq!(order["seats"].as_array().unwrap().len() as i64, *seats);
    }
    assert!(rest[0].0.is_success(), "{}", rest[0].1);
    assert_eq!(rest[0].1["order_id"], fans[0].1["order_id"]);
    let created = [&fans[0], &rest[0]]
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    assert_eq!(
        created, 1,
        "one of the two made the order, the other found it"
    );
    assert!(fans[1..].iter().all(|(s, _)| *s == StatusCode::CREATED));
    assert_eq!(
        (rest[1].0, rest[1].1["code"].clone()),
        (StatusCode::FORBIDDEN, json!("forbidden"))
    );

    // In Postgres: an order per bought hold with its seats, an outbox row each, the other
    // hold still its owner's; and the twenty went in fewer transactions than orders.
    let mut want: BTreeMap<String, i64> = buyers
        .iter()
        .map(|(user, _, seats)| (user.clone(), *seats))
        .collect();
    want.insert("stuck-floor-R1-1-0".into(), 1);
    want.insert("stuck-floor-R1-2-1".into(), 1);
    assert_eq!(ordered_seats(&app, &event).await, want);
    let outbox: i64 = sqlx::query_scalar(
        "select count(*) from outbox where event_id = $1 and topic = 'order.created'",
    )
    .bind(event.parse::<uuid::Uuid>().unwrap())
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(outbox, 22);
    let tokens: BTreeMap<String, String> = sqlx::query_as(
        "select user_id, hold_token::text from ticket_order where event_id = $1 and user_id like 'fan-%'",
    )
    .bind(event.parse::<uuid::Uuid>().unwrap())
    .fetch_all(&app.db)
    .await
    .unwrap()
    .into_iter()
    .collect();
    let want_tokens: BTreeMap<String, String> = buyers
        .iter()
        .map(|(user, token, _)| (user.clone(), token.clone()))
        .collect();
    assert_eq!(tokens, want_tokens, "each order is of its buyer's hold");
    let users: Vec<String> = buyers.iter().map(|(u, _, _)| u.clone()).collect();
    let transactions = transactions_of(&app, &event, &users).await;
    assert!(
        transactions < 20,
        "twenty orders in {transactions} transactions"
    );
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["floor-R1-10"], "held", "the owner's hold stays");
    let sold = statuses.values().filter(|s| *s == "sold").count() as i64;
    assert_eq!(sold, want.values().sum::<i64>());
}

async fn a_batch_that_meets_a_sold_seat_rolls_back_and_each_checkout_is_made_alone(store: Store) {
    let app = spawn_app_with(server(store)).await;
    let event = big_event(&app, 2, 60, 4).await;
    let mut buyers = Vec::new();
    for n in 0..5 {
        let seat = format!("floor-R0-{}", n + 1);
        let user = format!("fan-{n}");
        buyers.push((user.clone(), hold(&app, &event, &user, &[&seat]).await));
    }
    // A hold whose seat Postgres has sold behind the store's back.
    let unlucky = hold(&app, &event, "unlucky", &["floor-R1-20"]).await;
    sell_directly(&app, &event, &["floor-R1-20"]).await;
    let mut requests: Vec<_> = buyers
        .iter()
        .map(|(user, token)| checkout_request(&app, &event, user, token))
        .collect();
    requests.push(checkout_request(&app, &event, "unlucky", &unlucky));
    let answers =
        sent_while_lanes_wait(&app, &event, &["floor-R1-1", "floor-R1-2"], requests, 6).await;

    let statuses: Vec<(u16, Value)> = answers
        .iter()
        .map(|(s, body)| (s.as_u16(), body["code"].clone()))
        .collect();
    let mut want = vec![(201, Value::Null); 5];
    want.push((409, json!("hold_not_live")));
    assert_eq!(statuses, want);
    // The five were made alone, each in its own transaction, after the batch rolled back.
    let users: Vec<String> = buyers.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(transactions_of(&app, &event, &users).await, 5);
    let seats = ordered_seats(&app, &event).await;
    for user in &users {
        assert_eq!(seats[user], 1);
    }
    assert_eq!(seats.get("unlucky"), None);
    assert_eq!(seats["buyer"], 1, "the seat is the direct sale's alone");
}

/// Transactions of the test's database waiting on a row lock.
async fn waiting_on_a_lock(app: &TestApp) -> i64 {
    sqlx::query_scalar(
        "select count(*) from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap()
}
