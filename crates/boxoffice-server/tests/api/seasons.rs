//! Seasons: created from events of one venue with their own ticket types, allocations and
//! partial seasons; read back; their seats composed across the events they cover.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::seasons::three_nights;
use crate::helpers::{buy, spawn_app, As, TestApp};

/// The season of the three nights: stalls row A at season prices (the circle too, which
/// the events hold back), and a partial of the first two nights.
fn season_of(events: &[String]) -> Value {
    json!({
        "name": "2027 Season",
        "event_ids": events,
        "ticket_types": [
            {"code": "season", "name": "Season seat", "price_cents": 36000, "currency": "EUR"},
            {"code": "circle", "name": "Circle season", "price_cents": 24000, "currency": "EUR"}],
        "allocations": [{"ticket_type": "season", "section": "stalls", "rows": ["A"]},
                        {"ticket_type": "circle", "section": "circle"}],
        "partials": [{"code": "autumn", "name": "Autumn half", "event_ids": [events[0], events[1]],
                      "prices": {"season": 20000}}]
    })
}

async fn post_season(app: &TestApp, body: &Value) -> (StatusCode, Value) {
    app.send(Method::POST, "/v1/seasons", &As::Admin, Some(body))
        .await
}

#[tokio::test]
async fn a_season_is_created_and_read_back_as_given() {
    let app = spawn_app().await;
    let (venue, events) = three_nights(&app).await;
    let (status, created) = post_season(&app, &season_of(&events)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();

    let (status, season) = app.get(&format!("/v1/seasons/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{season}");
    assert_eq!(season["name"], "2027 Season");
    assert_eq!(season["venue_id"], venue.as_str());
    assert_eq!(season["event_ids"], json!(events));
    assert_eq!(season["ticket_types"][0]["price_cents"], 36000);
    assert_eq!(season["ticket_types"][1]["code"], "circle");
    assert_eq!(
        season["partials"],
        json!([{"code": "autumn", "name": "Autumn half", "event_ids": [events[0], events[1]],
                "prices": {"season": 20000}}])
    );

    let (status, list) = app.get("/v1/seasons").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["seasons"], json!([season]));

    let (status, missing) = app
        .get(&format!("/v1/seasons/{}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    let (status, _) = app.get("/v1/seasons/not-an-id").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_season_that_breaks_a_rule_is_refused_and_nothing_is_written() {
    let app = spawn_app().await;
    let (_, events) = three_nights(&app).await;
    let (_, elsewhere) = three_nights(&app).await;

    // Events of two venues; an event named twice; a partial over an event outside the
    // season; a ticket type and a partial code repeated; a partial price for no type.
    let mut bad = season_of(&[events[0].clone(), elsewhere[0].clone(), events[0].clone()]);
    bad["partials"][0]["event_ids"] = json!([events[2]]);
    bad["partials"][0]["prices"] = json!({"gold": 100});
    let (partial, ticket_type) = (bad["partials"][0].clone(), bad["ticket_types"][0].clone());
    bad["partials"].as_array_mut().unwrap().push(partial);
    bad["ticket_types"]
        .as_array_mut()
        .unwrap()
        .push(ticket_type);
    let (status, problem) = post_season(&app, &bad).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["code"], "validation_failed");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    for field in [
        "event_ids[1]",
        "event_ids[2]",
        "ticket_types[2].code",
        "partials[0].event_ids[0]",
        "partials[0].prices.gold",
        "partials[1].code",
    ] {
        assert!(fields.contains(&field), "{field} in {problem}");
    }
    assert_eq!(app.count("season").await, 0);

    // An event in one season is in no other.
    let (status, _) = post_season(&app, &season_of(&events)).await;
    assert_eq!(status, StatusCode::CREATED);
    let mut again = season_of(&[elsewhere[0].clone(), events[2].clone()]);
    again["partials"] = json!([]);
    let (status, problem) = post_season(&app, &again).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "event_ids[1]", "{problem}");
    assert!(problem.to_string().contains("in season"), "{problem}");
    let (status, problem) = post_season(&app, &json!({"name": "x", "event_ids": []})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/seasons",
            &app.buyer("fan"),
            Some(&season_of(&elsewhere)),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(app.count("season").await, 1);
    assert_eq!(app.count("season_event").await, 3);
}

#[tokio::test]
async fn a_season_seat_is_available_only_where_no_event_has_it_taken() {
    let app = spawn_app().await;
    let (_, events) = three_nights(&app).await;
    let (_, created) = post_season(&app, &season_of(&events)).await;
    let id = created["id"].as_str().unwrap();

    // Night 1 sells stalls-A-1, night 3 has stalls-A-2 held; night 3 holds stalls-B-1,
    // which the season does not sell.
    buy(&app, &events[0], "alice", &["stalls-A-1"]).await;
    let (status, _) = app
        .post_holds(&events[2], &app.buyer("bob"), &["stalls-A-2", "stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let seats = |body: &Value| -> Vec<(String, Value, Value, String)> {
        body["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_owned(),
                    s["ticket_type"].clone(),
                    s["price_cents"].clone(),
                    s["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let (status, whole) = app.get(&format!("/v1/seasons/{id}/seats")).await;
    assert_eq!(status, StatusCode::OK, "{whole}");
    assert_eq!(whole["event_ids"], json!(events));
    let whole = seats(&whole);
    let of = |id: &str| whole.iter().find(|s| s.0 == id).unwrap().clone();
    assert_eq!(of("stalls-A-1").3, "sold");
    assert_eq!(of("stalls-A-2").3, "held");
    assert_eq!(
        of("stalls-A-3"),
        (
            "stalls-A-3".into(),
            json!("season"),
            json!(36000),
            "available".into()
        )
    );
    // Held back by the events, sold by the season.
    assert_eq!(
        of("circle-A-1"),
        (
            "circle-A-1".into(),
            json!("circle"),
            json!(24000),
            "available".into()
        )
    );
    // Not the season's: not for sale, or what an event did with it.
    assert_eq!(
        of("stalls-C-1"),
        (
            "stalls-C-1".into(),
            Value::Null,
            Value::Null,
            "not_for_sale".into()
        )
    );
    assert_eq!(of("stalls-B-1").3, "held");
    assert_eq!(whole.len(), 17, "every seat of the venue");

    // The autumn half covers nights 1 and 2: stalls-A-2 (held on night 3) is free for
    // it, at the partial's price; the circle keeps its season price.
    let (status, autumn) = app
        .get(&format!("/v1/seasons/{id}/seats?partial=autumn"))
        .await;
    assert_eq!(status, StatusCode::OK, "{autumn}");
    assert_eq!(autumn["partial"], "autumn");
    assert_eq!(autumn["event_ids"], json!([events[0], events[1]]));
    let autumn = seats(&autumn);
    let of = |id: &str| autumn.iter().find(|s| s.0 == id).unwrap().clone();
    assert_eq!(of("stalls-A-1").3, "sold");
    assert_eq!(
        of("stalls-A-2"),
        (
            "stalls-A-2".into(),
            json!("season"),
            json!(20000),
            "available".into()
        )
    );
    assert_eq!(of("circle-A-3").2, json!(24000));

    let (status, problem) = app
        .get(&format!("/v1/seasons/{id}/seats?partial=spring"))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{problem}");
}
