//! `GET /v1/events/{id}/seats` and `GET /v1/events/{id}/availability`: status composed from
//! allocations, sold seats (Postgres) and live holds (the hold store).

use boxoffice_client::api::SeatsView;
use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{hold_directly, sell_directly, spawn_app};

#[tokio::test]
async fn every_seat_is_listed_in_venue_order_in_the_documented_shape() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (status, body) = app.get(&format!("/v1/events/{event}/seats")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["event_id"], event.as_str());
    let seats = body["seats"].as_array().unwrap();
    let ids: Vec<_> = seats.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids[..5],
        [
            "stalls-A-1",
            "stalls-A-2",
            "stalls-A-3",
            "stalls-A-4",
            "stalls-B-1"
        ]
    );
    assert_eq!(
        ids[12..],
        [
            "circle-A-1",
            "circle-A-2",
            "circle-A-3",
            "box-L-1",
            "box-L-2"
        ]
    );
    assert_eq!(
        seats[0],
        json!({"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "section": "stalls", "row": "A",
               "number": "1", "x": 0.0, "y": 0.0, "ticket_type": "premium", "price_cents": 9000,
               "status": "available"})
    );
    assert_eq!(
        seats[12],
        json!({"id": "circle-A-1", "label": "Circle, Row A, Seat 1", "section": "circle", "row": "A",
               "number": "1", "x": 0.0, "y": 10.0, "ticket_type": null, "price_cents": null,
               "status": "not_for_sale"})
    );
}

#[tokio::test]
async fn held_sold_and_expired_seats_are_composed_at_read_time() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    hold_directly(
        &app,
        &event,
        &["stalls-A-1", "stalls-A-2"],
        Duration::seconds(90),
    )
    .await;
    hold_directly(&app, &event, &["stalls-A-3"], Duration::seconds(-1)).await;
    sell_directly(&app, &event, &["stalls-B-1", "box-L-2"]).await;

    let (_, body) = app.get(&format!("/v1/events/{event}/seats")).await;
    let seat = |id: &str| {
        body["seats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()
            .clone()
    };
    let held = seat("stalls-A-1");
    assert_eq!(held["status"], "held");
    let until: DateTime<Utc> = held["held_until"].as_str().unwrap().parse().unwrap();
    let left = until - Utc::now();
    assert!(
        left > Duration::seconds(60) && left <= Duration::seconds(90),
        "held for {left}"
    );
    assert!(
        held.get("user_id").is_none(),
        "nothing says who holds a seat"
    );
    assert_eq!(
        seat("stalls-A-3")["status"],
        "available",
        "an expired hold reads as available"
    );
    assert!(seat("stalls-A-3").get("held_until").is_none());
    assert_eq!(seat("stalls-B-1")["status"], "sold");
    assert!(seat("stalls-B-1").get("held_until").is_none());
    assert_eq!(seat("box-L-2")["status"], "sold");

    let (status, counts) = app.get(&format!("/v1/events/{event}/availability")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        counts,
        json!({"available": 10, "held": 2, "sold": 2, "not_for_sale": 3, "resale": 0,
               "ga": [{"code": "floor", "capacity": 50, "left": 50}]})
    );
}

#[tokio::test]
async fn a_sold_seat_reads_sold_even_if_a_hold_row_says_otherwise() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    hold_directly(&app, &event, &["stalls-C-1"], Duration::seconds(60)).await;
    sell_directly(&app, &event, &["stalls-C-1"]).await;
    assert_eq!(app.seat_statuses(&event).await["stalls-C-1"], "sold");
}

#[tokio::test]
async fn a_cancelled_order_puts_its_seats_back_on_sale() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    sell_directly(&app, &event, &["stalls-C-2"]).await;
    assert_eq!(app.seat_statuses(&event).await["stalls-C-2"], "sold");
    sqlx::query("update order_seat set released = true")
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(app.seat_statuses(&event).await["stalls-C-2"], "available");
}

#[tokio::test]
async fn the_schema_refuses_a_second_sale_of_a_seat() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    sell_directly(&app, &event, &["stalls-C-3"]).await;
    let second = tokio::spawn({
        let db = app.db.clone();
        let event: uuid::Uuid = event.parse().unwrap();
        async move {
            let order = uuid::Uuid::new_v4();
            let mut tx = db.begin().await.unwrap();
            sqlx::query("insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency) values ($1, $2, 'b', $3, 0, 'EUR')")
                .bind(event).bind(order).bind(uuid::Uuid::new_v4())
                .execute(&mut *tx).await.unwrap();
            sqlx::query("insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents) values ($1, $2, 'stalls-C-3', 'standard', 4500)")
                .bind(event).bind(order)
                .execute(&mut *tx).await
        }
    })
    .await
    .unwrap();
    let err = second.expect_err("a second live sale of one seat must be refused");
    assert_eq!(
        err.as_database_error().and_then(|e| e.constraint()),
        Some("order_seat_sold")
    );
}

