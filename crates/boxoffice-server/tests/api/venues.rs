//! `POST /v1/venues`, `GET /v1/venues` and `GET /v1/venues/{id}`, and what a venue's
//! attributes and shapes become in an event. (A long file: one test per rule of the
//! venue's contract, each with its own venue.)

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{hall, spawn_app, spawn_app_with, As};

/// The `field` of each error of a `validation_failed` problem, in order.
fn error_fields(problem: &serde_json::Value) -> Vec<&str> {
    problem["errors"]
        .as_array()
        .expect("a validation problem lists its errors")
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_created_venue_reads_back_with_generated_ids_labels_and_coordinates() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/v1/venues", &As::Admin)
        .json(&hall())
        .send()
        .await
        .unwrap();
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let (status, created) = crate::helpers::read(response).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(created["seat_count"], 17);
    let id = created["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/venues/{id}"));

    let (status, venue) = app.get(&location).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(venue["id"], id);
    assert_eq!(venue["name"], "Riverside Hall");
    assert_eq!(venue["seat_count"], 17);
    let sections: Vec<_> = venue["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(sections, [json!("stalls"), json!("circle"), json!("box")]);
    let row_b = &venue["sections"][0]["rows"][1];
    assert_eq!(row_b["label"], "B");
    assert_eq!(
        row_b["seats"][2],
        json!({"id": "stalls-B-3", "number": "3", "label": "Stalls, Row B, Seat 3", "x": 2.0, "y": 1.2})
    );
    assert_eq!(
        venue["sections"][2]["rows"][0]["seats"][1],
        json!({"id": "box-L-2", "number": "2", "label": "Box, Row L, Seat 2", "x": -2.0, "y": 2.5})
    );
    assert_eq!(venue["sections"][1]["origin"], json!({"x": 0.0, "y": 10.0}));
}

