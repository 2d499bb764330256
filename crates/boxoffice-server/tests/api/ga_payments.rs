//! Standing places under the payment window: a booking is `pending_payment` until the
//! platform's server records its payment (`POST /v1/bookings/{id}/payment`), which issues
//! its tickets, or until its `pay_by`, when its places go back to the area. A buyer's own
//! orders and bookings (`GET /v1/me/orders`). On every store, with a race of payments and
//! rival bookings at the deadline.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{gala, spawn_app_on, spawn_race_app_on, As, TestApp};

/// An event with a payment window of `seconds` and a standing area `floor` of `capacity`
/// places at 30.00, `capacity` a booking at most.
async fn standing_event(app: &TestApp, seconds: u32, capacity: u32) -> String {
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(seconds);
    spec["ga_areas"] = json!([{"code": "floor", "name": "Standing floor", "capacity": capacity,
        "price_cents": 3000, "currency": "EUR", "max_per_booking": capacity}]);
    let (status, event) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}

async fn book(app: &TestApp, event: &str, who: &As, quantity: u32) -> (StatusCode, Value) {
    let body = json!({"area": "floor", "quantity": quantity});
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/bookings"),
        who,
        Some(&body),
    )
    .await
}

fn pay_request(app: &TestApp, booking: &str, who: &As, body: Value) -> reqwest::RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/bookings/{booking}/payment"),
        who,
    )
    .json(&body)
}

async fn pay(app: &TestApp, booking: &Value, reference: &str, who: &As) -> (StatusCode, Value) {
    let body = json!({"reference": reference, "amount_cents": booking["total_cents"]});
    let id = booking["booking_id"].as_str().unwrap();
    crate::helpers::read(pay_request(app, id, who, body).send().await.unwrap()).await
}

