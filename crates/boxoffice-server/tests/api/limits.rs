//! Abuse limits: anonymous sessions per client address, holds per user, on one instance
//! and across instances sharing Redis.

use std::collections::BTreeMap;
use std::time::Duration;

use boxoffice_server::config::HoldStoreKind;
use boxoffice_server::Settings;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::limit::{fixed_limit, in_flight, of_path, shed, writes_wait};
use crate::helpers::stores::{test_redis, PrivateRedis};
use crate::helpers::{held, spawn_app_with, As, TestApp};
use crate::helpers::{race, tally};

/// The gala's stalls, row by row (A to C, four seats each).
const STALLS: [&str; 12] = [
    "stalls-A-1",
    "stalls-A-2",
    "stalls-A-3",
    "stalls-A-4",
    "stalls-B-1",
    "stalls-B-2",
    "stalls-B-3",
    "stalls-B-4",
    "stalls-C-1",
    "stalls-C-2",
    "stalls-C-3",
    "stalls-C-4",
];

/// A client address of this test's own, so its counts are nobody else's.
fn fresh_address() -> String {
    let b = uuid::Uuid::new_v4().into_bytes();
    format!("10.{}.{}.{}", b[0], b[1], b[2])
}

fn session_request(app: &TestApp, forwarded_for: &str) -> reqwest::RequestBuilder {
    app.request(Method::POST, "/v1/sessions", &As::Nobody)
        .header("x-forwarded-for", forwarded_for)
}

/// Five a minute: a burst of five, then one every 12 s, far longer than any of these
/// tests takes, so the counts below are exact.
fn limited(s: &mut Settings) {
    s.limits.sessions_per_minute = 5;
    s.limits.holds_per_minute = 5;
    s.server.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_are_limited_per_client_address_with_retry_after() {
    let app = spawn_app_with(limited).await;
    let client = fresh_address();
    let answers = race((0..30).map(|_| session_request(&app, &client)).collect()).await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 25)]));
    let response = session_request(&app, &client).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let (_, problem) = crate::helpers::read(response).await;
    assert_eq!(problem["code"], "rate_limited");
    assert_eq!(app.counter("sessions_rate_limited_total").await, 26.0);

    // Another client has its own budget.
    let other = session_request(&app, &fresh_address())
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_forwarded_address_from_an_untrusted_peer_is_ignored() {
    let app = spawn_app_with(|s| {
        limited(s);
        s.server.trusted_proxies = Vec::new();
    })
    .await;
    // Each request claims another address, but the peer is what counts.
    let mut statuses = BTreeMap::new();
    for _ in 0..8 {
        let response = session_request(&app, &fresh_address())
            .send()
            .await
            .unwrap();
        *statuses.entry(response.status().as_u16()).or_insert(0) += 1;
    }
    assert_eq!(statuses, BTreeMap::from([(201, 5), (429, 3)]));
}

/// A server with the low limits on `store`, counting in a Redis of its own (kept alive by
/// the returned handle).
async fn spawn_limited(store: HoldStoreKind) -> (TestApp, PrivateRedis) {
    let redis = PrivateRedis::start();
    let url = redis.url();
    let app = spawn_app_with(move |s| {
        limited(s);
        s.stores.hold_store = store;
        s.stores.redis = test_redis(url, false);
    })
    .await;
    (app, redis)
}

