//! The reads of the organizer console: an event's orders page by page and searched, its
//! sales as CSV, its report. Every figure is checked against sales made in the test.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{buy, sell_directly, spawn_app, As, TestApp};

async fn admin_get(app: &TestApp, path: &str) -> (StatusCode, Value) {
    app.send(Method::GET, path, &As::Admin, None).await
}

/// The sale every test here reads: alice buys two premium seats, bob one standard, carol
/// holds one, dave buys a box seat and the admin cancels his order, erin books three
/// standing places.
async fn a_sale(app: &TestApp) -> (String, Vec<Value>) {
    let event = app.create_event().await;
    let alice = buy(app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let bob = buy(app, &event, "bob", &["stalls-B-1"]).await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let dave = buy(app, &event, "dave", &["box-L-1"]).await;
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/cancel", dave["order_id"].as_str().unwrap()),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &app.buyer("erin"),
            Some(&json!({"area": "floor", "quantity": 3})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    (event, vec![alice, bob, dave, booking])
}

#[tokio::test]
async fn the_report_counts_a_sale_exactly() {
    let app = spawn_app().await;
    let (event, _) = a_sale(&app).await;
    let (status, report) = admin_get(&app, &format!("/v1/events/{event}/report")).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    // 17 seats: stalls 12, circle 3 (held back), box 2.
    assert_eq!(
        [
            &report["sold"],
            &report["held"],
            &report["available"],
            &report["not_for_sale"]
        ],
        [&json!(3), &json!(1), &json!(10), &json!(3)]
    );
    // Two premium seats, one standard, three standing places; not dave's cancelled order.
    assert_eq!(report["revenue_cents"], 2 * 9000 + 4500 + 3 * 3000);
    assert_eq!(report["currency"], "EUR");
    assert_eq!(
        report["by_section"],
        json!([
            {"section": "stalls", "sold": 3, "held": 1, "available": 8, "revenue_cents": 22500},
            {"section": "circle", "sold": 0, "held": 0, "available": 0, "revenue_cents": 0},
            {"section": "box", "sold": 0, "held": 0, "available": 2, "revenue_cents": 0}
        ])
    );
    assert_eq!(
        report["by_ticket_type"],
        json!([
            {"ticket_type": "standard", "sold": 1, "revenue_cents": 4500},
            {"ticket_type": "premium", "sold": 2, "revenue_cents": 18000}
        ])
    );
    assert_eq!(
        report["ga"],
        json!([{"code": "floor", "capacity": 50, "left": 47, "revenue_cents": 9000}])
    );
    let minutes = report["sales_per_minute"].as_array().unwrap();
    assert_eq!(minutes.len(), 60);
    let seats: u64 = minutes.iter().map(|m| m["seats"].as_u64().unwrap()).sum();
    assert_eq!(seats, 3, "{minutes:?}");
    assert!(minutes
        .windows(2)
        .all(|w| w[0]["minute"].as_str() < w[1]["minute"].as_str()));

    // Only the admin reads it; an unknown event is 404.
    let (status, _) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/report"),
            &app.buyer("alice"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = admin_get(
        &app,
        "/v1/events/00000000-0000-4000-8000-000000000000/report",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The ids of a page's orders, and its next cursor.
fn page(body: &Value) -> (Vec<String>, Option<String>) {
    let ids = body["orders"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {body}"))
        .iter()
        .map(|o| o["order_id"].as_str().unwrap().to_owned())
        .collect();
    (ids, body["next_cursor"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn orders_come_newest_first_a_page_at_a_time_and_are_found_by_id_buyer_or_seat() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let seats = [
        "stalls-A-1",
        "stalls-A-2",
        "stalls-A-3",
        "stalls-B-1",
        "stalls-B-2",
        "stalls-B-3",
        "stalls-C-4",
    ];
    let mut bought = Vec::new();
    for (i, seat) in seats.iter().enumerate() {
        let order = buy(&app, &event, &format!("buyer-{i}"), &[seat]).await;
        bought.push(order["order_id"].as_str().unwrap().to_owned());
    }
    let newest_first: Vec<String> = bought.iter().rev().cloned().collect();
    let orders = format!("/v1/events/{event}/orders");
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("{orders}?limit=3&cursor={c}"),
            None => format!("{orders}?limit=3"),
        };
        let (status, body) = admin_get(&app, &path).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (ids, next) = page(&body);
        assert!(ids.len() <= 3);
        seen.extend(ids);
        pages += 1;
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, newest_first);

    // Each order carries its seats with their labels.
    let (_, first) = admin_get(&app, &format!("{orders}?limit=1")).await;
    assert_eq!(
        first["orders"][0]["seats"],
        json!([{"id": "stalls-C-4", "label": "Stalls, Row C, Seat 4", "ticket_type": "standard", "price_cents": 4500}])
    );
    assert_eq!(first["orders"][0]["user_id"], "buyer-6");

    let found = |q: &str| {
        let path = format!("{orders}?q={}", urlencode(q));
        let app = &app;
        async move {
            let (status, body) = admin_get(app, &path).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            page(&body).0
        }
    };
    assert_eq!(found(&bought[2]).await, [bought[2].clone()]);
    assert_eq!(found(&bought[2].to_uppercase()).await, [bought[2].clone()]);
    assert_eq!(found("buyer-4").await, [bought[4].clone()]);
    assert_eq!(found("Row B, Seat 2").await, [bought[4].clone()]);
    assert_eq!(
        found("row b").await,
        [bought[5].clone(), bought[4].clone(), bought[3].clone()]
    );
    assert_eq!(found("stalls-A-3").await, [bought[2].clone()]);
    assert!(found("nobody").await.is_empty());

    // By status.
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/cancel", bought[0]),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, cancelled) = admin_get(&app, &format!("{orders}?status=cancelled")).await;
    assert_eq!(page(&cancelled).0, [bought[0].clone()]);
    let (_, confirmed) = admin_get(&app, &format!("{orders}?status=paid")).await;
    assert_eq!(page(&confirmed).0.len(), 6);
    let (_, older) = admin_get(&app, &format!("{orders}?status=confirmed")).await;
    assert_eq!(page(&older).0.len(), 6, "confirmed: the older name of paid");

    // What it refuses.
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=many", "limit"),
        ("status=sold", "status"),
        ("cursor=yesterday", "cursor"),
    ] {
        let (status, problem) = admin_get(&app, &format!("{orders}?{query}")).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{query}: {problem}"
        );
        assert_eq!(problem["errors"][0]["field"], field, "{query}: {problem}");
    }
    let (status, _) = app
        .send(Method::GET, &orders, &app.buyer("buyer-1"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app.send(Method::GET, &orders, &As::Nobody, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn csv_of(app: &TestApp, event: &str) -> (String, Vec<csv::StringRecord>) {
    let response = app
        .request(
            Method::GET,
            &format!("/v1/events/{event}/orders.csv"),
            &As::Admin,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let text = response.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(
        header,
        "order_id,created_at,user_id,status,seat_id,label,ticket_type,price_cents,currency"
    );
    (kind, reader.records().map(Result::unwrap).collect())
}

#[tokio::test]
async fn the_csv_has_a_line_per_seat_sold_and_per_booking() {
    let app = spawn_app().await;
    let (event, sold) = a_sale(&app).await;
    let (kind, lines) = csv_of(&app, &event).await;
    assert!(kind.starts_with("text/csv"), "{kind}");
    let lines: Vec<Vec<&str>> = lines.iter().map(|r| r.iter().collect()).collect();
    let [alice, bob, dave, booking] = &sold[..] else {
        unreachable!()
    };
    let id = |v: &Value, key: &str| v[key].as_str().unwrap().to_owned();
    let expected = [
        (
            id(alice, "order_id"),
            "alice",
            "paid",
            "stalls-A-1",
            "Stalls, Row A, Seat 1",
            "premium",
            "9000",
        ),
        (
            id(alice, "order_id"),
            "alice",
            "paid",
            "stalls-A-2",
            "Stalls, Row A, Seat 2",
            "premium",
            "9000",
        ),
        (
            id(bob, "order_id"),
            "bob",
            "paid",
            "stalls-B-1",
            "Stalls, Row B, Seat 1",
            "standard",
            "4500",
        ),
        (
            id(dave, "order_id"),
            "dave",
            "cancelled",
            "box-L-1",
            "Box, Row L, Seat 1",
            "premium",
            "9000",
        ),
        (
            id(booking, "booking_id"),
            "erin",
            "paid",
            "floor",
            "Standing floor × 3",
            "area",
            "9000",
        ),
    ];
    assert_eq!(lines.len(), expected.len(), "{lines:?}");
    for (line, want) in lines.iter().zip(&expected) {
        assert_eq!(
            (line[0], line[2], line[3], line[4], line[5], line[6], line[7], line[8]),
            (
                want.0.as_str(),
                want.1,
                want.2,
                want.3,
                want.4,
                want.5,
                want.6,
                "EUR"
            ),
        );
        assert!(
            chrono::DateTime::parse_from_rfc3339(line[1]).is_ok(),
            "{}",
            line[1]
        );
    }
}

#[tokio::test]
async fn a_csv_of_more_lines_than_a_page_has_every_line_once() {
    let app = spawn_app().await;
    let event = crate::helpers::big_event(&app, 50, 100, 8).await;
    // 5,000 seats in 500 orders of ten: more than two pages of lines.
    let seats: Vec<String> = (0..50)
        .flat_map(|r| (1..=100).map(move |n| format!("floor-R{r}-{n}")))
        .collect();
    for order in seats.chunks(10) {
        let order: Vec<&str> = order.iter().map(String::as_str).collect();
        sell_directly(&app, &event, &order).await;
    }
    let (_, lines) = csv_of(&app, &event).await;
    assert_eq!(lines.len(), 5_000);
    let listed: BTreeSet<&str> = lines.iter().map(|l| &l[4]).collect();
    assert_eq!(listed.len(), 5_000, "every seat once");
}

#[tokio::test]
async fn the_report_shows_the_waiting_rooms_line() {
    let app = spawn_app().await;
    let event = crate::helpers::event_with_queue(&app, chrono::Duration::minutes(10), 60).await;
    for who in ["ann", "ben", "cid"] {
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/v1/events/{event}/queue"),
                &app.buyer(who),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, report) = admin_get(&app, &format!("/v1/events/{event}/report")).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        report["queue"],
        json!({"waiting": 3, "admitted": 0, "admitting_per_minute": 60, "slowed_because": null})
    );
}
