//! Season orders on every hold store: a season hold bought sells its seats in every
//! event it covers in one transaction (one order for the buyer, one outbox row), a night
//! released goes on sale in that event alone (its waiting list first), and a cancellation
//! frees the rest. (A long file: every way a season order ends, on every store.)

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::season_orders::{hold, order, release};
use crate::helpers::seasons::season;
use crate::helpers::stores::Store;
use crate::helpers::{race, spawn_app_on, spawn_race_app_on, tally, As, TestApp};

/// The outbox's topics, oldest first.
async fn topics(app: &TestApp) -> Vec<String> {
    sqlx::query_scalar("select topic from outbox order by outbox_id")
        .fetch_all(&app.db)
        .await
        .unwrap()
}

/// Each event's live order seats of `seat` (sold, not released), in the events' order.
async fn sold_in(app: &TestApp, events: &[String], seat: &str) -> Vec<i64> {
    let mut counts = Vec::new();
    for event in events {
        let n: i64 = sqlx::query_scalar(
            "select count(*) from order_seat
              where event_id = $1::uuid and seat_id = $2 and not released",
        )
        .bind(event)
        .bind(seat)
        .fetch_one(&app.db)
        .await
        .unwrap();
        counts.push(n);
    }
    counts
}

async fn a_season_order_sells_the_seats_in_every_night_once(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let token = hold(
        &app,
        &season,
        "sam",
        json!({"seats": ["stalls-A-2", "circle-A-1"]}),
    )
    .await;
    let sam = app.buyer("sam");

    let (status, bought) = order(&app, &season, &sam, &token).await;
    assert_eq!(status, StatusCode::CREATED, "{bought}");
    assert_eq!(bought["season_id"], season.as_str());
    assert_eq!(bought["event_ids"], json!(events));
    assert_eq!(bought["user_id"], "sam");
    assert_eq!(bought["status"], "paid");
    assert_eq!(bought["total_cents"], 72000);
    assert_eq!(bought["currency"], "EUR");
    assert_eq!(bought["released"], json!([]));
    let seats: Vec<(&str, i64)> = bought["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["price_cents"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seats, [("circle-A-1", 36000), ("stalls-A-2", 36000)]);
    let id = bought["order_id"].as_str().unwrap();

    // The same token again: the same order; another buyer's try is refused.
    let (status, again) = order(&app, &season, &sam, &token).await;
    assert_eq!(
        (status, &again["order_id"]),
        (StatusCode::OK, &bought["order_id"])
    );
    let (status, _) = order(&app, &season, &app.buyer("eve"), &token).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // A token that held nothing.
    let (status, problem) = order(&app, &season, &sam, &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );

    // Sold in every night, once each, its price split over them; no hold left.
    for event in &events {
        let statuses = app.seat_statuses(event).await;
        assert_eq!(statuses["stalls-A-2"], "sold");
        assert_eq!(statuses["circle-A-1"], "sold");
        let (status, _) = app
            .post_holds(event, &app.buyer("eve"), &["stalls-A-2"])
            .await;
        assert_eq!(status, StatusCode::CONFLICT);
    }
    assert_eq!(sold_in(&app, &events, "stalls-A-2").await, vec![1, 1, 1]);
    let (nights, revenue): (i64, i64) = sqlx::query_as(
        "select count(distinct o.order_id), sum(s.price_cents)::int8
           from ticket_order o join order_seat s using (event_id, order_id)
          where o.season_order_id = $1::uuid",
    )
    .bind(id)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!((nights, revenue), (3, 72000));
    let path = format!("/v1/seasons/{season}/holds/{token}");
    assert_eq!(
        app.send(Method::GET, &path, &sam, None).await.0,
        StatusCode::NOT_FOUND
    );
    // One outbox row for the buyer's one order.
    assert_eq!(topics(&app).await, ["season_order.created"]);

    // Read by its owner or an admin, as any order.
    let order_path = format!("/v1/orders/{id}");
    let (status, read) = app.send(Method::GET, &order_path, &sam, None).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read, bought);
    let (status, read) = app.send(Method::GET, &order_path, &As::Admin, None).await;
    assert_eq!(
        (status, &read["order_id"]),
        (StatusCode::OK, &bought["order_id"])
    );
    let (status, _) = app
        .send(Method::GET, &order_path, &app.buyer("eve"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

async fn a_partial_season_order_covers_its_events_at_its_prices(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let token = hold(
        &app,
        &season,
        "pia",
        json!({"seats": ["stalls-A-4"], "partial": "autumn"}),
    )
    .await;
    let (status, bought) = order(&app, &season, &app.buyer("pia"), &token).await;
    assert_eq!(status, StatusCode::CREATED, "{bought}");
    assert_eq!(bought["partial"], "autumn");
    assert_eq!(bought["event_ids"], json!([events[0], events[1]]));
    assert_eq!(bought["total_cents"], 20000);
    assert_eq!(sold_in(&app, &events, "stalls-A-4").await, vec![1, 1, 0]);
    assert_eq!(
        app.seat_statuses(&events[2]).await["stalls-A-4"],
        "available"
    );
}

async fn a_night_released_goes_on_sale_there_alone_and_a_cancel_frees_the_rest(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let token = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    let sam = app.buyer("sam");
    let (_, bought) = order(&app, &season, &sam, &token).await;
    let id = bought["order_id"].as_str().unwrap();
    // Someone waits for a seat on the second night.
    let (status, waiting) = app
        .send(
            Method::POST,
            &format!("/v1/events/{}/waitlist", events[1]),
            &app.buyer("pat"),
            Some(&json!({"quantity": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{waiting}");

    // Not another buyer's to release; not a night the order lacks.
    let (status, _) = release(&app, id, &events[1], &app.buyer("eve")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let other = uuid::Uuid::new_v4().to_string();
    let (status, _) = release(&app, id, &other, &sam).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = release(&app, &other, &events[1], &sam).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, released) = release(&app, id, &events[1], &sam).await;
    assert_eq!(status, StatusCode::OK, "{released}");
    assert_eq!(
        released,
        json!({"event_id": events[1], "seats": [{"id": "stalls-A-2", "label": "Stalls, Row A, Seat 2"}]})
    );
    let (status, problem) = release(&app, id, &events[1], &As::Admin).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_released"))
    );
    // The second night's seat went to its waiting list; the others stay sold.
    assert_eq!(sold_in(&app, &events, "stalls-A-2").await, vec![1, 0, 1]);
    assert_eq!(app.seat_statuses(&events[1]).await["stalls-A-2"], "held");
    let (_, entry) = app
        .send(
            Method::GET,
            &format!(
                "/v1/events/{}/waitlist/{}",
                events[1],
                waiting["entry_id"].as_str().unwrap()
            ),
            &app.buyer("pat"),
            None,
        )
        .await;
    assert_eq!(entry["status"], "offered", "{entry}");
    // Pat's purchase that night is an ordinary order.
    let (status, pats) = app
        .send(
            Method::POST,
            &format!("/v1/events/{}/orders", events[1]),
            &app.buyer("pat"),
            Some(&json!({"hold_token": entry["offer"]["hold_token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{pats}");
    assert_eq!(pats["event_id"], events[1].as_str());
    assert_eq!(sold_in(&app, &events, "stalls-A-2").await, vec![1, 1, 1]);

    let (_, read) = app
        .send(Method::GET, &format!("/v1/orders/{id}"), &sam, None)
        .await;
    assert_eq!(read["status"], "paid");
    assert_eq!(read["released"], json!([released]));

    // Cancelled: the nights it still had are on sale again; the released one is Pat's.
    let (status, cancelled) = app
        .send(Method::POST, &format!("/v1/orders/{id}/cancel"), &sam, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["released"], json!([released]));
    assert_eq!(sold_in(&app, &events, "stalls-A-2").await, vec![0, 1, 0]);
    for event in [&events[0], &events[2]] {
        assert_eq!(app.seat_statuses(event).await["stalls-A-2"], "available");
    }
    assert_eq!(app.seat_statuses(&events[1]).await["stalls-A-2"], "sold");
    let (status, again) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{id}/cancel"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(
        (status, &again["status"]),
        (StatusCode::OK, &json!("cancelled"))
    );
    let (status, _) = release(&app, id, &events[0], &sam).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        topics(&app).await,
        [
            "season_order.created",
            "season_order.released",
            "waitlist.offered",
            "order.created",
            "season_order.cancelled"
        ]
    );
}

/// The same season hold bought twenty times at once: one order, made once.
async fn a_season_hold_bought_many_times_at_once_makes_one_order(store: Store) {
    let app = spawn_race_app_on(store).await;
    let (events, season) = season(&app).await;
    let token = hold(
        &app,
        &season,
        "sam",
        json!({"seats": ["stalls-A-1", "stalls-A-3"]}),
    )
    .await;
    let requests = (0..20)
        .map(|_| {
            app.request(
                Method::POST,
                &format!("/v1/seasons/{season}/orders"),
                &app.buyer("sam"),
            )
            .json(&json!({ "hold_token": token }))
        })
        .collect();
    let answers = race(requests).await;
    assert_eq!(tally(&answers), [(201, 1), (200, 19)].into());
    let ids: std::collections::BTreeSet<_> = answers
        .iter()
        .map(|(_, a)| a["order_id"].to_string())
        .collect();
    assert_eq!(ids.len(), 1);
    let orders: i64 = sqlx::query_scalar("select count(*) from season_order")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(orders, 1);
    assert_eq!(sold_in(&app, &events, "stalls-A-1").await, vec![1, 1, 1]);
    assert_eq!(topics(&app).await, ["season_order.created"]);
}

async fn the_organizer_lists_a_seasons_orders_and_its_sales_by_partial(store: Store) {
    let app = spawn_app_on(store).await;
    let (_, season) = season(&app).await;
    for (who, body) in [
        ("ann", json!({"seats": ["stalls-A-1", "stalls-A-2"]})),
        ("bob", json!({"seats": ["stalls-A-3"], "partial": "autumn"})),
        ("cyd", json!({"seats": ["circle-A-1"]})),
    ] {
        let token = hold(&app, &season, who, body).await;
        let (status, _) = order(&app, &season, &app.buyer(who), &token).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let cyd: String =
        sqlx::query_scalar("select season_order_id::text from season_order where user_id = 'cyd'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{cyd}/cancel"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let path = format!("/v1/seasons/{season}/orders");
    let (status, list) = app.send(Method::GET, &path, &As::Admin, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let buyers: Vec<&str> = list["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["user_id"].as_str().unwrap())
        .collect();
    assert_eq!(buyers, ["cyd", "bob", "ann"], "newest first");
    for (q, want) in [
        ("bob", vec!["bob"]),
        ("stalls-A-1", vec!["ann"]),
        (cyd.as_str(), vec!["cyd"]),
    ] {
        let (_, found) = app
            .send(Method::GET, &format!("{path}?q={q}"), &As::Admin, None)
            .await;
        let users: Vec<&str> = found["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["user_id"].as_str().unwrap())
            .collect();
        assert_eq!(users, want, "q={q}");
    }
    let (status, _) = app.send(Method::GET, &path, &app.buyer("ann"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app
        .send(Method::GET, &format!("{path}?limit=0"), &As::Admin, None)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    let (status, sales) = app
        .send(
            Method::GET,
            &format!("/v1/seasons/{season}/sales"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{sales}");
    assert_eq!(
        sales,
        json!({"currency": "EUR", "orders": 2, "seats": 3, "revenue_cents": 92000,
               "lines": [
                   {"name": "2027 Season", "orders": 1, "seats": 2, "revenue_cents": 72000},
                   {"partial": "autumn", "name": "Autumn half", "orders": 1, "seats": 1,
                    "revenue_cents": 20000}]})
    );
}

/// One buyer's whole purchase: hold (riding out turns), then buy at once; answers the
/// order's status, or the hold's refusal.
async fn hold_and_buy(app: &TestApp, hold_path: String, order_path: String, who: String) -> u16 {
    let buyer = app.buyer(&who);
    let held = crate::helpers::race_riding_out(vec![app
        .request(Method::POST, &hold_path, &buyer)
        .json(&json!({"seats": ["stalls-A-3"]}))])
    .await
    .remove(0);
    if held.0 != StatusCode::CREATED {
        return held.0.as_u16();
    }
    let (status, _) = app
        .send(
            Method::POST,
            &order_path,
            &buyer,
            Some(&json!({"hold_token": held.1["hold_token"]})),
        )
        .await;
    status.as_u16()
}

/// 60 season buyers and 60 single-night buyers each hold and buy one seat at once,
/// repeated: each night's seat ends in exactly one live order, never a season order and a
/// night's order for the same night, and a season order covers every night or none.
async fn season_and_night_buyers_racing_to_buy_leave_one_order_per_night(store: Store) {
    let app = spawn_race_app_on(store).await;
    let mut season_won = 0;
    for round in 0..5 {
        let (events, season) = season(&app).await;
        let mut buyers = Vec::new();
        for b in 0..60 {
            buyers.push(hold_and_buy(
                &app,
                format!("/v1/seasons/{season}/holds"),
                format!("/v1/seasons/{season}/orders"),
                format!("season-{round}-{b}"),
            ));
            let night = &events[b % 3];
            buyers.push(hold_and_buy(
                &app,
                format!("/v1/events/{night}/holds"),
                format!("/v1/events/{night}/orders"),
                format!("night-{round}-{b}"),
            ));
        }
        let answers = futures::future::join_all(buyers).await;
        let bought = answers.iter().filter(|&&s| s == 201).count();
        let refused = answers.iter().filter(|&&s| s == 409).count();
        assert_eq!(
            bought + refused,
            120,
            "every buyer bought or was refused: {answers:?}"
        );
        assert_eq!(sold_in(&app, &events, "stalls-A-3").await, vec![1, 1, 1]);
        let owners: Vec<(String, Option<uuid::Uuid>)> = sqlx::query_as(
            "select o.user_id, o.season_order_id
               from order_seat s join ticket_order o using (event_id, order_id)
              where s.seat_id = 'stalls-A-3' and not s.released
                and o.event_id = any($1::uuid[])",
        )
        .bind(
            events
                .iter()
                .map(|e| e.parse::<uuid::Uuid>().unwrap())
                .collect::<Vec<_>>(),
        )
        .fetch_all(&app.db)
        .await
        .unwrap();
        let seasons: std::collections::BTreeSet<_> =
            owners.iter().filter_map(|(_, s)| *s).collect();
        if seasons.is_empty() {
            assert_eq!(bought, 3, "a night's buyer in each night");
            assert!(owners.iter().all(|(u, _)| u.starts_with("night-")));
        } else {
            season_won += 1;
            assert_eq!(bought, 1, "one season buyer, no night's buyer");
            assert_eq!(seasons.len(), 1);
            assert!(owners.iter().all(|(_, s)| s.is_some()), "{owners:?}");
        }
    }
    eprintln!("the season won {season_won} of 5 rounds");
}

/// An event's order of a season's seats, cancelled by its own id (as the event's console
/// list offers), releases that night alone; read by its id, it answers the season order.
async fn cancelling_one_events_order_of_a_season_releases_that_night_alone(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let token = hold(&app, &season, "sam", json!({"seats": ["stalls-A-1"]})).await;
    let (_, bought) = order(&app, &season, &app.buyer("sam"), &token).await;
    let night: String =
        sqlx::query_scalar("select order_id::text from ticket_order where event_id = $1::uuid")
            .bind(&events[2])
            .fetch_one(&app.db)
            .await
            .unwrap();
    let (status, read) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{night}"),
            &app.buyer("sam"),
            None,
        )
        .await;
    assert_eq!(
        (status, &read["order_id"]),
        (StatusCode::OK, &bought["order_id"])
    );

    let (status, after) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{night}/cancel"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after["status"], "paid");
    assert_eq!(after["released"][0]["event_id"], events[2].as_str());
    assert_eq!(sold_in(&app, &events, "stalls-A-1").await, vec![1, 1, 0]);
    assert_eq!(
        app.seat_statuses(&events[2]).await["stalls-A-1"],
        "available"
    );
    // Again: answered as it is, nothing more released.
    let (status, again) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{night}/cancel"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(
        (status, &again["released"]),
        (StatusCode::OK, &after["released"])
    );
    assert_eq!(sold_in(&app, &events, "stalls-A-1").await, vec![1, 1, 0]);
    assert_eq!(
        topics(&app).await,
        ["season_order.created", "season_order.released"]
    );
}

crate::helpers::stores::conformance!(
    a_season_order_sells_the_seats_in_every_night_once,
    a_partial_season_order_covers_its_events_at_its_prices,
    a_night_released_goes_on_sale_there_alone_and_a_cancel_frees_the_rest,
    a_season_hold_bought_many_times_at_once_makes_one_order,
    the_organizer_lists_a_seasons_orders_and_its_sales_by_partial,
    season_and_night_buyers_racing_to_buy_leave_one_order_per_night,
    cancelling_one_events_order_of_a_season_releases_that_night_alone,
);
