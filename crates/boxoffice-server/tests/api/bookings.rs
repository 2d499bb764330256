//! General admission: bookings that never oversell, idempotent repeats, cancellation.
//! (A long file: one area's rules, with and without the sale-day gate, and the races
//! that prove them.)

use std::collections::BTreeMap;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{race, race_riding_out, spawn_race_app, tally};
use crate::helpers::{spawn_app, As, TestApp};

fn booking_request(
    app: &TestApp,
    event: &str,
    who: &As,
    quantity: u32,
    key: Option<&str>,
) -> RequestBuilder {
    let request = app
        .request(Method::POST, &format!("/v1/events/{event}/bookings"), who)
        .json(&json!({"area": "floor", "quantity": quantity}));
    match key {
        Some(key) => request.header("Idempotency-Key", key),
        None => request,
    }
}

async fn post_bookings(
    app: &TestApp,
    event: &str,
    who: &As,
    quantity: u32,
    key: Option<&str>,
) -> (StatusCode, Value) {
    crate::helpers::read(
        booking_request(app, event, who, quantity, key)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Places left in the event's floor area, straight from Postgres.
async fn left(app: &TestApp) -> i32 {
    sqlx::query_scalar("select seats_left from ga_area where code = 'floor'")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_booking_takes_places_and_writes_its_outbox_row() {
    let app = spawn_app().await;
    let event = app.create_event().await; // floor: 50 places at 3000, at most 10 per booking
    let (status, booking) = post_bookings(&app, &event, &app.buyer("alice"), 3, None).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    assert_eq!(booking["event_id"], event.as_str());
    assert_eq!(
        (booking["area"].clone(), booking["quantity"].clone()),
        (json!("floor"), json!(3))
    );
    assert_eq!(
        (booking["total_cents"].clone(), booking["currency"].clone()),
        (json!(9000), json!("EUR"))
    );
    assert_eq!(left(&app).await, 47);
    let (_, availability) = app.get(&format!("/v1/events/{event}/availability")).await;
    assert_eq!(
        availability["ga"],
        json!([{"code": "floor", "capacity": 50, "left": 47}])
    );
    let topics: Vec<String> = sqlx::query_scalar("select topic from outbox")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(topics, ["booking.created"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_buyers_at_fifty_places_book_exactly_fifty() {
    let app = spawn_race_app().await;
    let event = app.create_event().await;
    let answers = race_riding_out(
        (0..200)
            .map(|i| booking_request(&app, &event, &app.buyer(&format!("b{i}")), 1, None))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 50), (409, 150)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "sold_out" && p["left"] == 0));
    assert_eq!(left(&app).await, 0);
    assert_eq!(app.count("ga_booking").await, 50);
    assert_eq!(app.count("outbox").await, 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mixed_quantities_racing_add_up_to_capacity_and_never_go_below_zero() {
    let app = spawn_race_app().await;
    let event = app.create_event().await;
    let quantities: Vec<u32> = (0..80).map(|i| i % 4 + 1).collect();
    let answers = race_riding_out(
        quantities
            .iter()
            .enumerate()
            .map(|(i, q)| booking_request(&app, &event, &app.buyer(&format!("b{i}")), *q, None))
            .collect(),
    )
    .await;
    assert!(answers
        .iter()
        .all(|(s, _)| *s == StatusCode::CREATED || *s == StatusCode::CONFLICT));
    let sold: u32 = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .map(|(_, b)| b["quantity"].as_u64().unwrap() as u32)
        .sum();
    let places_left = left(&app).await;
    assert!(places_left >= 0);
    assert_eq!(
        sold + places_left as u32,
        50,
        "places sold plus places left is the capacity"
    );
    let booked: i64 = sqlx::query_scalar("select coalesce(sum(quantity), 0) from ga_booking")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(booked, i64::from(sold));
    // Every refusal said truthfully that fewer places were left than it asked for.
    for ((status, body), q) in answers.iter().zip(&quantities) {
        if *status == StatusCode::CONFLICT {
            assert!(body["left"].as_u64().unwrap() < u64::from(*q), "{body}");
        }
    }
}

/// One buyer, ten bookings of one place at once, in an area whose `max_per_user` is 4:
/// four are booked, six answer `limit_exceeded`, and the buyer has exactly four places.
/// Another buyer still books; cancelling gives the places back to the buyer's share.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_buyers_racing_bookings_stop_at_the_areas_max_per_user() {
    let app = spawn_race_app().await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["ga_areas"][0]["max_per_user"] = json!(4);
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    let (_, view) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(view["ga_areas"][0]["max_per_user"], 4, "{view}");
    let alice = app.buyer("alice");
    let answers = race(
        (0..10)
            .map(|_| booking_request(&app, &event, &alice, 1, None))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 4), (409, 6)]));
    for (status, problem) in answers.iter().filter(|(s, _)| *s == StatusCode::CONFLICT) {
        assert_eq!(problem["code"], "limit_exceeded", "{status} {problem}");
    }
    let booked: i64 = sqlx::query_scalar(
        "select sum(quantity) from ga_booking where user_id = 'alice' and status = 'confirmed'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!((booked, left(&app).await), (4, 46));

    let (status, _) = post_bookings(&app, &event, &app.buyer("bob"), 4, None).await;
    assert_eq!(status, StatusCode::CREATED);
    let first = answers
        .iter()
        .find(|(s, _)| *s == StatusCode::CREATED)
        .unwrap();
    let id = first.1["booking_id"].as_str().unwrap();
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/bookings/{id}/cancel"),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, booking) = post_bookings(&app, &event, &alice, 1, None).await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    let (status, problem) = post_bookings(&app, &event, &alice, 1, None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("limit_exceeded"))
    );

    // Unset, the cap is the area's max_per_booking; out of range, it is refused.
    let event = app.create_event().await;
    let (_, view) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(view["ga_areas"][0]["max_per_user"], 10, "{view}");
    for bad in [json!(0), json!(51)] {
        let mut spec = crate::helpers::gala(&venue);
        spec["ga_areas"][0]["max_per_user"] = bad.clone();
        let (status, problem) = app.post_events(&spec).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["field"], "ga_areas[0].max_per_user");
    }
}

/// JSON does not tell `2` from `2.0`, nor does the schema's `integer`: both book two
/// places; a fraction is refused and books nothing.
#[tokio::test]
async fn a_quantity_written_as_a_whole_float_counts_and_a_fraction_is_refused() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let path = format!("/v1/events/{event}/bookings");
    let (status, booking) = app
        .send(
            Method::POST,
            &path,
            &alice,
            Some(&json!({"area": "floor", "quantity": 2.0})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    assert_eq!(booking["quantity"], 2);
    let (status, problem) = app
        .send(
            Method::POST,
            &path,
            &alice,
            Some(&json!({"area": "floor", "quantity": 2.5})),
        )
        .await;
    assert!(status.is_client_error(), "{status} {problem}");
    assert_eq!(left(&app).await, 48);
}

#[tokio::test]
async fn a_repeated_idempotency_key_gets_the_first_answer_again() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, first) = post_bookings(&app, &event, &alice, 2, Some("key-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, again) = post_bookings(&app, &event, &alice, 2, Some("key-1")).await;
    assert_eq!((status, &again), (StatusCode::CREATED, &first));
    assert_eq!(left(&app).await, 48, "the repeat booked nothing");

    // The same key from another user is that user's own.
    let (status, bobs) = post_bookings(&app, &event, &app.buyer("bob"), 2, Some("key-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(bobs["booking_id"], first["booking_id"]);

    // The same key for a different request is refused and changes nothing.
    let (status, problem) = post_bookings(&app, &event, &alice, 5, Some("key-1")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed"))
    );
    assert_eq!(problem["errors"][0]["field"], "Idempotency-Key");
    assert_eq!(left(&app).await, 46);

    // A key belongs to one event: in another, it is a new request.
    let other = app.create_event().await;
    let (status, elsewhere) = post_bookings(&app, &other, &alice, 5, Some("key-1")).await;
    assert_eq!(status, StatusCode::CREATED, "{elsewhere}");
    assert_ne!(elsewhere["booking_id"], first["booking_id"]);
}

#[tokio::test]
async fn a_sold_out_answer_is_repeated_too() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    sqlx::query("update ga_area set seats_left = 1")
        .execute(&app.db)
        .await
        .unwrap();
    let alice = app.buyer("alice");
    let (status, first) = post_bookings(&app, &event, &alice, 2, Some("k")).await;
    assert_eq!(
        (status, first["code"].as_str(), first["left"].as_u64()),
        (StatusCode::CONFLICT, Some("sold_out"), Some(1))
    );
    sqlx::query("update ga_area set seats_left = 10")
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(
        post_bookings(&app, &event, &alice, 2, Some("k")).await,
        (StatusCode::CONFLICT, first)
    );
    assert_eq!(
        post_bookings(&app, &event, &alice, 2, Some("other"))
            .await
            .0,
        StatusCode::CREATED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_repeats_of_one_key_make_one_booking() {
    let app = spawn_race_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let answers = race_riding_out(
        (0..20)
            .map(|_| booking_request(&app, &event, &alice, 4, Some("same")))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 20)]));
    assert!(answers
        .iter()
        .all(|(_, b)| b["booking_id"] == answers[0].1["booking_id"]));
    assert_eq!(app.count("ga_booking").await, 1);
    assert_eq!(left(&app).await, 46);
}

#[tokio::test]
async fn cancelling_returns_the_places() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, booking) = post_bookings(&app, &event, &alice, 5, None).await;
    let cancel = format!(
        "/v1/bookings/{}/cancel",
        booking["booking_id"].as_str().unwrap()
    );
    assert_eq!(
        app.send(Method::POST, &cancel, &app.buyer("bob"), None)
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(left(&app).await, 45);
    let (status, cancelled) = app.send(Method::POST, &cancel, &alice, None).await;
    assert_eq!(
        (status, cancelled["status"].clone()),
        (StatusCode::OK, json!("cancelled"))
    );
    assert_eq!(left(&app).await, 50);
    let (status, _) = app.send(Method::POST, &cancel, &As::Admin, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        left(&app).await,
        50,
        "a second cancellation returns nothing more"
    );
    let topics: Vec<String> = sqlx::query_scalar("select topic from outbox order by outbox_id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(topics, ["booking.created", "booking.cancelled"]);
    let (status, problem) = app
        .send(
            Method::POST,
            &format!("/v1/bookings/{}/cancel", uuid::Uuid::new_v4()),
            &alice,
            None,
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

#[tokio::test]
async fn bad_bookings_answer_their_4xx_and_change_nothing() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let bookings = format!("/v1/events/{event}/bookings");
    let cases: Vec<(As, Value, StatusCode, &str)> = vec![
        (
            As::Nobody,
            json!({"area": "floor", "quantity": 1}),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            alice.clone(),
            json!({"area": "balcony", "quantity": 1}),
            StatusCode::NOT_FOUND,
            "area_not_found",
        ),
        (
            alice.clone(),
            json!({"area": "floor", "quantity": 0}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"area": "floor", "quantity": -2}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"area": "floor", "quantity": 11}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
        (
            alice.clone(),
            json!({"area": "floor"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        ),
    ];
    for (who, body, status, code) in cases {
        let (got, problem) = app.send(Method::POST, &bookings, &who, Some(&body)).await;
        assert_eq!(
            (got, problem["code"].as_str()),
            (status, Some(code)),
            "{body}: {problem}"
        );
    }
    let (status, problem) = post_bookings(
        &app,
        "6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c",
        &alice,
        1,
        None,
    )
    .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
    sqlx::query("update event set starts_at = now() - interval '1 second'")
        .execute(&app.db)
        .await
        .unwrap();
    let (status, problem) = post_bookings(&app, &event, &alice, 1, Some("late")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("event_started"))
    );
    assert_eq!(left(&app).await, 50);
    assert_eq!(app.count("ga_booking").await, 0);
    assert_eq!(
        app.count("idempotency").await,
        0,
        "invalid requests leave no answer behind"
    );
}

async fn spawn_gated_app() -> TestApp {
    crate::helpers::spawn_app_with(|s| {
        s.stores.ga_gate = true;
        s.stores.redis =
            crate::helpers::stores::test_redis(crate::helpers::stores::redis_url(), false);
        s.stores.database.pool_size = 8;
        s.stores.database.acquire_timeout = std::time::Duration::from_secs(30);
        s.limits.request_timeout = std::time::Duration::from_secs(60);
    })
    .await
}

/// The value of a counter without labels in the server's `/metrics` (each server counts
/// on its own, so this is exactly what this test's server did).
async fn counter(app: &TestApp, name: &str) -> f64 {
    app.counter(name).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_the_gate_two_thousand_buyers_at_fifty_places_book_fifty_and_few_reach_postgres() {
    let app = spawn_gated_app().await;
    let event = app.create_event().await;
    let answers = race_riding_out(
        (0..2000)
            .map(|i| booking_request(&app, &event, &app.buyer(&format!("b{i}")), 1, None))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 50), (409, 1950)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "sold_out"));
    assert_eq!(left(&app).await, 0);
    assert_eq!(app.count("ga_booking").await, 50);

    let rejected = counter(&app, "ga_gate_rejected_total").await;
    let reached = counter(&app, "ga_bookings_reached_postgres_total").await;
    // A booking the adaptive limit refused (and that was asked again at its turn) had
    // passed the gate and given its place back: counted as neither.
    assert_eq!(rejected + reached, 2000.0, "every booking is counted once");
    assert!(rejected >= 1900.0, "the gate turned most away: {rejected}");
    assert!(
        reached < 400.0,
        "far fewer than 2,000 reached the row lock: {reached}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_gate_counter_is_rebuilt_from_postgres_and_never_oversells() {
    let app = spawn_gated_app().await;
    let event = app.create_event().await;
    for i in 0..10 {
        assert_eq!(
            post_bookings(&app, &event, &app.buyer(&format!("early-{i}")), 1, None)
                .await
                .0,
            StatusCode::CREATED
        );
    }
    // Redis loses the counter mid-sale (a flush, a failover).
    let redis = redis::Client::open(crate::helpers::stores::redis_url()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("DEL")
        .arg(format!("gate:{{{event}}}:floor"))
        .query_async(&mut conn)
        .await
        .unwrap();

    let answers = race_riding_out(
        (0..100)
            .map(|i| booking_request(&app, &event, &app.buyer(&format!("late-{i}")), 1, None))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 40), (409, 60)]));
    assert_eq!(left(&app).await, 0);
    assert_eq!(app.count("ga_booking").await, 50);
    let gate: i64 = redis::cmd("GET")
        .arg(format!("gate:{{{event}}}:floor"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(gate, 0, "the rebuilt counter agrees with Postgres");
}

#[tokio::test]
async fn a_cancelled_booking_gives_its_places_back_to_the_gate() {
    let app = spawn_gated_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    // Ten places each (every buyer's share of the area): four fans, then Alice.
    for i in 0..4 {
        let fan = app.buyer(&format!("fan-{i}"));
        let (status, _) = post_bookings(&app, &event, &fan, 10, None).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, last) = post_bookings(&app, &event, &alice, 10, None).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = post_bookings(&app, &event, &app.buyer("bob"), 1, None).await;
    assert_eq!(
        (status, problem["left"].as_u64()),
        (StatusCode::CONFLICT, Some(0))
    );
    let cancel = format!(
        "/v1/bookings/{}/cancel",
        last["booking_id"].as_str().unwrap()
    );
    assert_eq!(
        app.send(Method::POST, &cancel, &alice, None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        post_bookings(&app, &event, &app.buyer("bob"), 10, None)
            .await
            .0,
        StatusCode::CREATED
    );
    // A second cancellation of the same booking gives nothing back twice.
    assert_eq!(
        app.send(Method::POST, &cancel, &alice, None).await.0,
        StatusCode::OK
    );
    let (status, _) = post_bookings(&app, &event, &app.buyer("carol"), 1, None).await;
    assert_eq!(status, StatusCode::CONFLICT);
}
