//! Sales channels: seats allocated to a channel are on sale to that channel's buyers (a
//! user token with its `channel` claim) and to nobody else, who reads them `not_for_sale`
//! everywhere (seats, availability, the stream, best available) and is refused them, on
//! every store; the organizer releases them to general sale at once.

use std::collections::BTreeMap;
use std::time::Duration;

use boxoffice_client::live::LiveEvent;
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::EventId;
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{gala, spawn_app_on, As, TestApp};
use crate::helpers::{race_riding_out, spawn_race_app_on, tally};

/// The seats the channel `partner-a` sells: the box.
const BOX: [&str; 2] = ["box-L-1", "box-L-2"];

/// The gala with the box sold through `partner-a` alone (and a second channel that sells
/// nothing).
async fn channel_event(app: &TestApp) -> String {
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["channels"] = json!([{"code": "partner-a", "name": "Partner A"},
                              {"code": "fan_club", "name": "Fan club"}]);
    spec["allocations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"ticket_type": "premium", "seats": BOX, "channel": "partner-a"}));
    let (status, body) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// `(status, ticket type)` of each seat, as `who` reads `GET /v1/events/{id}/seats`.
async fn seats_as(app: &TestApp, event: &str, who: &As) -> BTreeMap<String, (String, Value)> {
    let (status, body) = app
        .send(Method::GET, &format!("/v1/events/{event}/seats"), who, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let id = s["id"].as_str().unwrap().to_owned();
            (
                id,
                (
                    s["status"].as_str().unwrap().to_owned(),
                    s["ticket_type"].clone(),
                ),
            )
        })
        .collect()
}

async fn counts_as(app: &TestApp, event: &str, who: &As) -> Value {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/availability"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    json!([
        body["available"],
        body["held"],
        body["sold"],
        body["not_for_sale"]
    ])
}

async fn best(app: &TestApp, event: &str, who: &As, quantity: u32) -> (StatusCode, Value) {
    let body = json!({"best_available": {"quantity": quantity, "ticket_type": "premium"}});
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/holds"),
        who,
        Some(&body),
    )
    .await
}

