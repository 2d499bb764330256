//! Organizations, their keys, and an organization with an event of its own, as the tests
//! of staff calls make them.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{gala, hall, As, TestApp};

pub(crate) async fn organization(app: &TestApp, name: &str) -> Value {
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({ "name": name })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// A key of `organization` with `role`, made with the platform token: (the key, its id).
pub(crate) async fn key(app: &TestApp, organization: &str, role: &str) -> (As, String) {
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/organizations/{organization}/keys"),
            &As::Admin,
            Some(&json!({ "name": format!("{role} key"), "role": role })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (
        As::Token(body["key"].as_str().unwrap().to_owned()),
        body["id"].as_str().unwrap().to_owned(),
    )
}

/// An organization `slug` with an event of its own (made with the platform token); the
/// event's id.
pub(crate) async fn organization_with_event(app: &TestApp, slug: &str) -> String {
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({"name": slug, "slug": slug})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = app.typed().get_organization(slug).await.unwrap().id;
    let mut venue = hall();
    venue["organization_id"] = json!(id);
    let (status, venue) = app.post_venues(&venue).await;
    assert_eq!(status, StatusCode::CREATED, "{venue}");
    let mut event = gala(venue["id"].as_str().unwrap());
    event["organization_id"] = json!(id);
    let (status, event) = app.post_events(&event).await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}
