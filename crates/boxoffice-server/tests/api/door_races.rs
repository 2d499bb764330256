//! Where the door meets resale on one seat, on every hold store, released at once round
//! after round: a resale sale and the seller's scan (exactly one wins), a listing and a
//! scan (a seat whose ticket is inside is never listed afterwards), and an exit of a ticket
//! that is not inside. After each round the seat is in exactly one paid order, at most one
//! ticket for it lets someone in, `order.resold` is written only when the buyer got the
//! seat, and no hold is live on it.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::door::holders;
use crate::helpers::door::tickets_of;
use crate::helpers::stores::{conformance, Store};
use crate::helpers::{big_event, buy, read, spawn_race_app_on, As, TestApp};

/// Rounds of each race: before the seat's lock order, 4 to 25 of 40 went wrong.
const ROUNDS: usize = 40;

/// Sends `first` and `second` together, `first` held back by 0 to 9 ms as the round goes
/// (a scan takes a few milliseconds more than a checkout or a listing before it reaches
/// the database), so that rounds are won both ways and many meet; their answers, in
/// order.
async fn together(
    round: usize,
    first: reqwest::RequestBuilder,
    second: reqwest::RequestBuilder,
) -> [(StatusCode, Value); 2] {
    let lag = std::time::Duration::from_micros((round % 10) as u64 * 1_000);
    let send = |request: reqwest::RequestBuilder, wait| async move {
        tokio::time::sleep(wait).await;
        read(request.send().await.expect("request is sent")).await
    };
    let (a, b) = tokio::join!(send(first, lag), send(second, Default::default()));
    [a, b]
}

fn checkin(app: &TestApp, event: &str, secret: &Value, kind: &str) -> reqwest::RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/checkins"),
        &As::Admin,
    )
    .json(&json!({"secret": secret, "nonce": uuid::Uuid::new_v4().to_string(), "type": kind}))
}

async fn resold(app: &TestApp, seat: &str) -> Vec<Value> {
    sqlx::query_scalar(
        "select payload from outbox where topic = 'order.resold' and payload->'seat'->>'id' = $1",
    )
    .bind(seat)
    .fetch_all(&app.db)
    .await
    .unwrap()
}

async fn listed(app: &TestApp, seat: &str) -> i64 {
    sqlx::query_scalar("select count(*) from resale_listing where seat_id = $1")
        .bind(seat)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// After a round: `seat` is sold and listed by nobody, and a new hold of it is refused.
async fn sold_and_unlisted(app: &TestApp, event: &str, seat: &str, round: usize) {
    assert_eq!(
        listed(app, seat).await,
        0,
        "round {round}: the seat is listed"
    );
    assert_eq!(
        app.seat_statuses(event).await[seat],
        "sold",
        "round {round}"
    );
    let (status, _) = app
        .post_holds(event, &app.buyer(&format!("late{round}")), &[seat])
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "round {round}: the seat is held"
    );
}

async fn live_on(app: &TestApp, event: &str, seat: &str) -> bool {
    let event = boxoffice_core::ids::EventId(event.parse().unwrap());
    app.holds
        .held_seats(event)
        .await
        .unwrap()
        .iter()
        .any(|h| h.seat_id == seat)
}

/// The seller's one ticket for `seat` in the order `order`.
async fn ticket_of(app: &TestApp, order: &Value, who: &As) -> Value {
    let id = order["order_id"].as_str().unwrap();
    let tickets = tickets_of(app, &format!("/v1/orders/{id}/tickets"), who).await;
    assert_eq!(tickets.len(), 1);
    tickets[0].clone()
}

