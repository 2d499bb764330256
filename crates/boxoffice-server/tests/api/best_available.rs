//! Best available through the API: the server chooses the seats and holds them all or
//! none, on every store. The choice itself is tested in the domain crate
//! (`best_available/tests.rs`, with property tests); here are the ranking the event
//! configures, the refusals, and buyers asking at once.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{big_event, race, race_riding_out, spawn_race_app_on, tally};
use crate::helpers::{gala, held, sell_directly, spawn_app_on, As, TestApp};

/// `POST /v1/events/{event}/holds` asking for the best seats.
async fn best(app: &TestApp, event: &str, who: &As, ask: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/holds"),
        who,
        Some(&json!({ "best_available": ask })),
    )
    .await
}

fn ids(hold: &Value) -> Vec<&str> {
    hold["seats"]
        .as_array()
        .unwrap_or_else(|| panic!("a hold: {hold}"))
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

async fn the_best_pair_is_side_by_side_at_the_front_and_strands_no_single_seat(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    // Stalls row A has four seats: the middle two would leave a single seat at each end.
    let (status, hold) = best(&app, &event, &app.buyer("alice"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold), ["stalls-A-1", "stalls-A-2"]);
    assert_eq!(hold["adjacent"], true);
    assert_eq!(
        hold["seats"][0],
        json!({"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "ticket_type": "premium", "price_cents": 9000})
    );
    assert_eq!(
        (hold["total_cents"].clone(), hold["currency"].clone()),
        (json!(18000), json!("EUR"))
    );
    // The hold is an ordinary hold: read back without `adjacent`, and shown as held.
    let token = hold["hold_token"].as_str().unwrap();
    let (status, read) = app
        .hold_call(Method::GET, &event, token, "", &app.buyer("alice"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read.get("adjacent"), None);
    assert_eq!(held(&app, &event).await, ["stalls-A-1", "stalls-A-2"]);

    let (status, next) = best(&app, &event, &app.buyer("bob"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{next}");
    assert_eq!(ids(&next), ["stalls-A-3", "stalls-A-4"]);
}

async fn a_ticket_type_narrows_the_choice(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    // Row A is premium; the first standard row is B.
    let (status, hold) = best(
        &app,
        &event,
        &app.buyer("alice"),
        json!({"quantity": 3, "ticket_type": "standard"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold), ["stalls-B-1", "stalls-B-2", "stalls-B-3"]);
    assert!(hold["seats"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["ticket_type"] == "standard" && s["price_cents"] == 4500));
    // Premium is row A and the box: after row A, the box's pair.
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-A-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, hold) = best(
        &app,
        &event,
        &app.buyer("carol"),
        json!({"quantity": 2, "ticket_type": "premium"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(
        (ids(&hold), hold["adjacent"].clone()),
        (vec!["stalls-A-3", "stalls-A-4"], json!(true))
    );
    // Three premium seats are left, nowhere side by side: the closest three, not adjacent.
    let (status, hold) = best(
        &app,
        &event,
        &app.buyer("dave"),
        json!({"quantity": 3, "ticket_type": "premium"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(hold["adjacent"], false);
    let mut got = ids(&hold);
    got.sort();
    assert_eq!(got, ["box-L-1", "box-L-2", "stalls-A-1"]);
}

async fn the_events_section_order_ranks_the_sections(store: Store) {
    let app = spawn_app_on(store).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["section_order"] = json!(["box", "stalls"]);
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap();
    let (status, hold) = best(&app, event, &app.buyer("alice"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(
        (ids(&hold), hold["adjacent"].clone()),
        (vec!["box-L-1", "box-L-2"], json!(true))
    );
    // The circle is not for sale, so it is never offered, whatever its rank.
    let (status, hold) = best(&app, event, &app.buyer("bob"), json!({"quantity": 4})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(
        ids(&hold),
        ["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4"]
    );
}

async fn bad_asks_are_refused_and_hold_nothing(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    for (body, field) in [
        (
            json!({"best_available": {"quantity": 0}}),
            "best_available.quantity",
        ),
        (
            json!({"best_available": {"quantity": 5}}),
            "best_available.quantity",
        ),
        (
            json!({"best_available": {"quantity": 2, "ticket_type": "vip"}}),
            "best_available.ticket_type",
        ),
        (
            json!({"best_available": {"quantity": 2}, "seats": ["stalls-A-1"]}),
            "seats",
        ),
    ] {
        let (status, problem) = app
            .send(
                Method::POST,
                &format!("/v1/events/{event}/holds"),
                &alice,
                Some(&body),
            )
            .await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {problem}"
        );
        assert_eq!(problem["code"], "validation_failed");
        assert_eq!(problem["errors"][0]["field"], field, "{problem}");
    }
    for body in [
        json!({"best_available": {"quantity": -1}}),
        json!({"best_available": {"quantity": 2, "near": "stage"}}),
    ] {
        let (status, problem) = app
            .send(
                Method::POST,
                &format!("/v1/events/{event}/holds"),
                &alice,
                Some(&body),
            )
            .await;
        assert_eq!(status.as_u16() / 100, 4, "{body}: {problem}");
    }
    assert!(held(&app, &event).await.is_empty());
    let (status, problem) = best(&app, &event, &As::Nobody, json!({"quantity": 1})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{problem}");
    let (status, problem) = best(
        &app,
        "00000000-0000-4000-8000-000000000000",
        &alice,
        json!({"quantity": 1}),
    )
    .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
}

async fn too_few_seats_left_is_a_conflict_that_holds_nothing(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    // Premium: stalls row A (four seats) and the box (two). Sell two, hold one.
    sell_directly(&app, &event, &["stalls-A-1", "box-L-2"]).await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-A-4"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = best(
        &app,
        &event,
        &app.buyer("alice"),
        json!({"quantity": 4, "ticket_type": "premium"}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    assert_eq!(problem["seats"], json!([]));
    assert_eq!(held(&app, &event).await, ["stalls-A-4"]);
    // Three are left, not side by side: they can still be had.
    let (status, hold) = best(
        &app,
        &event,
        &app.buyer("alice"),
        json!({"quantity": 3, "ticket_type": "premium"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let mut got = ids(&hold);
    got.sort();
    assert_eq!(
        (got, hold["adjacent"].clone()),
        (vec!["box-L-1", "stalls-A-2", "stalls-A-3"], json!(false))
    );
}

async fn the_per_user_limit_applies(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, _) = app
        .post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2", "stalls-C-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = best(&app, &event, &alice, json!({"quantity": 2})).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_limit_exceeded")),
        "{problem}"
    );
    assert_eq!(held(&app, &event).await.len(), 3);
    // The seats it would have chosen were not lost to the refusal.
    let (status, hold) = best(&app, &event, &app.buyer("bob"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold), ["stalls-A-1", "stalls-A-2"]);
    let (status, hold) = best(&app, &event, &alice, json!({"quantity": 1})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
}

/// 100 buyers ask for two seats at once in 150 seats (15 rows of 10): 75 pairs, each side
/// by side in one row, no seat twice, every seat held, and the other 25 told no.
async fn a_hundred_buyers_asking_for_pairs_at_once_fill_the_house_in_pairs(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 15, 10, 4).await;
    let answers = race_riding_out(
        (0..100)
            .map(|i| {
                app.request(
                    Method::POST,
                    &format!("/v1/events/{event}/holds"),
                    &app.buyer(&format!("buyer-{i}")),
                )
                .json(&json!({"best_available": {"quantity": 2}}))
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 75), (409, 25)]));
    let mut seats = BTreeSet::new();
    for (status, body) in &answers {
        if *status == StatusCode::CONFLICT {
            assert_eq!(body["code"], "seat_unavailable", "{body}");
            continue;
        }
        assert_eq!(body["adjacent"], true, "{body}");
        let pair = ids(body);
        let mut places: Vec<(&str, u32)> = pair
            .iter()
            .map(|id| {
                let mut parts = id.rsplitn(2, '-');
                let number = parts.next().unwrap().parse().unwrap();
                (parts.next().unwrap(), number)
            })
            .collect();
        places.sort();
        assert_eq!(places[0].0, places[1].0, "one row: {pair:?}");
        assert_eq!(places[0].1 + 1, places[1].1, "side by side: {pair:?}");
        for id in pair {
            assert!(seats.insert(id.to_owned()), "{id} went to two buyers");
        }
    }
    assert_eq!(seats.len(), 150);
    let held = held(&app, &event).await;
    assert_eq!(held, seats.into_iter().collect::<Vec<_>>());
}

/// A venue of two rows of eight; row B has a wheelchair space with its companion seat at
/// each end, and the box a third pair; everything on sale.
async fn hall_with_wheelchair_spaces(app: &TestApp) -> String {
    let spaces = |row: &str| -> Vec<Value> {
        (1..=8)
            .map(|n| {
                let mut seat =
                    json!({"number": n.to_string(), "x": n, "y": if row == "A" { 0 } else { 1 }});
                match (row, n) {
                    ("B", 1 | 8) => seat["accessible"] = json!(true),
                    ("B", 2 | 7) => seat["companion"] = json!(true),
                    _ => {}
                }
                seat
            })
            .collect()
    };
    let (_, venue) = app
        .post_venues(&json!({"name": "Access Hall", "sections": [
            {"id": "stalls", "name": "Stalls", "rows": [
                {"label": "A", "seats": spaces("A")}, {"label": "B", "seats": spaces("B")}]},
            {"id": "box", "name": "Box", "rows": [{"label": "L", "seats": [
                {"number": "1", "x": -2, "y": 0, "accessible": true},
                {"number": "2", "x": -2, "y": 1, "companion": true}]}]}]}))
        .await;
    let (status, event) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Access Night",
            "starts_at": "2030-03-01T19:30:00Z", "max_seats_per_user": 8,
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "stalls"},
                            {"ticket_type": "standard", "section": "box"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}

/// Ordinary asks never get a wheelchair space or companion seat, even when only those are
/// left; an accessible ask gets a space and the seat beside it.
async fn wheelchair_spaces_are_kept_for_buyers_who_ask_for_one(store: Store) {
    let app = spawn_app_on(store).await;
    let event = hall_with_wheelchair_spaces(&app).await;
    let (status, hold) = best(&app, &event, &app.buyer("ada"), json!({"quantity": 8})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold).len(), 8);
    assert!(ids(&hold).iter().all(|id| id.starts_with("stalls-A-")));
    let (status, hold) = best(&app, &event, &app.buyer("bo"), json!({"quantity": 4})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(
        ids(&hold),
        ["stalls-B-3", "stalls-B-4", "stalls-B-5", "stalls-B-6"]
    );
    // Six seats are free, all kept for wheelchairs: an ordinary ask is told no.
    let (status, problem) = best(&app, &event, &app.buyer("cy"), json!({"quantity": 1})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    let (status, hold) = best(
        &app,
        &event,
        &app.buyer("di"),
        json!({"quantity": 2, "accessible": true}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold), ["stalls-B-1", "stalls-B-2"]);
    assert_eq!(hold["adjacent"], true);
}

/// Ten buyers ask for a wheelchair space and a companion seat at once where there are
/// three: exactly three get one each, the other seven are told no, and no seat is held
/// twice.
async fn ten_buyers_racing_for_three_wheelchair_spaces(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = hall_with_wheelchair_spaces(&app).await;
    let answers = race(
        (0..10)
            .map(|i| {
                app.request(
                    Method::POST,
                    &format!("/v1/events/{event}/holds"),
                    &app.buyer(&format!("wheeler-{i}")),
                )
                .json(&json!({"best_available": {"quantity": 2, "accessible": true}}))
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 3), (409, 7)]));
    let mut pairs: Vec<Vec<String>> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::CREATED)
        .map(|(_, body)| ids(body).into_iter().map(str::to_owned).collect())
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ["box-L-1", "box-L-2"],
            ["stalls-B-1", "stalls-B-2"],
            ["stalls-B-7", "stalls-B-8"]
        ]
    );
    assert_eq!(held(&app, &event).await.len(), 6);
}

/// The venue's focal point breaks a tie the middle of a row leaves: stalls row A's pair
/// from the left end and from the right are as near its middle (the middle pair would
/// strand a seat at each end), and the focal point sits off to the right.
async fn a_focal_point_off_to_one_side_takes_the_pair_on_its_side(store: Store) {
    let app = spawn_app_on(store).await;
    let mut venue = crate::helpers::hall();
    venue["focal_point"] = json!({"x": 12.0, "y": -4.0});
    let (status, created) = app
        .send(Method::POST, "/v1/venues", &As::Admin, Some(&venue))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, event) = app
        .send(
            Method::POST,
            "/v1/events",
            &As::Admin,
            Some(&gala(created["id"].as_str().unwrap())),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    let event = event["id"].as_str().unwrap();
    let (status, hold) = best(&app, event, &app.buyer("alice"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(ids(&hold), ["stalls-A-3", "stalls-A-4"]);
    let (status, next) = best(&app, event, &app.buyer("bob"), json!({"quantity": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{next}");
    assert_eq!(ids(&next), ["stalls-A-1", "stalls-A-2"]);
}

crate::helpers::stores::conformance!(
    a_focal_point_off_to_one_side_takes_the_pair_on_its_side,
    wheelchair_spaces_are_kept_for_buyers_who_ask_for_one,
    ten_buyers_racing_for_three_wheelchair_spaces,
    the_best_pair_is_side_by_side_at_the_front_and_strands_no_single_seat,
    a_ticket_type_narrows_the_choice,
    the_events_section_order_ranks_the_sections,
    bad_asks_are_refused_and_hold_nothing,
    too_few_seats_left_is_a_conflict_that_holds_nothing,
    the_per_user_limit_applies,
    a_hundred_buyers_asking_for_pairs_at_once_fill_the_house_in_pairs,
);
