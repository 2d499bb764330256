//! The payment window (`payment_window_seconds`): checkout makes a `pending_payment` order
//! whose seats stay the buyer's until `pay_by`; the platform's server records the payment
//! (`POST /v1/orders/{id}/payment`) or the order expires and its seats sell again. On every
//! store, with a race of payments and rival holds at the deadline.

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::spawn_race_app_on;
use crate::helpers::stores::Store;
use crate::helpers::{gala, held, spawn_app_on, As, TestApp};

/// The standard test event with a payment window of `seconds`.
async fn event_with_window(app: &TestApp, seconds: u32) -> String {
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(seconds);
    let (status, event) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}

/// A pending order of `seats` by `who`.
async fn pending_order(app: &TestApp, event: &str, who: &As, seats: &[&str]) -> Value {
    let order = app.order_seats(event, who, seats).await;
    assert_eq!(order["status"], "pending_payment", "{order}");
    order
}

fn pay_request(app: &TestApp, order: &str, who: &As, body: Value) -> reqwest::RequestBuilder {
    app.request(Method::POST, &format!("/v1/orders/{order}/payment"), who)
        .json(&body)
}

async fn pay(app: &TestApp, order: &Value, reference: &str) -> (StatusCode, Value) {
    let body = json!({"reference": reference, "amount_cents": order["total_cents"]});
    let id = order["order_id"].as_str().unwrap();
    crate::helpers::read(pay_request(app, id, &As::Admin, body).send().await.unwrap()).await
}

