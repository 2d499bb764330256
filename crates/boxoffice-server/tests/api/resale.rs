//! Resale on both hold stores: a listed seat reads `resale`, any buyer holds and buys it
//! as a free seat (best available never picks it), and the order that buys it takes it
//! from the seller's (ticket revoked, `order.resold`); a listing taken back, a withdrawal
//! racing holds (one wins), and a resale sold while its seller moves it.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::door::tickets_of;
use crate::helpers::door::{holders, scan};
use crate::helpers::stores::Store;
use crate::helpers::{buy, race, spawn_app_on, spawn_race_app_on, tally, As, TestApp};

async fn list(app: &TestApp, order: &str, who: &As, seats: &[&str]) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/orders/{order}/resale"),
        who,
        Some(&json!({ "seats": seats })),
    )
    .await
}

async fn withdraw(app: &TestApp, order: &str, who: &As, seat: &str) -> (StatusCode, Value) {
    let path = format!("/v1/orders/{order}/resale/{seat}");
    app.send(Method::DELETE, &path, who, None).await
}

fn id(order: &Value) -> &str {
    order["order_id"].as_str().unwrap()
}

async fn topic(app: &TestApp, topic: &str) -> Vec<Value> {
    sqlx::query_scalar("select payload from outbox where topic = $1 order by outbox_id")
        .bind(topic)
        .fetch_all(&app.db)
        .await
        .unwrap()
}

