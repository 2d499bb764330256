//! Races: many requests released together from a barrier, then the exact distribution of
//! answers and the state of the database. A single request succeeding proves nothing.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{
    big_event, held, hold_request, race, race_riding_out, rewind_hold, seat_set, spawn_race_app_on,
    tally,
};

/// The user whose hold request won (requests are made as `buyer-<index>`).
fn winner_user(answers: &[(StatusCode, Value)]) -> String {
    let i = answers
        .iter()
        .position(|(s, _)| *s == StatusCode::CREATED)
        .unwrap();
    format!("buyer-{i}")
}

async fn two_hundred_buyers_at_one_seat_leave_exactly_one_holder(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let seat = vec!["stalls-A-1".to_owned()];
    let answers = race(
        (0..200)
            .map(|i| hold_request(&app, &event, &format!("buyer-{i}"), &seat))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 1), (409, 199)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "seat_unavailable"));
    // With the server's defaults the adaptive limit is on, and a crowd on one seat never
    // meets it: the refusals are answered without the store.
    let limit = app.counter("boxoffice_overload_limit{path=\"hold\"}").await;
    assert!(limit >= 16.0, "the limit is on by default: {limit}");
    assert_eq!(
        app.counter("boxoffice_overload_shed_total{path=\"hold\"}")
            .await,
        0.0
    );
    let winner = &answers
        .iter()
        .find(|(s, _)| *s == StatusCode::CREATED)
        .unwrap()
        .1;
    assert_eq!(held(&app, &event).await, seat);
    let token = winner["hold_token"].as_str().unwrap();
    let (status, read) = app
        .hold_call(
            Method::GET,
            &event,
            token,
            "",
            &app.buyer(&winner_user(&answers)),
        )
        .await;
    assert_eq!(
        (status, read["seats"][0]["id"].as_str()),
        (StatusCode::OK, Some("stalls-A-1")),
        "the seat is the winner's"
    );
}

async fn sixty_overlapping_baskets_have_one_winner_and_the_losers_hold_nothing(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let others = [
        "stalls-A-1",
        "stalls-A-2",
        "stalls-A-3",
        "stalls-A-4",
        "stalls-C-1",
        "stalls-C-2",
        "stalls-C-3",
        "stalls-C-4",
    ];
    // Every basket has stalls-B-2, so any two overlap; the rest differ from basket to basket.
    let baskets: Vec<Vec<String>> = (0..60)
        .map(|i| {
            // The second pick is 1 to 7 places on from the first, so never the same seat.
            let second = (i + 1 + (i / 8) % 7) % 8;
            vec![
                others[i % 8].to_owned(),
                "stalls-B-2".to_owned(),
                others[second].to_owned(),
            ]
        })
        .collect();
    let answers = race_riding_out(
        baskets
            .iter()
            .enumerate()
            .map(|(i, seats)| hold_request(&app, &event, &format!("buyer-{i}"), seats))
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 1), (409, 59)]));
    let winner = &answers
        .iter()
        .find(|(s, _)| *s == StatusCode::CREATED)
        .unwrap()
        .1;
    let won: Vec<String> = winner["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();

    let mut expected = won.clone();
    expected.sort();
    assert_eq!(
        held(&app, &event).await,
        expected,
        "only the winner's seats are held; the losers hold nothing"
    );
}

async fn fifty_concurrent_checkouts_of_one_token_make_one_order(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-A-3", "stalls-A-4", "box-L-1"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();
    let answers = race_riding_out(
        (0..50)
            .map(|_| {
                app.request(Method::POST, &format!("/v1/events/{event}/orders"), &alice)
                    .json(&json!({"hold_token": token}))
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(200, 49), (201, 1)]));
    let first = &answers[0].1["order_id"];
    assert!(
        answers.iter().all(|(_, order)| &order["order_id"] == first),
        "every answer is the one order"
    );
    assert_eq!(app.count("ticket_order").await, 1);
    assert_eq!(app.count("order_seat").await, 3);
    assert_eq!(app.count("outbox").await, 1);
}

async fn one_user_firing_forty_holds_with_a_limit_of_two_gets_exactly_two(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 2, 20, 2).await;
    let answers = race_riding_out(
        (0..40)
            .map(|i| {
                hold_request(
                    &app,
                    &event,
                    "greedy",
                    &[format!("floor-R{}-{}", i / 20, i % 20 + 1)],
                )
            })
            .collect(),
    )
    .await;
    assert_eq!(tally(&answers), BTreeMap::from([(201, 2), (409, 38)]));
    assert!(answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "hold_limit_exceeded"));
    assert_eq!(held(&app, &event).await.len(), 2);
}