async fn a_resale_sale_and_the_sellers_scan_at_once_one_wins(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, ROUNDS, 2, 4).await;
    let (mut sales, mut scans) = (0, 0);
    for round in 0..ROUNDS {
        let seat = format!("floor-R{round}-1");
        let (seller, buyer) = (format!("seller{round}"), format!("buyer{round}"));
        let sold = buy(&app, &event, &seller, &[&seat]).await;
        let seller_id = sold["order_id"].as_str().unwrap();
        let ticket = ticket_of(&app, &sold, &app.buyer(&seller)).await;
        let (status, body) = app
            .send(
                Method::POST,
                &format!("/v1/orders/{seller_id}/resale"),
                &app.buyer(&seller),
                Some(&json!({"seats": [seat]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, hold) = app.post_holds(&event, &app.buyer(&buyer), &[&seat]).await;
        assert_eq!(status, StatusCode::CREATED, "{hold}");
        let token = hold["hold_token"].as_str().unwrap();
        let checkout = app
            .request(
                Method::POST,
                &format!("/v1/events/{event}/orders"),
                &app.buyer(&buyer),
            )
            .json(&json!({"hold_token": token}));
        let answers = together(
            round,
            checkout,
            checkin(&app, &event, &ticket["secret"], "entry"),
        )
        .await;
        let ((bought, order), (scanned, problem)) = (&answers[0], &answers[1]);
        match (bought.as_u16(), scanned.as_u16()) {
            // The sale first: the seller's ticket is revoked, the buyer's lets them in.
            (201, 410) => {
                sales += 1;
                assert_eq!(problem["code"], "ticket_revoked", "round {round}");
                assert_eq!(
                    holders(&app, &event, &seat).await,
                    [order["order_id"].as_str().unwrap()]
                );
                let theirs = ticket_of(&app, order, &app.buyer(&buyer)).await;
                let (status, _) = app
                    .send(
                        Method::POST,
                        &format!("/v1/events/{event}/checkins"),
                        &As::Admin,
                        Some(&json!({"secret": theirs["secret"], "nonce": format!("b{round}")})),
                    )
                    .await;
                assert_eq!(status, StatusCode::CREATED, "round {round}");
                let resold = resold(&app, &seat).await;
                assert_eq!(resold.len(), 1, "round {round}");
                assert_eq!(resold[0]["resold_to"], order["order_id"]);
            }
            // The scan first: the seller keeps the seat, the buyer's hold is gone.
            (409, 201) => {
                scans += 1;
                assert_eq!(order["code"], "hold_not_live", "round {round}: {order}");
                assert_eq!(holders(&app, &event, &seat).await, [seller_id]);
                assert!(resold(&app, &seat).await.is_empty(), "round {round}");
                let (status, _) = app
                    .send(
                        Method::GET,
                        &format!("/v1/events/{event}/holds/{token}"),
                        &app.buyer(&buyer),
                        None,
                    )
                    .await;
                assert_eq!(
                    status,
                    StatusCode::NOT_FOUND,
                    "round {round}: the hold is live"
                );
                let (status, again) = app.post_orders(&event, &app.buyer(&buyer), token).await;
                assert_eq!(status, StatusCode::CONFLICT, "round {round}: {again}");
            }
            other => panic!("round {round}: both or neither won: {other:?} {answers:?}"),
        }
        // Either way: one paid order has the seat, nothing lists it, no hold has it, and a
        // new hold of it is refused.
        assert_eq!(holders(&app, &event, &seat).await.len(), 1);
        assert!(!live_on(&app, &event, &seat).await, "round {round}");
        sold_and_unlisted(&app, &event, &seat, round).await;
    }
    assert_eq!(sales + scans, ROUNDS);
    eprintln!("{store:?}: the sale won {sales} rounds, the scan {scans}");
}

async fn a_listing_and_a_scan_at_once_leave_no_seat_inside_listed(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, ROUNDS, 2, 4).await;
    let (mut listed_first, mut refused) = (0, 0);
    for round in 0..ROUNDS {
        let seat = format!("floor-R{round}-2");
        let seller = format!("seller{round}");
        let sold = buy(&app, &event, &seller, &[&seat]).await;
        let id = sold["order_id"].as_str().unwrap();
        let ticket = ticket_of(&app, &sold, &app.buyer(&seller)).await;
        let listing = app
            .request(
                Method::POST,
                &format!("/v1/orders/{id}/resale"),
                &app.buyer(&seller),
            )
            .json(&json!({"seats": [seat]}));
        let answers = together(
            round,
            listing,
            checkin(&app, &event, &ticket["secret"], "entry"),
        )
        .await;
        let ((list, body), (scanned, _)) = (&answers[0], &answers[1]);
        assert_eq!(*scanned, StatusCode::CREATED, "round {round}: {answers:?}");
        match list.as_u16() {
            200 => listed_first += 1,
            409 => {
                refused += 1;
                assert_eq!(body["code"], "already_redeemed", "round {round}");
            }
            other => panic!("round {round}: the listing answered {other}: {body}"),
        }
        sold_and_unlisted(&app, &event, &seat, round).await;
        assert_eq!(holders(&app, &event, &seat).await, [id]);
    }
    eprintln!("{store:?}: listed first {listed_first} rounds, refused {refused}");
}

async fn an_exit_of_a_ticket_not_inside_is_refused(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 1, 2, 4).await;
    let sold = buy(&app, &event, "ann", &["floor-R0-1"]).await;
    let ticket = ticket_of(&app, &sold, &app.buyer("ann")).await;
    let send = |kind: &'static str, force: bool| {
        let secret = ticket["secret"].clone();
        let app = &app;
        let event = event.clone();
        async move {
            let mut body =
                json!({"secret": secret, "nonce": uuid::Uuid::new_v4().to_string(), "type": kind});
            if force {
                body["force"] = json!(true);
                body["scanned_at"] = json!("2030-01-01T20:00:00Z");
            }
            app.send(
                Method::POST,
                &format!("/v1/events/{event}/checkins"),
                &As::Admin,
                Some(&body),
            )
            .await
        }
    };
    let checkins = || async {
        let n: i64 = sqlx::query_scalar("select count(*) from checkin")
            .fetch_one(&app.db)
            .await
            .unwrap();
        n
    };
    // Never let in: an exit is refused and records nothing.
    let (status, problem) = send("exit", false).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("not_inside"))
    );
    assert_eq!(checkins().await, 0);
    // In, out, and out again: refused.
    assert_eq!(send("entry", false).await.0, StatusCode::CREATED);
    let (status, out) = send("exit", false).await;
    assert_eq!(
        (status, out["result"].as_str()),
        (StatusCode::CREATED, Some("ok"))
    );
    let (status, problem) = send("exit", false).await;
    assert_eq!(problem["code"], "not_inside", "{status}");
    assert_eq!(checkins().await, 2);
    // An offline scanner's upload of the same exit is recorded, as a duplicate.
    let (status, upload) = send("exit", true).await;
    assert_eq!(
        (status, upload["result"].as_str()),
        (StatusCode::CREATED, Some("duplicate"))
    );
    assert_eq!(checkins().await, 3);
}

conformance!(
    a_resale_sale_and_the_sellers_scan_at_once_one_wins,
    a_listing_and_a_scan_at_once_leave_no_seat_inside_listed,
    an_exit_of_a_ticket_not_inside_is_refused,
);
