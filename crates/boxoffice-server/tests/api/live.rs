//! Live updates: `GET /v1/events/{id}/stream` sends a snapshot, then every hold, extend,
//! release, order, cancellation and booking as it commits, on whichever server instance
//! it happened, read through the typed client's stream. (A long file: each part of
//! the stream, its snapshot, its changes, its heartbeat and its limits, with the helpers
//! they share.)

use std::time::Duration;

use boxoffice_client::api::{GaChanged, SeatChange, SeatsView};
use boxoffice_client::live::{LiveEvent, Snapshot};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::EventId;
use boxoffice_core::statuses::seconds_rounded_up;
use futures::{Stream, StreamExt};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::stores::Store;
use crate::helpers::{another_instance, spawn_app, spawn_app_on, spawn_app_with, As, TestApp};

/// How long a change may take to arrive before the test fails.
const ARRIVES_WITHIN: Duration = Duration::from_secs(5);

type Events = Box<dyn Stream<Item = boxoffice_client::Result<LiveEvent>> + Send + Unpin>;

/// Subscribes to `event` on `app` and returns the stream after its snapshot.
async fn subscribe(app: &TestApp, event: &str) -> (SeatsView, Events) {
    let mut events: Events = Box::new(app.typed().stream(id(event)).await.expect("streams"));
    match next(&mut events).await {
        LiveEvent::Snapshot(snapshot) => (snapshot, events),
        other => panic!("the stream began with {other:?}"),
    }
}

async fn next(events: &mut Events) -> LiveEvent {
    tokio::time::timeout(ARRIVES_WITHIN, events.next())
        .await
        .expect("an event arrives in time")
        .expect("the stream is open")
        .expect("the event reads")
}

/// The next `seats` event's changes.
async fn next_seats(events: &mut Events) -> Vec<SeatChange> {
    match next(events).await {
        LiveEvent::Seats(changed) => changed.seats,
        other => panic!("expected seats, got {other:?}"),
    }
}

fn id(event: &str) -> EventId {
    EventId::parse(event).expect("an event id")
}

/// `(id, status)` of each change, with whether it has `held_until`.
fn summary(changes: &[SeatChange]) -> Vec<(&str, SeatStatus, bool)> {
    changes
        .iter()
        .map(|c| (c.id.as_str(), c.status, c.held_until.is_some()))
        .collect()
}

async fn every_change_of_a_seat_reaches_the_stream_in_order(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (snapshot, mut events) = subscribe(&app, &event).await;
    let seat = |id: &str| snapshot.seats.iter().find(|s| s.seat.id == id).unwrap();
    assert_eq!(seat("stalls-B-1").status, SeatStatus::Available);
    assert_eq!(seat("circle-A-1").status, SeatStatus::NotForSale);

    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let token = hold["hold_token"].as_str().unwrap();
    let held = next_seats(&mut events).await;
    assert_eq!(
        summary(&held),
        [
            ("stalls-B-1", SeatStatus::Held, true),
            ("stalls-B-2", SeatStatus::Held, true)
        ]
    );
    let expires: chrono::DateTime<chrono::Utc> =
        hold["expires_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(held[0].held_until, Some(expires));

    let (status, extended) = app
        .hold_call(Method::POST, &event, token, "/extend", &alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    let until: chrono::DateTime<chrono::Utc> =
        extended["expires_at"].as_str().unwrap().parse().unwrap();
    let changes = next_seats(&mut events).await;
    assert_eq!(summary(&changes).len(), 2);
    assert!(changes
        .iter()
        .all(|c| c.held_until == Some(until) && c.status == SeatStatus::Held));

    let (status, _) = app
        .hold_call(Method::DELETE, &event, token, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [
            ("stalls-B-1", SeatStatus::Available, false),
            ("stalls-B-2", SeatStatus::Available, false)
        ]
    );

    // Held again, bought, then the order cancelled.
    let (_, hold) = app.post_holds(&event, &alice, &["stalls-B-3"]).await;
    let token = hold["hold_token"].as_str().unwrap();
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [("stalls-B-3", SeatStatus::Held, true)]
    );
    let (status, order) = app.post_orders(&event, &alice, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [("stalls-B-3", SeatStatus::Sold, false)]
    );
    let order_id = order["order_id"].as_str().unwrap();
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{order_id}/cancel"),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [("stalls-B-3", SeatStatus::Available, false)]
    );

    // Refusals change nothing and send nothing: the next event is the next real change.
    let bob = app.buyer("bob");
    let (_, hold) = app.post_holds(&event, &bob, &["stalls-C-1"]).await;
    assert!(hold["hold_token"].is_string());
    let (status, _) = app.post_holds(&event, &alice, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, _) = app.post_holds(&event, &alice, &["stalls-C-2"]).await;
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [("stalls-C-1", SeatStatus::Held, true)]
    );
    assert_eq!(
        summary(&next_seats(&mut events).await),
        [("stalls-C-2", SeatStatus::Held, true)]
    );
}