async fn holds_are_limited_per_user(store: HoldStoreKind) {
    let (app, _redis) = spawn_limited(store).await;
    let event = app.create_event().await;
    let user = format!("churner-{}", uuid::Uuid::new_v4());
    let churner = app.buyer(&user);
    let seats = &STALLS[..7];
    let answers = race(
        seats
            .iter()
            .map(|seat| {
                app.request(Method::POST, &format!("/v1/events/{event}/holds"), &churner)
                    .json(&json!({"seats": [seat]}))
            })
            .collect(),
    )
    .await;
    // Five holds are allowed; the per-user seat limit (4) refuses one of them, the rate
    // limit the last two.
    assert_eq!(
        tally(&answers),
        BTreeMap::from([(201, 4), (409, 1), (429, 2)])
    );
    assert_eq!(held(&app, &event).await.len(), 4);
    // Another buyer is not limited by the churner.
    let (status, _) = app
        .post_holds(&event, &app.buyer("someone-else"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holds_are_limited_per_user_on_the_postgres_store() {
    holds_are_limited_per_user(HoldStoreKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holds_are_limited_per_user_on_the_redis_store() {
    holds_are_limited_per_user(HoldStoreKind::Redis).await;
}

/// Refusals of a seat known taken, answered without the hold store, count against the
/// buyer's hold rate like the holds the store answers.
async fn refusals_of_a_seat_known_taken_count_against_the_rate(store: HoldStoreKind) {
    let (app, _redis) = spawn_limited(store).await;
    let event = app.create_event().await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("holder"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let asker = app.buyer(&format!("asker-{}", uuid::Uuid::new_v4()));
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(
            app.post_holds(&event, &asker, &["stalls-C-1"])
                .await
                .0
                .as_u16(),
        );
    }
    assert_eq!(statuses, [409, 409, 409, 409, 409, 429, 429]);
    assert_eq!(
        app.counter("boxoffice_holds_refused_unasked_total").await,
        5.0
    );
    assert_eq!(app.counter("holds_rate_limited_total").await, 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_of_a_seat_known_taken_count_against_the_rate_on_the_postgres_store() {
    refusals_of_a_seat_known_taken_count_against_the_rate(HoldStoreKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_of_a_seat_known_taken_count_against_the_rate_on_the_redis_store() {
    refusals_of_a_seat_known_taken_count_against_the_rate(HoldStoreKind::Redis).await;
}

/// A season hold is a hold in each night it covers: it counts against the buyer's hold
/// rate there as the night's own holds do, and past it is answered 429 like them.
async fn season_holds_count_against_the_hold_rate(store: HoldStoreKind) {
    let (app, _redis) = spawn_limited(store).await;
    let (events, season) = crate::helpers::seasons::season(&app).await;
    let user = format!("subscriber-{}", uuid::Uuid::new_v4());
    let buyer = app.buyer(&user);
    // Two holds of the first night's own seats: two of its five a minute.
    for seat in ["stalls-C-1", "stalls-C-2"] {
        let (status, body) = app.post_holds(&events[0], &buyer, &[seat]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let mut statuses = Vec::new();
    let mut last = None;
    for seat in ["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4"] {
        let response = app
            .request(Method::POST, &format!("/v1/seasons/{season}/holds"), &buyer)
            .json(&json!({"seats": [seat]}))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        last = Some(response);
    }
    // Holds three and four of the first night; the fifth passes the seat limit (4), and
    // the sixth the rate, wherever it is counted.
    assert_eq!(statuses, [201, 201, 409, 429]);
    let last = last.unwrap();
    let retry_after: u64 = last.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let (_, problem) = crate::helpers::read(last).await;
    assert_eq!(problem["code"], "rate_limited");
    assert_eq!(app.counter("holds_rate_limited_total").await, 1.0);
    let user = boxoffice_core::ids::UserId::parse(&user).unwrap();
    let mut held = Vec::new();
    for event in &events {
        let event = boxoffice_core::ids::EventId(event.parse().unwrap());
        held.push(app.holds.seats_held_by(event, &user).await.unwrap());
    }
    assert_eq!(held, [4, 2, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn season_holds_count_against_the_hold_rate_on_the_postgres_store() {
    season_holds_count_against_the_hold_rate(HoldStoreKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn season_holds_count_against_the_hold_rate_on_the_redis_store() {
    season_holds_count_against_the_hold_rate(HoldStoreKind::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_sharing_redis_share_one_limit() {
    let mut redis = PrivateRedis::start();
    let url = redis.url();
    let spawn = |url: String| {
        spawn_app_with(move |s| {
            limited(s);
            s.stores.ga_gate = true;
            s.stores.redis = test_redis(url, false);
        })
    };
    let one = spawn(url.clone()).await;
    let two = spawn(url).await;
    let client = fresh_address();
    let answers = race(
        (0..40)
            .map(|i| session_request(if i % 2 == 0 { &one } else { &two }, &client))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 35)]));

    // Without Redis each instance still limits on its own, and answers never fail.
    redis.stop();
    let client = fresh_address();
    let answers = race((0..8).map(|_| session_request(&one, &client)).collect()).await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 5), (429, 3)]));
}

fn hold_request(app: &TestApp, event: &str, buyer: &str, seat: &str) -> reqwest::RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/holds"),
        &app.buyer(buyer),
    )
    .json(&json!({ "seats": [seat] }))
}

fn checkout_request(
    app: &TestApp,
    event: &str,
    buyer: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/orders"),
        &app.buyer(buyer),
    )
    .json(&json!({ "hold_token": token }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_its_limit_a_hold_is_refused_at_once_with_its_turn() {
    let app = spawn_app_with(fixed_limit(1)).await;
    let event = app.create_event().await;
    let lock = writes_wait(&app).await;
    let seats = &STALLS[..7];
    let holds = tokio::spawn(race(
        seats
            .iter()
            .enumerate()
            .map(|(i, seat)| hold_request(&app, &event, &format!("buyer-{i}"), seat))
            .collect(),
    ));
    // One in flight, waiting on the lock. Until answers tell, they are taken to need a
    // quarter of the 60 s target, so no place is due within the soonest turn: the other
    // six are refused at once, none waits.
    in_flight(&app, "hold", 1.0).await;
    shed(&app, "hold", 6.0).await;
    assert_eq!(
        of_path(&app, "boxoffice_overload_waiting", "hold").await,
        0.0
    );
    // Refused at once, as by a store too busy: 503 with Retry-After.
    let refused = hold_request(&app, &event, "late", STALLS[7])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let retry_after = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .to_owned();
    let (_, problem) = crate::helpers::read(refused).await;
    assert_eq!(problem["code"], "unavailable");
    // Its turn, to the millisecond (at most 2 s ahead), and the same in whole seconds.
    let turn = problem["retry_after_ms"].as_u64().expect("a turn");
    assert!((10..=2000).contains(&turn), "{turn} ms");
    assert_eq!(retry_after, turn.div_ceil(1000).to_string());

    lock.commit().await.unwrap();
    let holds = holds.await.unwrap();
    assert_eq!(tally(&holds), BTreeMap::from([(201, 1), (503, 6)]));
    assert!(holds
        .iter()
        .filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE)
        .all(|(_, p)| p["code"] == "unavailable" && p["retry_after_ms"].is_u64()));
    // What was refused changed nothing: the one that got a place holds its seat.
    let mut granted: Vec<String> = holds
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .map(|(_, h)| h["seats"][0]["id"].as_str().unwrap().to_owned())
        .collect();
    granted.sort();
    assert_eq!(held(&app, &event).await, granted);
    assert_eq!(
        of_path(&app, "boxoffice_overload_shed_total", "hold").await,
        7.0
    );
    assert_eq!(
        of_path(&app, "boxoffice_overload_in_flight", "hold").await,
        0.0
    );
    assert_eq!(
        of_path(&app, "boxoffice_overload_waiting", "hold").await,
        0.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn what_is_answered_without_a_store_never_meets_a_full_limit() {
    let app = spawn_app_with(fixed_limit(1)).await;
    let event = app.create_event().await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("first"), &[STALLS[0]])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // The one place taken by a hold waiting on the lock.
    let lock = writes_wait(&app).await;
    let waiting = tokio::spawn(hold_request(&app, &event, "stuck", STALLS[1]).send());
    in_flight(&app, "hold", 1.0).await;
    // A seat this instance knows taken: 409 without the store, so without the limit.
    let (status, problem) = app
        .post_holds(&event, &app.buyer("late"), &[STALLS[0]])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    // A basket that breaks a rule: 422.
    let (status, problem) = app
        .post_holds(&event, &app.buyer("late"), &["nowhere-1"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed"))
    );
    // A seat not known taken needs the store: refused for now, with a turn.
    let (status, problem) = app
        .post_holds(&event, &app.buyer("late"), &[STALLS[2]])
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    assert!(problem["retry_after_ms"].is_u64());
    assert_eq!(
        of_path(&app, "boxoffice_overload_shed_total", "hold").await,
        1.0,
        "only the hold that needed the store was refused"
    );
    lock.commit().await.unwrap();
    assert_eq!(
        waiting.await.unwrap().unwrap().status(),
        StatusCode::CREATED
    );
    assert_eq!(held(&app, &event).await, [STALLS[0], STALLS[1]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_its_limit_a_checkout_waits_a_moment_for_a_place() {
    let app = spawn_app_with(fixed_limit(2)).await;
    let event = app.create_event().await;
    let mut tokens = Vec::new();
    for (i, seat) in STALLS[..4].iter().enumerate() {
        let buyer = format!("early-{i}");
        let (status, hold) = app.post_holds(&event, &app.buyer(&buyer), &[seat]).await;
        assert_eq!(status, StatusCode::CREATED, "{hold}");
        tokens.push((buyer, hold["hold_token"].as_str().unwrap().to_owned()));
    }

    // Two of three get in, and the third, finding no place freed within its patience, is
    // refused.
    let lock = writes_wait(&app).await;
    let checkouts = tokio::spawn(race(
        tokens[..3]
            .iter()
            .map(|(buyer, token)| checkout_request(&app, &event, buyer, token))
            .collect(),
    ));
    in_flight(&app, "checkout", 2.0).await;
    shed(&app, "checkout", 1.0).await;
    // A fourth waits for a place, and gets one once the writes go through.
    let (buyer, token) = &tokens[3];
    let patient = tokio::spawn(checkout_request(&app, &event, buyer, token).send());
    tokio::time::sleep(Duration::from_millis(200)).await;
    lock.commit().await.unwrap();

    let checkouts = checkouts.await.unwrap();
    assert_eq!(tally(&checkouts), BTreeMap::from([(201, 2), (503, 1)]));
    // A checkout refused has already waited: it is told to come back in a second.
    assert!(checkouts
        .iter()
        .filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE)
        .all(|(_, p)| p["retry_after_ms"] == 1000));
    assert_eq!(
        patient.await.unwrap().unwrap().status(),
        StatusCode::CREATED
    );
    // What was refused changed nothing: three of the four bought, the fourth still held.
    assert_eq!(held(&app, &event).await.len(), 1);
    assert_eq!(app.count("ticket_order").await, 3);
    assert_eq!(
        of_path(&app, "boxoffice_overload_shed_total", "checkout").await,
        1.0
    );
    assert_eq!(
        of_path(&app, "boxoffice_overload_in_flight", "checkout").await,
        0.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rounds_answered_quickly_with_the_limit_full_raise_it() {
    let app = spawn_app_with(|s| {
        fixed_limit(2)(s);
        if let Some(o) = s.limits.overload.as_mut() {
            o.ceiling = 1024;
        }
    })
    .await;
    let event = app.create_event().await;
    let mut limits = Vec::new();
    for round in 0..3 {
        let limit = of_path(&app, "boxoffice_overload_limit", "hold").await as usize;
        limits.push(limit);
        // As many holds as the limit, all in flight together on the lock.
        let lock = writes_wait(&app).await;
        let buyer = |i| format!("buyer-{round}-{i}");
        let holds = tokio::spawn(race(
            STALLS[..limit]
                .iter()
                .enumerate()
                .map(|(i, seat)| hold_request(&app, &event, &buyer(i), seat))
                .collect(),
        ));
        in_flight(&app, "hold", limit as f64).await;
        lock.commit().await.unwrap();
        let answers = holds.await.unwrap();
        assert_eq!(tally(&answers), BTreeMap::from([(201, limit)]));
        for (i, (_, hold)) in answers.iter().enumerate() {
            let token = hold["hold_token"].as_str().unwrap();
            let (status, _) = app
                .hold_call(Method::DELETE, &event, token, "", &app.buyer(&buyer(i)))
                .await;
            assert_eq!(status, StatusCode::NO_CONTENT);
        }
    }
    // Each round (as many answers as the limit) was answered within the target with the
    // limit full and, none having been slow yet, doubled it (the slow start; the unit tests
    // follow it past the first slow round); releases are not limited.
    limits.push(of_path(&app, "boxoffice_overload_limit", "hold").await as usize);
    assert_eq!(limits, [2, 4, 8, 16]);
    assert_eq!(
        of_path(&app, "boxoffice_overload_limit", "checkout").await,
        2.0
    );
}

/// Bodies past the limit, many at once, each on a connection of its own and each far
/// larger than the socket buffers: every one is answered 413 `payload_too_large`, none
/// arrives as a connection reset while its body is still on its way, and nothing is held.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bodies_over_the_limit_at_once_are_each_answered_413() {
    let app = spawn_app_with(|s| s.limits.max_body_bytes = 1024).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let padding = "x".repeat(4 * 1024 * 1024);
    let body = json!({"seats": ["stalls-A-1"], "note": padding}).to_string();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let sends = (0..40).map(|_| {
        let request = app
            .request(Method::POST, &format!("/v1/events/{event}/holds"), &alice)
            .header("content-type", "application/json")
            .body(body.clone())
            .build()
            .unwrap();
        let client = client.clone();
        async move {
            match client.execute(request).await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let problem: serde_json::Value = response.json().await.unwrap_or_default();
                    format!("{status} {}", problem["code"].as_str().unwrap_or(""))
                }
                Err(e) => format!("no answer: {e:?}"),
            }
        }
    });
    let answers = futures::future::join_all(sends).await;
    let mut counts = BTreeMap::new();
    for answer in &answers {
        *counts.entry(answer.as_str()).or_insert(0) += 1;
    }
    assert_eq!(
        counts,
        BTreeMap::from([("413 payload_too_large", 40)]),
        "{answers:?}"
    );
    assert!(held(&app, &event).await.is_empty());
}
