//! Races: a server sized for hundreds of requests at once, requests released together, and
//! the tally of their answers; a large event to race on.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use super::{read, spawn_app_with, TestApp};
use crate::helpers::stores::Store;

pub(crate) async fn spawn_race_app() -> TestApp {
    spawn_race_app_on(Store::Postgres).await
}

/// A server for races, holding seats in `store`.
pub(crate) async fn spawn_race_app_on(store: Store) -> TestApp {
    spawn_app_with(|s| {
        store.configure(s);
        s.stores.database.pool_size = 8;
        // Hundreds of requests queue for eight connections; none should give up.
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.request_timeout = Duration::from_secs(60);
    })
    .await
}

/// Sends every request at the same moment and returns the answers in the same order.
pub(crate) async fn race(requests: Vec<RequestBuilder>) -> Vec<(StatusCode, Value)> {
    boxoffice_client::release::together(
        requests
            .into_iter()
            .map(
                |request| async move { read(request.send().await.expect("request is sent")).await },
            )
            .collect(),
    )
    .await
}

/// Sends every request at the same moment, as [`race`] does, and each request refused
/// with a turn (`503` with `retry_after_ms`: the server's adaptive limit, or a store too
/// busy) is sent again at its turn, as the buyer's page does: the answers once none is a
/// turn. The distribution then counts what the buyers finally got, with the server's
/// overload protection on.
pub(crate) async fn race_riding_out(requests: Vec<RequestBuilder>) -> Vec<(StatusCode, Value)> {
    /// More turns than any race here needs; a request still refused after them is answered
    /// as it was, and the test's tally shows the 503.
    const TURNS: usize = 200;
    boxoffice_client::release::together(
        requests
            .into_iter()
            .map(|request| async move {
                let mut turns = 0;
                loop {
                    let again = request.try_clone().expect("a body that can be sent again");
                    let answer = read(again.send().await.expect("request is sent")).await;
                    let turn = answer.1["retry_after_ms"].as_u64();
                    match turn {
                        Some(ms)
                            if answer.0 == StatusCode::SERVICE_UNAVAILABLE && turns < TURNS =>
                        {
                            turns += 1;
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                        }
                        _ => return answer,
                    }
                }
            })
            .collect(),
    )
    .await
}

/// How many answers had each status.
pub(crate) fn tally(answers: &[(StatusCode, Value)]) -> BTreeMap<u16, usize> {
    let mut counts = BTreeMap::new();
    for (status, _) in answers {
        *counts.entry(status.as_u16()).or_default() += 1;
    }
    counts
}

pub(crate) fn hold_request(
    app: &TestApp,
    event: &str,
    user: &str,
    seats: &[String],
) -> RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/holds"),
        &app.buyer(user),
    )
    .json(&json!({"seats": seats}))
}

/// A venue with one section of `rows` × `per_row` seats, and an event selling all of it.
pub(crate) async fn big_event(
    app: &TestApp,
    rows: usize,
    per_row: u32,
    max_seats_per_user: u32,
) -> String {
    let rows: Vec<_> = (0..rows)
        .map(|r| json!({"label": format!("R{r}"), "seats": per_row}))
        .collect();
    let (_, venue) = app
        .post_venues(
            &json!({"name": "Arena", "sections": [{"id": "floor", "name": "Floor", "rows": rows}]}),
        )
        .await;
    let (status, event) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Race", "starts_at": "2030-01-01T20:00:00Z",
            "max_seats_per_user": max_seats_per_user,
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "floor"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}
