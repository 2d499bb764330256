//! Orders: checkout, read, cancel.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::stores::Store;
use crate::helpers::{spawn_app_on, spawn_app_with, As};

async fn checkout_sells_the_held_seats_with_the_order_and_its_outbox_row(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-A-1", "stalls-B-1"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();
    let (status, order) = app.post_orders(&event, &alice, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(order["event_id"], event.as_str());
    assert_eq!(order["user_id"], "alice");
    assert_eq!(order["seats"], hold["seats"]);
    assert_eq!(
        (order["total_cents"].clone(), order["currency"].clone()),
        (json!(13500), json!("EUR"))
    );
    assert_eq!(order["status"], "paid");

    let statuses = app.seat_statuses(&event).await;
    assert_eq!(
        (
            statuses["stalls-A-1"].as_str(),
            statuses["stalls-B-1"].as_str()
        ),
        ("sold", "sold")
    );
    let outbox: Vec<(String, serde_json::Value)> =
        sqlx::query_as("select topic, payload from outbox order by outbox_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].0, "order.created");
    assert_eq!(outbox[0].1["order_id"], order["order_id"]);
    assert_eq!(outbox[0].1["total_cents"], 13500);

    // The hold is used up.
    let (status, _) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, problem) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-A-1"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("seat_unavailable"))
    );
}

async fn orders_are_read_by_their_owner_or_an_admin(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app.post_holds(&event, &alice, &["stalls-C-4"]).await;
    let (_, order) = app
        .post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
        .await;
    let path = format!("/v1/orders/{}", order["order_id"].as_str().unwrap());
    assert_eq!(
        app.send(Method::GET, &path, &alice, None).await,
        (StatusCode::OK, order.clone())
    );
    assert_eq!(
        app.send(Method::GET, &path, &As::Admin, None).await,
        (StatusCode::OK, order.clone())
    );
    assert_eq!(
        app.send(Method::GET, &path, &app.buyer("bob"), None)
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        app.send(Method::GET, &path, &As::Nobody, None).await.0,
        StatusCode::UNAUTHORIZED
    );
    for missing in [
        format!("/v1/orders/{}", uuid::Uuid::new_v4()),
        "/v1/orders/nope".to_owned(),
    ] {
        let (status, problem) = app.send(Method::GET, &missing, &alice, None).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("order_not_found"))
        );
    }
}

async fn cancelling_returns_the_seats_to_sale(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-B-3", "stalls-B-4"])
        .await;
    let (_, order) = app
        .post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
        .await;
    let cancel = format!("/v1/orders/{}/cancel", order["order_id"].as_str().unwrap());

    assert_eq!(
        app.send(Method::POST, &cancel, &app.buyer("bob"), None)
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(app.seat_statuses(&event).await["stalls-B-3"], "sold");

    let (status, cancelled) = app.send(Method::POST, &cancel, &alice, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(app.seat_statuses(&event).await["stalls-B-3"], "available");
    let (status, again) = app.send(Method::POST, &cancel, &As::Admin, None).await;
    assert_eq!(
        (status, again["status"].clone()),
        (StatusCode::OK, json!("cancelled"))
    );

    // The seats sell again, to someone else.
    let bob = app.buyer("bob");
    let (status, hold) = app.post_holds(&event, &bob, &["stalls-B-3"]).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        app.post_orders(&event, &bob, hold["hold_token"].as_str().unwrap())
            .await
            .0,
        StatusCode::CREATED
    );
    let topics: Vec<String> = sqlx::query_scalar("select topic from outbox order by outbox_id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(
        topics,
        ["order.created", "order.cancelled", "order.created"]
    );
    let (_, missing) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/cancel", uuid::Uuid::new_v4()),
            &alice,
            None,
        )
        .await;
    assert_eq!(missing["code"], "order_not_found");
}

async fn bad_checkouts_answer_their_4xx_and_sell_nothing(store: Store) {
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let (alice, bob) = (app.buyer("alice"), app.buyer("bob"));
    let (_, hold) = app.post_holds(&event, &alice, &["stalls-A-2"]).await;
    let token = hold["hold_token"].as_str().unwrap();
    let orders = format!("/v1/events/{event}/orders");

    let (status, problem) = app.post_orders(&event, &bob, token).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, problem) = app
        .post_orders(&event, &alice, &uuid::Uuid::new_v4().to_string())
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    for body in [
        json!({"hold_token": "abc"}),
        json!({}),
        json!({"hold_token": token, "extra": 1}),
    ] {
        let (status, problem) = app.send(Method::POST, &orders, &alice, Some(&body)).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed")),
            "{body}"
        );
    }
    assert_eq!(
        app.post_orders(&event, &As::Nobody, token).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, problem) = app
        .post_orders("6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c", &alice, token)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
    assert_eq!(app.count("ticket_order").await, 0);

    // A released hold cannot be checked out.
    assert_eq!(
        app.hold_call(Method::DELETE, &event, token, "", &alice)
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    let (status, problem) = app.post_orders(&event, &alice, token).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
    assert_eq!(app.count("ticket_order").await, 0);
    assert_eq!(app.count("outbox").await, 0);
}

async fn a_checkout_postgres_cannot_finish_answers_503_and_leaves_the_hold_live(store: Store) {
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.stores.database.lock_timeout = std::time::Duration::from_millis(300);
    })
    .await;
    let event = app.create_event().await;
    let alice = app.buyer("alice");
    let (_, hold) = app
        .post_holds(&event, &alice, &["stalls-C-1", "stalls-C-2"])
        .await;
    let token = hold["hold_token"].as_str().unwrap();

    // Orders cannot be written while this lock is held: the checkout gives up on it.
    let mut blocker = app.db.begin().await.unwrap();
    sqlx::query("lock table ticket_order in exclusive mode")
        .execute(&mut *blocker)
        .await
        .unwrap();
    let (status, problem) = app.post_orders(&event, &alice, token).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );
    blocker.rollback().await.unwrap();

    // Nothing was sold, and the hold is as it was: live, extendable, and buyable.
    assert_eq!(app.count("ticket_order").await, 0);
    let (status, read) = app.hold_call(Method::GET, &event, token, "", &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["expires_at"], hold["expires_at"]);
    assert_eq!(
        app.hold_call(Method::POST, &event, token, "/extend", &alice)
            .await
            .0,
        StatusCode::OK
    );
    let (status, order) = app.post_orders(&event, &alice, token).await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(app.count("order_seat").await, 2);
}

crate::helpers::stores::conformance!(
    checkout_sells_the_held_seats_with_the_order_and_its_outbox_row,
    orders_are_read_by_their_owner_or_an_admin,
    cancelling_returns_the_seats_to_sale,
    bad_checkouts_answer_their_4xx_and_sell_nothing,
    a_checkout_postgres_cannot_finish_answers_503_and_leaves_the_hold_live,
);
