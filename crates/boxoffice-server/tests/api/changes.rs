//! Changing sold seats on both hold stores: moves (by staff, by the buyer while the event
//! allows it, all or none, and many to one free seat at once: one wins), swaps between two
//! orders, and a season night taken back; the state of every seat, order and ticket after
//! each, and what stays unchanged when a change is refused. (A long file: each change's
//! refusals and its state afterwards are checked on both stores, in one story each.)

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::door::tickets_of;
use crate::helpers::door::{holders, scan};
use crate::helpers::season_orders::{hold, order, release};
use crate::helpers::seasons::season;
use crate::helpers::staff::key;
use crate::helpers::stores::Store;
use crate::helpers::{buy, race, spawn_app_on, spawn_race_app_on, tally, As, TestApp};

pub(crate) async fn move_seats(
    app: &TestApp,
    order: &str,
    who: &As,
    moves: &[(&str, &str)],
) -> (StatusCode, Value) {
    let moves: Vec<Value> = moves
        .iter()
        .map(|(from, to)| json!({"from": from, "to": to}))
        .collect();
    app.send(
        Method::POST,
        &format!("/v1/orders/{order}/moves"),
        who,
        Some(&json!({ "moves": moves })),
    )
    .await
}

fn seat_ids(order: &Value) -> Vec<&str> {
    order["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

async fn outbox(app: &TestApp, topic: &str) -> Vec<Value> {
    sqlx::query_scalar("select payload from outbox where topic = $1 order by outbox_id")
        .bind(topic)
        .fetch_all(&app.db)
        .await
        .unwrap()
}

async fn live_holds(app: &TestApp, event: &str) -> usize {
    let event = boxoffice_core::ids::EventId(event.parse().unwrap());
    app.holds.held_seats(event).await.unwrap().len()
}

async fn a_move_takes_free_seats_all_or_none_and_reissues_their_tickets(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let bought = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let id = bought["order_id"].as_str().unwrap();
    buy(&app, &event, "bob", &["stalls-C-1"]).await;
    let path = format!("/v1/orders/{id}/tickets");
    let before = tickets_of(&app, &path, &alice).await;
    assert_eq!(before.len(), 2);

    // A buyer may not move seats until the event allows it; another buyer never.
    let (status, problem) = move_seats(&app, id, &alice, &[("stalls-A-1", "stalls-B-1")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{problem}");
    // Refused, each with nothing changed: a target sold, a seat not in the order, a seat
    // moved twice, a target in the order already, no moves at all.
    let (status, problem) = move_seats(
        &app,
        id,
        &As::Admin,
        &[("stalls-A-1", "stalls-B-1"), ("stalls-A-2", "stalls-C-1")],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    assert_eq!(problem["seats"][0]["id"], "stalls-C-1", "{problem}");
    for moves in [
        vec![("stalls-B-1", "stalls-B-2")],
        vec![("stalls-A-1", "stalls-B-1"), ("stalls-A-1", "stalls-B-2")],
        vec![("stalls-A-1", "stalls-A-2")],
        vec![],
    ] {
        let (status, problem) = move_seats(&app, id, &As::Admin, &moves).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{moves:?}: {problem}"
        );
    }
    assert_eq!(holders(&app, &event, "stalls-A-1").await, [id]);
    assert!(holders(&app, &event, "stalls-B-1").await.is_empty());
    assert_eq!(
        live_holds(&app, &event).await,
        0,
        "a refused move leaves no hold"
    );
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["stalls-B-1"], "available");

    // Staff move a premium seat to a standard one: the order says what it costs now.
    let (status, moved) = move_seats(&app, id, &As::Admin, &[("stalls-A-1", "stalls-B-1")]).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(seat_ids(&moved), ["stalls-A-2", "stalls-B-1"]);
    assert_eq!(moved["total_cents"], 9000 + 4500);
    assert_eq!(moved["price_difference_cents"], -4500);
    assert_eq!(moved["order_id"], id);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["stalls-A-1"], "available");
    assert_eq!(statuses["stalls-B-1"], "sold");
    assert_eq!(
        holders(&app, &event, "stalls-A-1").await,
        Vec::<String>::new()
    );
    assert_eq!(holders(&app, &event, "stalls-B-1").await, [id]);
    assert_eq!(live_holds(&app, &event).await, 0);
    // The seat left is free to anyone on this store; the seat taken to no one.
    let (status, _) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, held) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");

    // The seat moved has a new ticket; the old one is revoked at the door.
    let after = tickets_of(&app, &path, &alice).await;
    let old = before
        .iter()
        .find(|t| t["seat_id"] == "stalls-A-1")
        .unwrap();
    let kept = before
        .iter()
        .find(|t| t["seat_id"] == "stalls-A-2")
        .unwrap();
    assert_eq!(after.len(), 2);
    let new = after.iter().find(|t| t["seat_id"] == "stalls-B-1").unwrap();
    assert!(
        after.iter().any(|t| t["id"] == kept["id"]),
        "the seat not moved keeps its ticket"
    );
    assert_ne!(new["id"], old["id"]);
    assert_eq!(
        scan(&app, &event, &old["secret"]).await,
        (StatusCode::GONE, Some("ticket_revoked".into()))
    );
    assert_eq!(
        scan(&app, &event, &new["secret"]).await.0,
        StatusCode::CREATED
    );

    // The platform hears what changed.
    let changed = outbox(&app, "order.changed").await;
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["order_id"], id);
    assert_eq!(changed[0]["price_difference_cents"], -4500);
    let ids = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&changed[0]["seats_before"]),
        [json!("stalls-A-1"), json!("stalls-A-2")]
    );
    assert_eq!(
        ids(&changed[0]["seats"]),
        [json!("stalls-A-2"), json!("stalls-B-1")]
    );

    // A time passed lets no buyer move.
    let past = chrono::Utc::now() - chrono::Duration::minutes(1);
    app.patch_event(&event, &json!({"changes": {"buyer_moves_until": past}}))
        .await;
    let (status, _) = move_seats(&app, id, &alice, &[("stalls-A-2", "stalls-B-2")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The event lets buyers move their own seats until a time to come.
    let until = chrono::Utc::now() + chrono::Duration::hours(1);
    let patched = app
        .patch_event(&event, &json!({"changes": {"buyer_moves_until": until}}))
        .await;
    assert!(
        patched["changes"]["buyer_moves_until"].is_string(),
        "{patched}"
    );
    let (status, _) = move_seats(
        &app,
        id,
        &app.buyer("mallory"),
        &[("stalls-A-2", "stalls-B-2")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, moved) = move_seats(&app, id, &alice, &[("stalls-A-2", "stalls-B-2")]).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(seat_ids(&moved), ["stalls-B-1", "stalls-B-2"]);
    assert_eq!(moved["price_difference_cents"], -4500);
    assert_eq!(moved["total_cents"], 9000);
    // A cancelled order's seats no longer move.
    let (status, _) = app.cancel_order(id, &alice).await;
    assert_eq!(status, StatusCode::OK);
    let (status, problem) = move_seats(&app, id, &As::Admin, &[("stalls-B-1", "stalls-B-3")]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("order_not_changeable"))
    );
    assert_eq!(live_holds(&app, &event).await, 1, "carol's hold alone");
}

async fn many_moves_to_one_free_seat_at_once_one_wins(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let seats: Vec<String> = ["A", "B", "C"]
        .iter()
        .flat_map(|row| (1..=4).map(move |n| format!("stalls-{row}-{n}")))
        .collect();
    let mut orders = Vec::new();
    for (i, seat) in seats.iter().enumerate() {
        let order = buy(&app, &event, &format!("buyer{i}"), &[seat.as_str()]).await;
        orders.push(order["order_id"].as_str().unwrap().to_owned());
    }
    let requests = orders
        .iter()
        .zip(&seats)
        .map(|(order, seat)| {
            app.request(
                Method::POST,
                &format!("/v1/orders/{order}/moves"),
                &As::Admin,
            )
            .json(&json!({"moves": [{"from": seat, "to": "box-L-1"}]}))
        })
        .collect();
    let answers = race(requests).await;
    assert_eq!(tally(&answers), [(200, 1), (409, 11)].into(), "{answers:?}");
    let winner = answers
        .iter()
        .position(|(s, _)| *s == StatusCode::OK)
        .unwrap();
    assert_eq!(
        holders(&app, &event, "box-L-1").await,
        [orders[winner].clone()]
    );
    for (i, (order, seat)) in orders.iter().zip(&seats).enumerate() {
        let expected: Vec<String> = if i == winner {
            vec![]
        } else {
            vec![order.clone()]
        };
        assert_eq!(holders(&app, &event, seat).await, expected, "{seat}");
    }
    for (status, problem) in &answers {
        if *status == StatusCode::CONFLICT {
            assert_eq!(problem["code"], "seat_unavailable", "{problem}");
        }
    }
    assert_eq!(live_holds(&app, &event).await, 0, "no loser's hold is left");
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["box-L-1"], "sold");
    assert_eq!(statuses[&seats[winner]], "available");
    let changed: i64 =
        sqlx::query_scalar("select count(*) from outbox where topic = 'order.changed'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(changed, 1);
}

async fn a_swap_exchanges_two_orders_seats_in_one_transaction(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = buy(&app, &event, "alice", &["stalls-A-1"]).await;
    let bob = buy(&app, &event, "bob", &["stalls-C-1", "stalls-C-2"]).await;
    let (a, b) = (
        alice["order_id"].as_str().unwrap(),
        bob["order_id"].as_str().unwrap(),
    );
    let alice_ticket = tickets_of(&app, &format!("/v1/orders/{a}/tickets"), &As::Admin).await;
    let swap = |a_seat: &str, b_seat: &str| json!({"a": {"order_id": a, "seat": a_seat}, "b": {"order_id": b, "seat": b_seat}});
    let path = format!("/v1/events/{event}/swaps");

    // Buyers never swap; a seat not in its order, or one order twice, changes nothing.
    let (status, _) = app
        .send(
            Method::POST,
            &path,
            &app.buyer("alice"),
            Some(&swap("stalls-A-1", "stalls-C-1")),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, problem) = app
        .send(
            Method::POST,
            &path,
            &As::Admin,
            Some(&swap("stalls-A-2", "stalls-C-1")),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let same = json!({"a": {"order_id": a, "seat": "stalls-A-1"}, "b": {"order_id": a, "seat": "stalls-A-1"}});
    let (status, _) = app.send(Method::POST, &path, &As::Admin, Some(&same)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    let (status, swapped) = app
        .send(
            Method::POST,
            &path,
            &As::Admin,
            Some(&swap("stalls-A-1", "stalls-C-2")),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{swapped}");
    assert_eq!(seat_ids(&swapped["a"]), ["stalls-C-2"]);
    assert_eq!(seat_ids(&swapped["b"]), ["stalls-A-1", "stalls-C-1"]);
    // Each seat keeps its price: Alice's premium seat went to Bob.
    assert_eq!(swapped["a"]["total_cents"], 4500);
    assert_eq!(swapped["a"]["price_difference_cents"], -4500);
    assert_eq!(swapped["b"]["total_cents"], 13500);
    assert_eq!(swapped["b"]["price_difference_cents"], 4500);
    assert_eq!(holders(&app, &event, "stalls-A-1").await, [b]);
    assert_eq!(holders(&app, &event, "stalls-C-2").await, [a]);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-1"].as_str(),
            statuses["stalls-C-2"].as_str()
        ),
        ("sold", "sold")
    );
    assert_eq!(outbox(&app, "order.changed").await.len(), 2);
    // New tickets for both; Alice's old one is refused at the door.
    let now = tickets_of(&app, &format!("/v1/orders/{a}/tickets"), &As::Admin).await;
    assert_eq!(now[0]["seat_id"], "stalls-C-2");
    assert_eq!(
        scan(&app, &event, &alice_ticket[0]["secret"]).await,
        (StatusCode::GONE, Some("ticket_revoked".into()))
    );
    assert_eq!(
        scan(&app, &event, &now[0]["secret"]).await.0,
        StatusCode::CREATED
    );
    // Neither seat is free to anyone after the swap, on this store too.
    for seat in ["stalls-A-1", "stalls-C-2"] {
        let (status, _) = app.post_holds(&event, &app.buyer("carol"), &[seat]).await;
        assert_eq!(status, StatusCode::CONFLICT, "{seat}");
    }
    // Then both are the orders' own still: a cancellation frees them.
    let (status, _) = app.cancel_order(b, &As::Admin).await;
    assert_eq!(status, StatusCode::OK);
    let (status, held) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-A-1", "stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");

    // A sales key may swap; a key that only checks tickets in may not.
    let (checkin, _) = key(&app, "00000000-0000-0000-0000-000000000001", "checkin").await;
    let (status, _) = app
        .send(
            Method::POST,
            &path,
            &checkin,
            Some(&swap("stalls-C-2", "stalls-A-1")),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

async fn a_season_night_released_is_taken_back_while_its_seat_is_free(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let sam = app.buyer("sam");
    let token = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    let (_, bought) = order(&app, &season, &sam, &token).await;
    let id = bought["order_id"].as_str().unwrap();
    let reclaim = |event: &str| format!("/v1/orders/{id}/events/{event}/reclaim");

    // Not released: nothing to take back.
    let (status, problem) = app
        .send(Method::POST, &reclaim(&events[1]), &sam, None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("order_not_changeable"))
    );
    let (status, _) = release(&app, id, &events[1], &sam).await;
    assert_eq!(status, StatusCode::OK);
    assert!(holders(&app, &events[1], "stalls-A-2").await.is_empty());
    // Held by someone else that night: not free.
    let (status, held) = app
        .post_holds(&events[1], &app.buyer("pat"), &["stalls-A-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    let (status, problem) = app
        .send(Method::POST, &reclaim(&events[1]), &sam, None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    // Another buyer may not take it back for Sam.
    let (status, _) = app
        .send(Method::POST, &reclaim(&events[1]), &app.buyer("eve"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app
        .send(
            Method::DELETE,
            &format!(
                "/v1/events/{}/holds/{}",
                events[1],
                held["hold_token"].as_str().unwrap()
            ),
            &app.buyer("pat"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Free again: Sam takes the night back, with a new ticket.
    let (status, back) = app
        .send(Method::POST, &reclaim(&events[1]), &sam, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{back}");
    assert_eq!(back["released"], json!([]), "{back}");
    assert_eq!(back["status"], "paid");
    let night = holders(&app, &events[1], "stalls-A-2").await;
    assert_eq!(night.len(), 1);
    assert_eq!(app.seat_statuses(&events[1]).await["stalls-A-2"], "sold");
    let (status, _) = app
        .post_holds(&events[1], &app.buyer("pat"), &["stalls-A-2"])
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let tickets = tickets_of(&app, &format!("/v1/orders/{id}/tickets"), &sam).await;
    let valid: Vec<&Value> = tickets.iter().filter(|t| t["status"] == "valid").collect();
    assert_eq!(valid.len(), 3, "{tickets:?}");
    let night = valid
        .iter()
        .find(|t| t["event_id"] == events[1].as_str())
        .unwrap();
    assert_eq!(
        scan(&app, &events[1], &night["secret"]).await.0,
        StatusCode::CREATED
    );
    assert_eq!(live_holds(&app, &events[1]).await, 0);
    let reclaimed = outbox(&app, "season_order.reclaimed").await;
    assert_eq!(reclaimed.len(), 1);
    assert_eq!(reclaimed[0]["season_order_id"], id);
    // Taken back once: again it is not released.
    let (status, _) = app
        .send(Method::POST, &reclaim(&events[1]), &sam, None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
}

crate::helpers::stores::conformance!(
    a_move_takes_free_seats_all_or_none_and_reissues_their_tickets,
    many_moves_to_one_free_seat_at_once_one_wins,
    a_swap_exchanges_two_orders_seats_in_one_transaction,
    a_season_night_released_is_taken_back_while_its_seat_is_free,
);
