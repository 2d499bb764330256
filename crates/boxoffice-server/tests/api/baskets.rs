//! A hold that grows and shrinks a seat at a time (`POST …/holds/{token}/seats`, `DELETE
//! …/holds/{token}/seats/{seat}`), as a page that holds each seat as it is clicked builds
//! one basket: on every store, all or nothing, the per-user limit counting the whole hold,
//! and races of growing against other buyers, the limit, checkout and release.

use std::collections::BTreeMap;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{big_event, race, race_riding_out, spawn_race_app_on, tally};
use crate::helpers::{held, sell_directly, spawn_app_on, As, TestApp};

/// `POST /v1/events/{event}/holds/{token}/seats` with these seats.
fn grow(app: &TestApp, event: &str, token: &str, who: &As, seats: &[&str]) -> RequestBuilder {
    app.request(
        Method::POST,
        &format!("/v1/events/{event}/holds/{token}/seats"),
        who,
    )
    .json(&json!({ "seats": seats }))
}

/// `DELETE /v1/events/{event}/holds/{token}/seats/{seat}`.
fn shrink(app: &TestApp, event: &str, token: &str, who: &As, seat: &str) -> RequestBuilder {
    app.request(
        Method::DELETE,
        &format!("/v1/events/{event}/holds/{token}/seats/{seat}"),
        who,
    )
}

async fn send(request: RequestBuilder) -> (StatusCode, Value) {
    crate::helpers::read(request.send().await.expect("request is sent")).await
}