async fn read_order(app: &TestApp, order: &Value) -> Value {
    let id = order["order_id"].as_str().unwrap();
    let (status, read) = app
        .send(Method::GET, &format!("/v1/orders/{id}"), &As::Admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    read
}

/// The outbox topics of `order`, oldest first.
async fn topics(app: &TestApp, order: &Value) -> Vec<String> {
    sqlx::query_scalar(
        "select topic from outbox where payload->>'order_id' = $1 order by outbox_id",
    )
    .bind(order["order_id"].as_str().unwrap())
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// `POST /v1/orders/{id}/cancel` as `who`.
async fn cancel(app: &TestApp, id: &str, who: &As) -> (StatusCode, Value) {
    app.cancel_order(id, who).await
}

fn at(value: &Value) -> DateTime<Utc> {
    value.as_str().unwrap().parse().unwrap()
}

async fn a_window_keeps_the_seats_until_the_order_is_paid(store: Store) {
    let app = spawn_app_on(store).await;
    let event = event_with_window(&app, 600).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();
    let (status, order) = app.post_orders(&event, &alice, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(order["status"], "pending_payment");
    let left = at(&order["pay_by"]) - Utc::now();
    assert!(
        left > chrono::Duration::seconds(590) && left <= chrono::Duration::seconds(600),
        "{left}"
    );

    // Everyone else sees the seats held until pay_by, and can neither hold nor buy them.
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let b1 = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "stalls-B-1")
        .unwrap();
    assert_eq!(
        (b1["status"].as_str(), at(&b1["held_until"])),
        (Some("held"), at(&order["pay_by"]))
    );
    let (status, problem) = app.post_holds(&event, &bob, &["stalls-B-2"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    assert_eq!(held(&app, &event).await, ["stalls-B-1", "stalls-B-2"]);
    // The hold's token reaches nothing more; checking out again finds the order.
    let (status, _) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .hold_call(Method::POST, &event, token, "/extend", &alice)
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = app
        .hold_call(Method::DELETE, &event, token, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        held(&app, &event).await,
        ["stalls-B-1", "stalls-B-2"],
        "the order keeps them"
    );
    let (status, again) = app.post_orders(&event, &alice, token).await;
    assert_eq!(
        (status, &again["order_id"]),
        (StatusCode::OK, &order["order_id"])
    );

    // Only the platform's server marks it paid, for the total.
    let id = order["order_id"].as_str().unwrap();
    let body = json!({"reference": "psp_1", "amount_cents": 9000});
    let (status, _) = crate::helpers::read(
        pay_request(&app, id, &alice, body.clone())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a buyer can never mark an order paid"
    );
    for (wrong, field) in [
        (
            json!({"reference": "psp_1", "amount_cents": 8999}),
            "amount_cents",
        ),
        (json!({"reference": " ", "amount_cents": 9000}), "reference"),
    ] {
        let (status, problem) = crate::helpers::read(
            pay_request(&app, id, &As::Admin, wrong)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, problem["errors"][0]["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{problem}"
        );
    }
    assert_eq!(
        read_order(&app, &order).await["status"],
        "pending_payment",
        "nothing changed"
    );

    let (status, paid) = pay(&app, &order, "psp_1").await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    assert_eq!(
        (paid["status"].as_str(), paid["payment_reference"].as_str()),
        (Some("paid"), Some("psp_1"))
    );
    assert!(at(&paid["paid_at"]) <= Utc::now());
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-B-1"].as_str(),
            statuses["stalls-B-2"].as_str()
        ),
        ("sold", "sold")
    );
    assert_eq!(held(&app, &event).await, Vec::<String>::new());
    let (status, repeat) = pay(&app, &order, "psp_1").await;
    assert_eq!(
        (status, &repeat),
        (StatusCode::OK, &paid),
        "the same reference: the same order"
    );
    let typed = app
        .typed()
        .pay_order(id.parse().unwrap(), "psp_1", 9000)
        .await
        .unwrap();
    assert_eq!(
        typed.payment_reference.as_deref(),
        Some("psp_1"),
        "the client crate reads it"
    );
    let (status, problem) = pay(&app, &order, "psp_2").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_paid"))
    );
    assert_eq!(read_order(&app, &order).await, paid);
    assert_eq!(topics(&app, &order).await, ["order.pending", "order.paid"]);
    let sold: i64 = sqlx::query_scalar(
        "select count(*) from order_seat where order_id = $1::uuid and not released",
    )
    .bind(id)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(sold, 2);
}

async fn an_unpaid_order_expires_at_its_deadline_and_its_seats_sell_again(store: Store) {
    let app = spawn_app_on(store).await;
    let event = event_with_window(&app, 1).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let order = pending_order(&app, &event, &alice, &["stalls-C-1", "stalls-C-2"]).await;
    let wait = at(&order["pay_by"]) - Utc::now() + chrono::Duration::milliseconds(50);
    tokio::time::sleep(wait.to_std().unwrap_or_default()).await;

    assert_eq!(
        read_order(&app, &order).await["status"],
        "expired",
        "read as expired at once"
    );
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-C-1"].as_str(),
            statuses["stalls-C-2"].as_str()
        ),
        ("available", "available")
    );
    let (status, hold) = app.post_holds(&event, &bob, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, problem) = pay(&app, &order, "psp_late").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("payment_window_closed")),
        "{problem}"
    );
    let (status, bought) = app
        .post_orders(&event, &bob, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(
        (status, bought["status"].as_str()),
        (StatusCode::CREATED, Some("pending_payment"))
    );
    let (status, paid) = pay(&app, &bought, "psp_bob").await;
    assert_eq!(
        (status, paid["status"].as_str()),
        (StatusCode::OK, Some("paid")),
        "{paid}"
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "sold");

    // The sweep records it once; cancelling it changes nothing.
    boxoffice_store::sales::orders::expire_pending(&app.db)
        .await
        .unwrap();
    boxoffice_store::sales::orders::expire_pending(&app.db)
        .await
        .unwrap();
    assert_eq!(
        topics(&app, &order).await,
        ["order.pending", "order.expired"]
    );
    let id = order["order_id"].as_str().unwrap();
    let (status, cancelled) = cancel(&app, id, &alice).await;
    assert_eq!(
        (status, cancelled["status"].as_str()),
        (StatusCode::OK, Some("expired"))
    );
    assert_eq!(
        app.seat_statuses(&event).await["stalls-C-1"],
        "sold",
        "bob's seat stays his"
    );
    let (_, page) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/orders?status=expired"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(page["orders"].as_array().unwrap().len(), 1, "{page}");
}

async fn a_pending_order_is_cancelled_and_its_seats_are_free_at_once(store: Store) {
    let app = spawn_app_on(store).await;
    let event = event_with_window(&app, 600).await;
    let alice = app.buyer("alice");
    let order = pending_order(&app, &event, &alice, &["stalls-A-3"]).await;
    let id = order["order_id"].as_str().unwrap();
    let (status, cancelled) = cancel(&app, id, &alice).await;
    assert_eq!(
        (status, cancelled["status"].as_str()),
        (StatusCode::OK, Some("cancelled"))
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-A-3"], "available");
    assert_eq!(held(&app, &event).await, Vec::<String>::new());
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-A-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = pay(&app, &order, "psp_1").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("payment_window_closed"))
    );
    assert_eq!(
        topics(&app, &order).await,
        ["order.pending", "order.cancelled"]
    );
}

