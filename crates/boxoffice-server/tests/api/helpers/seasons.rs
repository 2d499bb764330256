//! A season of three nights, shared by the season tests.

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{gala, As, TestApp};

/// Three events on one venue (Riverside Hall); their ids.
pub(crate) async fn three_nights(app: &TestApp) -> (String, Vec<String>) {
    let venue = app.create_venue().await;
    let mut events = Vec::new();
    for night in 1..=3 {
        let mut spec = gala(&venue);
        spec["name"] = json!(format!("Night {night}"));
        let (status, body) = app.post_events(&spec).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        events.push(body["id"].as_str().unwrap().to_owned());
    }
    (venue, events)
}

/// Three nights on Riverside Hall and their season (stalls row A and the circle; a partial
/// of the first two nights at 200.00 a season seat); the nights and the season's id.
pub(crate) async fn season(app: &TestApp) -> (Vec<String>, String) {
    let (_, events) = three_nights(app).await;
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/seasons",
            &As::Admin,
            Some(&json!({
                "name": "2027 Season",
                "event_ids": events,
                "ticket_types": [
                    {"code": "season", "name": "Season seat", "price_cents": 36000, "currency": "EUR"}],
                "allocations": [{"ticket_type": "season", "section": "stalls", "rows": ["A"]},
                                {"ticket_type": "season", "section": "circle"}],
                "partials": [{"code": "autumn", "name": "Autumn half",
                              "event_ids": [events[0], events[1]], "prices": {"season": 20000}}]
            })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (events, body["id"].as_str().unwrap().to_owned())
}
