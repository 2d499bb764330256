//! `POST /v1/venues/import` (pretix plans and CSV) and `GET /v1/venues/{id}/export`.
//! (A long file: one import's cases, each format's and the body's, side by side.)

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{read, spawn_app, spawn_app_with, As, TestApp};

const RIVERSIDE_HALL: &str = include_str!("../../demo/riverside-hall.pretix.json");
const SCHEMA: &str = include_str!("../../../../vendor/pretix/seating-plan.schema.json");

fn riverside_hall() -> Value {
    serde_json::from_str(RIVERSIDE_HALL).unwrap()
}

/// Sends `body` as `content_type` to `path` as admin.
async fn import(
    app: &TestApp,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let response = app
        .request(Method::POST, path, &As::Admin)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    read(response).await
}

async fn import_plan(app: &TestApp, plan: &Value) -> (StatusCode, Value) {
    let body = serde_json::to_vec(plan).unwrap();
    import(
        app,
        "/v1/venues/import?format=pretix",
        "application/json",
        body,
    )
    .await
}

/// A change to a plan.
type Edit = Box<dyn Fn(&mut Value)>;

fn errors(problem: &Value) -> Vec<(&str, &str)> {
    problem["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("not a validation problem: {problem}"))
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect()
}

fn seats(venue: &Value) -> Vec<Value> {
    venue["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
        .flat_map(|r| r["seats"].as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
async fn a_pretix_plan_becomes_a_venue_with_its_guids_categories_and_wheelchair_spaces() {
    let app = spawn_app().await;
    let (status, created) = import_plan(&app, &riverside_hall()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["seat_count"], 310);
    let venue_id = created["id"].as_str().unwrap();
    let (_, venue) = app.get(&format!("/v1/venues/{venue_id}")).await;
    assert_eq!(venue["name"], "Riverside Hall");
    let sections: Vec<_> = venue["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    // The stage's zone has no seats: it brings only its areas.
    assert_eq!(sections, ["stalls", "balcony", "boxes"]);
    let all = seats(&venue);
    let j1 = all.iter().find(|s| s["id"] == "stalls-J-1").unwrap();
    assert_eq!(j1["external_id"], "rh:stalls:J:1");
    assert_eq!(j1["category"], "Stalls");
    assert_eq!(j1["accessible"], true);
    assert_eq!(j1["label"], "Stalls, Row J, Seat 1");
    let plan = riverside_hall();
    let plan_j1 = &plan["zones"][1]["rows"][9]["seats"][0];
    assert_eq!(j1["x"], plan_j1["position"]["x"]);
    assert_eq!(j1["y"], plan_j1["position"]["y"]);
    let accessible = all.iter().filter(|s| s["accessible"] == true).count();
    let companions = all.iter().filter(|s| s["companion"] == true).count();
    let restricted = all.iter().filter(|s| s["restricted_view"] == true).count();
    assert_eq!((accessible, companions, restricted), (3, 3, 4));
    let kinds: Vec<_> = venue["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("stage", "STAGE"),
            ("label", "Exit"),
            ("label", "Exit"),
            ("area", "Sound desk")
        ]
    );

    // An event on it sells by the plan's categories, and its seat map carries the guids.
    let (status, event) = app
        .post_events(&json!({"venue_id": venue_id, "name": "Gala", "starts_at": "2030-03-01T19:30:00Z",
            "ticket_types": [{"code": "front", "name": "Front", "price_cents": 9000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "front", "category": "Front stalls"}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    let (_, map) = app
        .get(&format!(
            "/v1/events/{}/seats",
            event["id"].as_str().unwrap()
        ))
        .await;
    let on_sale = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "available")
        .count();
    assert_eq!(on_sale, 10 + 12 + 14, "rows A to C");
    let a1 = &map["seats"][0];
    assert_eq!(
        (a1["id"].as_str(), a1["external_id"].as_str()),
        (Some("stalls-A-1"), Some("rh:stalls:A:1"))
    );
    assert_eq!(map["shapes"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn a_plan_pretix_would_refuse_is_422_at_its_path_and_creates_nothing() {
    let app = spawn_app().await;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|p| {
                p["zones"][1]["rows"][3]["seats"][2]
                    .as_object_mut()
                    .unwrap()
                    .remove("position");
            }),
            "zones[1].rows[3].seats[2].position",
        ),
        (
            Box::new(|p| p["zones"][2]["rows"][0]["seats"][1]["position"]["x"] = json!("12")),
            "zones[2].rows[0].seats[1].position.x",
        ),
        (
            Box::new(|p| p["zones"][1]["rows"][0]["colour"] = json!("red")),
            "zones[1].rows[0].colour",
        ),
        (
            Box::new(|p| p["zones"][0]["areas"][0]["shape"] = json!("hexagon")),
            "zones[0].areas[0].shape",
        ),
        (Box::new(|p| p["size"]["width"] = json!(10.5)), "size.width"),
        (
            Box::new(|p| {
                p["zones"][1]["rows"][1]["seats"][0]["seat_guid"] = json!("rh:stalls:A:1")
            }),
            "zones[1].rows[1].seats[0].seat_guid",
        ),
        (
            Box::new(|p| p["zones"][1]["rows"][0]["seats"][1]["seat_number"] = json!("1")),
            "zones[1].rows[0].seats[1].seat_number",
        ),
        (
            Box::new(|p| p["zones"][1]["uuid"] = json!(null)),
            "zones[1].uuid",
        ),
        (Box::new(|p| p["zones"][3] = json!([])), "zones[3]"),
    ];
    for (edit, field) in cases {
        let mut plan = riverside_hall();
        edit(&mut plan);
        let (status, problem) = import_plan(&app, &plan).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{field}: {problem}"
        );
        assert_eq!(problem["code"], "validation_failed");
        let fields: Vec<_> = errors(&problem).into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, [field], "{problem}");
    }
    // Not JSON, JSON not declared so, no format, a format it does not know.
    let body = RIVERSIDE_HALL.as_bytes().to_vec();
    let (status, _) = import(
        &app,
        "/v1/venues/import?format=pretix",
        "application/json",
        b"{".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, problem) = import(
        &app,
        "/v1/venues/import?format=pretix",
        "text/plain",
        body.clone(),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        problem["detail"],
        "expected a body of type application/json (format=pretix) or text/csv (format=csv)"
    );
    for path in ["/v1/venues/import", "/v1/venues/import?format=seatsio"] {
        let (status, problem) = import(&app, path, "application/json", body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(errors(&problem), [("format", "must be pretix or csv")]);
    }
    // Only the admin imports.
    let response = app
        .request(
            Method::POST,
            "/v1/venues/import?format=pretix",
            &app.buyer("mallory"),
        )
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.count("venue").await, 0);
    assert_eq!(app.count("seat").await, 0);
}

#[tokio::test]
async fn a_plan_over_the_import_limit_is_413_and_creates_nothing() {
    let app = spawn_app_with(|s| s.limits.max_import_bytes = 16 * 1024).await;
    let (status, problem) = import_plan(&app, &riverside_hall()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{problem}");
    assert_eq!(problem["code"], "payload_too_large");
    let csv = format!(
        "section,row,number,x,y\n{}",
        "Stalls,A,1,0,0\n".repeat(2_000)
    );
    let (status, _) = import(
        &app,
        "/v1/venues/import?format=csv&name=Big",
        "text/csv",
        csv.into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn a_csv_file_becomes_a_venue_and_its_errors_name_their_lines() {
    let app = spawn_app().await;
    let csv = "row,section,number,x,y,category,accessible\n\
               A,Stalls,1,0,0,Front,\n\
               A,Stalls,2,1,0,Front,true\n\
               A,Balcony,1,0,10,,\n";
    let path = "/v1/venues/import?format=csv&name=Sheet%20Hall";
    let (status, created) = import(&app, path, "text/csv; charset=utf-8", csv.into()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["seat_count"], 3);
    let (_, venue) = app
        .get(&format!("/v1/venues/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(venue["name"], "Sheet Hall");
    let ids: Vec<_> = seats(&venue)
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["accessible"] == true,
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("Stalls-A-1".to_owned(), false),
            ("Stalls-A-2".to_owned(), true),
            ("Balcony-A-1".to_owned(), false)
        ]
    );

    let bad = "section,row,number,x,y\nStalls,A,1,0,0\nStalls,A,1,1,0\nStalls,A,2,two,0\n";
    let (status, problem) = import(&app, path, "text/csv", bad.into()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        errors(&problem),
        [("line 4", "x: \"two\" is not a number")],
        "a line that does not read is reported before what the venue checks"
    );
    let bad = "section,row,number,x,y\nStalls,A,1,0,0\nStalls,A,1,1,0\n";
    let (_, problem) = import(&app, path, "text/csv", bad.into()).await;
    assert_eq!(errors(&problem)[0].0, "line 3");
    let (status, problem) =
        import(&app, "/v1/venues/import?format=csv", "text/csv", csv.into()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(errors(&problem)[0].0, "name");
    let (status, problem) = import(&app, path, "application/json", csv.into()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        errors(&problem),
        [(
            "format",
            "format=csv reads a text/csv body; this one is application/json"
        )]
    );
    let (status, _) = import(&app, path, "text/csv", vec![0xff, 0xfe, b'\n']).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.count("venue").await, 1);
}

#[tokio::test]
async fn an_export_is_a_plan_pretix_accepts_and_imports_back_to_the_same_seats() {
    let app = spawn_app().await;
    let (status, created) = app
        .post_venues(&json!({"name": "Round Hall", "sections": [
            {"id": "stalls", "name": "Stalls", "origin": {"x": 3, "y": 7}, "seat_spacing": 1.1,
             "rows": [{"label": "A", "seats": 5, "category": "Front stalls"},
                      {"label": "B", "seats": 9, "restricted_view": true,
                       "arc": {"center": {"x": 4, "y": 40}, "radius": 30.3, "from_deg": 250, "to_deg": 290}}]},
            {"id": "box", "name": "Box", "rows": [{"label": "W", "seats": [
                {"number": "1", "x": -2.25, "y": 0.1, "accessible": true, "category": "Box"},
                {"number": "2", "x": -1.1, "y": 0.1, "companion": true}]}]}],
            "shapes": [{"kind": "stage", "text": "Stage", "rect": {"x": 0, "y": -5, "w": 20, "h": 3}}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = created["id"].as_str().unwrap();
    let export = format!("/v1/venues/{id}/export?format=pretix");
    let (status, plan) = app.send(Method::GET, &export, &As::Admin, None).await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<_> = validator
        .iter_errors(&plan)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(plan["zones"][0]["zone_id"], "stalls");

    let (status, again) = import_plan(&app, &plan).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    let (_, original) = app.get(&format!("/v1/venues/{id}")).await;
    let (_, copy) = app
        .get(&format!("/v1/venues/{}", again["id"].as_str().unwrap()))
        .await;
    let without_guid = |venue: &Value| -> Vec<Value> {
        seats(venue)
            .into_iter()
            .map(|mut s| {
                s.as_object_mut().unwrap().remove("external_id");
                s
            })
            .collect()
    };
    assert_eq!(without_guid(&copy), without_guid(&original));
    assert_eq!(seats(&copy)[0]["external_id"], "stalls-A-1");
    assert_eq!(copy["shapes"][0]["kind"], "stage");

    // Exporting needs the admin, a venue, and a format it writes.
    let (status, _) = app.send(Method::GET, &export, &As::Nobody, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, problem) = app
        .send(
            Method::GET,
            &format!("/v1/venues/{id}/export?format=svg"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(errors(&problem), [("format", "must be pretix")]);
    let missing = "/v1/venues/00000000-0000-4000-8000-000000000000/export?format=pretix";
    let (status, _) = app.send(Method::GET, missing, &As::Admin, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_dry_run_answers_the_venue_an_import_would_create_and_saves_nothing() {
    let app = spawn_app().await;
    let body = RIVERSIDE_HALL.as_bytes().to_vec();
    let path = "/v1/venues/import?format=pretix&dry_run=true&name=Preview";
    let (status, preview) = import(&app, path, "application/json", body).await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["seat_count"], 310);
    assert_eq!(preview["name"], "Preview");
    assert_eq!(seats(&preview).len(), 310);
    assert_eq!(preview["shapes"][0]["kind"], "stage");
    assert_eq!(preview.get("id"), None);
    // Its errors are the import's.
    let bad = b"section,row,number,x,y\nStalls,A,1,0,zero\n".to_vec();
    let path = "/v1/venues/import?format=csv&dry_run=true&name=Sheet";
    let (status, problem) = import(&app, path, "text/csv", bad).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(errors(&problem)[0].0, "line 2");
    assert_eq!(app.count("venue").await, 0);
}

/// Where the pieces of a streamed body are pushed.
type Pieces = futures::channel::mpsc::UnboundedSender<Result<Vec<u8>, std::io::Error>>;

/// Starts a CSV import of a body sent as it is pushed to the returned sender, in pieces and
/// with no `Content-Length`; the body ends when the sender is dropped.
fn streamed_import(
    app: &TestApp,
    path: &str,
) -> (Pieces, tokio::task::JoinHandle<(StatusCode, Value)>) {
    let (sender, pieces) = futures::channel::mpsc::unbounded();
    let request = app
        .request(Method::POST, path, &As::Admin)
        .header("content-type", "text/csv")
        .body(reqwest::Body::wrap_stream(pieces));
    let answer = tokio::spawn(async move { read(request.send().await.unwrap()).await });
    (sender, answer)
}

#[tokio::test]
async fn a_csv_file_is_read_as_it_arrives_and_a_bad_header_answered_before_its_end() {
    let app = spawn_app().await;
    let (sender, answer) = streamed_import(&app, "/v1/venues/import?format=csv&name=Hall");
    sender
        .unbounded_send(Ok(b"section,row,colour\nStalls,A,".to_vec()))
        .unwrap();
    // The rest never comes: a server that waited for the whole body would answer only at
    // its request timeout (30 s, 408).
    let (status, problem) = tokio::time::timeout(std::time::Duration::from_secs(15), answer)
        .await
        .expect("answered before the body ended")
        .unwrap();
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert!(errors(&problem)
        .iter()
        .any(|(field, message)| *field == "line 1" && message.contains("colour")));
    drop(sender);
    assert_eq!(app.count("venue").await, 0);
}

#[tokio::test]
async fn a_csv_file_sent_in_pieces_without_a_length_becomes_the_same_venue() {
    let app = spawn_app().await;
    let text = b"section,row,number,x,y,category\n\
                 Stalls,A,1,0,0,Front\nStalls,A,2,1,0,Front\nStalls,B,1,0,1,\n\
                 Balcony,A,1,0,10,Rear\nBalcony,A,2,1,10,Rear\n"
        .to_vec();
    let (sender, answer) = streamed_import(&app, "/v1/venues/import?format=csv&name=Pieces");
    // Pieces of seven bytes: lines and fields cut anywhere.
    for piece in text.chunks(7) {
        sender.unbounded_send(Ok(piece.to_vec())).unwrap();
        tokio::task::yield_now().await;
    }
    drop(sender);
    let (status, created) = answer.await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["seat_count"], 5);
    let (status, whole) = import(
        &app,
        "/v1/venues/import?format=csv&name=Pieces&dry_run=true",
        "text/csv",
        text,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{whole}");
    let id = created["id"].as_str().unwrap();
    let response = app
        .request(Method::GET, &format!("/v1/venues/{id}"), &As::Admin)
        .send()
        .await
        .unwrap();
    let (_, venue) = read(response).await;
    assert_eq!(seats(&venue), seats(&whole));
    assert_eq!(app.count("seat").await, 5);
}

#[tokio::test]
async fn a_streamed_csv_past_the_import_limit_is_413_and_creates_nothing() {
    let app = spawn_app_with(|s| s.limits.max_import_bytes = 16 * 1024).await;
    let (sender, answer) = streamed_import(&app, "/v1/venues/import?format=csv&name=Big");
    sender
        .unbounded_send(Ok(b"section,row,number,x,y\n".to_vec()))
        .unwrap();
    for n in 1..=2_000 {
        let line = format!("Stalls,A,{n},{n},0\n").into_bytes();
        if sender.unbounded_send(Ok(line)).is_err() {
            break; // The server stopped reading.
        }
    }
    drop(sender);
    let (status, problem) = answer.await.unwrap();
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{problem}");
    assert_eq!(problem["code"], "payload_too_large");
    assert_eq!(app.count("venue").await, 0);
    assert_eq!(app.count("seat").await, 0);
}