async fn tickets(app: &TestApp, booking: &Value, who: &As) -> Vec<Value> {
    let id = booking["booking_id"].as_str().unwrap();
    let (status, tickets) = app
        .send(
            Method::GET,
            &format!("/v1/bookings/{id}/tickets"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{tickets}");
    tickets["tickets"].as_array().unwrap().clone()
}

async fn mine(app: &TestApp, who: &As, event: Option<&str>) -> Vec<Value> {
    let path = match event {
        Some(event) => format!("/v1/me/orders?event={event}"),
        None => "/v1/me/orders".to_owned(),
    };
    let (status, mine) = app.send(Method::GET, &path, who, None).await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    mine["orders"].as_array().unwrap().clone()
}

/// Places left in the event's floor, straight from Postgres.
async fn left(app: &TestApp, event: &str) -> i32 {
    sqlx::query_scalar(
        "select seats_left from ga_area where event_id = $1::uuid and code = 'floor'",
    )
    .bind(event)
    .fetch_one(&app.db)
    .await
    .unwrap()
}

/// The outbox topics of `booking`, oldest first.
async fn topics(app: &TestApp, booking: &Value) -> Vec<String> {
    sqlx::query_scalar(
        "select topic from outbox where payload->>'booking_id' = $1 order by outbox_id",
    )
    .bind(booking["booking_id"].as_str().unwrap())
    .fetch_all(&app.db)
    .await
    .unwrap()
}

fn at(value: &Value) -> DateTime<Utc> {
    value.as_str().unwrap().parse().unwrap()
}

/// A booking under a window is pending, keeps its places, has no tickets until it is paid,
/// and is paid only by staff, for its total, once (a repeat with the same reference is the
/// same answer); then its tickets are there and the buyer's list says so.
async fn a_standing_booking_is_paid_and_then_has_its_tickets(store: Store) {
    let app = spawn_app_on(store).await;
    let event = standing_event(&app, 900, 10).await;
    let alice = app.buyer("alice");
    let (status, booking) = book(&app, &event, &alice, 3).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    assert_eq!(booking["status"], "pending_payment", "{booking}");
    let pay_by = at(&booking["pay_by"]);
    let window = (pay_by - Utc::now()).num_seconds();
    assert!((880..=900).contains(&window), "pay_by {pay_by}");
    assert_eq!(left(&app, &event).await, 7);
    assert!(tickets(&app, &booking, &alice).await.is_empty());

    let listed = mine(&app, &alice, Some(&event)).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (&listed[0]["kind"], &listed[0]["id"], &listed[0]["status"]),
        (
            &json!("booking"),
            &booking["booking_id"],
            &json!("pending_payment")
        )
    );
    assert_eq!(
        (
            &listed[0]["area"],
            &listed[0]["quantity"],
            &listed[0]["tickets"]
        ),
        (&json!("floor"), &json!(3), &json!(0))
    );
    assert_eq!(listed[0]["pay_by"], booking["pay_by"]);

    // Only staff record a payment, and only of the whole total.
    let (status, refused) = pay(&app, &booking, "psp_1", &alice).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let id = booking["booking_id"].as_str().unwrap();
    let short = json!({"reference": "psp_1", "amount_cents": 100});
    let (status, refused) = crate::helpers::read(
        pay_request(&app, id, &As::Admin, short)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert!(tickets(&app, &booking, &alice).await.is_empty());

    let (status, paid) = pay(&app, &booking, "psp_1", &As::Admin).await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    assert_eq!(
        (&paid["status"], &paid["payment_reference"]),
        (&json!("paid"), &json!("psp_1"))
    );
    assert!(paid["paid_at"].is_string(), "{paid}");
    let issued = tickets(&app, &booking, &alice).await;
    assert_eq!(issued.len(), 3, "{issued:?}");
    assert!(issued.iter().all(|t| t["status"] == "valid"), "{issued:?}");
    let (status, again) = pay(&app, &booking, "psp_1", &As::Admin).await;
    assert_eq!((status, &again["status"]), (StatusCode::OK, &json!("paid")));
    let (status, other) = pay(&app, &booking, "psp_2", &As::Admin).await;
    assert_eq!(status, StatusCode::CONFLICT, "{other}");
    assert_eq!(other["code"], "already_paid");
    assert_eq!(tickets(&app, &booking, &alice).await.len(), 3);
    assert_eq!(left(&app, &event).await, 7);
    assert_eq!(
        topics(&app, &booking).await,
        ["booking.created", "booking.paid"]
    );
    let listed = mine(&app, &alice, Some(&event)).await;
    assert_eq!(
        (
            &listed[0]["status"],
            &listed[0]["tickets"],
            listed[0].get("pay_by")
        ),
        (&json!("paid"), &json!(3), None)
    );
    // Another buyer sees none of it.
    assert!(mine(&app, &app.buyer("bob"), Some(&event)).await.is_empty());

    // Without a window a booking is paid at once, with its tickets, and nothing is left to pay.
    let at_once = app.create_event().await;
    let (status, booking) = book(&app, &at_once, &alice, 2).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    assert_eq!(booking["status"], "paid");
    assert!(booking.get("pay_by").is_none(), "{booking}");
    assert_eq!(tickets(&app, &booking, &alice).await.len(), 2);
    let (status, refused) = pay(&app, &booking, "psp_3", &As::Admin).await;
    assert_eq!(
        (status, &refused["code"]),
        (StatusCode::CONFLICT, &json!("already_paid"))
    );
    // The buyer's list over every event, newest first.
    let everything = mine(&app, &alice, None).await;
    let ids: Vec<&Value> = everything.iter().map(|o| &o["id"]).collect();
    assert_eq!(ids, [&booking["booking_id"], &listed[0]["id"]]);
}

/// An unpaid booking's places come back at its `pay_by`: to the next booking at once
/// (under the area's lock) or by the sweep; its payment is then refused, and it reads
/// expired everywhere.
async fn an_unpaid_booking_expires_and_its_places_sell_again(store: Store) {
    let app = spawn_app_on(store).await;
    let event = standing_event(&app, 1, 4).await;
    let (alice, bob, carol) = (app.buyer("alice"), app.buyer("bob"), app.buyer("carol"));
    let (status, first) = book(&app, &event, &alice, 4).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, refused) = book(&app, &event, &bob, 1).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(
        (&refused["code"], &refused["left"]),
        (&json!("sold_out"), &json!(0))
    );

    // The sweep returns the places of a booking nobody paid.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while left(&app, &event).await != 4 {
        assert!(
            std::time::Instant::now() < deadline,
            "the sweep never returned the places"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        topics(&app, &first).await,
        ["booking.created", "booking.expired"]
    );
    let (status, closed) = pay(&app, &first, "psp_late", &As::Admin).await;
    assert_eq!(
        (status, &closed["code"]),
        (StatusCode::CONFLICT, &json!("payment_window_closed"))
    );
    assert_eq!(
        mine(&app, &alice, Some(&event)).await[0]["status"],
        "expired"
    );
    assert!(tickets(&app, &first, &alice).await.is_empty());

    // A booking at the deadline gets the places of one that lapsed, sweep or no sweep.
    let (status, second) = book(&app, &event, &bob, 4).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    let wait = at(&second["pay_by"]) - Utc::now() + chrono::Duration::milliseconds(20);
    tokio::time::sleep(wait.to_std().unwrap_or_default()).await;
    let (status, third) = book(&app, &event, &carol, 4).await;
    assert_eq!(status, StatusCode::CREATED, "{third}");
    assert_eq!(mine(&app, &bob, Some(&event)).await[0]["status"], "expired");
    let (status, cancelled) = app
        .send(
            Method::POST,
            &format!(
                "/v1/bookings/{}/cancel",
                second["booking_id"].as_str().unwrap()
            ),
            &bob,
            None,
        )
        .await;
    assert_eq!(
        (status, &cancelled["status"]),
        (StatusCode::OK, &json!("expired"))
    );
    // Carol's pending booking holds all four; a cancelled pending booking gives them back.
    assert_eq!(left(&app, &event).await, 0);
    let (status, cancelled) = app
        .send(
            Method::POST,
            &format!(
                "/v1/bookings/{}/cancel",
                third["booking_id"].as_str().unwrap()
            ),
            &carol,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(left(&app, &event).await, 4);
    let revoked: i64 = sqlx::query_scalar("select count(*) from revoked_ticket")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(revoked, 0, "no ticket was ever issued, so none is revoked");
}

/// Twelve pending bookings of one place each, each paid at a moment from 300 ms before its
/// deadline to 300 ms after, while three rivals each book a place around that deadline:
/// every booking ends paid with its ticket or expired without one, never both; the rivals
/// get no more places than expired; and the area's places always add up.
async fn payments_at_the_deadline_either_pay_or_expire_never_both(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = standing_event(&app, 2, 12).await;
    let mut bookings = Vec::new();
    for i in 0..12 {
        let (status, booking) = book(&app, &event, &app.buyer(&format!("buyer-{i}")), 1).await;
        assert_eq!(status, StatusCode::CREATED, "{booking}");
        bookings.push(booking);
    }
    let mut calls = Vec::new();
    for (i, booking) in bookings.iter().enumerate() {
        let deadline = at(&booking["pay_by"]);
        let offset = -300 + 600 * i as i64 / 11;
        let body = json!({"reference": format!("psp_{i}"), "amount_cents": 3000});
        let id = booking["booking_id"].as_str().unwrap();
        calls.push((
            deadline + chrono::Duration::milliseconds(offset),
            pay_request(&app, id, &As::Admin, body),
        ));
        for (r, rival_offset) in [-5i64, 5, 25].into_iter().enumerate() {
            let rival = app.buyer(&format!("rival-{i}-{r}"));
            calls.push((
                deadline + chrono::Duration::milliseconds(offset + rival_offset),
                app.request(
                    Method::POST,
                    &format!("/v1/events/{event}/bookings"),
                    &rival,
                )
                .json(&json!({"area": "floor", "quantity": 1})),
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
    let (mut paid, mut expired, mut rivals_won) = (0, 0, 0);
    for (i, booking) in bookings.iter().enumerate() {
        let payment = &answers[i * 4];
        let issued: i64 =
            sqlx::query_scalar("select count(*) from ga_ticket where booking_id = $1::uuid")
                .bind(booking["booking_id"].as_str().unwrap())
                .fetch_one(&app.db)
                .await
                .unwrap();
        match payment.0 {
            StatusCode::OK => {
                paid += 1;
                assert_eq!(
                    (payment.1["status"].as_str(), issued),
                    (Some("paid"), 1),
                    "booking {i}"
                );
            }
            StatusCode::CONFLICT => {
                expired += 1;
                assert_eq!(payment.1["code"], "payment_window_closed", "booking {i}");
                assert_eq!(issued, 0, "booking {i}");
            }
            other => panic!("booking {i}: payment answered {other}: {payment:?}"),
        }
        for (status, body) in &answers[i * 4 + 1..i * 4 + 4] {
            match *status {
                StatusCode::CREATED => rivals_won += 1,
                StatusCode::CONFLICT => assert_eq!(body["code"], "sold_out", "{body}"),
                other => panic!("booking {i}: a rival answered {other}: {body}"),
            }
        }
    }
    assert_eq!(paid + expired, 12);
    assert!(
        paid > 0 && expired > 0,
        "the payments spanned the deadline: {paid} paid, {expired} expired"
    );
    assert!(
        rivals_won <= expired,
        "{rivals_won} rivals won, {expired} expired"
    );
    // What the area has left and what its live bookings keep is always its capacity.
    let (kept, statuses): (i64, Vec<String>) = sqlx::query_as(
        "select coalesce(sum(quantity) filter (where status in ('confirmed', 'pending_payment')), 0),
                array_agg(distinct status)
           from ga_booking where event_id = $1::uuid",
    )
    .bind(&event)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(left(&app, &event).await as i64 + kept, 12, "{statuses:?}");
    let confirmed: i64 = sqlx::query_scalar(
        "select count(*) from ga_booking where event_id = $1::uuid and status = 'confirmed'",
    )
    .bind(&event)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(confirmed, paid as i64);
}

/// A buyer's list holds their seat orders and standing bookings of the event, newest first,
/// each with what a page needs to show it: status, `pay_by` while pending, seats with
/// labels or the area and places, the total and the tickets it has.
async fn a_buyer_lists_their_own_orders_and_bookings(store: Store) {
    let app = spawn_app_on(store).await;
    let event = standing_event(&app, 900, 10).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let order = app
        .order_seats(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(order["status"], "pending_payment", "{order}");
    let (status, booking) = book(&app, &event, &alice, 2).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    app.order_seats(&event, &bob, &["stalls-C-1"]).await;

    let listed = mine(&app, &alice, Some(&event)).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0]["id"], booking["booking_id"], "newest first");
    assert_eq!(listed[1]["id"], order["order_id"]);
    let o = &listed[1];
    assert_eq!(
        (&o["kind"], &o["status"], &o["pay_by"], &o["tickets"]),
        (
            &json!("order"),
            &json!("pending_payment"),
            &order["pay_by"],
            &json!(0)
        )
    );
    let labels: Vec<&Value> = o["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["label"])
        .collect();
    assert_eq!(
        labels,
        [
            &json!("Stalls, Row B, Seat 1"),
            &json!("Stalls, Row B, Seat 2")
        ]
    );
    assert_eq!(
        (&o["total_cents"], &o["currency"]),
        (&order["total_cents"], &json!("EUR"))
    );

    let body = json!({"reference": "psp_o", "amount_cents": order["total_cents"]});
    let (status, paid) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/payment", order["order_id"].as_str().unwrap()),
            &As::Admin,
            Some(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    let listed = mine(&app, &alice, Some(&event)).await;
    assert_eq!(
        (
            &listed[1]["status"],
            &listed[1]["tickets"],
            listed[1].get("pay_by")
        ),
        (&json!("paid"), &json!(2), None)
    );
    // Another event's orders are not this event's; bad queries and staff keys are refused.
    let other = app.create_event().await;
    assert!(mine(&app, &alice, Some(&other)).await.is_empty());
    assert_eq!(mine(&app, &alice, None).await.len(), 2);
    let (status, problem) = app
        .send(Method::GET, "/v1/me/orders?event=nope", &alice, None)
        .await;
    assert!(status.is_client_error(), "{status} {problem}");
    let (status, _) = app
        .send(Method::GET, "/v1/me/orders", &As::Nobody, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

crate::helpers::stores::conformance!(
    a_standing_booking_is_paid_and_then_has_its_tickets,
    an_unpaid_booking_expires_and_its_places_sell_again,
    payments_at_the_deadline_either_pay_or_expire_never_both,
    a_buyer_lists_their_own_orders_and_bookings,
);