/// Twelve pending orders, each paid at a moment from 300 ms before its deadline to 300 ms
/// after, while three rivals each try to hold its seat around the deadline: every order
/// ends paid with its seat sold to it and no rival holding it, or expired with its seat
/// not sold to it; never both.
async fn payments_at_the_deadline_either_sell_or_expire_never_both(store: Store) {
    let app = spawn_race_app_on(store).await;
    let (_, venue) = app
        .post_venues(
            &json!({"name": "Arena", "sections": [{"id": "floor", "name": "Floor",
            "rows": [{"label": "R0", "seats": 12}]}]}),
        )
        .await;
    let (status, created) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Deadline", "starts_at": "2030-01-01T20:00:00Z",
            "max_seats_per_user": 4, "payment_window_seconds": 2,
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "floor"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    let mut orders = Vec::new();
    for i in 0..12 {
        let seat = format!("floor-R0-{}", i + 1);
        orders.push((
            seat.clone(),
            pending_order(&app, &event, &app.buyer(&format!("buyer-{i}")), &[&seat]).await,
        ));
    }
    // Each order's payment and its rivals' holds, at their moments by the deadline.
    let mut calls = Vec::new();
    for (i, (seat, order)) in orders.iter().enumerate() {
        let deadline = at(&order["pay_by"]);
        let offset = -300 + 600 * i as i64 / 11;
        let body = json!({"reference": format!("psp_{i}"), "amount_cents": 1000});
        calls.push((
            deadline + chrono::Duration::milliseconds(offset),
            pay_request(&app, order["order_id"].as_str().unwrap(), &As::Admin, body),
        ));
        for (r, rival_offset) in [-5i64, 5, 25].into_iter().enumerate() {
            let rival = app.buyer(&format!("rival-{i}-{r}"));
            calls.push((
                deadline + chrono::Duration::milliseconds(offset + rival_offset),
                app.request(Method::POST, &format!("/v1/events/{event}/holds"), &rival)
                    .json(&json!({"seats": [seat]})),
            ));
        }
    }
    let answers: Vec<(StatusCode, Value)> =
        futures::future::join_all(calls.into_iter().map(|(when, request)| async move {
            let wait = when - Utc::now();
            tokio::time::sleep(wait.to_std().unwrap_or_default()).await;
            crate::helpers::read(request.send().await.unwrap()).await
        }))
        .await;
    let (mut paid, mut expired) = (0, 0);
    for (i, (seat, order)) in orders.iter().enumerate() {
        let payment = &answers[i * 4];
        let rivals: Vec<&(StatusCode, Value)> = answers[i * 4 + 1..i * 4 + 4].iter().collect();
        let got = rivals
            .iter()
            .filter(|(s, _)| *s == StatusCode::CREATED)
            .count();
        let read = read_order(&app, order).await;
        let sold: bool = sqlx::query_scalar(
            "select exists (select 1 from order_seat where order_id = $1::uuid and seat_id = $2 and not released)",
        )
        .bind(order["order_id"].as_str().unwrap())
        .bind(seat)
        .fetch_one(&app.db)
        .await
        .unwrap();
        match payment.0 {
            StatusCode::OK => {
                paid += 1;
                assert_eq!(
                    (read["status"].as_str(), sold, got),
                    (Some("paid"), true, 0),
                    "order {i}: {payment:?} {rivals:?}"
                );
                assert_eq!(app.seat_statuses(&event).await[seat], "sold", "order {i}");
            }
            StatusCode::CONFLICT => {
                expired += 1;
                assert_eq!(payment.1["code"], "payment_window_closed", "order {i}");
                assert_eq!(
                    (read["status"].as_str(), sold),
                    (Some("expired"), false),
                    "order {i}: {rivals:?}"
                );
                assert!(got <= 1, "order {i}: one rival at most: {rivals:?}");
            }
            other => panic!("order {i}: payment answered {other}: {payment:?}"),
        }
        assert!(
            rivals
                .iter()
                .all(|(s, _)| *s == StatusCode::CREATED || *s == StatusCode::CONFLICT),
            "order {i}: {rivals:?}"
        );
    }
    assert_eq!(paid + expired, 12);
    assert!(
        paid > 0 && expired > 0,
        "the payments spanned the deadline: {paid} paid, {expired} expired"
    );
    // No seat is sold twice, whatever happened.
    let twice: i64 = sqlx::query_scalar(
        "select count(*) from (select seat_id from order_seat where event_id = $1::uuid and not released
                                group by seat_id having count(*) > 1) d",
    )
    .bind(&event)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(twice, 0);
}

crate::helpers::stores::conformance!(
    a_window_keeps_the_seats_until_the_order_is_paid,
    an_unpaid_order_expires_at_its_deadline_and_its_seats_sell_again,
    a_pending_order_is_cancelled_and_its_seats_are_free_at_once,
    payments_at_the_deadline_either_sell_or_expire_never_both,
);
