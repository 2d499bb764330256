//! Holds: all or nothing, read, extend (capped), release (compare-and-delete), expiry and
//! allocation changes under live holds. Refusals are in `hold_refusals`.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{held, rewind_hold, sell_directly, spawn_app_on, As};

async fn a_hold_takes_every_seat_asked_for_and_quotes_their_prices(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (status, hold) = app
        .post_holds(&event, &alice, &["stalls-B-2", "stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(hold["event_id"], event.as_str());
    assert_eq!(
        hold["seats"],
        json!([{"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "ticket_type": "premium", "price_cents": 9000},
               {"id": "stalls-B-2", "label": "Stalls, Row B, Seat 2", "ticket_type": "standard", "price_cents": 4500}])
    );
    assert_eq!(
        (hold["total_cents"].clone(), hold["currency"].clone()),
        (json!(13500), json!("EUR"))
    );
    let expires: chrono::DateTime<chrono::Utc> =
        hold["expires_at"].as_str().unwrap().parse().unwrap();
    let left = expires - chrono::Utc::now();
    assert!(
        left > chrono::Duration::seconds(100) && left <= chrono::Duration::seconds(120),
        "{left}"
    );

    let token = hold["hold_token"].as_str().unwrap();
    let (status, read) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read, hold);

    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-1"].as_str(),
            statuses["stalls-B-2"].as_str()
        ),
        ("held", "held")
    );
}