#[tokio::test]
async fn a_venue_of_200000_seats_is_accepted_and_one_more_is_refused() {
    let app = spawn_app().await;
    let rows: Vec<_> = (0..200)
        .map(|i| json!({"label": format!("R{i}"), "seats": 1000}))
        .collect();
    let (status, body) = app
        .post_venues(
            &json!({"name": "Stadium", "sections": [{"id": "bowl", "name": "Bowl", "rows": rows}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["seat_count"], 200_000);

    let mut rows = rows.clone();
    rows.push(json!({"label": "extra", "seats": 1}));
    let (status, body) = app
        .post_venues(
            &json!({"name": "Stadium", "sections": [{"id": "bowl", "name": "Bowl", "rows": rows}]}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["errors"][0]["field"], "sections[0].rows[200].seats");
    assert_eq!(app.count("venue").await, 1);
}

#[tokio::test]
async fn invalid_venues_answer_422_naming_every_field_and_store_nothing() {
    let app = spawn_app().await;
    let cases = [
        (json!({"name": "V", "sections": []}), vec!["sections"]),
        (
            json!({"name": "", "sections": [{"id": "a-b", "name": "A", "rows": [{"label": "1", "seats": 2}]}]}),
            vec!["name", "sections[0].id"],
        ),
        (
            json!({"name": "V", "sections": [
            {"id": "s", "name": "S", "rows": [{"label": "A", "seats": 1}]},
            {"id": "s", "name": "T", "rows": [{"label": "A", "seats": 1}, {"label": "A", "seats": 1}]}]}),
            vec!["sections[1].id", "sections[1].rows[1].label"],
        ),
        (
            json!({"name": "V", "sections": [{"id": "s", "name": "S", "rows": [{"label": "A", "seats": [
            {"number": "1", "x": 0, "y": 0}, {"number": "1", "x": 1, "y": 0}]}]}]}),
            vec!["sections[0].rows[0].seats[1]"],
        ),
        (
            json!({"name": "V", "sections": [{"id": "s", "name": "S", "seat_spacing": -1,
            "rows": [{"label": "A", "seats": 1}]}]}),
            vec!["sections[0].seat_spacing"],
        ),
        // Wrong JSON types are 422 too, with the path of the field.
        (
            json!({"name": "V", "sections": [{"id": "s", "name": "S", "rows": [{"label": "A", "seats": -3}]}]}),
            vec!["sections[0].rows[0].seats"],
        ),
        (
            json!({"name": "V", "sections": [{"id": "s", "name": "S", "rows": [{"label": 7, "seats": 1}]}]}),
            vec!["sections[0].rows[0].label"],
        ),
        (json!({"name": "V"}), vec!["sections"]),
        (
            json!({"name": "V", "sections": [], "colour": "red"}),
            vec!["colour"],
        ),
    ];
    for (body, fields) in cases {
        let (status, problem) = app.post_venues(&body).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} → {problem}"
        );
        assert_eq!(problem["code"], "validation_failed");
        let got: Vec<_> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap())
            .collect();
        assert_eq!(got, fields, "{body} → {problem}");
        assert!(problem["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    assert_eq!(app.count("venue").await, 0);
    assert_eq!(app.count("seat").await, 0);
}

#[tokio::test]
async fn malformed_json_is_400_and_a_body_that_is_not_json_is_415() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/v1/venues", &As::Admin)
        .header("content-type", "application/json")
        .body(r#"{"name": "V", "sections": ["#)
        .send()
        .await
        .unwrap();
    let (status, problem) = crate::helpers::read(response).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed_json"))
    );

    let response = app
        .request(Method::POST, "/v1/venues", &As::Admin)
        .header("content-type", "text/plain")
        .body(serde_json::to_vec(&hall()).unwrap())
        .send()
        .await
        .unwrap();
    let (status, _) = crate::helpers::read(response).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let app = spawn_app_with(|s| s.limits.max_import_bytes = 1024).await;
    let rows: Vec<_> = (0..100)
        .map(|i| json!({"label": format!("R{i}"), "seats": 10}))
        .collect();
    let (status, problem) = app
        .post_venues(&json!({"name": "Big", "sections": [{"id": "s", "name": "S", "rows": rows}]}))
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn venue_writes_need_the_admin_token() {
    let app = spawn_app().await;
    let user = As::Token(app.user_token("buyer-1"));
    for (who, expected) in [
        (As::Nobody, StatusCode::UNAUTHORIZED),
        (As::Token("wrong".into()), StatusCode::UNAUTHORIZED),
        (
            As::Token(format!("{}x", app.admin_token)),
            StatusCode::UNAUTHORIZED,
        ),
        (user, StatusCode::FORBIDDEN),
    ] {
        let (status, problem) = app
            .send(Method::POST, "/v1/venues", &who, Some(&hall()))
            .await;
        assert_eq!(status, expected, "{who:?}: {problem}");
        let code = if expected == StatusCode::FORBIDDEN {
            "forbidden"
        } else {
            "unauthorized"
        };
        assert_eq!(problem["code"], code);
    }
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn venues_are_listed_newest_first_to_the_admin_only() {
    let app = spawn_app().await;
    let (status, empty) = app.send(Method::GET, "/v1/venues", &As::Admin, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(empty, json!({"venues": []}));
    let mut ids = Vec::new();
    for name in ["Old Hall", "New Hall"] {
        let (status, created) = app
            .post_venues(&json!({"name": name, "sections": [{"id": "s", "name": "S", "rows": [{"label": "A", "seats": 3}]}]}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        ids.push(created["id"].clone());
    }
    let (status, list) = app.send(Method::GET, "/v1/venues", &As::Admin, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        list,
        json!({"venues": [
            {"id": ids[1], "name": "New Hall", "seat_count": 3},
            {"id": ids[0], "name": "Old Hall", "seat_count": 3},
        ]})
    );
    let user = As::Token(app.user_token("buyer-1"));
    for (who, expected) in [
        (As::Nobody, StatusCode::UNAUTHORIZED),
        (user, StatusCode::FORBIDDEN),
    ] {
        let (status, _) = app.send(Method::GET, "/v1/venues", &who, None).await;
        assert_eq!(status, expected, "{who:?}");
    }
}

#[tokio::test]
async fn unknown_and_malformed_venue_ids_are_404() {
    let app = spawn_app().await;
    for path in [
        "/v1/venues/6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c",
        "/v1/venues/not-a-uuid",
    ] {
        let (status, problem) = app.get(path).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found"))
        );
    }
}

/// Catalog writes take large bodies; every other route a small one: a venue's body of
/// 100 KB is created where a hold's of the same size is 413, and nothing is held.
#[tokio::test]
async fn only_catalog_writes_take_large_bodies() {
    let app = spawn_app_with(|s| {
        s.limits.max_body_bytes = 64 * 1024;
        s.limits.max_import_bytes = 1024 * 1024;
    })
    .await;
    let rows: Vec<_> = (0..2500)
        .map(|i| json!({"label": format!("R{i}"), "seats": 1}))
        .collect();
    let venue = json!({"name": "Long", "sections": [{"id": "s", "name": "S", "rows": rows}]});
    assert!(venue.to_string().len() > 64 * 1024);
    let (status, created) = app.post_venues(&venue).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");

    let event = app.create_event().await;
    let padding = "x".repeat(100 * 1024);
    let (status, problem) = app
        .send(
            reqwest::Method::POST,
            &format!("/v1/events/{event}/holds"),
            &app.buyer("ann"),
            Some(&json!({"seats": ["stalls-A-1"], "note": padding})),
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    assert!(crate::helpers::held(&app, &event).await.is_empty());
}

#[tokio::test]
async fn a_counted_row_may_curve_along_an_arc() {
    let app = spawn_app().await;
    let arc = json!({"center": {"x": 0, "y": 40}, "radius": 30, "from_deg": 210, "to_deg": 330});
    let (status, created) = app
        .post_venues(
            &json!({"name": "Curved", "sections": [{"id": "stalls", "name": "Stalls",
            "rows": [{"label": "A", "seats": 5, "first_number": 11, "arc": arc}]}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (_, venue) = app
        .get(&format!("/v1/venues/{}", created["id"].as_str().unwrap()))
        .await;
    let seats = venue["sections"][0]["rows"][0]["seats"].as_array().unwrap();
    let at = |i: usize| {
        (
            seats[i]["x"].as_f64().unwrap(),
            seats[i]["y"].as_f64().unwrap(),
        )
    };
    let numbers: Vec<_> = seats
        .iter()
        .map(|s| s["number"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, ["11", "12", "13", "14", "15"]);
    // 210°, 240°, 270°, 300°, 330° on a circle of 30 around (0, 40): the middle seat is
    // straight up, the ends are level with each other and mirror each other.
    let (x, y) = at(2);
    assert!(x.abs() < 1e-9 && (y - 10.0).abs() < 1e-9, "{x}, {y}");
    let ((x0, y0), (x4, y4)) = (at(0), at(4));
    assert!((x0 + x4).abs() < 1e-9 && (y0 - y4).abs() < 1e-9);
    assert!((x0 - 30.0 * 210f64.to_radians().cos()).abs() < 1e-9);
    assert!((y0 - (40.0 + 30.0 * 210f64.to_radians().sin())).abs() < 1e-9);
}

#[tokio::test]
async fn a_bad_arc_or_an_arc_on_listed_seats_is_422_and_stores_nothing() {
    let app = spawn_app().await;
    let (status, problem) = app
        .post_venues(
            &json!({"name": "Curved", "sections": [{"id": "stalls", "name": "Stalls",
            "rows": [
                {"label": "A", "seats": 5,
                 "arc": {"center": {"x": 0, "y": 0}, "radius": -1, "from_deg": 0, "to_deg": 900}},
                {"label": "B", "seats": [{"number": "1", "x": 0, "y": 0}],
                 "arc": {"center": {"x": 0, "y": 0}, "radius": 3, "from_deg": 0, "to_deg": 90}}
            ]}]}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let fields = error_fields(&problem);
    assert_eq!(
        fields,
        [
            "sections[0].rows[0].arc.radius",
            "sections[0].rows[0].arc",
            "sections[0].rows[1].arc"
        ]
    );
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn seats_and_rows_carry_attributes_and_a_venue_its_shapes() {
    let app = spawn_app().await;
    let shapes = json!([
        {"kind": "stage", "text": "STAGE", "rect": {"x": -5.0, "y": -4.0, "w": 10.0, "h": 2.0}},
        {"kind": "area", "polygon": [{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 0.0}, {"x": 0.0, "y": 1.0}]},
        {"kind": "label", "text": "Mixing desk", "circle": {"x": 0.0, "y": 9.0, "r": 1.5}}
    ]);
    let (status, created) = app
        .post_venues(&json!({"name": "Hall", "shapes": shapes, "sections": [
        {"id": "stalls", "name": "Stalls", "rows": [
            {"label": "A", "seats": 2, "category": "Front stalls", "restricted_view": true},
            {"label": "W", "category": "Wheelchair", "accessible": true, "seats": [
                {"number": "1", "x": 0.0, "y": 5.0},
                {"number": "2", "x": 1.0, "y": 5.0, "accessible": false, "companion": true}
            ]}
        ]}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (_, venue) = app
        .get(&format!("/v1/venues/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(venue["shapes"], shapes);
    let rows = &venue["sections"][0]["rows"];
    assert_eq!(
        rows[0]["seats"][1],
        json!({"id": "stalls-A-2", "number": "2", "label": "Stalls, Row A, Seat 2", "x": 1.0,
               "y": 0.0, "category": "Front stalls", "restricted_view": true})
    );
    assert_eq!(
        rows[1]["seats"],
        json!([
            {"id": "stalls-W-1", "number": "1", "label": "Stalls, Row W, Seat 1", "x": 0.0,
             "y": 5.0, "category": "Wheelchair", "accessible": true},
            {"id": "stalls-W-2", "number": "2", "label": "Stalls, Row W, Seat 2", "x": 1.0,
             "y": 5.0, "category": "Wheelchair", "companion": true}
        ])
    );
}

#[tokio::test]
async fn bad_shapes_and_attributes_are_422_naming_each_and_store_nothing() {
    let app = spawn_app().await;
    let (status, problem) = app
        .post_venues(&json!({"name": "Hall",
            "shapes": [
                {"kind": "stage"},
                {"kind": "area", "rect": {"x": 0, "y": 0, "w": 1, "h": 1}, "circle": {"x": 0, "y": 0, "r": 1}},
                {"kind": "label", "text": "", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]},
                {"kind": "area", "circle": {"x": 0, "y": 0, "r": 0}}
            ],
            "sections": [{"id": "stalls", "name": "Stalls", "rows": [
                {"label": "A", "seats": 2, "category": ""},
                {"label": "B", "seats": [{"number": "1", "x": 0, "y": 0, "category": "x".repeat(65)}]}
            ]}]}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let fields = error_fields(&problem);
    assert_eq!(
        fields,
        [
            "shapes[0]",
            "shapes[1]",
            "shapes[2].text",
            "shapes[2].polygon",
            "shapes[3].circle",
            "sections[0].rows[0].category",
            "sections[0].rows[1].seats[0].category",
        ]
    );
    assert_eq!(app.count("venue").await, 0);

    // A shape of another kind is not JSON this server reads.
    let (status, _) = app
        .post_venues(&json!({"name": "Hall", "shapes": [{"kind": "balcony", "rect": {"x": 0, "y": 0, "w": 1, "h": 1}}],
            "sections": [{"id": "s", "name": "S", "rows": [{"label": "A", "seats": 1}]}]}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn an_events_seats_and_layout_carry_the_attributes_and_the_venues_shapes() {
    let app = spawn_app().await;
    let stage = json!({"kind": "stage", "text": "STAGE", "rect": {"x": 0.0, "y": -3.0, "w": 4.0, "h": 1.0}});
    let (_, venue) = app
        .post_venues(&json!({"name": "Hall", "shapes": [stage], "sections": [
        {"id": "stalls", "name": "Stalls", "rows": [
            {"label": "A", "seats": 2, "category": "Front stalls"},
            {"label": "W", "seats": 1, "accessible": true}
        ]}]}))
        .await;
    let (status, event) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Night", "starts_at": "2030-03-01T19:30:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "stalls"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    let event = event["id"].as_str().unwrap();
    let (status, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(seats["shapes"], json!([stage]));
    assert_eq!(seats["seats"][0]["category"], "Front stalls");
    assert_eq!(
        seats["seats"][0].get("accessible"),
        None,
        "unset is left out"
    );
    assert_eq!(seats["seats"][2]["accessible"], true);
    assert_eq!(seats["seats"][2]["status"], "available");
    let (status, layout) = app.get(&format!("/v1/events/{event}/layout")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(layout["shapes"], json!([stage]));
    assert_eq!(layout["seats"][1]["category"], "Front stalls");
}

#[tokio::test]
async fn allocations_may_name_seats_by_category() {
    let app = spawn_app().await;
    let (_, venue) = app
        .post_venues(&json!({"name": "Hall", "sections": [
        {"id": "stalls", "name": "Stalls", "rows": [
            {"label": "A", "seats": 2, "category": "Front stalls"},
            {"label": "B", "seats": [
                {"number": "1", "x": 0.0, "y": 1.0},
                {"number": "2", "x": 1.0, "y": 1.0, "category": "Front stalls"}
            ]}
        ]}]}))
        .await;
    let event = |allocations: serde_json::Value| {
        json!({"venue_id": venue["id"], "name": "Night", "starts_at": "2030-03-01T19:30:00Z",
            "ticket_types": [
                {"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
            "allocations": allocations})
    };
    let (status, created) = app
        .post_events(&event(json!([
            {"ticket_type": "standard", "section": "stalls"},
            {"ticket_type": "premium", "category": "Front stalls"}
        ])))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (_, seats) = app
        .get(&format!(
            "/v1/events/{}/seats",
            created["id"].as_str().unwrap()
        ))
        .await;
    let types: Vec<_> = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["ticket_type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            ("stalls-A-1", "premium"),
            ("stalls-A-2", "premium"),
            ("stalls-B-1", "standard"),
            ("stalls-B-2", "premium")
        ]
    );

    let events_before = app.count("event").await;
    let (status, problem) = app
        .post_events(&event(json!([
            {"ticket_type": "standard", "section": "stalls", "category": "Front stalls"},
            {"ticket_type": "premium", "category": "Balcony"}
        ])))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(
        error_fields(&problem),
        ["allocations[0]", "allocations[1].category"]
    );
    assert_eq!(app.count("event").await, events_before);
}
