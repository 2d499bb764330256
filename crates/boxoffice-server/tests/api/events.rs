//! Events: create, list and read. Changes to a live event's allocations are in `allocations`.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{gala, spawn_app, As};

#[tokio::test]
async fn a_created_event_is_listed_and_reads_back_with_types_areas_and_counts() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let response = app
        .request(Method::POST, "/v1/events", &As::Admin)
        .json(&gala(&venue))
        .send()
        .await
        .unwrap();
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let (status, created) = crate::helpers::read(response).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = created["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/events/{id}"));

    let (status, list) = app.get("/v1/events").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        list,
        json!({"events": [{"id": id, "name": "Spring Gala", "venue_id": venue, "starts_at": "2030-03-01T19:30:00Z",
                           "organization_id": "00000000-0000-0000-0000-000000000001", "time_zone": "UTC"}]})
    );

    let (status, event) = app.get(&location).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(event["venue_id"], venue.as_str());
    assert_eq!(event["hold_ttl_seconds"], 120);
    assert_eq!(event["max_hold_seconds"], 900);
    assert_eq!(event["max_seats_per_user"], 4);
    assert_eq!(event["section_order"], json!(["stalls", "circle", "box"]));
    assert_eq!(
        event["ticket_types"][1],
        json!({"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"})
    );
    assert_eq!(
        event["ga_areas"],
        json!([{"code": "floor", "name": "Standing floor", "capacity": 50, "left": 50,
                "price_cents": 3000, "currency": "EUR", "max_per_booking": 10, "max_per_user": 10}])
    );
    assert_eq!(
        event["counts"],
        json!({"available": 14, "held": 0, "sold": 0, "not_for_sale": 3, "resale": 0})
    );
}

#[tokio::test]
async fn events_are_listed_soonest_first() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    for (name, at) in [
        ("Late", "2031-01-01T00:00:00Z"),
        ("Early", "2029-01-01T00:00:00Z"),
    ] {
        let mut body = gala(&venue);
        body["name"] = json!(name);
        body["starts_at"] = json!(at);
        assert_eq!(app.post_events(&body).await.0, StatusCode::CREATED);
    }
    let (_, list) = app.get("/v1/events").await;
    let names: Vec<_> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].clone())
        .collect();
    assert_eq!(names, [json!("Early"), json!("Late")]);
}

#[tokio::test]
async fn defaults_apply_and_later_allocations_override_earlier_ones() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let (status, created) = app
        .post_events(&json!({"venue_id": venue, "name": "Matinee", "starts_at": "2030-01-01T14:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                             {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "premium", "section": "stalls"},
                            {"ticket_type": "standard", "section": "stalls", "rows": ["B", "C"]},
                            {"ticket_type": "premium", "seats": ["stalls-C-4"]}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    let (_, event) = app.get(&format!("/v1/events/{id}")).await;
    assert_eq!(
        (
            event["hold_ttl_seconds"].as_u64(),
            event["max_hold_seconds"].as_u64()
        ),
        (Some(120), Some(900))
    );
    assert_eq!(event["max_seats_per_user"], 8);
    assert_eq!(event["ga_areas"], json!([]));

    let (_, seats) = app.get(&format!("/v1/events/{id}/seats")).await;
    let types: Vec<(String, Value)> = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["ticket_type"].clone(),
            )
        })
        .collect();
    let of = |seat: &str| types.iter().find(|(id, _)| id == seat).unwrap().1.clone();
    assert_eq!(of("stalls-A-1"), "premium");
    assert_eq!(of("stalls-B-2"), "standard");
    assert_eq!(of("stalls-C-3"), "standard");
    assert_eq!(of("stalls-C-4"), "premium");
    assert_eq!(of("circle-A-1"), Value::Null);
}

