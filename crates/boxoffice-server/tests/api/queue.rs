//! The waiting room over HTTP: joining, polling, admission and the pass it gives. (A long
//! file: one flow, followed from the join to the checkout that ends the pass.)

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use boxoffice_core::ids::{EventId, UserId};
use boxoffice_server::config::Secret;
use boxoffice_service::pass::Passes;
use boxoffice_service::queue::ticket::Tickets;

use crate::helpers::stores::{test_redis, PrivateRedis, Store};
use crate::helpers::{
    admitted, event_with_queue, hold_with_pass, join, join_and_wait, poll, spawn_app, spawn_app_on,
    spawn_app_with, As, TestApp,
};

#[tokio::test]
async fn a_buyer_joins_before_opening_waits_and_is_admitted_with_a_pass() {
    let app = spawn_app().await;
    let event = event_with_queue(&app, chrono::Duration::milliseconds(800), 600_000).await;
    let alice = app.buyer("alice");
    let (status, joined) = join(&app, &event, &alice).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(
        (&joined["position"], &joined["estimated_wait_seconds"]),
        (&Value::Null, &Value::Null),
        "no place is shown before the order is drawn: {joined}"
    );
    let ticket = joined["ticket"].as_str().unwrap().to_owned();
    assert_eq!(
        join(&app, &event, &alice).await.1["ticket"],
        ticket.as_str()
    );

    // Bob cannot poll Alice's ticket; nobody can poll one that does not exist.
    let (status, problem) = poll(&app, &event, &ticket, &app.buyer("bob")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );
    let (status, problem) = poll(&app, &event, "not-a-ticket", &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("ticket_invalid"))
    );
    let (status, _) = poll(&app, &event, &ticket, &As::Nobody).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut placed = None;
    let admitted = loop {
        let (status, standing) = poll(&app, &event, &ticket, &alice).await;
        assert_eq!(status, StatusCode::OK, "{standing}");
        if standing["admitted"] == true {
            break standing;
        }
        // After the opening the early ticket is answered re-issued with its place.
        if let Some(reissued) = standing["ticket"].as_str() {
            assert_eq!(standing["position"], 1, "{standing}");
            placed = Some(reissued.to_owned());
        }
        assert!(tokio::time::Instant::now() < deadline, "never admitted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let pass = admitted["pass"].as_str().expect("a pass");
    assert!(!pass.is_empty());
    let expires: DateTime<Utc> = admitted["pass_expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let left = expires - Utc::now();
    assert!(
        left > chrono::Duration::seconds(290) && left <= chrono::Duration::seconds(300),
        "a session of 300 s: {admitted}"
    );
    // Polled again, by either ticket, the same pass; joined again, the ticket with its
    // place, admitted.
    assert_eq!(poll(&app, &event, &ticket, &alice).await.1["pass"], pass);
    let (_, again) = join(&app, &event, &alice).await;
    assert_eq!(again["position"].as_u64(), Some(0), "{again}");
    let rejoined = again["ticket"].as_str().unwrap();
    if let Some(placed) = placed {
        assert_eq!(rejoined, placed);
    }
    assert_eq!(poll(&app, &event, rejoined, &alice).await.1["pass"], pass);
}

#[tokio::test]
async fn places_and_waits_follow_the_line_and_the_rate() {
    let app = spawn_app().await;
    // One a minute, open now: the first in line is next, the second a minute behind.
    let event = event_with_queue(&app, chrono::Duration::zero(), 1).await;
    let mut places = Vec::new();
    for who in ["alice", "bob", "carol"] {
        let (status, joined) = join(&app, &event, &app.buyer(who)).await;
        assert_eq!(status, StatusCode::CREATED, "{joined}");
        places.push((
            joined["position"].clone(),
            joined["estimated_wait_seconds"].clone(),
        ));
    }
    // The first joiner may have been let in at once if a token had accrued; the others
    // queue behind in arrival order.
    let (bob, carol) = (&places[1], &places[2]);
    assert_eq!(carol.0.as_u64().unwrap(), bob.0.as_u64().unwrap() + 1);
    assert_eq!(carol.1.as_u64().unwrap(), bob.1.as_u64().unwrap() + 60);
}

#[tokio::test]
async fn an_event_without_an_open_waiting_room_has_no_line() {
    let app = spawn_app().await;
    let plain = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, problem) = join(&app, &plain, &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("queue_not_found"))
    );
    let (status, problem) = join(&app, &uuid::Uuid::new_v4().to_string(), &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
    // Switched off, it answers as if there were none.
    let event = event_with_queue(&app, chrono::Duration::zero(), 60).await;
    let (status, _) = app
        .send(
            Method::PATCH,
            &format!("/v1/events/{event}"),
            &As::Admin,
            Some(&json!({"queue": {"enabled": false, "opens_at": Utc::now(), "admit_per_minute": 60}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, problem) = join(&app, &event, &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("queue_not_found"))
    );
}

/// The three calls a pass guards, made as `who` showing `pass` (or none): a hold of named
/// seats, a best-available hold and a general-admission booking.
async fn guarded_calls(
    app: &TestApp,
    event: &str,
    who: &As,
    pass: Option<&str>,
    seat: &str,
) -> [(StatusCode, Value); 3] {
    let calls = [
        ("holds", json!({"seats": [seat]})),
        ("holds", json!({"best_available": {"quantity": 1}})),
        ("bookings", json!({"area": "floor", "quantity": 1})),
    ];
    let mut answers = Vec::new();
    for (path, body) in calls {
        let mut request = app
            .request(Method::POST, &format!("/v1/events/{event}/{path}"), who)
            .json(&body);
        if let Some(pass) = pass {
            request = request.header("Boxoffice-Pass", pass);
        }
        answers.push(crate::helpers::read(request.send().await.unwrap()).await);
    }
    answers.try_into().unwrap()
}

/// Rows of reservations, GA bookings and the outbox, and every seat's status: what a
/// refused call must leave as it was.
async fn footprint(app: &TestApp, event: &str) -> (i64, i64, i64, BTreeMap<String, String>) {
    (
        app.count("reservation").await,
        app.count("ga_booking").await,
        app.count("outbox").await,
        app.seat_statuses(event).await,
    )
}

async fn holds_and_bookings_need_the_buyers_own_valid_pass(store: Store) {
    let app = spawn_app_on(store).await;
    let event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    let other_event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (alice_ticket, alice_pass) = join_and_wait(&app, &event, &alice).await;
    let (_, bob_pass) = join_and_wait(&app, &event, &bob).await;
    let (_, alice_elsewhere) = join_and_wait(&app, &other_event, &alice).await;

    // Passes this server never gave: tampered with, expired, signed with another key.
    let passes = Passes::new(&Secret::new(app.jwt_secret.clone()));
    let (event_id, alice_id) = (
        EventId::parse(&event).unwrap(),
        UserId::parse("alice").unwrap(),
    );
    let ticket = Tickets::new(&Secret::new(app.jwt_secret.clone()))
        .verify(&alice_ticket)
        .expect("a ticket the server signed")
        .id;
    let expired = passes.mint(
        event_id,
        &alice_id,
        ticket,
        Utc::now() - chrono::Duration::seconds(1),
    );
    let foreign = Passes::new(&Secret::new("another secret")).mint(
        event_id,
        &alice_id,
        ticket,
        Utc::now() + chrono::Duration::minutes(5),
    );
    let mut tampered = alice_pass.clone().into_bytes();
    let last = tampered.len() - 2;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();

    let before = footprint(&app, &event).await;
    for pass in [
        None,
        Some(""),
        Some("not a pass"),
        Some(tampered.as_str()),
        Some(expired.as_str()),
        Some(foreign.as_str()),
        Some(bob_pass.as_str()),
        Some(alice_elsewhere.as_str()),
    ] {
        for (status, problem) in guarded_calls(&app, &event, &alice, pass, "stalls-B-1").await {
            assert_eq!(
                (status, problem["code"].as_str()),
                (StatusCode::FORBIDDEN, Some("queue_required")),
                "with {pass:?}: {problem}"
            );
        }
    }
    assert_eq!(
        footprint(&app, &event).await,
        before,
        "a refused call changed something"
    );

    // With her own pass, Alice holds and books.
    let [(named, hold), (best, _), (booked, booking)] =
        guarded_calls(&app, &event, &alice, Some(&alice_pass), "stalls-B-1").await;
    assert_eq!(
        (named, best, booked),
        (
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::CREATED
        ),
        "{hold} {booking}"
    );
    // An event without a waiting room asks for no pass.
    let plain = app.create_event().await;
    let (status, _) = app.post_holds(&plain, &alice, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn checking_out_ends_the_pass_and_lets_the_next_buyer_in() {
    let app = spawn_app().await;
    // One a minute, opened a minute ago: one admission now, the next a minute away.
    let event = event_with_queue(&app, chrono::Duration::minutes(-1), 1).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (alice_ticket, alice_pass) = join_and_wait(&app, &event, &alice).await;
    let (_, joined) = join(&app, &event, &bob).await;
    let bob_ticket = joined["ticket"].as_str().unwrap().to_owned();
    assert_eq!(joined["position"], 1, "{joined}");

    let (status, hold) = hold_with_pass(&app, &event, &alice, &alice_pass, "stalls-B-1").await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let token = hold["hold_token"].as_str().unwrap();
    let (status, order) = app.post_orders(&event, &alice, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");

    // Alice's slot went to Bob at once; her pass holds nothing more, and her ticket is
    // spent (joining again queues her anew).
    let bob_pass = admitted(&app, &event, &bob_ticket, &bob).await;
    let (status, problem) = hold_with_pass(&app, &event, &alice, &alice_pass, "stalls-B-2").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
    let (status, _) = poll(&app, &event, &alice_ticket, &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, again) = join(&app, &event, &alice).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(again["ticket"], alice_ticket.as_str());
    assert_eq!(again["position"], 1, "{again}");
    let (status, _) = hold_with_pass(&app, &event, &bob, &bob_pass, "stalls-B-2").await;
    assert_eq!(status, StatusCode::CREATED);

    let metrics = app.metrics().await;
    for line in [
        format!("boxoffice_queue_admitted_total{{event=\"{event}\"}} 2"),
        format!("boxoffice_queue_ended_total{{event=\"{event}\"}} 1"),
        format!("boxoffice_queue_waiting{{event=\"{event}\"}} 1"),
        format!("boxoffice_queue_dropped_total{{event=\"{event}\"}} 0"),
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no {line} in\n{metrics}"
        );
    }
}

#[tokio::test]
async fn releasing_the_last_hold_ends_the_pass_and_releasing_one_of_two_does_not() {
    let app = spawn_app_on(Store::Redis).await;
    let event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    let alice = app.buyer("alice");
    let (_, pass) = join_and_wait(&app, &event, &alice).await;
    let mut tokens = Vec::new();
    for seat in ["stalls-B-1", "stalls-B-2"] {
        let (status, hold) = hold_with_pass(&app, &event, &alice, &pass, seat).await;
        assert_eq!(status, StatusCode::CREATED, "{hold}");
        tokens.push(hold["hold_token"].as_str().unwrap().to_owned());
    }
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &tokens[0], "", &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, hold) = hold_with_pass(&app, &event, &alice, &pass, "stalls-B-3").await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "one hold left, the pass runs: {hold}"
    );
    let third = hold["hold_token"].as_str().unwrap().to_owned();
    for token in [&tokens[1], &third] {
        let (status, _) = app
            .hold_call(Method::DELETE, &event, token, "", &alice)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    let (status, problem) = hold_with_pass(&app, &event, &alice, &pass, "stalls-B-1").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
}

#[tokio::test]
async fn two_instances_share_one_line_and_one_rule() {
    let first = spawn_app().await;
    // One a second, opening in a moment: ten buyers join the pre-queue through either
    // instance, and are admitted in one order whichever instance they poll.
    let event = event_with_queue(&first, chrono::Duration::milliseconds(500), 60).await;
    let (url, secret) = (first.database_url.clone(), first.jwt_secret.clone());
    let second = spawn_app_with(move |s| {
        s.stores.database.url = url;
        s.server.jwt_secret = Secret::new(secret);
    })
    .await;
    let instances = [&first, &second];
    let mut tickets = Vec::new();
    for i in 0..10 {
        let who = first.buyer(&format!("fan-{i}"));
        let (status, joined) = join(instances[i % 2], &event, &who).await;
        assert_eq!(status, StatusCode::CREATED, "{joined}");
        tickets.push((who, joined["ticket"].as_str().unwrap().to_owned()));
    }
    // A little over a second after opening: the counter is about to let one in.
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    // Every ticket polled on one instance, then every one on the other: the two views
    // agree, and make one line 1..=n behind those admitted, with one pass per admission.
    // A pass that straddles an admission (one a second) sees places move: it goes again.
    let mut tries = Vec::new();
    let agreed = loop {
        let mut view = [Vec::new(), Vec::new()];
        for (side, app) in instances.iter().enumerate() {
            for (who, ticket) in &tickets {
                let (status, seen) = poll(app, &event, ticket, who).await;
                assert_eq!(status, StatusCode::OK, "{seen}");
                view[side].push(match seen["admitted"].as_bool() {
                    Some(true) => (0, seen["pass"].as_str().unwrap().to_owned()),
                    _ => (seen["position"].as_u64().unwrap(), String::new()),
                });
            }
        }
        let [a, b] = view;
        if a == b && a.iter().any(|(p, _)| *p == 0) {
            break a;
        }
        tries.push((a, b));
        assert!(tries.len() < 40, "the instances never agreed: {tries:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let passes: std::collections::HashSet<&str> = agreed
        .iter()
        .filter(|(p, _)| *p == 0)
        .map(|(_, pass)| pass.as_str())
        .collect();
    let mut waiting: Vec<u64> = agreed.iter().map(|(p, _)| *p).filter(|&p| p > 0).collect();
    waiting.sort_unstable();
    let admitted = agreed.len() - waiting.len();
    assert!(admitted >= 1, "the bucket lets someone in at opening");
    assert_eq!(passes.len(), admitted, "one pass per admission");
    assert_eq!(
        waiting,
        (1..=waiting.len() as u64).collect::<Vec<_>>(),
        "one line, no gaps or repeats"
    );
    // A queue switched on through one instance guards holds on the other at once.
    let plain = first.create_event().await;
    let alice = first.buyer("alice");
    let (status, _) = second.post_holds(&plain, &alice, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = first
        .send(
            Method::PATCH,
            &format!("/v1/events/{plain}"),
            &As::Admin,
            Some(&json!({"queue": {"enabled": true, "opens_at": Utc::now(), "admit_per_minute": 60}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    loop {
        let (status, problem) = second.post_holds(&plain, &alice, &["stalls-A-2"]).await;
        if status == StatusCode::FORBIDDEN {
            assert_eq!(problem["code"], "queue_required");
            break;
        }
        assert_eq!(status, StatusCode::CREATED, "{problem}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the other instance still lets holds through"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_redis_the_line_answers_503_and_admitted_buyers_still_buy() {
    let mut redis = PrivateRedis::start();
    let url = redis.url();
    // Holds in Postgres; the line in this test's own Redis.
    let app = spawn_app_with(move |s| s.stores.redis = test_redis(url, false)).await;
    let event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (ticket, pass) = join_and_wait(&app, &event, &alice).await;

    redis.stop();
    let (status, problem) = join(&app, &event, &bob).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable")),
        "{problem}"
    );
    let (status, problem) = poll(&app, &event, &ticket, &alice).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    // The pass is checked by its signature: Alice holds and buys with Postgres alone.
    let (status, hold) = hold_with_pass(&app, &event, &alice, &pass, "stalls-B-1").await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, order) = app
        .post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let (status, _) = app.post_holds(&event, &bob, &["stalls-B-2"]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    redis.start_again();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, joined) = join(&app, &event, &bob).await;
        if status == StatusCode::CREATED {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{joined}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the line never came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An admission whose session is over gives no pass when its ticket is polled: the ticket
/// is gone (404 `ticket_not_found`), and joining again puts the buyer back in the line.
#[tokio::test]
async fn polling_an_admission_past_its_session_gives_no_pass() {
    let app = spawn_app().await;
    let event = event_with_queue(&app, chrono::Duration::seconds(-1), 600).await;
    let alice = app.buyer("alice");
    let (ticket, _) = join_and_wait(&app, &event, &alice).await;

    // Admitted longer ago than the session (300 s), by the line's own record.
    let mut conn = boxoffice_store::redis::link::RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let record: String = ::redis::cmd("HGET")
        .arg(format!("queue:{{{event}}}:users"))
        .arg("alice")
        .query_async(&mut conn)
        .await
        .unwrap();
    let id = record.split('|').next().unwrap();
    let passes = format!("queue:{{{event}}}:passes");
    let at: i64 = ::redis::cmd("HGET")
        .arg(&passes)
        .arg(id)
        .query_async(&mut conn)
        .await
        .unwrap();
    ::redis::cmd("HSET")
        .arg(&passes)
        .arg(id)
        .arg(at - 301_000)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();

    let (status, problem) = poll(&app, &event, &ticket, &alice).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("ticket_not_found")),
        "{problem}"
    );
    let (status, joined) = join(&app, &event, &alice).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_ne!(
        joined["ticket"].as_str(),
        Some(ticket.as_str()),
        "a new ticket"
    );
}

crate::helpers::stores::conformance!(holds_and_bookings_need_the_buyers_own_valid_pass);