fn seat_ids(hold: &Value) -> Vec<&str> {
    hold["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

/// A new hold of `seats` by `who`: its token.
async fn hold(app: &TestApp, event: &str, who: &As, seats: &[&str]) -> String {
    let (status, hold) = app.post_holds(event, who, seats).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    hold["hold_token"].as_str().unwrap().to_owned()
}

async fn a_hold_grows_and_shrinks_under_its_token_and_expiry(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, first) = app.post_holds(&event, &alice, &["stalls-B-2"]).await;
    let token = first["hold_token"].as_str().unwrap();

    let (status, grown) = send(grow(
        &app,
        &event,
        token,
        &alice,
        &["stalls-A-1", "stalls-C-4"],
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{grown}");
    assert_eq!(grown["hold_token"], token);
    assert_eq!(
        grown["expires_at"], first["expires_at"],
        "the hold keeps its expiry"
    );
    assert_eq!(seat_ids(&grown), ["stalls-A-1", "stalls-B-2", "stalls-C-4"]);
    assert_eq!(
        grown["seats"][0],
        json!({"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "ticket_type": "premium", "price_cents": 9000})
    );
    assert_eq!(grown["total_cents"], 9000 + 4500 + 4500);
    assert_eq!(
        held(&app, &event).await,
        ["stalls-A-1", "stalls-B-2", "stalls-C-4"]
    );
    let (status, read) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!((status, &read), (StatusCode::OK, &grown));

    // A seat the hold has already is left as it is.
    let (status, again) = send(grow(&app, &event, token, &alice, &["stalls-B-2"])).await;
    assert_eq!((status, &again), (StatusCode::OK, &grown));

    let (status, shrunk) = send(shrink(&app, &event, token, &alice, "stalls-B-2")).await;
    assert_eq!(status, StatusCode::OK, "{shrunk}");
    assert_eq!(seat_ids(&shrunk), ["stalls-A-1", "stalls-C-4"]);
    assert_eq!(
        (shrunk["total_cents"].clone(), shrunk["expires_at"].clone()),
        (json!(13500), first["expires_at"].clone())
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-B-2"], "available");
    let bob = app.buyer("bob");
    hold(&app, &event, &bob, &["stalls-B-2"]).await;

    let (status, problem) = send(shrink(&app, &event, token, &alice, "stalls-B-2")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found")),
        "not in the hold"
    );
    let (status, _) = send(shrink(&app, &event, token, &bob, "stalls-A-1")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(shrink(&app, &event, token, &alice, "stalls-A-1")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, gone) = send(shrink(&app, &event, token, &alice, "stalls-C-4")).await;
    assert_eq!(
        (status, gone),
        (StatusCode::NO_CONTENT, Value::Null),
        "the last seat ends the hold"
    );
    let (status, _) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        held(&app, &event).await,
        ["stalls-B-2"],
        "only bob's seat is held"
    );
    let (status, problem) = send(shrink(&app, &event, token, &alice, "stalls-C-4")).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, problem) = send(grow(&app, &event, token, &alice, &["stalls-C-1"])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    assert_eq!(held(&app, &event).await, ["stalls-B-2"]);
}

async fn growing_is_all_or_nothing_and_refused_as_a_new_hold_is(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    sell_directly(&app, &event, &["stalls-B-4"]).await;
    let token = hold(&app, &event, &alice, &["stalls-A-1"]).await;
    hold(&app, &event, &bob, &["stalls-C-3"]).await;

    let (status, problem) = send(grow(
        &app,
        &event,
        &token,
        &alice,
        &["stalls-C-3", "stalls-C-4"],
    ))
    .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable")),
        "{problem}"
    );
    assert_eq!(
        problem["seats"],
        json!([{"id": "stalls-C-3", "label": "Stalls, Row C, Seat 3"}])
    );
    for taken in ["stalls-B-4", "circle-A-1"] {
        let (status, problem) =
            send(grow(&app, &event, &token, &alice, &["stalls-C-4", taken])).await;
        assert_eq!(
            (status, problem["seats"][0]["id"].as_str()),
            (StatusCode::CONFLICT, Some(taken)),
            "{problem}"
        );
    }
    assert_eq!(
        held(&app, &event).await,
        ["stalls-A-1", "stalls-C-3"],
        "nothing was added"
    );

    // The limit (4) counts the whole hold and the buyer's other holds.
    hold(&app, &event, &alice, &["stalls-B-1"]).await;
    let (status, problem) = send(grow(
        &app,
        &event,
        &token,
        &alice,
        &["stalls-A-2", "stalls-A-3", "stalls-A-4"],
    ))
    .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_limit_exceeded")),
        "{problem}"
    );
    let (status, grown) = send(grow(
        &app,
        &event,
        &token,
        &alice,
        &["stalls-A-2", "stalls-A-3"],
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{grown}");
    let (status, problem) = send(grow(&app, &event, &token, &alice, &["stalls-A-4"])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_limit_exceeded"))
    );

    let (status, _) = send(grow(&app, &event, &token, &bob, &["stalls-C-1"])).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "another buyer's hold");
    for (seats, field) in [
        (vec![], "seats"),
        (vec!["stalls-Z-9"], "seats"),
        (vec!["stalls-C-1", "stalls-C-1"], "seats"),
    ] {
        let (status, problem) = send(grow(&app, &event, &token, &alice, &seats)).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{seats:?}: {problem}"
        );
        assert_eq!(
            problem["errors"][0]["field"]
                .as_str()
                .map(|f| f.starts_with(field)),
            Some(true),
            "{problem}"
        );
    }
    let (status, problem) = send(grow(&app, &event, "not-a-token", &alice, &["stalls-C-1"])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    let (status, _) = send(
        app.request(
            Method::POST,
            &format!("/v1/events/{event}/holds/{token}/seats"),
            &As::Nobody,
        )
        .json(&json!({"seats": ["stalls-C-1"]})),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        held(&app, &event).await,
        [
            "stalls-A-1",
            "stalls-A-2",
            "stalls-A-3",
            "stalls-B-1",
            "stalls-C-3"
        ]
    );

    // The grown hold is checked out whole.
    let (status, order) = app.post_orders(&event, &alice, &token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(seat_ids(&order), ["stalls-A-1", "stalls-A-2", "stalls-A-3"]);
    assert_eq!(order["total_cents"], 27000);
}

async fn a_grown_hold_is_released_and_extended_whole(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let token = hold(&app, &event, &alice, &["stalls-A-1"]).await;
    let (status, _) = send(grow(
        &app,
        &event,
        &token,
        &alice,
        &["stalls-A-2", "stalls-B-3"],
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(shrink(&app, &event, &token, &alice, "stalls-A-1")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, extended) = app
        .hold_call(Method::POST, &event, &token, "/extend", &alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    let (_, read) = app.hold_call(Method::GET, &event, &token, "", &alice).await;
    assert_eq!(read["expires_at"], extended["expires_at"]);
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &token, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        held(&app, &event).await,
        Vec::<String>::new(),
        "every seat the hold had is free"
    );
}

/// Thirty buyers, each with a hold of their own, grow it by the same seat at once: one
/// gets it.
async fn thirty_holds_growing_by_one_seat_at_once_leave_it_with_one(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 4, 20, 4).await;
    let mut tokens = Vec::new();
    for i in 0..30 {
        let who = app.buyer(&format!("buyer-{i}"));
        let seat = format!("floor-R{}-{}", 1 + i / 20, 1 + i % 20);
        tokens.push(hold(&app, &event, &who, &[&seat]).await);
    }
    // Every growing asks the store (a hold's own seats are not refused from what the
    // instance knows): thirty at once meet the adaptive limit, and keep their turns.
    let answers = race_riding_out(
        tokens
            .iter()
            .enumerate()
            .map(|(i, token)| {
                grow(
                    &app,
                    &event,
                    token,
                    &app.buyer(&format!("buyer-{i}")),
                    &["floor-R0-10"],
                )
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(200, 1), (409, 29)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "seat_unavailable" && p["seats"][0]["id"] == "floor-R0-10"));
    let winner = answers
        .iter()
        .position(|(s, _)| *s == StatusCode::OK)
        .unwrap();
    let (_, read) = app
        .hold_call(
            Method::GET,
            &event,
            &tokens[winner],
            "",
            &app.buyer(&format!("buyer-{winner}")),
        )
        .await;
    assert_eq!(seat_ids(&read).len(), 2);
    assert!(seat_ids(&read).contains(&"floor-R0-10"));
    assert_eq!(
        held(&app, &event).await.len(),
        31,
        "30 holds and the one seat"
    );
}

/// One buyer grows two holds by ten single seats at once, with a limit of 4 and 2 held:
/// exactly two seats are added, however the requests interleave.
async fn growing_two_holds_at_once_never_passes_the_limit(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 2, 20, 4).await;
    let alice = app.buyer("alice");
    let first = hold(&app, &event, &alice, &["floor-R0-1"]).await;
    let second = hold(&app, &event, &alice, &["floor-R0-2"]).await;
    let seats: Vec<String> = (1..=10).map(|n| format!("floor-R1-{n}")).collect();
    let answers = race(
        seats
            .iter()
            .enumerate()
            .map(|(i, seat)| {
                grow(
                    &app,
                    &event,
                    if i % 2 == 0 { &first } else { &second },
                    &alice,
                    &[seat],
                )
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(200, 2), (409, 8)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "hold_limit_exceeded"));
    assert_eq!(held(&app, &event).await.len(), 4);
}

/// A hold of two is checked out while the buyer adds a third seat, twelve times over:
/// whatever the order, every seat is sold in the order or held by the live hold or free,
/// never held by a hold that is gone, and the order has exactly the seats the hold had.
async fn growing_while_checking_out_or_releasing_leaves_no_seat_behind(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 12, 6, 6).await;
    let alice = app.buyer("alice");
    for round in 0..12 {
        let seats: Vec<String> = (1..=3).map(|n| format!("floor-R{round}-{n}")).collect();
        let token = hold(&app, &event, &alice, &[&seats[0], &seats[1]]).await;
        let path = format!("/v1/events/{event}/orders");
        let (buying, end) = if round % 2 == 0 {
            (
                true,
                app.request(Method::POST, &path, &alice)
                    .json(&json!({"hold_token": token})),
            )
        } else {
            (
                false,
                app.request(
                    Method::DELETE,
                    &format!("/v1/events/{event}/holds/{token}"),
                    &alice,
                ),
            )
        };
        let answers = race(vec![end, grow(&app, &event, &token, &alice, &[&seats[2]])]).await;
        let (ended, grown) = (&answers[0], &answers[1]);
        let statuses = app.seat_statuses(&event).await;
        let now: Vec<&str> = seats.iter().map(|s| statuses[s].as_str()).collect();
        let live = app.hold_call(Method::GET, &event, &token, "", &alice).await;
        match (buying, ended.0, grown.0) {
            (true, StatusCode::CREATED, StatusCode::OK) => {
                assert_eq!(
                    seat_ids(&ended.1),
                    [&seats[0], &seats[1], &seats[2]],
                    "round {round}"
                );
                assert_eq!(now, ["sold", "sold", "sold"], "round {round}");
            }
            (true, StatusCode::CREATED, StatusCode::CONFLICT) => {
                assert_eq!(grown.1["code"], "hold_not_live", "round {round}");
                assert_eq!(seat_ids(&ended.1), [&seats[0], &seats[1]], "round {round}");
                assert_eq!(now, ["sold", "sold", "available"], "round {round}");
            }
            // The checkout began before the seat was added and found the hold changed: the
            // buyer keeps the grown hold.
            (true, StatusCode::CONFLICT, StatusCode::OK) => {
                assert_eq!(live.0, StatusCode::OK, "round {round}");
                assert_eq!(seat_ids(&live.1).len(), 3, "round {round}");
                assert_eq!(now, ["held", "held", "held"], "round {round}");
            }
            (false, StatusCode::NO_CONTENT, StatusCode::OK | StatusCode::CONFLICT) => {
                assert_eq!(live.0, StatusCode::NOT_FOUND, "round {round}");
                assert_eq!(
                    now,
                    ["available", "available", "available"],
                    "round {round}: {grown:?}"
                );
            }
            other => panic!("round {round}: {other:?} {answers:?}"),
        }
        assert_eq!(
            held(&app, &event).await.len(),
            now.iter().filter(|s| **s == "held").count(),
            "round {round}: no seat held by a hold that is gone"
        );
        if live.0 == StatusCode::OK {
            app.hold_call(Method::DELETE, &event, &token, "", &alice)
                .await;
        }
    }
}

crate::helpers::stores::conformance!(
    a_hold_grows_and_shrinks_under_its_token_and_expiry,
    growing_is_all_or_nothing_and_refused_as_a_new_hold_is,
    a_grown_hold_is_released_and_extended_whole,
    thirty_holds_growing_by_one_seat_at_once_leave_it_with_one,
    growing_two_holds_at_once_never_passes_the_limit,
    growing_while_checking_out_or_releasing_leaves_no_seat_behind,
);