#[tokio::test]
async fn invalid_events_answer_422_per_field_and_store_nothing() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let with = |patch: Value| {
        let mut body = gala(&venue);
        for (k, v) in patch.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let cases = [
        (
            with(json!({"venue_id": "6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c"})),
            vec!["venue_id"],
        ),
        (with(json!({"venue_id": "nope"})), vec!["venue_id"]),
        (with(json!({"starts_at": "tomorrow"})), vec!["starts_at"]),
        (
            with(json!({"hold_ttl_seconds": 0, "max_seats_per_user": 101})),
            vec!["hold_ttl_seconds", "max_seats_per_user"],
        ),
        (
            with(json!({"hold_ttl_seconds": 600, "max_hold_seconds": 300})),
            vec!["max_hold_seconds"],
        ),
        (
            with(json!({"section_order": ["balcony"]})),
            vec!["section_order[0]"],
        ),
        (
            with(json!({"allocations": [{"ticket_type": "vip", "section": "stalls"}]})),
            vec!["allocations[0].ticket_type"],
        ),
        (
            with(
                json!({"allocations": [{"ticket_type": "standard", "section": "stalls", "rows": ["Z"]}]}),
            ),
            vec!["allocations[0].rows"],
        ),
        (
            with(json!({"allocations": [{"ticket_type": "standard", "seats": ["stalls-Z-1"]}]})),
            vec!["allocations[0].seats[0]"],
        ),
        (
            with(json!({"allocations": [{"ticket_type": "standard", "section": "balcony"}]})),
            vec!["allocations[0].section"],
        ),
        (
            with(
                json!({"ticket_types": [{"code": "standard", "name": "S", "price_cents": -1, "currency": "EUR"},
                                      {"code": "standard", "name": "S", "price_cents": 1, "currency": "usd"}],
                     "allocations": []}),
            ),
            vec![
                "ticket_types[0].price_cents",
                "ticket_types[1].code",
                "ticket_types[1].currency",
            ],
        ),
        (
            with(
                json!({"ga_areas": [{"code": "floor", "name": "F", "capacity": 0, "price_cents": 1, "currency": "GBP"}]}),
            ),
            vec!["ga_areas[0].capacity", "ga_areas[0].currency"],
        ),
        (
            with(
                json!({"ga_areas": [{"code": "floor", "name": "F", "capacity": 5, "price_cents": 1, "currency": "EUR",
                                   "max_per_booking": 6}]}),
            ),
            vec!["ga_areas[0].max_per_booking"],
        ),
        (
            with(
                json!({"ga_areas": [{"code": "floor", "name": "F", "price_cents": 1, "currency": "EUR"}]}),
            ),
            vec!["ga_areas[0].capacity"],
        ),
    ];
    for (body, fields) in cases {
        let (status, problem) = app.post_events(&body).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} → {problem}"
        );
        let got: Vec<_> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap())
            .collect();
        assert_eq!(got, fields, "{body} → {problem}");
    }
    assert_eq!(app.count("event").await, 0);
    assert_eq!(app.count("seat_allocation").await, 0);
}

#[tokio::test]
async fn event_writes_need_the_admin_token() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let venue = app.get(&format!("/v1/events/{event}")).await.1["venue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let user = As::Token(app.user_token("buyer-1"));
    let calls = [
        (Method::POST, "/v1/events".to_owned(), gala(&venue)),
        (
            Method::PUT,
            format!("/v1/events/{event}/allocations"),
            json!({"allocations": [{"ticket_type": "standard", "section": "circle"}]}),
        ),
        (
            Method::POST,
            format!("/v1/events/{event}/allocations/withdraw"),
            json!({"section": "stalls"}),
        ),
    ];
    for (method, path, body) in calls {
        for (who, expected) in [
            (As::Nobody, StatusCode::UNAUTHORIZED),
            (As::Token("garbage".into()), StatusCode::UNAUTHORIZED),
            (user.clone(), StatusCode::FORBIDDEN),
        ] {
            let (status, _) = app.send(method.clone(), &path, &who, Some(&body)).await;
            assert_eq!(status, expected, "{method} {path} as {who:?}");
        }
    }
    assert_eq!(app.count("event").await, 1);
    let statuses = app.seat_statuses(&event).await;
    assert_eq!(statuses["circle-A-1"], "not_for_sale");
    assert_eq!(statuses["stalls-A-1"], "available");
}