async fn a_listed_seat_is_bought_by_another_buyer_and_leaves_the_sellers_order(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let sold = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let bob = buy(&app, &event, "bob", &["stalls-A-3", "stalls-A-4"]).await;
    buy(&app, &event, "frank", &["box-L-1", "box-L-2"]).await;
    let (a, b) = (id(&sold), id(&bob));
    let seller_tickets = tickets_of(&app, &format!("/v1/orders/{a}/tickets"), &alice).await;

    // Refused, changing nothing: another buyer's order, a seat not in it, none at all.
    let (status, _) = list(&app, a, &app.buyer("mallory"), &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    for seats in [vec!["stalls-B-1"], vec![], vec!["stalls-A-1", "stalls-A-1"]] {
        let (status, problem) = list(&app, a, &alice, &seats).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{seats:?}: {problem}"
        );
    }
    assert_eq!(app.seat_statuses(&event).await["stalls-A-1"], "sold");

    let (status, listed) = list(&app, a, &alice, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed, json!({"listed": ["stalls-A-1"]}));
    // Listing again changes nothing; the order reads its listings back.
    let (status, again) = list(&app, a, &alice, &["stalls-A-1"]).await;
    assert_eq!((status, &again), (StatusCode::OK, &listed));
    let (status, read) = app
        .send(Method::GET, &format!("/v1/orders/{a}/resale"), &alice, None)
        .await;
    assert_eq!((status, &read), (StatusCode::OK, &listed));

    // It reads resale everywhere, and is still the seller's.
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["stalls-A-1"], "resale");
    let (_, availability) = app.get(&format!("/v1/events/{event}/availability")).await;
    assert_eq!(availability["resale"], 1, "{availability}");
    assert_eq!(holders(&app, &event, "stalls-A-1").await, [a]);
    // Best available never picks it: the listed seat is the only premium seat not taken.
    let (status, problem) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/holds"),
            &app.buyer("dave"),
            Some(&json!({"best_available": {"quantity": 1, "ticket_type": "premium"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");

    // Carol holds it as any free seat; while she does, Alice cannot take it back.
    let carol = app.buyer("carol");
    let (status, hold) = app.post_holds(&event, &carol, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(app.seat_statuses(&event).await["stalls-A-1"], "held");
    let (status, problem) = withdraw(&app, a, &alice, "stalls-A-1").await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    // Carol buys it: it leaves Alice's order for Carol's.
    let (status, bought) = app
        .post_orders(&event, &carol, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{bought}");
    assert_eq!(holders(&app, &event, "stalls-A-1").await, [id(&bought)]);
    assert_eq!(app.seat_statuses(&event).await["stalls-A-1"], "sold");
    let (_, seller) = app
        .send(Method::GET, &format!("/v1/orders/{a}"), &alice, None)
        .await;
    assert_eq!(seller["seats"].as_array().unwrap().len(), 1, "{seller}");
    assert_eq!(seller["seats"][0]["id"], "stalls-A-2");
    assert_eq!(seller["total_cents"], 9000);
    assert_eq!(seller["status"], "paid");
    let (_, read) = app
        .send(Method::GET, &format!("/v1/orders/{a}/resale"), &alice, None)
        .await;
    assert_eq!(read, json!({"listed": []}));
    let resold = topic(&app, "order.resold").await;
    assert_eq!(resold.len(), 1);
    assert_eq!(resold[0]["order_id"], a);
    assert_eq!(resold[0]["resold_to"], bought["order_id"]);
    assert_eq!(
        resold[0]["seat"],
        json!({"id": "stalls-A-1", "ticket_type": "premium", "price_cents": 9000})
    );
    // Alice's ticket for it is revoked; Carol's lets her in.
    let old = seller_tickets
        .iter()
        .find(|t| t["seat_id"] == "stalls-A-1")
        .unwrap();
    assert_eq!(
        scan(&app, &event, &old["secret"]).await,
        (StatusCode::GONE, Some("ticket_revoked".into()))
    );
    let new = tickets_of(&app, &format!("/v1/orders/{}/tickets", id(&bought)), &carol).await;
    let (status, _) = scan(&app, &event, &new[0]["secret"]).await;
    assert_eq!(status, StatusCode::CREATED);

    // A ticket that let someone in is not listed.
    let kept = seller_tickets
        .iter()
        .find(|t| t["seat_id"] == "stalls-A-2")
        .unwrap();
    let (status, _) = scan(&app, &event, &kept["secret"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = list(&app, a, &alice, &["stalls-A-2"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_redeemed"))
    );

    // A seller who comes in with a listed seat's ticket ends its listing.
    let (status, _) = list(&app, b, &app.buyer("bob"), &["stalls-A-4"]).await;
    assert_eq!(status, StatusCode::OK);
    let bob_tickets = tickets_of(&app, &format!("/v1/orders/{b}/tickets"), &app.buyer("bob")).await;
    let a4 = bob_tickets
        .iter()
        .find(|t| t["seat_id"] == "stalls-A-4")
        .unwrap();
    let (status, _) = scan(&app, &event, &a4["secret"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, read) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{b}/resale"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(read, json!({"listed": []}));
    assert_eq!(app.seat_statuses(&event).await["stalls-A-4"], "sold");

    // Bob takes a listing back: sold to him alone again, on this store too.
    let bob_buyer = app.buyer("bob");
    let (status, _) = list(&app, b, &bob_buyer, &["stalls-A-3"]).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = withdraw(&app, b, &bob_buyer, "stalls-A-3").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = withdraw(&app, b, &bob_buyer, "stalls-A-3").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-3"].as_str(),
            statuses["stalls-A-4"].as_str()
        ),
        ("sold", "sold")
    );
    let (status, _) = app
        .post_holds(&event, &app.buyer("erin"), &["stalls-A-3"])
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = list(&app, b, &bob_buyer, &["stalls-A-3"]).await;
    assert_eq!(status, StatusCode::OK);
    // Cancelled, his order lists nothing: the seat is simply free.
    let (status, _) = app.cancel_order(b, &bob_buyer).await;
    assert_eq!(status, StatusCode::OK);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-3"].as_str(),
            statuses["stalls-A-4"].as_str()
        ),
        ("available", "available")
    );
    let (_, availability) = app.get(&format!("/v1/events/{event}/availability")).await;
    assert_eq!(availability["resale"], 0, "{availability}");
    assert_eq!(topic(&app, "order.resold").await.len(), 1);
}

/// Ten buyers (`<buyers>0`…) holding stalls-B-1 and bob withdrawing its listing from
/// `order`, released together: the holds' answers, then the withdrawal's.
async fn withdrawal_and_ten_holds(
    app: &TestApp,
    event: &str,
    order: &Value,
    buyers: &str,
) -> Vec<(StatusCode, Value)> {
    let mut requests: Vec<_> = (0..10)
        .map(|i| {
            app.request(
                Method::POST,
                &format!("/v1/events/{event}/holds"),
                &app.buyer(&format!("{buyers}{i}")),
            )
            .json(&json!({"seats": ["stalls-B-1"]}))
        })
        .collect();
    let path = format!("/v1/orders/{}/resale/stalls-B-1", id(order));
    requests.push(app.request(Method::DELETE, &path, &app.buyer("bob")));
    race(requests).await
}

async fn a_withdrawal_and_holds_at_once_one_wins(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "bob", &["stalls-B-1"]).await;
    let bob = app.buyer("bob");
    let (status, _) = list(&app, id(&order), &bob, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::OK);
    let answers = withdrawal_and_ten_holds(&app, &event, &order, "b").await;
    let (holds, withdrawal) = answers.split_at(10);
    let held = holds
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    let statuses = app.seat_statuses(&event).await;
    let live = app
        .holds
        .held_seats(boxoffice_core::ids::EventId(event.parse().unwrap()))
        .await
        .unwrap();
    if withdrawal[0].0 == StatusCode::NO_CONTENT {
        assert_eq!(tally(holds), [(409, 10)].into(), "{answers:?}");
        assert_eq!(statuses["stalls-B-1"], "sold");
        assert!(live.is_empty());
        let listed: i64 = sqlx::query_scalar("select count(*) from resale_listing")
            .fetch_one(&app.db)
            .await
            .unwrap();
        assert_eq!(listed, 0);
    } else {
        assert_eq!(withdrawal[0].0, StatusCode::CONFLICT, "{answers:?}");
        assert_eq!(held, 1, "{answers:?}");
        assert_eq!(tally(holds), [(201, 1), (409, 9)].into());
        assert_eq!(statuses["stalls-B-1"], "held");
        assert_eq!(live.len(), 1);
    }
    assert_eq!(holders(&app, &event, "stalls-B-1").await, [id(&order)]);
}

async fn a_resale_sold_while_its_seller_moves_it(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-B-1", "stalls-B-2"]).await;
    let a = id(&order);
    let (status, _) = list(&app, a, &app.buyer("alice"), &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::OK);
    let carol = app.buyer("carol");
    let (status, hold) = app.post_holds(&event, &carol, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let checkout = app
        .request(Method::POST, &format!("/v1/events/{event}/orders"), &carol)
        .json(&json!({"hold_token": hold["hold_token"]}));
    let moving = app
        .request(Method::POST, &format!("/v1/orders/{a}/moves"), &As::Admin)
        .json(&json!({"moves": [{"from": "stalls-B-1", "to": "stalls-C-1"}]}));
    let answers = race(vec![checkout, moving]).await;
    let (bought, moved) = (&answers[0], &answers[1]);
    // Carol's hold was live: she has the seat either way, once.
    assert_eq!(bought.0, StatusCode::CREATED, "{answers:?}");
    assert_eq!(holders(&app, &event, "stalls-B-1").await, [id(&bought.1)]);
    let (_, now) = app
        .send(Method::GET, &format!("/v1/orders/{a}"), &As::Admin, None)
        .await;
    let seats: Vec<&str> = now["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let resold = topic(&app, "order.resold").await.len();
    if moved.0 == StatusCode::OK {
        // Moved first: the seat was free when Carol bought it, nothing resold.
        assert_eq!(seats, ["stalls-B-2", "stalls-C-1"]);
        assert_eq!(resold, 0);
        assert_eq!(holders(&app, &event, "stalls-C-1").await, [a]);
    } else {
        // Bought first: the seat was resold, and Alice had no stalls-B-1 to move.
        assert_eq!(moved.0, StatusCode::UNPROCESSABLE_ENTITY, "{answers:?}");
        assert_eq!(seats, ["stalls-B-2"]);
        assert_eq!(resold, 1);
        assert!(holders(&app, &event, "stalls-C-1").await.is_empty());
    }
    let listed: i64 = sqlx::query_scalar("select count(*) from resale_listing")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(listed, 0);
    let live = app
        .holds
        .held_seats(boxoffice_core::ids::EventId(event.parse().unwrap()))
        .await
        .unwrap();
    assert!(live.is_empty(), "{live:?}");
}

/// The redis store loads an event's state from Postgres when it lapses; a load that began
/// while a withdrawal had marked its seat sold in Redis but not committed must not find
/// the seat listed and free. Each round: the event's state dropped, then a withdrawal and
/// ten holds at once; exactly one wins, and the seat is where the winner says.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_redis_a_withdrawal_while_the_event_reloads_and_holds_at_once_one_wins() {
    let app = spawn_race_app_on(Store::Redis).await;
    let mut conn = boxoffice_store::redis::link::RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let mut withdrawn = 0;
    for round in 0..20 {
        let event = app.create_event().await;
        let order = buy(&app, &event, "bob", &["stalls-B-1"]).await;
        let bob = app.buyer("bob");
        let (status, _) = list(&app, id(&order), &bob, &["stalls-B-1"]).await;
        assert_eq!(status, StatusCode::OK);
        let event_id = boxoffice_core::ids::EventId(event.parse().unwrap());
        ::redis::cmd("DEL")
            .arg(boxoffice_store::redis::holds::keys::sync(event_id))
            .query_async::<()>(&mut conn)
            .await
            .unwrap();
        let answers = withdrawal_and_ten_holds(&app, &event, &order, &format!("r{round}b")).await;
        let (holds, withdrawal) = answers.split_at(10);
        let statuses = app.seat_statuses(&event).await;
        if withdrawal[0].0 == StatusCode::NO_CONTENT {
            withdrawn += 1;
            assert_eq!(
                tally(holds),
                [(409, 10)].into(),
                "round {round}: {answers:?}"
            );
            assert_eq!(statuses["stalls-B-1"], "sold", "round {round}");
        } else {
            assert_eq!(
                withdrawal[0].0,
                StatusCode::CONFLICT,
                "round {round}: {answers:?}"
            );
            assert_eq!(tally(holds), [(201, 1), (409, 9)].into(), "round {round}");
            assert_eq!(statuses["stalls-B-1"], "held", "round {round}");
        }
        // A hold after it all: refused either way (sold again, or held).
        let (status, _) = app
            .post_holds(&event, &app.buyer(&format!("late{round}")), &["stalls-B-1"])
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "round {round}");
    }
    eprintln!("withdrawals that won: {withdrawn} of 20");
}

crate::helpers::stores::conformance!(
    a_listed_seat_is_bought_by_another_buyer_and_leaves_the_sellers_order,
    a_withdrawal_and_holds_at_once_one_wins,
    a_resale_sold_while_its_seller_moves_it,
);