async fn checkout_racing_its_own_expiry_against_a_new_buyer_never_sells_twice(store: Store) {
    let app = spawn_race_app_on(store).await;
    let seats = 30;
    let event = big_event(&app, 1, seats, 100).await;
    let alice = app.buyer("alice");
    let mut tokens = Vec::new();
    for n in 1..=seats {
        let (status, hold) = app
            .post_holds(&event, &alice, &[format!("floor-R0-{n}").as_str()])
            .await;
        assert_eq!(status, StatusCode::CREATED);
        tokens.push(hold["hold_token"].as_str().unwrap().to_owned());
    }
    // Every hold lapses within the next few tens of milliseconds, each at its own moment,
    // while its owner checks out and another buyer tries to take the seat.
    for (i, token) in tokens.iter().enumerate() {
        rewind_hold(&app, &event, token, 60.0, 0.030 + 0.008 * (i % 6) as f64).await;
    }
    let mut requests = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        requests.push(
            app.request(Method::POST, &format!("/v1/events/{event}/orders"), &alice)
                .json(&json!({"hold_token": token})),
        );
        requests.push(hold_request(
            &app,
            &event,
            &format!("bob-{i}"),
            &[format!("floor-R0-{}", i + 1)],
        ));
    }
    let answers = race_riding_out(requests).await;
    assert!(
        answers.iter().all(|(s, _)| !s.is_server_error()),
        "never a 5xx: {:?}",
        tally(&answers)
    );
    for (i, pair) in answers.chunks(2).enumerate() {
        let (checkout, grab) = (&pair[0], &pair[1]);
        assert!(
            !(checkout.0.is_success() && grab.0.is_success()),
            "seat {} was sold to alice and held by bob-{i}",
            i + 1
        );
        assert!(matches!(checkout.0.as_u16(), 201 | 409), "{checkout:?}");
        assert!(matches!(grab.0.as_u16(), 201 | 409), "{grab:?}");
    }
    let sold_twice: i64 = sqlx::query_scalar(
        "select count(*) from (select seat_id from order_seat where not released group by seat_id having count(*) > 1) s",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(sold_twice, 0);
    let orders = answers
        .iter()
        .step_by(2)
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count() as i64;
    assert_eq!(
        app.count("order_seat").await,
        orders,
        "every 201 is one sold seat, and nothing else sold"
    );
    // A seat bob holds is not also sold to alice.
    let sold = seat_set(&app, "select seat_id from order_seat where not released").await;
    assert!(
        held(&app, &event).await.iter().all(|s| !sold.contains(s)),
        "no seat is both held and sold"
    );
}

async fn a_withdrawal_racing_forty_holds_never_strands_a_held_seat(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = big_event(&app, 1, 40, 8).await;
    // Cache the seat map, as a server in the middle of a sale has it.
    assert_eq!(held(&app, &event).await.len(), 0);
    app.seat_statuses(&event).await;
    let seats: Vec<String> = (1..=40).map(|n| format!("floor-R0-{n}")).collect();
    let mut requests = vec![app
        .request(
            Method::POST,
            &format!("/v1/events/{event}/allocations/withdraw"),
            &crate::helpers::As::Admin,
        )
        .json(&json!({"seats": seats}))];
    requests.extend(seats.iter().enumerate().map(|(i, seat)| {
        hold_request(
            &app,
            &event,
            &format!("buyer-{i}"),
            std::slice::from_ref(seat),
        )
    }));
    let answers = race_riding_out(requests).await;
    let (status, withdrawal) = &answers[0];
    assert_eq!(*status, StatusCode::OK, "{withdrawal}");
    let holds = &answers[1..];
    assert!(
        holds.iter().all(|(s, _)| matches!(s.as_u16(), 201 | 409)),
        "{:?}",
        tally(holds)
    );
    let won: Vec<String> = holds
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .map(|(_, h)| h["seats"][0]["id"].as_str().unwrap().to_owned())
        .collect();
    let mut skipped: Vec<String> = withdrawal["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    skipped.sort();
    let mut won_sorted = won.clone();
    won_sorted.sort();
    assert_eq!(
        skipped, won_sorted,
        "the withdrawal skipped exactly the seats that were held"
    );
    assert_eq!(
        withdrawal["changed"].as_u64().unwrap() as usize + won.len(),
        40
    );
    let on_sale = seat_set(&app, "select seat_id from seat_allocation").await;
    assert!(
        won.iter().all(|s| on_sale.contains(s)),
        "every held seat is still on sale"
    );
    assert_eq!(on_sale.len(), won.len(), "every other seat was withdrawn");
    assert_eq!(held(&app, &event).await, won_sorted);
}

crate::helpers::stores::conformance!(
    two_hundred_buyers_at_one_seat_leave_exactly_one_holder,
    sixty_overlapping_baskets_have_one_winner_and_the_losers_hold_nothing,
    fifty_concurrent_checkouts_of_one_token_make_one_order,
    one_user_firing_forty_holds_with_a_limit_of_two_gets_exactly_two,
    checkout_racing_its_own_expiry_against_a_new_buyer_never_sells_twice,
    a_withdrawal_racing_forty_holds_never_strands_a_held_seat,
);