#[tokio::test]
async fn unknown_and_malformed_event_ids_are_404_everywhere() {
    let app = spawn_app().await;
    let missing = "6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c";
    for id in [missing, "not-a-uuid"] {
        for path in [
            format!("/v1/events/{id}"),
            format!("/v1/events/{id}/seats"),
            format!("/v1/events/{id}/availability"),
        ] {
            let (status, problem) = app.get(&path).await;
            assert_eq!(
                (status, problem["code"].as_str()),
                (StatusCode::NOT_FOUND, Some("event_not_found")),
                "{path}"
            );
        }
        let (status, problem) = app
            .send(
                Method::PUT,
                &format!("/v1/events/{id}/allocations"),
                &As::Admin,
                Some(&json!({"allocations": [{"ticket_type": "standard", "section": "stalls"}]})),
            )
            .await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("event_not_found"))
        );
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/v1/events/{id}/allocations/withdraw"),
                &As::Admin,
                Some(&json!({"section": "stalls"})),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn a_waiting_room_is_set_on_create_and_changed_or_removed_with_patch() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["queue"] = json!({"enabled": true, "opens_at": "2030-03-01T10:00:00Z",
        "admit_per_minute": 600});
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let path = format!("/v1/events/{}", created["id"].as_str().unwrap());
    let (_, event) = app.get(&path).await;
    assert_eq!(
        event["queue"],
        json!({"enabled": true, "opens_at": "2030-03-01T10:00:00Z", "admit_per_minute": 600,
            "session_seconds": 600, "shuffle_at_open": true}),
        "defaults filled in"
    );

    let patch = |body: Value, who: As| {
        let (app, path) = (&app, path.clone());
        async move { app.send(Method::PATCH, &path, &who, Some(&body)).await }
    };
    let (status, changed) = patch(
        json!({"queue": {"enabled": false, "opens_at": "2030-03-01T11:00:00Z",
            "admit_per_minute": 60, "session_seconds": 300, "shuffle_at_open": false}}),
        As::Admin,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["queue"]["admit_per_minute"], 60);
    assert_eq!(app.get(&path).await.1["queue"], changed["queue"]);
    // Nothing asked, nothing changed.
    let (status, same) = patch(json!({}), As::Admin).await;
    assert_eq!(
        (status, &same["queue"]),
        (StatusCode::OK, &changed["queue"])
    );

    // Bad settings name their field and change nothing.
    for (body, field) in [
        (
            json!({"queue": {"enabled": true, "opens_at": "2030-03-01T11:00:00Z", "admit_per_minute": 0}}),
            "queue.admit_per_minute",
        ),
        (
            json!({"queue": {"enabled": true, "opens_at": "2030-03-01T11:00:00Z", "admit_per_minute": 5,
            "session_seconds": 5}}),
            "queue.session_seconds",
        ),
        (
            json!({"queue": {"enabled": true, "admit_per_minute": 5}}),
            "queue.opens_at",
        ),
        (json!({"name": "Renamed"}), "name"),
    ] {
        let (status, problem) = patch(body, As::Admin).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
        assert_eq!(problem["errors"][0]["field"], field, "{problem}");
    }
    assert_eq!(app.get(&path).await.1["queue"], changed["queue"]);
    let (status, _) = patch(json!({"queue": null}), app.buyer("alice")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = patch(json!({"queue": null}), As::Nobody).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let unknown = format!("/v1/events/{}", uuid::Uuid::new_v4());
    let (status, problem) = app
        .send(
            Method::PATCH,
            &unknown,
            &As::Admin,
            Some(&json!({"queue": null})),
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("event_not_found"))
    );

    // `null` removes it.
    let (status, removed) = patch(json!({"queue": null}), As::Admin).await;
    assert_eq!(status, StatusCode::OK);
    assert!(removed.get("queue").is_none(), "{removed}");
}

/// A venue has an IANA time zone (UTC unless it names one), an event reads in its venue's
/// unless it names its own, and a name the tz database does not know is refused with
/// nothing made. `starts_at` stays UTC.
#[tokio::test]
async fn an_event_reads_in_its_venues_time_zone_or_its_own() {
    let app = spawn_app().await;
    let plain = app.create_venue().await;
    let (_, read) = app.get(&format!("/v1/venues/{plain}")).await;
    assert_eq!(read["time_zone"], "UTC");

    let mut spec = crate::helpers::hall();
    spec["time_zone"] = json!("Mars/Olympus");
    let (status, problem) = app.post_venues(&spec).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert!(problem.to_string().contains("time_zone"), "{problem}");
    spec["time_zone"] = json!("Europe/Lisbon");
    let (status, lisbon) = app.post_venues(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{lisbon}");
    let lisbon = lisbon["id"].as_str().unwrap().to_owned();
    let (_, read) = app.get(&format!("/v1/venues/{lisbon}")).await;
    assert_eq!(read["time_zone"], "Europe/Lisbon");

    let (status, inherits) = app.post_events(&gala(&lisbon)).await;
    assert_eq!(status, StatusCode::CREATED, "{inherits}");
    let (_, read) = app
        .get(&format!("/v1/events/{}", inherits["id"].as_str().unwrap()))
        .await;
    assert_eq!(
        (&read["time_zone"], &read["starts_at"]),
        (&json!("Europe/Lisbon"), &json!("2030-03-01T19:30:00Z"))
    );
    let mut own = gala(&lisbon);
    own["time_zone"] = json!("America/New_York");
    let (status, created) = app.post_events(&own).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (_, read) = app
        .get(&format!("/v1/events/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(read["time_zone"], "America/New_York");

    own["time_zone"] = json!("EST+5");
    let (status, problem) = app.post_events(&own).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let (_, list) = app.get("/v1/events").await;
    assert_eq!(list["events"].as_array().unwrap().len(), 2, "nothing made");
}

/// The pages write times as the PDF does: web/core/format.js under Node's test runner,
/// with the strings of boxoffice_core::local_time's tests.
#[test]
fn the_pages_time_formatter_writes_what_the_pdf_prints() {
    crate::helpers::node_tests("format.test.mjs", 5);
}