async fn a_basket_with_one_taken_seat_holds_nothing_and_names_that_seat(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-C-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let before = held(&app, &event).await;

    let (status, problem) = app
        .post_holds(
            &event,
            &app.buyer("alice"),
            &["stalls-C-1", "stalls-C-2", "stalls-C-3", "stalls-C-4"],
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    assert_eq!(
        problem["seats"],
        json!([{"id": "stalls-C-3", "label": "Stalls, Row C, Seat 3"}])
    );
    assert_eq!(problem["detail"], "Stalls, Row C, Seat 3 just went");
    assert_eq!(
        held(&app, &event).await,
        before,
        "nothing of the basket is held"
    );
}

async fn sold_and_not_for_sale_seats_are_refused_like_held_ones(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    sell_directly(&app, &event, &["stalls-A-2"]).await;
    let (status, problem) = app
        .post_holds(
            &event,
            &app.buyer("alice"),
            &["stalls-A-2", "circle-A-1", "stalls-A-3"],
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
    let named: Vec<_> = problem["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(named, [json!("circle-A-1"), json!("stalls-A-2")]);
    assert!(held(&app, &event).await.is_empty());
}

async fn the_per_user_limit_counts_live_holds_only(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await; // max_seats_per_user = 4
    let alice = app.buyer("alice");
    let (status, first) = app
        .post_holds(&event, &alice, &["stalls-A-1", "stalls-A-2", "stalls-A-3"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_limit_exceeded"))
    );
    assert_eq!(
        app.post_holds(&event, &alice, &["stalls-B-1"]).await.0,
        StatusCode::CREATED
    );
    // Once the first hold has lapsed it no longer counts.
    rewind_hold(
        &app,
        &event,
        first["hold_token"].as_str().unwrap(),
        121.0,
        -1.0,
    )
    .await;
    assert_eq!(
        app.post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2", "stalls-C-3"])
            .await
            .0,
        StatusCode::CREATED
    );
    // Another user has a limit of their own.
    assert_eq!(
        app.post_holds(&event, &app.buyer("bob"), &["stalls-A-1"])
            .await
            .0,
        StatusCode::CREATED
    );
}

async fn an_expired_hold_resells_and_its_stale_token_can_do_nothing(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, old) = app
        .post_holds(&event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await;
    let old = old["hold_token"].as_str().unwrap().to_owned();
    rewind_hold(&app, &event, &old, 121.0, -1.0).await;
    assert_eq!(
        app.seat_statuses(&event).await["stalls-B-1"],
        "available",
        "an expired hold reads as available"
    );

    let (status, new) = app.post_holds(&event, &bob, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED, "{new}");
    let new = new["hold_token"].as_str().unwrap().to_owned();

    let (status, problem) = app.post_orders(&event, &alice, &old).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    let (status, problem) = app
        .hold_call(Method::POST, &event, &old, "/extend", &alice)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &old, "", &alice)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.hold_call(Method::GET, &event, &old, "", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Bob's hold survived all of that, and he can buy.
    let (status, read) = app.hold_call(Method::GET, &event, &new, "", &bob).await;
    assert_eq!(
        (status, read["seats"][0]["id"].clone()),
        (StatusCode::OK, json!("stalls-B-1"))
    );
    let (status, order) = app.post_orders(&event, &bob, &new).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(app.count("order_seat").await, 1);
}

async fn release_frees_only_its_own_live_seats(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();
    let path = format!("/v1/events/{event}/holds/{token}");

    let (status, problem) = app.send(Method::DELETE, &path, &bob, None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let wrong = format!("/v1/events/{event}/holds/{}", uuid::Uuid::new_v4());
    assert_eq!(
        app.send(Method::DELETE, &wrong, &alice, None).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.send(
            Method::DELETE,
            &format!("/v1/events/{event}/holds/nonsense"),
            &alice,
            None
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        held(&app, &event).await.len(),
        2,
        "the hold survives wrong tokens and other users"
    );

    assert_eq!(
        app.send(Method::DELETE, &path, &alice, None).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(held(&app, &event).await.is_empty());
    assert_eq!(
        app.send(Method::DELETE, &path, &alice, None).await.0,
        StatusCode::NOT_FOUND,
        "a second release is a no-op"
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "available");
}

async fn extending_moves_the_expiry_but_never_past_the_cap(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await; // ttl 120 s, max 900 s
    let alice = app.buyer("alice");
    let (_, hold) = app.post_holds(&event, &alice, &["box-L-1"]).await;
    let token = hold["hold_token"].as_str().unwrap();
    let extend = format!("/v1/events/{event}/holds/{token}/extend");
    let expiry = |v: &Value| {
        v["expires_at"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };

    // Sixty seconds later an extension gives a full TTL from now.
    rewind_hold(&app, &event, token, 60.0, 60.0).await;
    let (status, body) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let left = expiry(&body) - chrono::Utc::now();
    assert!(
        left > chrono::Duration::seconds(110) && left <= chrono::Duration::seconds(120),
        "{left}"
    );

    // Fifty seconds before the cap, an extension stops at creation + 900 s.
    let created = rewind_hold(&app, &event, token, 850.0, 10.0).await;
    let (status, body) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(expiry(&body), created + chrono::Duration::seconds(900));
    let (_, again) = app.send(Method::POST, &extend, &alice, None).await;
    assert_eq!(
        expiry(&again),
        created + chrono::Duration::seconds(900),
        "the cap holds on every extension"
    );

    let (status, problem) = app
        .send(Method::POST, &extend, &app.buyer("bob"), None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
}

async fn allocation_changes_skip_held_seats_and_holds_follow_them(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    // Quote the seats once, so the server has the seat map cached before it changes.
    let (status, _) = app.post_holds(&event, &alice, &["stalls-B-1"]).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/allocations/withdraw"),
            &As::Admin,
            Some(&json!({"seats": ["stalls-B-1", "stalls-B-2"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"changed": 1, "skipped": [
            {"id": "stalls-B-1", "label": "Stalls, Row B, Seat 1", "status": "held"}]})
    );
    let (status, problem) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-B-2"])
        .await;
    assert_eq!(
        (status, problem["seats"][0]["id"].as_str()),
        (StatusCode::CONFLICT, Some("stalls-B-2")),
        "a withdrawn seat cannot be held: {problem}"
    );

    // Back on sale at another price: the next hold quotes the new one.
    let (status, _) = app
        .send(
            Method::PUT,
            &format!("/v1/events/{event}/allocations"),
            &As::Admin,
            Some(&json!({"allocations": [{"ticket_type": "premium", "seats": ["stalls-B-2"]}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, hold) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    assert_eq!(
        (
            hold["seats"][0]["ticket_type"].as_str(),
            hold["total_cents"].as_i64()
        ),
        (Some("premium"), Some(9000))
    );
}

async fn a_hold_whose_time_runs_out_reads_as_available_and_resells(store: Store) {
    let app = spawn_app_on(store).await;
    let venue = app.create_venue().await;
    let mut body = crate::helpers::gala(&venue);
    body["hold_ttl_seconds"] = json!(2);
    body["max_hold_seconds"] = json!(2);
    let (_, created) = app.post_events(&body).await;
    let event = created["id"].as_str().unwrap().to_owned();
    let alice = app.buyer("alice");
    let (status, hold) = app.post_holds(&event, &alice, &["stalls-C-4"]).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(app.seat_statuses(&event).await["stalls-C-4"], "held");
    // Refused by what this instance knows of the hold, without asking the store.
    for _ in 0..2 {
        let (status, _) = app
            .post_holds(&event, &app.buyer("bob"), &["stalls-C-4"])
            .await;
        assert_eq!(status, StatusCode::CONFLICT);
    }
    assert_eq!(
        app.counter("boxoffice_holds_refused_unasked_total").await,
        2.0
    );
    // No rewinding: the store's own clock runs out.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(app.seat_statuses(&event).await["stalls-C-4"], "available");
    assert!(held(&app, &event).await.is_empty());
    let token = hold["hold_token"].as_str().unwrap();
    assert_eq!(
        app.hold_call(Method::GET, &event, token, "", &alice)
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-C-4"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        app.post_orders(&event, &alice, token).await.0,
        StatusCode::CONFLICT
    );
}

crate::helpers::stores::conformance!(
    a_hold_takes_every_seat_asked_for_and_quotes_their_prices,
    a_basket_with_one_taken_seat_holds_nothing_and_names_that_seat,
    sold_and_not_for_sale_seats_are_refused_like_held_ones,
    the_per_user_limit_counts_live_holds_only,
    an_expired_hold_resells_and_its_stale_token_can_do_nothing,
    release_frees_only_its_own_live_seats,
    extending_moves_the_expiry_but_never_past_the_cap,
    allocation_changes_skip_held_seats_and_holds_follow_them,
    a_hold_whose_time_runs_out_reads_as_available_and_resells,
);
