//! What only the redis store faces: Redis losing every key mid-sale (holds, and orders
//! waiting for payment), Redis going away and coming back, and Redis not knowing a sale
//! Postgres made. Each test runs its own Redis server, so flushing or stopping it touches no
//! other test. (Just over 500 lines: each loss is its own test, its steps spelled out.)

use std::collections::BTreeMap;
use std::time::Duration;

use boxoffice_server::config::HoldStoreKind;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use boxoffice_core::ids::EventId;
use boxoffice_store::redis::holds::keys;
use boxoffice_store::redis::link::RedisLink;

use crate::helpers::stores::{test_redis, PrivateRedis, Store};
use crate::helpers::{
    commit_order_directly, gala, held, race, sell_directly, spawn_app_on, spawn_app_with, spawn_on,
    tally, token, As, TestApp,
};

/// How long the server of the flush test trusts the store's word that a seat is taken.
const KNOWN_TAKEN: Duration = Duration::from_secs(1);

/// Sends every checkout of `tokens` (`copies` times each, as its owner) at once.
async fn checkouts(
    app: &TestApp,
    event: &str,
    tokens: &[(&As, &str)],
    copies: usize,
) -> Vec<(StatusCode, Value)> {
    let mut requests = Vec::new();
    for (who, token) in tokens {
        for _ in 0..copies {
            requests.push(
                app.request(Method::POST, &format!("/v1/events/{event}/orders"), who)
                    .json(&json!({"hold_token": token})),
            );
        }
    }
    race(requests).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn flushall_between_a_hold_and_its_checkout_sells_nothing() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED);

    redis.flushall();
    let answers = checkouts(&app, &event, &[(&alice, token(&hold))], 10).await;
    assert_eq!(tally(&answers), BTreeMap::from([(409, 10)]));
    assert!(answers.iter().all(|(_, p)| p["code"] == "hold_not_live"));
    assert_eq!(app.count("ticket_order").await, 0);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-B-1"].as_str(),
            statuses["stalls-B-2"].as_str()
        ),
        ("available", "available")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn flushall_between_two_buyers_holds_on_one_seat_sells_it_once() {
    let redis = PrivateRedis::start();
    let url = redis.url();
    let app = spawn_app_with(move |s| {
        s.stores.hold_store = HoldStoreKind::Redis;
        s.stores.redis = test_redis(url, false);
        s.live.known_taken = KNOWN_TAKEN;
    })
    .await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, first) = app.post_holds(&event, &alice, &["stalls-C-2"]).await;
    redis.flushall();
    // The server held the seat a moment ago, so for `known_taken` it refuses the seat
    // without asking Redis. After that, Redis, which forgot alice's hold, gives bob the
    // seat too.
    tokio::time::sleep(KNOWN_TAKEN + Duration::from_millis(100)).await;
    let (status, second) = app.post_holds(&event, &bob, &["stalls-C-2"]).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");

    let answers = checkouts(
        &app,
        &event,
        &[(&alice, token(&first)), (&bob, token(&second))],
        15,
    )
    .await;
    assert!(answers.iter().all(|(s, _)| !s.is_server_error()));
    let (alices, bobs) = answers.split_at(15);
    assert_eq!(tally(alices), BTreeMap::from([(409, 15)]));
    assert_eq!(tally(bobs), BTreeMap::from([(200, 14), (201, 1)]));
    let sold: Vec<(String, String)> = sqlx::query_as(
        "select o.user_id, s.seat_id from ticket_order o join order_seat s using (event_id, order_id)",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(sold, [("bob".to_owned(), "stalls-C-2".to_owned())]);
    assert_eq!(app.seat_statuses(&event).await["stalls-C-2"], "sold");
    assert!(held(&app, &event).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pending_order_outlives_redis_restarting_empty() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(600);
    let (status, event) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    let event = event["id"].as_str().unwrap().to_owned();
    let (alice, carol) = (app.buyer("alice"), app.buyer("carol"));
    let paid = app
        .order_seats(&event, &alice, &["stalls-C-1", "stalls-C-2"])
        .await;
    let dropped = app.order_seats(&event, &carol, &["stalls-C-3"]).await;
    for order in [&paid, &dropped] {
        assert_eq!(order["status"], "pending_payment", "{order}");
    }

    // Redis restarts empty: it forgets every key and every script.
    redis.flushall();
    redis.script_flush();

    // Nobody else takes the pending orders' seats, however many ask at once.
    let rivals: Vec<As> = (0..12).map(|i| app.buyer(&format!("rival-{i}"))).collect();
    let seats = ["stalls-C-1", "stalls-C-2", "stalls-C-3"];
    let asks = rivals.iter().enumerate().map(|(i, who)| {
        app.request(Method::POST, &format!("/v1/events/{event}/holds"), who)
            .json(&json!({"seats": [seats[i % 3]]}))
    });
    let answers = race(asks.collect()).await;
    assert_eq!(tally(&answers), BTreeMap::from([(409, 12)]), "{answers:?}");
    assert!(answers.iter().all(|(_, p)| p["code"] == "seat_unavailable"));

    // Each order can still be paid before its pay_by (or cancelled).
    let pay = |order: &Value| {
        let id = order["order_id"].as_str().unwrap().to_owned();
        let body = json!({"reference": format!("psp-{id}"), "amount_cents": order["total_cents"]});
        app.request(
            Method::POST,
            &format!("/v1/orders/{id}/payment"),
            &As::Admin,
        )
        .json(&body)
    };
    let answers = race(vec![pay(&paid), pay(&paid)]).await;
    let mut codes: Vec<u16> = answers.iter().map(|(s, _)| s.as_u16()).collect();
    codes.sort();
    assert_eq!(codes, [200, 200], "{answers:?}");
    assert!(
        answers.iter().all(|(_, o)| o["status"] == "paid"),
        "{answers:?}"
    );
    let id = dropped["order_id"].as_str().unwrap();
    let (status, cancelled) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{id}/cancel"),
            &carol,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");

    // The paid seats stay sold; the cancelled order's seat sells again, once.
    let answers = race(
        rivals
            .iter()
            .map(|who| {
                app.request(Method::POST, &format!("/v1/events/{event}/holds"), who)
                    .json(&json!({"seats": ["stalls-C-3"]}))
            })
            .collect(),
    )
    .await;
    assert_eq!(
        tally(&answers),
        BTreeMap::from([(201, 1), (409, 11)]),
        "{answers:?}"
    );
    let (status, problem) = app.post_holds(&event, &rivals[0], &["stalls-C-1"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    let sold: Vec<(String, String)> = sqlx::query_as(
        "select o.user_id, s.seat_id from ticket_order o join order_seat s using (event_id, order_id)
          where o.status = 'confirmed' order by s.seat_id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        sold,
        [
            ("alice".to_owned(), "stalls-C-1".to_owned()),
            ("alice".to_owned(), "stalls-C-2".to_owned())
        ]
    );
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        [
            &statuses["stalls-C-1"],
            &statuses["stalls-C-2"],
            &statuses["stalls-C-3"]
        ],
        ["sold", "sold", "held"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_a_flush_sold_seats_are_loaded_again_before_the_next_hold() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app.post_holds(&event, &alice, &["box-L-1"]).await;
    assert_eq!(
        app.post_orders(&event, &alice, token(&hold)).await.0,
        StatusCode::CREATED
    );
    // Redis also forgets its scripts (as after a restart): they are sent again on NOSCRIPT.
    redis.flushall();
    redis.script_flush();
    let (status, problem) = app
        .post_holds(&event, &app.buyer("bob"), &["box-L-1"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable")),
        "Redis refuses the sold seat again: {problem}"
    );
    assert_eq!(app.count("order_seat").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_redis_misses_a_sale_postgres_refuses_the_second_one() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    // Redis loads the event's state with this first hold...
    let (status, _) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // ...and then a sale happens that Redis never hears of.
    sell_directly(&app, &event, &["stalls-A-4"]).await;
    let bob = app.buyer("bob");
    let (status, hold) = app.post_holds(&event, &bob, &["stalls-A-4"]).await;
    assert_eq!(status, StatusCode::CREATED, "Redis did not know: {hold}");

    let answers = checkouts(&app, &event, &[(&bob, token(&hold))], 10).await;
    assert_eq!(tally(&answers), BTreeMap::from([(409, 10)]));
    assert_eq!(app.count("order_seat").await, 1, "Postgres decided");
    let missed = app.counter("redis_missed_sales_total").await;
    assert!(
        (1.0..=10.0).contains(&missed),
        "this server counted the missed sale: {missed}"
    );
    // Redis learnt the sale from Postgres: the seat is refused from now on.
    let (status, _) = app.post_holds(&event, &bob, &["stalls-A-4"]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(held(&app, &event).await, ["stalls-A-1"]);
}

/// An instance that dies after Postgres committed an order and before Redis marked its
/// seats sold leaves the hold protected in Redis. The buyer asks again with the same token:
/// they get the order, and Redis learns the sale then, not when the protection lapses.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_checkout_asked_again_after_its_instance_died_finishes_the_sale_in_redis() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    commit_order_directly(
        &app,
        &event,
        "alice",
        token(&hold),
        &["stalls-B-1", "stalls-B-2"],
    )
    .await;
    assert_eq!(held(&app, &event).await, ["stalls-B-1", "stalls-B-2"]);

    let answers = checkouts(&app, &event, &[(&alice, token(&hold))], 5).await;
    assert_eq!(tally(&answers), BTreeMap::from([(200, 5)]));
    assert_eq!(app.count("ticket_order").await, 1);
    assert!(held(&app, &event).await.is_empty(), "the hold is over");
    let (status, refused) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-B-1"])
        .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    assert_eq!(app.counter("redis_missed_sales_total").await, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_key_of_an_event_expires() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, sold) = app
        .post_holds(&event, &alice, &["stalls-A-1", "stalls-A-2"])
        .await;
    let (status, order) = app.post_orders(&event, &alice, token(&sold)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, kept) = app.post_holds(&event, &bob, &["stalls-B-1"]).await;
    assert_eq!(
        app.hold_call(Method::POST, &event, token(&kept), "/extend", &bob)
            .await
            .0,
        StatusCode::OK
    );
    let (_, released) = app.post_holds(&event, &bob, &["stalls-B-2"]).await;
    assert_eq!(
        app.hold_call(Method::DELETE, &event, token(&released), "", &bob)
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    let cancel = format!("/v1/orders/{}/cancel", order["order_id"].as_str().unwrap());
    assert_eq!(
        app.send(Method::POST, &cancel, &alice, None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        app.post_holds(&event, &alice, &["stalls-C-1"]).await.0,
        StatusCode::CREATED
    );

    let mut conn = redis.connection().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("*{{{event}}}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(keys.len() >= 5, "{keys:?}");
    for key in keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        // -1 is a key without an expiry. (-2: it lapsed between the listing and this read,
        // 0: it is lapsing now; both are expiring.)
        assert_ne!(ttl, -1, "{key} never expires");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_selling_events_state_is_refreshed_from_postgres_before_it_lapses() {
    let redis = PrivateRedis::start();
    let app = spawn_on(&redis).await;
    let event = app.create_event().await;
    let bob = app.buyer("bob");
    assert_eq!(
        app.post_holds(&event, &bob, &["stalls-A-1"]).await.0,
        StatusCode::CREATED
    );
    // A sale Redis never hears of, and the loaded state due for a refresh.
    sell_directly(&app, &event, &["stalls-A-4"]).await;
    let mut conn = redis.connection().await;
    let sync = boxoffice_store::redis::holds::keys::sync(boxoffice_core::ids::EventId(
        event.parse().unwrap(),
    ));
    redis::cmd("HSET")
        .arg(&sync)
        .arg("r")
        .arg(0)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();

    // The next hold refreshes it: the state lives on, and now knows the sale.
    assert_eq!(
        app.post_holds(&event, &bob, &["stalls-A-2"]).await.0,
        StatusCode::CREATED
    );
    let refresh_at: i64 = redis::cmd("HGET")
        .arg(&sync)
        .arg("r")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(refresh_at > 0, "the state was refreshed");
    let (status, problem) = app.post_holds(&event, &bob, &["stalls-A-4"]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
}

/// A checkout that protected its hold's seats and then never finished (its commit failed,
/// or its instance died) leaves the hold's keys alive past the hold's own time. Asked
/// again once that time has passed, the checkout is refused, as the postgres store
/// refuses a hold that was not live when its statement began.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_checkout_asked_again_after_the_hold_expired_is_refused_though_its_seats_are_protected() {
    let app = spawn_app_on(Store::Redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-A-1", "stalls-A-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");

    let id = EventId(event.parse().unwrap());
    let hold_token: uuid::Uuid = token(&hold).parse().unwrap();
    let mut conn = RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let mut call = LEFT_BY_A_DEAD_CHECKOUT.key(keys::hold(id, hold_token));
    call.key(keys::held(id));
    for seat in ["stalls-A-1", "stalls-A-2"] {
        call.key(keys::seat(id, seat)).arg(seat);
    }
    call.invoke_async::<()>(&mut conn).await.unwrap();

    let (status, problem) = app.post_orders(&event, &alice, token(&hold)).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live")),
        "{problem}"
    );
    assert_eq!(app.count("ticket_order").await, 0, "nothing was sold");
}

/// What a checkout leaves in Redis when it protected the hold's seats for a minute and
/// went no further, with the hold's own time a second past: KEYS holdtok, held, seats...;
/// ARGV the seat ids.
static LEFT_BY_A_DEAD_CHECKOUT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| {
        redis::Script::new(
            r"
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('HSET', KEYS[1], 'x', now - 1000, 'co', 1)
redis.call('PEXPIREAT', KEYS[1], now + 60000)
for i = 3, #KEYS do
  redis.call('PEXPIREAT', KEYS[i], now + 60000)
  redis.call('ZADD', KEYS[2], now + 60000, ARGV[i - 2])
end
",
        )
    });

/// A sale made while the event's sold set is missing (it lapsed, or the event had sold
/// nothing when its state was loaded) creates the set, and the set expires like every key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sale_that_creates_the_sold_set_gives_it_a_lifetime() {
    let app = spawn_app_on(Store::Redis).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let sold = keys::sold(EventId(event.parse().unwrap()));
    let mut conn = RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    redis::cmd("DEL")
        .arg(&sold)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();

    let (status, order) = app.post_orders(&event, &alice, token(&hold)).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let members: Vec<String> = redis::cmd("SMEMBERS")
        .arg(&sold)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(members, ["stalls-A-1"]);
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&sold)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(ttl > 0, "the sold set expires (PTTL {ttl})");
}
