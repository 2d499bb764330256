//! The waiting list: buyers join an event's line, and seats that come back (an order
//! cancelled, a payment window lapsed, a channel released, an offer not bought in time) go
//! to the first entry they can serve as a hold of that buyer's, never to anyone else
//! first, on every store. (A long file: each way seats come back, on every store, and
//! the buyer's page.)

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{gala, spawn_app_on, spawn_app_with, As, TestApp};
use crate::helpers::{race, race_riding_out, tally};

async fn join(app: &TestApp, event: &str, who: &As, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/waitlist"),
        who,
        Some(&body),
    )
    .await
}

async fn entry(app: &TestApp, event: &str, who: &As, entry: &str) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/events/{event}/waitlist/{entry}"),
        who,
        None,
    )
    .await
}

async fn leave(app: &TestApp, event: &str, who: &As, entry: &str) -> (StatusCode, Value) {
    app.send(
        Method::DELETE,
        &format!("/v1/events/{event}/waitlist/{entry}"),
        who,
        None,
    )
    .await
}

/// Joins `who` for `quantity` seats: the entry's id.
async fn waiting(app: &TestApp, event: &str, who: &As, quantity: u32) -> String {
    let (status, body) = join(app, event, who, json!({"quantity": quantity})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["entry_id"].as_str().unwrap().to_owned()
}

/// `who` holds and buys `seats`: the order's id.
async fn bought(app: &TestApp, event: &str, who: &As, seats: &[&str]) -> String {
    let order = app.order_seats(event, who, seats).await;
    order["order_id"].as_str().unwrap().to_owned()
}

async fn cancel(app: &TestApp, order: &str) -> StatusCode {
    app.cancel_order(order, &As::Admin).await.0
}

fn offered_seats(entry: &Value) -> Vec<&str> {
    entry["offer"]["seats"]
        .as_array()
        .unwrap_or_else(|| panic!("an offer: {entry}"))
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn buyers_join_the_line_in_order_and_leave_it() {
    let app = spawn_app_on(Store::Postgres).await;
    let event = app.create_event().await;
    let (ann, bob) = (app.buyer("ann"), app.buyer("bob"));
    let (status, first) = join(&app, &event, &ann, json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    assert_eq!(
        (
            first["status"].as_str(),
            first["position"].as_u64(),
            &first["offer"]
        ),
        (Some("waiting"), Some(1), &Value::Null)
    );
    let (_, second) = join(
        &app,
        &event,
        &bob,
        json!({"quantity": 1, "ticket_type": "premium"}),
    )
    .await;
    assert_eq!(second["position"], 2);
    assert_eq!(second["ticket_type"], "premium");
    // Joining again answers the same entry.
    let (status, again) = join(&app, &event, &ann, json!({"quantity": 3})).await;
    assert_eq!(
        (status, &again["entry_id"], &again["quantity"]),
        (StatusCode::CREATED, &first["entry_id"], &json!(2))
    );

    let ann_entry = first["entry_id"].as_str().unwrap();
    let bob_entry = second["entry_id"].as_str().unwrap();
    assert_eq!(
        entry(&app, &event, &bob, ann_entry).await.0,
        StatusCode::FORBIDDEN
    );
    let (status, body) = entry(&app, &event, &ann, &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    assert_eq!(
        entry(&app, &event, &ann, "not-an-id").await.0,
        StatusCode::NOT_FOUND
    );

    for (body, field) in [
        (json!({"quantity": 0}), "quantity"),
        (json!({"quantity": 5}), "quantity"),
        (json!({"quantity": 1, "ticket_type": "nope"}), "ticket_type"),
    ] {
        let (status, problem) = join(&app, &event, &app.buyer("cy"), body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
        assert_eq!(problem["errors"][0]["field"], field);
    }
    let (status, _) = join(&app, &event, &app.buyer("cy"), json!({"quantity": "two"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = join(&app, &event, &As::Nobody, json!({"quantity": 1})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    assert_eq!(
        leave(&app, &event, &bob, ann_entry).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        leave(&app, &event, &ann, ann_entry).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        leave(&app, &event, &ann, ann_entry).await.0,
        StatusCode::NOT_FOUND
    );
    let (_, left) = entry(&app, &event, &ann, ann_entry).await;
    assert_eq!(
        (left["status"].as_str(), &left["position"]),
        (Some("left"), &Value::Null)
    );
    assert_eq!(entry(&app, &event, &bob, bob_entry).await.1["position"], 1);
    // Left, a buyer may join again, at the end of the line.
    let (_, back) = join(&app, &event, &ann, json!({"quantity": 1})).await;
    assert_ne!(back["entry_id"], first["entry_id"]);
    assert_eq!(back["position"], 2);
}

async fn a_cancelled_order_goes_to_the_first_entry_it_can_serve(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let order = bought(
        &app,
        &event,
        &app.buyer("xena"),
        &["stalls-B-1", "stalls-B-2"],
    )
    .await;
    // Three seats, or premium ones, these two standard seats cannot serve; two they can.
    let too_many = waiting(&app, &event, &app.buyer("w1"), 3).await;
    let (_, premium) = join(
        &app,
        &event,
        &app.buyer("w2"),
        json!({"quantity": 2, "ticket_type": "premium"}),
    )
    .await;
    let served = app.buyer("w3");
    let entry_id = waiting(&app, &event, &served, 2).await;
    let last = waiting(&app, &event, &app.buyer("w4"), 1).await;

    assert_eq!(cancel(&app, &order).await, StatusCode::OK);
    let (_, offered) = entry(&app, &event, &served, &entry_id).await;
    assert_eq!(offered["status"], "offered", "{offered}");
    assert_eq!(offered_seats(&offered), ["stalls-B-1", "stalls-B-2"]);
    assert_eq!(offered["offer"]["total_cents"], 9000);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-B-1"].as_str(),
            statuses["stalls-B-2"].as_str()
        ),
        ("held", "held")
    );
    // The others wait on, in order.
    assert_eq!(
        entry(&app, &event, &app.buyer("w1"), &too_many).await.1["position"],
        1
    );
    let premium_id = premium["entry_id"].as_str().unwrap();
    assert_eq!(
        entry(&app, &event, &app.buyer("w2"), premium_id).await.1["position"],
        2
    );
    assert_eq!(
        entry(&app, &event, &app.buyer("w4"), &last).await.1["position"],
        3
    );
    let topics: Vec<String> =
        sqlx::query_scalar("select topic from outbox where topic like 'waitlist.%'")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(topics, ["waitlist.offered"]);

    // Nobody else may have them; the offer's buyer buys them.
    let (status, _) = app
        .post_holds(&event, &app.buyer("w4"), &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let token = offered["offer"]["hold_token"].as_str().unwrap();
    let (status, order) = app.post_orders(&event, &served, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let (_, done) = entry(&app, &event, &served, &entry_id).await;
    assert_eq!(
        (done["status"].as_str(), &done["offer"]),
        (Some("bought"), &Value::Null)
    );
}

async fn an_offer_not_bought_in_time_passes_to_the_next_in_line(store: Store) {
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.operations.expiry_interval = Duration::from_millis(200);
    })
    .await;
    let event = app.create_event().await;
    let order = bought(&app, &event, &app.buyer("xena"), &["stalls-C-1"]).await;
    let (first, second) = (app.buyer("w1"), app.buyer("w2"));
    let first_entry = waiting(&app, &event, &first, 1).await;
    let second_entry = waiting(&app, &event, &second, 1).await;
    assert_eq!(cancel(&app, &order).await, StatusCode::OK);
    let (_, offer) = entry(&app, &event, &first, &first_entry).await;
    let token = offer["offer"]["hold_token"].as_str().unwrap().to_owned();

    // Its deadline passes: the offer cannot be bought, and the seat goes to the next.
    sqlx::query("update waitlist_entry set offer_expires_at = now() where status = 'O'")
        .execute(&app.db)
        .await
        .unwrap();
    let (status, body) = app.post_orders(&event, &first, &token).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "hold_not_live");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let next = loop {
        let (_, e) = entry(&app, &event, &second, &second_entry).await;
        if e["status"] == "offered" {
            break e;
        }
        assert!(std::time::Instant::now() < deadline, "never offered: {e}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(offered_seats(&next), ["stalls-C-1"]);
    let (_, lapsed) = entry(&app, &event, &first, &first_entry).await;
    assert_eq!(lapsed["status"], "lapsed");
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "held");

    // The second buyer leaves: nobody waits, and the seat goes on general sale at once.
    let (status, _) = app
        .send(
            Method::DELETE,
            &format!("/v1/events/{event}/waitlist/{second_entry}"),
            &second,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "available");
    let (status, _) = app
        .post_holds(&event, &app.buyer("anyone"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
}

async fn a_crowd_at_the_returning_seats_gets_nothing_while_anyone_waits(store: Store) {
    let app = crate::helpers::spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let seats = ["stalls-B-1", "stalls-B-2"];
    // Each round the seats' buyer cancels while someone waits; the waiter buys them, and
    // cancels in the next round.
    let mut order = bought(&app, &event, &app.buyer("owner"), &seats).await;
    for round in 0..3 {
        let waiter = app.buyer(&format!("waiter-{round}"));
        let entry_id = waiting(&app, &event, &waiter, 2).await;
        // The cancellation and twenty holds of the same seats at once, and twenty more as
        // soon as the cancellation has answered.
        let crowd = |wave: usize| -> Vec<reqwest::RequestBuilder> {
            (0..20)
                .map(|i| {
                    let wants: &[&str] = match i % 3 {
                        0 => &seats[..1],
                        1 => &seats[1..],
                        _ => &seats,
                    };
                    app.request(
                        Method::POST,
                        &format!("/v1/events/{event}/holds"),
                        &app.buyer(&format!("crowd-{round}-{wave}-{i}")),
                    )
                    .json(&json!({ "seats": wants }))
                })
                .collect()
        };
        let mut first = vec![app.request(
            Method::POST,
            &format!("/v1/orders/{order}/cancel"),
            &As::Admin,
        )];
        first.extend(crowd(0));
        let answers = race_riding_out(first).await;
        assert_eq!(
            answers[0].0,
            StatusCode::OK,
            "the cancellation: {:?}",
            answers[0]
        );
        let after = race_riding_out(crowd(1)).await;
        assert_eq!(
            tally(&answers[1..]),
            BTreeMap::from([(409, 20)]),
            "round {round}"
        );
        assert_eq!(
            tally(&after),
            BTreeMap::from([(409, 20)]),
            "round {round}, after"
        );
        let (_, offered) = entry(&app, &event, &waiter, &entry_id).await;
        assert_eq!(offered_seats(&offered), seats, "round {round}");
        let token = offered["offer"]["hold_token"].as_str().unwrap();
        let (status, bought) = app.post_orders(&event, &waiter, token).await;
        assert_eq!(status, StatusCode::CREATED, "round {round}");
        order = bought["order_id"].as_str().unwrap().to_owned();
    }
}

async fn a_released_channel_goes_to_the_waiting_list_first(store: Store) {
    let app = spawn_app_on(store).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["channels"] = json!([{"code": "partner-a", "name": "Partner A"}]);
    spec["allocations"].as_array_mut().unwrap().push(
        json!({"ticket_type": "premium", "seats": ["box-L-1", "box-L-2"], "channel": "partner-a"}),
    );
    let (_, created) = app.post_events(&spec).await;
    let event = created["id"].as_str().unwrap();
    let waiter = app.buyer("w1");
    let (_, joined) = join(
        &app,
        event,
        &waiter,
        json!({"quantity": 1, "ticket_type": "premium"}),
    )
    .await;
    let (status, released) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/channels/partner-a/release"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!((status, released), (StatusCode::OK, json!({"released": 2})));
    let (_, offered) = entry(&app, event, &waiter, joined["entry_id"].as_str().unwrap()).await;
    assert_eq!(offered_seats(&offered), ["box-L-1"]);
    let statuses = app.seat_statuses(event).await;
    assert_eq!(
        (statuses["box-L-1"].as_str(), statuses["box-L-2"].as_str()),
        ("held", "available")
    );
}

/// A server on `store` whose expiry rounds run every `interval`, and the test event with a
/// payment window of `seconds`.
async fn window_sale(store: Store, interval: Duration, seconds: u32) -> (TestApp, String) {
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.operations.expiry_interval = interval;
    })
    .await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(seconds);
    let (_, created) = app.post_events(&spec).await;
    let event = created["id"].as_str().unwrap().to_owned();
    (app, event)
}

/// Two unpaid orders lapse while one buyer waits for one seat: the first order's seat
/// passes to the waiter without ever reading available (a crowd holding it all the while
/// gets only 409s), the second's goes on general sale once nobody can take it, and both
/// orders end expired, their payments refused.
async fn a_lapsed_payment_window_goes_to_the_waiting_list(store: Store) {
    let (app, event) = window_sale(store, Duration::from_millis(200), 2).await;
    let first = app
        .order_seats(&event, &app.buyer("alice"), &["stalls-B-1"])
        .await;
    let second = app
        .order_seats(&event, &app.buyer("bob"), &["stalls-B-2"])
        .await;
    assert_eq!(
        (first["status"].as_str(), second["status"].as_str()),
        (Some("pending_payment"), Some("pending_payment"))
    );
    let waiter = app.buyer("waiter");
    let entry_id = waiting(&app, &event, &waiter, 1).await;

    // Until the waiter is offered the seat, a crowd tries to hold it and its status is read.
    let mut statuses = BTreeMap::<String, u32>::new();
    let mut answers = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let offered = loop {
        let (_, e) = entry(&app, &event, &waiter, &entry_id).await;
        if e["status"] == "offered" {
            break e;
        }
        assert!(std::time::Instant::now() < deadline, "never offered: {e}");
        let crowd = (0..5)
            .map(|i| {
                app.request(
                    Method::POST,
                    &format!("/v1/events/{event}/holds"),
                    &app.buyer(&format!("crowd-{}-{i}", answers.len())),
                )
                .json(&json!({"seats": ["stalls-B-1"]}))
            })
            .collect();
        answers.extend(race(crowd).await);
        let status = app.seat_statuses(&event).await["stalls-B-1"].to_owned();
        *statuses.entry(status).or_default() += 1;
    };
    assert_eq!(offered_seats(&offered), ["stalls-B-1"]);
    let crowd = tally(&answers);
    assert_eq!(crowd.keys().collect::<Vec<_>>(), [&409], "{crowd:?}");
    assert_eq!(
        statuses.keys().collect::<Vec<_>>(),
        ["held"],
        "{statuses:?}"
    );

    // The first order expired, once, and its payment is refused; the waiter buys the seat.
    let id = first["order_id"].as_str().unwrap();
    let (_, read) = app
        .send(Method::GET, &format!("/v1/orders/{id}"), &As::Admin, None)
        .await;
    assert_eq!(read["status"], "expired");
    let (status, problem) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{id}/payment"),
            &As::Admin,
            Some(&json!({"reference": "psp_late", "amount_cents": first["total_cents"]})),
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("payment_window_closed"))
    );
    let token = offered["offer"]["hold_token"].as_str().unwrap();
    let (status, bought) = app.post_orders(&event, &waiter, token).await;
    assert_eq!(status, StatusCode::CREATED, "{bought}");

    // Nobody waits for the second order's seat: it goes on general sale.
    let freed_by = std::time::Instant::now() + Duration::from_secs(10);
    while app.seat_statuses(&event).await["stalls-B-2"] != "available" {
        assert!(
            std::time::Instant::now() < freed_by,
            "stalls-B-2 never freed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The stores have freed it; the server's view of recent refusals hears of it as the
    // change is published, a moment later at most: until then a hold may still be told 409.
    let held_by = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        let (status, body) = app
            .post_holds(&event, &app.buyer("anyone"), &["stalls-B-2"])
            .await;
        if status == StatusCode::CREATED {
            break;
        }
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(
            std::time::Instant::now() < held_by,
            "stalls-B-2 never holdable"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let topics: Vec<(String, String)> = sqlx::query_as(
        "select coalesce(payload->>'order_id', ''), topic from outbox
          where topic in ('order.expired', 'waitlist.offered') order by outbox_id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let expired: Vec<&str> = topics
        .iter()
        .filter(|(_, t)| t == "order.expired")
        .map(|(o, _)| o.as_str())
        .collect();
    assert_eq!(expired.len(), 2, "{topics:?}");
    assert!(expired.contains(&id), "{topics:?}");
    assert_eq!(
        topics
            .iter()
            .filter(|(_, t)| t == "waitlist.offered")
            .count(),
        1
    );
}

/// A window shorter than the expiry rounds' look-ahead: a buyer already waits when the
/// order is made, so the checkout itself keeps its seats past `pay_by` (rounds an hour
/// apart could not), and they stay held, to everyone, past the deadline.
async fn a_short_window_is_kept_at_checkout_for_those_already_waiting(store: Store) {
    let (app, event) = window_sale(store, Duration::from_secs(3600), 1).await;
    // The expiry worker's first round, at start, is done: the next is an hour away, so
    // whatever is kept below the checkout kept.
    tokio::time::timeout(Duration::from_secs(30), async {
        while app.counter("boxoffice_expiry_rounds_total").await < 1.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the expiry worker's first round");
    // Nobody waits yet: this order is not kept.
    let early = app
        .order_seats(&event, &app.buyer("ann"), &["stalls-C-1"])
        .await;
    waiting(&app, &event, &app.buyer("waiter"), 1).await;
    let order = app
        .order_seats(&event, &app.buyer("alice"), &["stalls-B-1"])
        .await;
    let kept = |id: &str| {
        sqlx::query_scalar::<_, Option<chrono::DateTime<chrono::Utc>>>(
            "select kept_until from ticket_order where order_id = $1::uuid",
        )
        .bind(id.to_owned())
        .fetch_one(&app.db)
    };
    let pay_by: chrono::DateTime<chrono::Utc> = order["pay_by"].as_str().unwrap().parse().unwrap();
    let until = kept(order["order_id"].as_str().unwrap()).await.unwrap();
    assert_eq!(until, Some(pay_by + chrono::Duration::seconds(60)));
    assert_eq!(
        kept(early["order_id"].as_str().unwrap()).await.unwrap(),
        None
    );

    // Past pay_by its seat stays held, to everyone; the other order's is free.
    let wait = pay_by - chrono::Utc::now() + chrono::Duration::milliseconds(200);
    tokio::time::sleep(wait.to_std().unwrap_or_default()).await;
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-B-1"].as_str(),
            statuses["stalls-C-1"].as_str()
        ),
        ("held", "available")
    );
    let crowd = (0..10)
        .map(|i| {
            app.request(
                Method::POST,
                &format!("/v1/events/{event}/holds"),
                &app.buyer(&format!("crowd-{i}")),
            )
            .json(&json!({"seats": ["stalls-B-1"]}))
        })
        .collect();
    assert_eq!(tally(&race(crowd).await), BTreeMap::from([(409, 10)]));
}

crate::helpers::stores::conformance!(
    a_cancelled_order_goes_to_the_first_entry_it_can_serve,
    an_offer_not_bought_in_time_passes_to_the_next_in_line,
    a_crowd_at_the_returning_seats_gets_nothing_while_anyone_waits,
    a_released_channel_goes_to_the_waiting_list_first,
    a_lapsed_payment_window_goes_to_the_waiting_list,
    a_short_window_is_kept_at_checkout_for_those_already_waiting,
);

/// The buyer's page: a buyer joins the line from the page, is offered a seat when an
/// order is cancelled, and buys it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_waits_on_the_page_and_buys_the_seat_offered() {
    use crate::helpers::{
        assert_accessible, browser, click, driver, open, phone, screenshot, script, wait_for,
        wait_status, LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
    };
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_on(Store::Postgres).await;
    let event = app.create_event().await;
    let order = bought(&app, &event, &app.buyer("xena"), &["stalls-B-1"]).await;
    // The line is offered on a house with fewer seats free than a buyer may take.
    let driver = driver().await;
    let page = browser(&driver).await;
    open(&page, &app, &event).await;
    assert_eq!(
        script(&page, "return document.getElementById('waitlist').hidden").await,
        json!(true),
        "no line on a house with seats to spare"
    );
    for (i, seats) in [
        &["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4"][..],
        &["stalls-B-2", "stalls-B-3", "stalls-B-4", "box-L-1"],
        &["stalls-C-1", "stalls-C-2", "stalls-C-3", "stalls-C-4"],
        &["box-L-2"],
    ]
    .into_iter()
    .enumerate()
    {
        bought(&app, &event, &app.buyer(&format!("filler-{i}")), seats).await;
    }
    open(&page, &app, &event).await;
    let text = "return document.getElementById('waitlist-text').textContent";
    wait_for(
        &page,
        LOADS_WITHIN,
        text,
        json!("Nothing that suits you? Wait in line: seats that come back are offered to the first in line."),
    )
    .await;
    click(&page, "waitlist-join").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        text,
        json!("You are number 1 in line for a seat. Keep this page open: seats that come back are offered to you here."),
    )
    .await;
    let shown = "return ['waitlist-form', 'waitlist-leave'].map((id) => getComputedStyle(document.getElementById(id)).display !== 'none')";
    assert_eq!(script(&page, shown).await, json!([false, true]));
    assert_accessible(&page, "the page with the buyer in the waiting list").await;
    script(
        &page,
        "document.getElementById('waitlist').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "waitlist-01-waiting").await;

    // The order is cancelled: the seat is offered to this buyer, held as theirs.
    assert_eq!(cancel(&app, &order).await, StatusCode::OK);
    wait_for(
        &page,
        Duration::from_secs(10),
        "return document.getElementById('waitlist-text').textContent.startsWith('Seats came back for you: Stalls, Row B, Seat 1.')",
        json!(true),
    )
    .await;
    wait_status(&page, "stalls-B-1", "held", LIVE_WITHIN).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !document.getElementById('buy').hidden",
        json!(true),
    )
    .await;
    // The countdown is the offer's (the event's 900 s), not its hold's (a minute longer),
    // and an offer is not extended.
    assert_eq!(
        script(&page, "return document.getElementById('extend').hidden").await,
        json!(true)
    );
    wait_for(
        &page,
        LOADS_WITHIN,
        "const [m, s] = document.getElementById('countdown').textContent.split(':').map(Number); \
         return m * 60 + s > 800 && m * 60 + s <= 900",
        json!(true),
    )
    .await;
    assert_accessible(&page, "the page with an offer").await;
    screenshot(&page, "waitlist-02-offered").await;
    click(&page, "buy").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('order').dataset.status ?? null",
        json!("paid"),
    )
    .await;
    assert_eq!(app.seat_statuses(&event).await["stalls-B-1"], "sold");
    page.close().await.unwrap();

    let page = phone(&driver).await;
    open(&page, &app, &event).await;
    click(&page, "waitlist-join").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('waitlist-text').textContent.startsWith('You are number 1')",
        json!(true),
    )
    .await;
    assert_accessible(&page, "the waiting list on a phone").await;
    script(
        &page,
        "document.getElementById('waitlist').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "waitlist-03-waiting-phone").await;
    page.close().await.unwrap();
}