async fn channel_seats_are_the_channels_alone(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event_with_channel_seats().await;
    let partner = app.channel_buyer("pat", "partner-a");
    let fan = app.channel_buyer("fay", "fan_club");
    let elsewhere = app.channel_buyer("eve", "no-such-channel");
    let public = app.buyer("bob");

    // Everyone else reads the box not for sale, without its ticket type; the partner's
    // buyers read it on sale.
    for who in [&As::Nobody, &public, &fan, &elsewhere] {
        let seats = seats_as(&app, &event, who).await;
        assert_eq!(seats["box-L-1"], ("not_for_sale".to_owned(), Value::Null));
        assert_eq!(counts_as(&app, &event, who).await, json!([12, 0, 0, 5]));
    }
    let seats = seats_as(&app, &event, &partner).await;
    assert_eq!(seats["box-L-1"], ("available".to_owned(), json!("premium")));
    assert_eq!(
        seats["stalls-A-1"],
        ("available".to_owned(), json!("premium"))
    );
    assert_eq!(
        counts_as(&app, &event, &partner).await,
        json!([14, 0, 0, 3])
    );
    let (_, view) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(
        view["channels"][0],
        json!({"code": "partner-a", "name": "Partner A"})
    );
    assert_eq!(view["counts"]["not_for_sale"], 5);

    // Anyone else is refused the box, as a seat not on sale; its buyers are not.
    for who in [&public, &fan, &elsewhere] {
        let (status, body) = app
            .post_holds(&event, who, &["box-L-1", "stalls-B-1"])
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["code"], "seat_unavailable");
        assert_eq!(
            body["seats"],
            json!([{"id": "box-L-1", "label": "Box, Row L, Seat 1"}])
        );
    }
    let (status, hold) = app.post_holds(&event, &partner, &["box-L-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(hold["total_cents"], 9000);
    // Held, the seat still reads not for sale to the others: nothing about it shows.
    assert_eq!(
        seats_as(&app, &event, &public).await["box-L-1"].0,
        "not_for_sale"
    );
    assert_eq!(seats_as(&app, &event, &partner).await["box-L-1"].0, "held");
    // A public seat the partner grows their hold by, and a box seat nobody else may add.
    let token = hold["hold_token"].as_str().unwrap();
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/holds/{token}/seats"),
            &partner,
            Some(&json!({"seats": ["box-L-2", "stalls-B-2"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, other) = app.post_holds(&event, &public, &["stalls-B-3"]).await;
    let other_token = other["hold_token"].as_str().unwrap();
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/holds/{other_token}/seats"),
            &public,
            Some(&json!({"seats": ["box-L-2"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, order) = app.post_orders(&event, &partner, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(
        seats_as(&app, &event, &public).await["box-L-1"].0,
        "not_for_sale"
    );
    assert_eq!(seats_as(&app, &event, &partner).await["box-L-1"].0, "sold");
    assert_eq!(
        app.seat_statuses(&event).await["box-L-1"],
        "not_for_sale",
        "the typed client reads as nobody"
    );
}

async fn best_available_chooses_a_channels_seats_for_its_buyers_alone(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event_with_channel_seats().await;
    // Row A, the other premium seats, is taken.
    let (status, _) = app
        .post_holds(
            &event,
            &app.buyer("amy"),
            &["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4"],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = best(&app, &event, &app.buyer("bob"), 2).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = best(&app, &event, &app.channel_buyer("fay", "fan_club"), 1).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, hold) = best(&app, &event, &app.channel_buyer("pat", "partner-a"), 2).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let mut seats: Vec<&str> = hold["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    seats.sort_unstable();
    assert_eq!(seats, BOX);
}

async fn a_release_puts_the_free_channel_seats_on_general_sale(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event_with_channel_seats().await;
    let partner = app.channel_buyer("pat", "partner-a");
    let (status, _) = app.post_holds(&event, &partner, &["box-L-1"]).await;
    assert_eq!(status, StatusCode::CREATED);

    let release = |code: &str| format!("/v1/events/{event}/channels/{code}/release");
    let (status, body) = app
        .send(Method::POST, &release("partner-a"), &app.buyer("bob"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = app
        .send(Method::POST, &release("nope"), &As::Admin, None)
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let released = app
        .typed()
        .release_channel(EventId::parse(&event).unwrap(), "partner-a")
        .await
        .expect("released");
    assert_eq!(released.released, 1, "the held seat stays in the channel");

    let public = app.buyer("bob");
    let seats = seats_as(&app, &event, &public).await;
    assert_eq!(seats["box-L-2"], ("available".to_owned(), json!("premium")));
    assert_eq!(seats["box-L-1"].0, "not_for_sale");
    let (status, body) = app.post_holds(&event, &public, &["box-L-2"]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, _) = app.post_holds(&event, &public, &["box-L-1"]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // Released again: nothing is left to release.
    let (status, body) = app
        .send(Method::POST, &release("partner-a"), &As::Admin, None)
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"released": 0})));
}

async fn the_crowd_never_gets_a_channel_seat(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event_with_channel_seats().await;
    // 40 buyers at once ask for box-L-1: the first 30 in no channel (or another), the
    // last 10 the partner's.
    let requests = (0..40)
        .map(|i| {
            let who = match i {
                0..20 => app.buyer(&format!("buyer-{i}")),
                20..30 => app.channel_buyer(&format!("buyer-{i}"), "fan_club"),
                _ => app.channel_buyer(&format!("buyer-{i}"), "partner-a"),
            };
            app.request(Method::POST, &format!("/v1/events/{event}/holds"), &who)
                .json(&json!({"seats": ["box-L-1"]}))
        })
        .collect();
    let answers = race_riding_out(requests).await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 1), (409, 39)]));
    let winner = answers
        .iter()
        .position(|(s, _)| *s == StatusCode::CREATED)
        .unwrap();
    assert!(
        winner >= 30,
        "the hold went to buyer-{winner}, who is not the partner's"
    );
    let partner = app.channel_buyer("pat", "partner-a");
    assert_eq!(seats_as(&app, &event, &partner).await["box-L-1"].0, "held");
    let token = answers[winner].1["hold_token"].as_str().unwrap();
    let owner = app.channel_buyer(&format!("buyer-{winner}"), "partner-a");
    let (status, _) = app.post_orders(&event, &owner, token).await;
    assert_eq!(status, StatusCode::CREATED);
}

crate::helpers::stores::conformance!(
    channel_seats_are_the_channels_alone,
    best_available_chooses_a_channels_seats_for_its_buyers_alone,
    a_release_puts_the_free_channel_seats_on_general_sale,
    the_crowd_never_gets_a_channel_seat,
);

type Events = Box<dyn futures::Stream<Item = boxoffice_client::Result<LiveEvent>> + Send + Unpin>;

async fn next(events: &mut Events) -> LiveEvent {
    tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .expect("an event arrives in time")
        .expect("the stream is open")
        .expect("the event reads")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stream_shows_channel_seats_to_their_channel_alone() {
    let app = spawn_app_on(Store::Postgres).await;
    let event = app.create_event_with_channel_seats().await;
    let id = EventId::parse(&event).unwrap();
    let partner_token = boxoffice_client::mint_channel_token(
        &app.jwt_secret,
        "pat",
        Some("partner-a"),
        chrono::Utc::now() + chrono::Duration::hours(1),
    );
    let mut public: Events = Box::new(app.typed().stream(id).await.unwrap());
    let mut partner: Events =
        Box::new(app.typed().reader(&partner_token).stream(id).await.unwrap());
    let status_in = |event: LiveEvent, seat: &str| match event {
        LiveEvent::Snapshot(s) => s.seats.iter().find(|s| s.seat.id == seat).unwrap().status,
        other => panic!("expected a snapshot, got {other:?}"),
    };
    assert_eq!(
        status_in(next(&mut public).await, "box-L-1"),
        SeatStatus::NotForSale
    );
    assert_eq!(
        status_in(next(&mut partner).await, "box-L-1"),
        SeatStatus::Available
    );

    // The partner holds a box seat, then someone holds a stall: the public stream sees
    // only the stall; the partner's sees both, in order.
    let partner_buyer = As::Token(partner_token.clone());
    let (status, _) = app.post_holds(&event, &partner_buyer, &["box-L-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let ids = |event: LiveEvent| match event {
        LiveEvent::Seats(changed) => changed.seats.into_iter().map(|s| s.id).collect::<Vec<_>>(),
        other => panic!("expected seats, got {other:?}"),
    };
    assert_eq!(ids(next(&mut public).await), ["stalls-C-1"]);
    assert_eq!(ids(next(&mut partner).await), ["box-L-1"]);
    assert_eq!(ids(next(&mut partner).await), ["stalls-C-1"]);

    // Released: a fresh snapshot on both, box-L-2 available to all.
    app.typed().release_channel(id, "partner-a").await.unwrap();
    assert_eq!(
        status_in(next(&mut public).await, "box-L-2"),
        SeatStatus::Available
    );
    assert_eq!(
        status_in(next(&mut partner).await, "box-L-2"),
        SeatStatus::Available
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn channels_are_checked_when_the_event_is_made() {
    let app = spawn_app_on(Store::Postgres).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["channels"] = json!([{"code": "partner a", "name": "Partner A"},
                              {"code": "b", "name": "B"}, {"code": "b", "name": " "}]);
    spec["allocations"] = json!([{"ticket_type": "premium", "seats": BOX, "channel": "nope"}]);
    let (status, body) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "channels[0].code",
            "channels[2].code",
            "channels[2].name",
            "allocations[0].channel"
        ]
    );
    // A channel named by an allocation change must be the event's too.
    let event = app.create_event_with_channel_seats().await;
    let (status, body) = app
        .send(
            Method::PUT,
            &format!("/v1/events/{event}/allocations"),
            &As::Admin,
            Some(&json!({"allocations": [{"ticket_type": "standard", "seats": ["circle-A-1"], "channel": "nope"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = app
        .send(
            Method::PUT,
            &format!("/v1/events/{event}/allocations"),
            &As::Admin,
            Some(&json!({"allocations": [{"ticket_type": "standard", "seats": ["circle-A-1"], "channel": "fan_club"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let fan = app.channel_buyer("fay", "fan_club");
    assert_eq!(
        seats_as(&app, &event, &fan).await["circle-A-1"].0,
        "available"
    );
    assert_eq!(
        seats_as(&app, &event, &As::Nobody).await["circle-A-1"].0,
        "not_for_sale"
    );
}

impl TestApp {
    /// An event whose box only `partner-a`'s buyers may buy.
    async fn create_event_with_channel_seats(&self) -> String {
        channel_event(self).await
    }
}