/// `GET /seats` with `Accept-Encoding: gzip`: the raw answer, its `Content-Encoding` and its
/// body decoded.
async fn seats_gzipped(
    app: &crate::helpers::TestApp,
    event: &str,
) -> (Option<String>, usize, Vec<u8>) {
    let response = app
        .client
        .get(format!("{}/v1/events/{event}/seats", app.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    let encoding = response
        .headers()
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    let raw = response.bytes().await.unwrap();
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut decoded).unwrap();
    (encoding, raw.len(), decoded)
}

#[tokio::test]
async fn the_seat_map_is_compressed_for_clients_that_offer_it() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let plain = app
        .client
        .get(format!("{}/v1/events/{event}/seats", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.headers().get("content-encoding"), None);
    let plain = plain.bytes().await.unwrap();
    let (encoding, size, decoded) = seats_gzipped(&app, &event).await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert_eq!(decoded, plain, "the same answer, compressed");
    assert!(size * 3 < plain.len(), "{size} bytes of {}", plain.len());
    // Compressed once and kept while the seats stand; a change is never answered stale.
    assert_eq!(seats_gzipped(&app, &event).await.2, plain);
    let (status, _) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, _, changed) = seats_gzipped(&app, &event).await;
    let changed: serde_json::Value = serde_json::from_slice(&changed).unwrap();
    assert_eq!(changed["seats"][0]["status"], "held");
    for offered in ["br", "zstd"] {
        let response = app
            .client
            .get(format!("{}/v1/events/{event}/seats", app.base))
            .header("accept-encoding", offered)
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["content-encoding"], offered);
    }
    // The live stream is gzip or nothing (flushed piece by piece, see
    // live::a_stream_is_gzip_for_a_client_that_takes_it): never br or zstd.
    for (offered, sent) in [("gzip, br, zstd", Some("gzip")), ("br, zstd", None)] {
        let stream = app
            .client
            .get(format!("{}/v1/events/{event}/stream", app.base))
            .header("accept-encoding", offered)
            .send()
            .await
            .unwrap();
        let encoding = stream.headers().get("content-encoding");
        assert_eq!(encoding.map(|e| e.to_str().unwrap()), sent, "{offered}");
    }
    let stream = app
        .client
        .get(format!("{}/v1/events/{event}/stream", app.base))
        .send()
        .await
        .unwrap();
    assert!(stream.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
}

/// `GET url`, naming `tag` in `If-None-Match`.
async fn load_if_changed(app: &crate::helpers::TestApp, url: &str, tag: &str) -> reqwest::Response {
    app.client
        .get(url)
        .header("if-none-match", tag)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_repeat_load_of_an_unchanged_seat_map_is_a_304() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let url = format!("{}/v1/events/{event}/seats", app.base);
    let first = app.client.get(&url).send().await.unwrap();
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    let again = load_if_changed(&app, &url, &etag).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"], etag.as_str());
    assert!(again.bytes().await.unwrap().is_empty());
    let listed = load_if_changed(&app, &url, &format!("W/\"other\", {etag}")).await;
    assert_eq!(listed.status(), StatusCode::NOT_MODIFIED);

    // A hold changes one seat: the tag changes and the old one gets the whole map.
    let (status, _) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let changed = load_if_changed(&app, &url, &etag).await;
    assert_eq!(changed.status(), StatusCode::OK);
    let new_etag = changed.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(new_etag, etag);
    let body: serde_json::Value = changed.json().await.unwrap();
    assert_eq!(body["seats"][0]["status"], "held");
    // And the answer is the same whichever instance computes it.
    let url = app.database_url.clone();
    let other = crate::helpers::spawn_app_with(move |s| s.stores.database.url = url).await;
    let response = other
        .client
        .get(format!("{}/v1/events/{event}/seats", other.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["etag"], new_etag.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_layout_is_revalidated_until_the_allocations_change() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let url = format!("{}/v1/events/{event}/layout", app.base);
    let first = app.client.get(&url).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let layout: boxoffice_client::api::LayoutView = first.json().await.unwrap();
    let seats: SeatsView = app.typed().seats(layout.event_id).await.unwrap();
    assert_eq!(
        layout.seats,
        seats.seats.into_iter().map(|s| s.seat).collect::<Vec<_>>(),
        "the seats of GET /seats without their statuses, in the same order"
    );

    // Holds do not change the layout: a page revalidating it downloads nothing.
    let (status, _) = app
        .post_holds(&event, &app.buyer("alice"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let again = load_if_changed(&app, &url, &etag).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(again.bytes().await.unwrap().is_empty());

    // An allocation change does: the old tag gets the new layout.
    app.put_circle_on_sale(&event).await;
    let changed = load_if_changed(&app, &url, &etag).await;
    assert_eq!(changed.status(), StatusCode::OK);
    assert_ne!(changed.headers()["etag"], etag.as_str());
    let newer: boxoffice_client::api::LayoutView = changed.json().await.unwrap();
    assert!(newer.version > layout.version);
    let circle = newer.seats.iter().find(|s| s.id == "circle-A-1").unwrap();
    assert_eq!(circle.ticket_type.as_deref(), Some("standard"));

    let (status, problem) = app
        .get(&format!("/v1/events/{}/layout", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );
}
