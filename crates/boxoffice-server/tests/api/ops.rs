//! Operations endpoints, the OpenAPI document, and answers for unknown routes.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{spawn_app, As};

#[tokio::test]
async fn health_and_readiness_answer_when_the_stores_are_up() {
    let app = spawn_app().await;
    assert_eq!(
        app.get("/healthz").await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    assert_eq!(
        app.get("/readyz").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_status() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    for _ in 0..3 {
        app.get(&format!("/v1/events/{event}/seats")).await;
    }
    app.get("/v1/events/6f1c1d9e-8d2c-4a53-9d55-2f6f0f5a1b2c")
        .await;
    let text = app.metrics().await;
    // Each server counts on its own: these are exactly this test's requests.
    let line = |route: &str, status: u16| {
        text.lines()
            .find(|l| {
                l.starts_with("http_requests_total{")
                    && l.contains(&format!("route=\"{route}\""))
                    && l.contains(&format!("status=\"{status}\""))
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
    };
    assert!(line("/v1/events/{id}/seats", 200) == Some(3.0), "{text}");
    assert!(line("/v1/events/{id}", 404) == Some(1.0), "{text}");
    assert!(
        text.contains("http_request_duration_seconds_bucket{"),
        "{text}"
    );
    assert!(!text.contains(&event), "ids never become labels");
}

#[tokio::test]
async fn the_openapi_document_lists_every_route() {
    let app = spawn_app().await;
    let (status, doc) = app.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/v1/organizations", "post"),
        ("/v1/organizations", "get"),
        ("/v1/organizations/{id}", "get"),
        ("/v1/organizations/{id}/keys", "post"),
        ("/v1/organizations/{id}/keys", "get"),
        ("/v1/organizations/{id}/keys/{key_id}", "delete"),
        ("/v1/venues", "post"),
        ("/v1/venues/{id}", "get"),
        ("/v1/events", "get"),
        ("/v1/events", "post"),
        ("/v1/events/{id}", "get"),
        ("/v1/events/{id}/allocations", "put"),
        ("/v1/events/{id}/allocations/withdraw", "post"),
        ("/v1/events/{id}/seats", "get"),
        ("/v1/events/{id}/availability", "get"),
        ("/v1/events/{id}/holds", "post"),
        ("/v1/events/{id}/holds/{token}", "get"),
        ("/v1/events/{id}/holds/{token}", "delete"),
        ("/v1/events/{id}/holds/{token}/extend", "post"),
        ("/v1/events/{id}/orders", "post"),
        ("/v1/orders/{id}", "get"),
        ("/v1/orders/{id}/cancel", "post"),
        ("/v1/events/{id}/bookings", "post"),
        ("/v1/bookings/{id}/cancel", "post"),
        ("/v1/sessions", "post"),
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} missing"
        );
    }
    assert!(doc["components"]["schemas"]["Problem"].is_object());
    assert!(doc["components"]["securitySchemes"]["admin"].is_object());
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_problems() {
    let app = spawn_app().await;
    let (status, problem) = app.get("/v1/nothing-here").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, problem) = app
        .send(Method::DELETE, "/v1/events", &As::Admin, None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
    );
}

/// Every error answer the document describes is filed under the media type the server
/// sends it as, `application/problem+json`; and an error the server sends says so.
#[tokio::test]
async fn the_openapi_document_files_problems_as_they_are_sent() {
    let app = spawn_app().await;
    let (_, doc) = app.get("/openapi.json").await;
    let mut problems = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(responses) = operation["responses"].as_object() else {
                continue;
            };
            for (status, response) in responses {
                let Some(content) = response["content"].as_object() else {
                    continue;
                };
                for (media, body) in content {
                    let is_problem = body["schema"]["$ref"] == "#/components/schemas/Problem";
                    assert_eq!(
                        media == "application/problem+json",
                        is_problem,
                        "{method} {path} {status}: {media}"
                    );
                    problems += usize::from(is_problem);
                }
            }
        }
    }
    assert!(problems > 40, "{problems} problem answers documented");
    let response = app
        .request(Method::GET, "/v1/events/not-an-id", &app.buyer("ann"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}
