//! Clients that hang up mid-write, on every hold store: a hold or a check-in sent whole,
//! its socket closed 0 to 4 ms later, 600 times, three times over. Afterwards no pooled connection is left
//! inside a transaction, and every buyer after them holds and buys as usual, each `201`
//! visible at once to a connection of another pool. (Before a write's work ran to its end
//! apart from the connection, two runs in three left a connection `idle in transaction`
//! or a hold that no other connection could see.)

use std::time::Duration;

use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::door::holders;
use crate::helpers::door::tickets_of;
use crate::helpers::stores::{conformance, Store};
use crate::helpers::{big_event, buy, spawn_app_with, As, TestApp};

/// Requests cut short in a volley.
const HANGUPS: usize = 600;

/// Volleys, each checked after: before a write ran to its end apart from its connection,
/// one volley in three on the postgres store left a connection inside a transaction.
const VOLLEYS: usize = 3;

/// A bound on how long the test waits for the server's work to settle; never a claim about
/// how fast it does.
const PATIENCE: Duration = Duration::from_secs(20);

/// Sends `method path` with `body` as `token` whole, then closes the socket after `lag`.
async fn hang_up(app: &TestApp, path: &str, token: &str, body: &Value, lag: Duration) {
    let mut stream = TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .expect("the server accepts");
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(lag).await;
    drop(stream);
}

/// The test database's other sessions that are not idle, by state.
async fn busy_sessions(app: &TestApp) -> Vec<(String, String)> {
    sqlx::query_as(
        "select state, left(query, 120) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and state is distinct from 'idle'",
    )
    .fetch_all(&app.db)
    .await
    .unwrap()
}

async fn clients_that_hang_up_mid_write_leave_no_transaction_open(store: Store) {
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.stores.database.pool_size = 4;
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.request_timeout = Duration::from_secs(60);
    })
    .await;
    let event = big_event(&app, 70, 10, 4).await;
    // Tickets for the check-ins: one order of two seats in each of the last rows.
    let mut secrets = Vec::new();
    for row in 60..70 {
        let order = buy(
            &app,
            &event,
            &format!("holder{row}"),
            &[&format!("floor-R{row}-1"), &format!("floor-R{row}-2")],
        )
        .await;
        let id = order["order_id"].as_str().unwrap();
        let who = app.buyer(&format!("holder{row}"));
        for t in tickets_of(&app, &format!("/v1/orders/{id}/tickets"), &who).await {
            secrets.push(t["secret"].clone());
        }
    }
    let checkins = format!("/v1/events/{event}/checkins");
    let holds = format!("/v1/events/{event}/holds");
    for volley in 0..VOLLEYS {
        futures::stream::iter(0..HANGUPS)
            .map(|i| {
                // 0 to 4 ms, spread over the microseconds in which a write's transaction
                // begins.
                let lag = Duration::from_micros((i as u64 * 1_531 + volley as u64 * 211) % 4_000);
                let (app, checkins, holds, secrets) = (&app, &checkins, &holds, &secrets);
                async move {
                    if i % 3 != 0 {
                        let body = json!({"secret": secrets[i % secrets.len()],
                                          "nonce": format!("n{volley}-{i}"),
                                          "type": if i % 2 == 0 { "entry" } else { "exit" }});
                        hang_up(app, checkins, &app.admin_token, &body, lag).await;
                    } else {
                        let seat = format!("floor-R{}-{}", i % 60, i % 10 + 1);
                        let token = app.user_token(&format!("cut{volley}-{i}"));
                        hang_up(app, holds, &token, &json!({"seats": [seat]}), lag).await;
                    }
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;

        // The cut requests' work ends by itself: then no session is inside a transaction.
        let started = tokio::time::Instant::now();
        let mut busy = busy_sessions(&app).await;
        while !busy.is_empty() && started.elapsed() < PATIENCE {
            tokio::time::sleep(Duration::from_millis(100)).await;
            busy = busy_sessions(&app).await;
        }
        assert!(
            busy.is_empty(),
            "volley {volley}: sessions still busy: {busy:?}"
        );

        // Buyers after them: each hold and checkout answers 201, and the order is there
        // for another pool at once. Every connection of the server's pool of four is used.
        for i in 0..4 {
            let seat = format!("floor-R{}-{}", 60 + volley * 3 + i % 3, 3 + i / 3);
            let buyer = app.buyer(&format!("after{volley}-{i}"));
            let (status, hold) = app.post_holds(&event, &buyer, &[&seat]).await;
            assert_eq!(status, StatusCode::CREATED, "volley {volley}: {hold}");
            let (status, order) = app
                .post_orders(&event, &buyer, hold["hold_token"].as_str().unwrap())
                .await;
            assert_eq!(
                status,
                StatusCode::CREATED,
                "volley {volley}, after {i}: {order}"
            );
            assert_eq!(
                holders(&app, &event, &seat).await,
                [order["order_id"].as_str().unwrap()],
                "volley {volley}, after {i}"
            );
        }
    }
    // The seats the cut holds reached read as held or free, never broken.
    let (status, availability) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/availability"),
            &As::Nobody,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{availability}");
    assert!(busy_sessions(&app).await.is_empty());
}

conformance!(clients_that_hang_up_mid_write_leave_no_transaction_open);