async fn a_change_on_one_instance_reaches_subscribers_of_another(store: Store) {
    let first = spawn_app_on(store).await;
    let event = first.create_event().await;
    let second = another_instance(&first, store).await;
    let (_, mut on_first) = subscribe(&first, &event).await;
    let (_, mut on_second) = subscribe(&second, &event).await;

    // Held through the second instance, released through the first.
    let alice = second.buyer("alice");
    let (status, hold) = second.post_holds(&event, &alice, &["stalls-A-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let token = hold["hold_token"].as_str().unwrap();
    let (status, _) = first
        .hold_call(Method::DELETE, &event, token, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for events in [&mut on_first, &mut on_second] {
        assert_eq!(
            summary(&next_seats(events).await),
            [("stalls-A-1", SeatStatus::Held, true)]
        );
        assert_eq!(
            summary(&next_seats(events).await),
            [("stalls-A-1", SeatStatus::Available, false)]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bookings_and_their_cancellations_send_the_places_left() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (_, mut events) = subscribe(&app, &event).await;
    let alice = app.buyer("alice");
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &alice,
            Some(&json!({"area": "floor", "quantity": 3})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    let ga = |code: &str, left| {
        LiveEvent::Ga(GaChanged {
            code: code.into(),
            left,
        })
    };
    assert_eq!(next(&mut events).await, ga("floor", 47));
    let booking_id = booking["booking_id"].as_str().unwrap();
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/bookings/{booking_id}/cancel"),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(next(&mut events).await, ga("floor", 50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_allocation_change_sends_a_fresh_snapshot() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (_, mut events) = subscribe(&app, &event).await;
    app.put_circle_on_sale(&event).await;
    match next(&mut events).await {
        LiveEvent::Snapshot(snapshot) => {
            let circle = snapshot
                .seats
                .iter()
                .find(|s| s.seat.id == "circle-A-1")
                .unwrap();
            assert_eq!(circle.status, SeatStatus::Available);
            assert_eq!(circle.seat.ticket_type.as_deref(), Some("standard"));
        }
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stream_of_an_unknown_event_is_a_404_problem() {
    let app = spawn_app().await;
    for path in [
        format!("/v1/events/{}/stream", uuid::Uuid::new_v4()),
        "/v1/events/not-an-id/stream".to_owned(),
    ] {
        let (status, problem) = app.get(&path).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("event_not_found")),
            "{path}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stream_is_an_uncached_event_stream_and_counts_its_subscribers() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let response = app
        .request(
            Method::GET,
            &format!("/v1/events/{event}/stream"),
            &As::Nobody,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let (_, _second) = subscribe(&app, &event).await;
    assert!(app
        .metrics()
        .await
        .lines()
        .any(|l| l == "boxoffice_live_subscribers 2"));
    drop(response);
    drop(_second);
    // Both gone: the gauge falls back once the server notices the closed connections.
    let deadline = tokio::time::Instant::now() + ARRIVES_WITHIN;
    loop {
        let metrics = app.metrics().await;
        if metrics.lines().any(|l| l == "boxoffice_live_subscribers 0") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{metrics}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_quiet_stream_sends_comment_lines_so_proxies_keep_it_open() {
    let app = spawn_app_with(|s| s.live.stream_heartbeat = Duration::from_millis(200)).await;
    let event = app.create_event().await;
    let response = app
        .request(
            Method::GET,
            &format!("/v1/events/{event}/stream"),
            &As::Nobody,
        )
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    // The snapshot, then nothing happens: two heartbeats within a second.
    let read = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(chunk) = body.next().await {
            seen.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
            if seen.matches("\n:\n\n").count() + usize::from(seen.starts_with(":\n")) >= 2 {
                break;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no heartbeats in {seen:?}");
    assert!(seen.starts_with("event: snapshot\n"), "{seen:?}");
    assert!(!seen.contains("event: seats"), "{seen:?}");
}

/// A seat held, freed, held again and sold: refused without the store only while the
/// store has said lately (holding or refusing it here) and the feed says it is taken, and
/// given at once when freed.
async fn a_seat_known_taken_is_refused_without_the_store_until_it_is_freed(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (_, mut events) = subscribe(&app, &event).await;
    let (alice, bob, carol) = (app.buyer("alice"), app.buyer("bob"), app.buyer("carol"));
    let seat = ["stalls-C-3"];
    let ask = |who: As| {
        let (app, event) = (&app, &event);
        async move { app.post_holds(event, &who, &seat).await }
    };
    let unasked = || app.counter("boxoffice_holds_refused_unasked_total");

    let (status, held) = ask(bob.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    next_seats(&mut events).await;
    for _ in 0..3 {
        assert_eq!(ask(alice.clone()).await.0, StatusCode::CONFLICT);
    }
    assert_eq!(
        unasked().await,
        3.0,
        "the store held it here, and was not asked"
    );

    // Freed: the next ask gets it, from the store.
    let token = held["hold_token"].as_str().unwrap();
    let (status, _) = app.hold_call(Method::DELETE, &event, token, "", &bob).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // The release back from the bus first: arriving later, it would free the seat in the
    // view again, and the next refusal would ask the store once more.
    next_seats(&mut events).await;
    let (status, held) = ask(alice.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(unasked().await, 3.0);
    next_seats(&mut events).await; // held

    // Sold: refused without the store.
    let token = held["hold_token"].as_str().unwrap();
    assert_eq!(
        app.post_orders(&event, &alice, token).await.0,
        StatusCode::CREATED
    );
    next_seats(&mut events).await; // sold
    for _ in 0..3 {
        let (status, problem) = ask(carol.clone()).await;
        assert_eq!(
            (
                status,
                problem["code"].as_str(),
                problem["seats"][0]["id"].as_str()
            ),
            (
                StatusCode::CONFLICT,
                Some("seat_unavailable"),
                Some("stalls-C-3")
            )
        );
    }
    assert_eq!(unasked().await, 6.0);
    assert_eq!(
        crate::helpers::held(&app, &event).await,
        Vec::<String>::new(),
        "no refusal held anything"
    );
}

/// What one instance knows is kept by the changes of every instance: a seat freed on
/// another is given as soon as the change arrives.
async fn a_seat_freed_on_another_instance_is_given_once_the_change_arrives(store: Store) {
    let first = spawn_app_on(store).await;
    let event = first.create_event().await;
    let second = another_instance(&first, store).await;
    let (_, mut on_second) = subscribe(&second, &event).await;
    let (alice, bob) = (first.buyer("alice"), first.buyer("bob"));

    let (status, held) = first.post_holds(&event, &bob, &["stalls-C-4"]).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    next_seats(&mut on_second).await;
    for _ in 0..2 {
        let (status, _) = second.post_holds(&event, &alice, &["stalls-C-4"]).await;
        assert_eq!(status, StatusCode::CONFLICT);
    }
    assert_eq!(
        second
            .counter("boxoffice_holds_refused_unasked_total")
            .await,
        1.0
    );
    let token = held["hold_token"].as_str().unwrap();
    let (status, _) = first
        .hold_call(Method::DELETE, &event, token, "", &bob)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        summary(&next_seats(&mut on_second).await),
        [("stalls-C-4", SeatStatus::Available, false)]
    );
    let (status, body) = second.post_holds(&event, &alice, &["stalls-C-4"]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

crate::helpers::stores::conformance!(
    every_change_of_a_seat_reaches_the_stream_in_order,
    a_change_on_one_instance_reaches_subscribers_of_another,
    a_seat_known_taken_is_refused_without_the_store_until_it_is_freed,
    a_seat_freed_on_another_instance_is_given_once_the_change_arrives,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_statuses_stream_follows_the_layout_in_a_few_bytes() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, _) = app.post_holds(&event, &alice, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let client = app.typed();
    let layout = client.layout(id(&event)).await.unwrap();
    let mut events: Events = Box::new(
        client
            .stream_with(id(&event), Snapshot::Statuses)
            .await
            .unwrap(),
    );
    let LiveEvent::Statuses(statuses) = next(&mut events).await else {
        panic!("a statuses stream begins with a statuses event");
    };
    assert_eq!(statuses.version, layout.version);
    // The same statuses as the full seat map, seat by seat, in a fraction of its size.
    let full = client.seats(id(&event)).await.unwrap();
    let states = statuses.states().expect("the statuses read");
    assert_eq!(states.len(), layout.seats.len());
    for ((seat, state), view) in layout.seats.iter().zip(&states).zip(&full.seats) {
        assert_eq!(seat.id, view.seat.id);
        assert_eq!(
            (state.status, state.held_until.map(|t| t.timestamp())),
            (view.status, view.held_until.map(seconds_rounded_up)),
            "{}",
            seat.id
        );
    }
    let full_size = serde_json::to_string(&full).unwrap().len();
    let size = serde_json::to_string(&statuses).unwrap().len();
    assert!(size * 20 < full_size, "{size} bytes against {full_size}");

    // Changes come as on any stream; an allocation change brings new statuses at a new
    // version.
    let (status, _) = app.post_holds(&event, &alice, &["stalls-B-2"]).await;
    assert_eq!(status, StatusCode::CREATED);
    // The first hold's own change may still have been on its way round the bus when the
    // stream began: it comes once more, after the statuses that already show it.
    let mut change = next_seats(&mut events).await;
    if summary(&change) == [("stalls-B-1", SeatStatus::Held, true)] {
        change = next_seats(&mut events).await;
    }
    assert_eq!(summary(&change), [("stalls-B-2", SeatStatus::Held, true)]);
    app.put_circle_on_sale(&event).await;
    let LiveEvent::Statuses(newer) = next(&mut events).await else {
        panic!("an allocation change sends new statuses");
    };
    assert!(newer.version > layout.version);
    let layout = client.layout(id(&event)).await.unwrap();
    assert_eq!(layout.version, newer.version);
    let circle = layout
        .seats
        .iter()
        .position(|s| s.id == "circle-A-1")
        .unwrap();
    assert_eq!(
        newer.states().unwrap()[circle].status,
        SeatStatus::Available
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_asked_for_an_unknown_snapshot_is_a_422() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (status, problem) = app
        .get(&format!("/v1/events/{event}/stream?snapshot=everything"))
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed"))
    );
}

/// A stream that opens after others takes the snapshot they share and the changes made
/// since: its view agrees with the seats as they are, change for change.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_opened_on_a_shared_snapshot_sees_the_changes_since() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (first, mut first_events) = subscribe(&app, &event).await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let token = hold["hold_token"].as_str().unwrap().to_owned();
    next_seats(&mut first_events).await;
    let (status, _) = app.post_holds(&event, &alice, &["stalls-C-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    next_seats(&mut first_events).await;
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &token, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    next_seats(&mut first_events).await;

    // The second stream: the first one's snapshot (nothing held), then the three changes.
    let (second, mut second_events) = subscribe(&app, &event).await;
    assert_eq!(second, first, "the snapshot is the one shared");
    let mut seen: std::collections::BTreeMap<String, SeatStatus> = second
        .seats
        .iter()
        .map(|s| (s.seat.id.clone(), s.status))
        .collect();
    for _ in 0..3 {
        for change in next_seats(&mut second_events).await {
            seen.insert(change.id, change.status);
        }
    }
    let now: std::collections::BTreeMap<String, SeatStatus> = app
        .seat_statuses(&event)
        .await
        .into_iter()
        .map(|(id, status)| (id, serde_json::from_value(json!(status)).unwrap()))
        .collect();
    assert_eq!(seen, now);
    assert_eq!(seen["stalls-C-1"], SeatStatus::Held);
    assert_eq!(seen["stalls-B-1"], SeatStatus::Available);
}

/// One client address may have `streams_per_address` streams open; the next answers 429
/// with `Retry-After`, and a closed stream makes room.
#[tokio::test]
async fn one_address_may_have_only_so_many_streams_open() {
    let app = spawn_app_with(|s| s.limits.streams_per_address = 3).await;
    let event = app.create_event().await;
    let open = || {
        app.request(
            Method::GET,
            &format!("/v1/events/{event}/stream"),
            &As::Nobody,
        )
        .send()
    };
    let mut streams = Vec::new();
    for _ in 0..3 {
        let response = open().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        streams.push(response);
    }
    let refused = open().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers()["retry-after"], "2");
    let problem: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(problem["code"], "rate_limited");

    drop(streams.pop());
    let deadline = tokio::time::Instant::now() + ARRIVES_WITHIN;
    loop {
        let response = open().await.unwrap();
        if response.status() == StatusCode::OK {
            break;
        }
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(
            tokio::time::Instant::now() < deadline,
            "a closed stream never gave its place back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client that takes gzip gets the stream compressed: the snapshot as compressed once
/// for every stream, and each change after it as it happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_is_gzip_for_a_client_that_takes_it() {
    use std::io::Write;
    let app = spawn_app().await;
    let event = app.create_event().await;
    let response = app
        .request(
            Method::GET,
            &format!("/v1/events/{event}/stream"),
            &As::Nobody,
        )
        .header("accept-encoding", "br;q=0, gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-encoding"], "gzip");
    let mut body = response.bytes_stream();
    let mut text = flate2::write::GzDecoder::new(Vec::new());
    let mut read_until = async |needle: &str, text: &mut flate2::write::GzDecoder<Vec<u8>>| {
        tokio::time::timeout(ARRIVES_WITHIN, async {
            while !String::from_utf8_lossy(text.get_ref()).contains(needle) {
                let chunk = body.next().await.expect("the stream is open").unwrap();
                text.write_all(&chunk).unwrap();
                text.flush().unwrap();
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no {needle:?} in {:?}",
                String::from_utf8_lossy(text.get_ref())
            )
        });
    };
    read_until("retry: 2000", &mut text).await;
    let seen = String::from_utf8_lossy(text.get_ref()).into_owned();
    assert!(seen.starts_with("event: snapshot\ndata: {"), "{seen:.80}");
    let (status, _) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    read_until("event: seats", &mut text).await;
    assert!(String::from_utf8_lossy(text.get_ref()).contains("\"stalls-B-1\""));
}
