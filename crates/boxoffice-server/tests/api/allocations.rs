//! Allocation changes on a live event: putting seats on sale and repricing them,
//! withdrawing them, what is refused, and how held and sold seats are left alone.

use chrono::Duration;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{hold_directly, sell_directly, spawn_app, spawn_app_with, As, TestApp};

async fn put_allocations(app: &TestApp, event: &str, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::PUT,
        &format!("/v1/events/{event}/allocations"),
        &As::Admin,
        Some(&body),
    )
    .await
}

async fn withdraw(app: &TestApp, event: &str, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/allocations/withdraw"),
        &As::Admin,
        Some(&body),
    )
    .await
}

#[tokio::test]
async fn putting_allocations_puts_seats_on_sale_and_reprices_them() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (status, body) = put_allocations(
        &app,
        &event,
        json!({"allocations": [{"ticket_type": "standard", "section": "circle"},
                               {"ticket_type": "premium", "seats": ["circle-A-2", "stalls-B-1"]}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"changed": 4, "skipped": []}));
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let seat = |id: &str| {
        seats["seats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            seat("circle-A-1")["status"].clone(),
            seat("circle-A-1")["price_cents"].clone()
        ),
        (json!("available"), json!(4500))
    );
    assert_eq!(seat("circle-A-2")["ticket_type"], "premium");
    assert_eq!(
        (
            seat("stalls-B-1")["ticket_type"].clone(),
            seat("stalls-B-1")["price_cents"].clone()
        ),
        (json!("premium"), json!(9000))
    );
}

#[tokio::test]
async fn invalid_allocation_changes_answer_422_and_change_nothing() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let before = app.seat_statuses(&event).await;
    for (body, field) in [
        (json!({"allocations": []}), "allocations"),
        (
            json!({"allocations": [{"ticket_type": "gold", "section": "circle"}]}),
            "allocations[0].ticket_type",
        ),
        (
            json!({"allocations": [{"ticket_type": "standard", "seats": ["circle-Q-1"]}]}),
            "allocations[0].seats[0]",
        ),
        (
            json!({"allocations": [{"ticket_type": "standard"}]}),
            "allocations[0]",
        ),
        (json!({"allocs": []}), "allocs"),
    ] {
        let (status, problem) = put_allocations(&app, &event, body.clone()).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {problem}"
        );
        assert_eq!(problem["errors"][0]["field"], field, "{body}: {problem}");
    }
    for (body, field) in [
        (json!({}), "seats"),
        (json!({"seats": ["nope"]}), "seats[0]"),
        (json!({"section": "stalls", "rows": ["Q"]}), "rows"),
        (
            json!({"section": "stalls", "seats": ["stalls-A-1"]}),
            "seats",
        ),
    ] {
        let (status, problem) = withdraw(&app, &event, body.clone()).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {problem}"
        );
        assert_eq!(problem["errors"][0]["field"], field, "{body}: {problem}");
    }
    assert_eq!(app.seat_statuses(&event).await, before);
    let version: i64 = sqlx::query_scalar("select layout_version from event")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(version, 1, "no change was recorded");
}

#[tokio::test]
async fn withdrawing_takes_seats_off_sale_but_never_held_or_sold_ones() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    hold_directly(&app, &event, &["stalls-B-2"], Duration::minutes(2)).await;
    sell_directly(&app, &event, &["stalls-B-3"]).await;
    // An expired hold does not protect its seat.
    hold_directly(&app, &event, &["stalls-B-4"], Duration::minutes(-1)).await;

    let (status, body) = withdraw(&app, &event, json!({"section": "stalls", "rows": ["B"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"changed": 2, "skipped": [
            {"id": "stalls-B-2", "label": "Stalls, Row B, Seat 2", "status": "held"},
            {"id": "stalls-B-3", "label": "Stalls, Row B, Seat 3", "status": "sold"}]})
    );
    let statuses = app.seat_statuses(&event).await;
    let row_b: Vec<_> = (1..=4)
        .map(|n| statuses[&format!("stalls-B-{n}")].as_str())
        .collect();
    assert_eq!(row_b, ["not_for_sale", "held", "sold", "not_for_sale"]);

    let (status, body) = withdraw(&app, &event, json!({"seats": ["box-L-1"]})).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"changed": 1, "skipped": []}))
    );
}

#[tokio::test]
async fn repricing_leaves_held_and_sold_seats_alone() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    hold_directly(&app, &event, &["stalls-A-1"], Duration::minutes(2)).await;
    sell_directly(&app, &event, &["stalls-A-2"]).await;
    let (status, body) = put_allocations(
        &app,
        &event,
        json!({"allocations": [{"ticket_type": "standard", "section": "stalls", "rows": ["A"]}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["changed"], 2);
    let skipped: Vec<_> = body["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].clone(), s["status"].clone()))
        .collect();
    assert_eq!(
        skipped,
        [
            (json!("stalls-A-1"), json!("held")),
            (json!("stalls-A-2"), json!("sold"))
        ]
    );
    let types: Vec<(String, String)> = sqlx::query_as(
        "select seat_id, ticket_type from seat_allocation where seat_id like 'stalls-A-%' order by seat_id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        types,
        [
            ("stalls-A-1", "premium"),
            ("stalls-A-2", "premium"),
            ("stalls-A-3", "standard"),
            ("stalls-A-4", "standard")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
}

#[tokio::test]
async fn an_allocation_change_on_one_server_is_seen_by_another_at_once() {
    let first = spawn_app().await;
    let event = first.create_event().await;
    let url = first.database_url.clone();
    let admin = first.admin_token.clone();
    let second = spawn_app_with(move |s| {
        s.stores.database.url = url;
        s.server.admin_token = boxoffice_server::config::Secret::new(admin);
    })
    .await;
    // Both servers have the seat map cached.
    assert_eq!(
        first.seat_statuses(&event).await["circle-A-1"],
        "not_for_sale"
    );
    assert_eq!(
        second.seat_statuses(&event).await["circle-A-1"],
        "not_for_sale"
    );

    let (status, _) = put_allocations(
        &second,
        &event,
        json!({"allocations": [{"ticket_type": "standard", "section": "circle"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first.seat_statuses(&event).await["circle-A-1"], "available");

    let (status, _) = withdraw(&first, &event, json!({"section": "circle"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        second.seat_statuses(&event).await["circle-A-1"],
        "not_for_sale"
    );
}
