//! Each organization's webhook: its events wait until it is set, then arrive in commit order
//! signed with its own secret; the secret is shown once and never logged; bad input and
//! other roles and organizations change nothing; the default organization keeps
//! `BOXOFFICE_WEBHOOK_URLS`; and events that waited 7 days for a webhook are swept.

use std::time::{Duration, Instant};

use boxoffice_client::mint_signed_token;
use boxoffice_server::config::Secret;
use boxoffice_server::relay::{signature, RelayConfig};
use boxoffice_store::pg::sweep::Retention;
use jsonwebtoken::{Algorithm, EncodingKey};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::staff::key;
use crate::helpers::staff::organization_with_event;
use crate::helpers::webhooks::{make_changes, two_relay_passes, Receiver};
use crate::helpers::{spawn_app, spawn_app_with, As, TestApp};

/// A buyer of the organization `slug`: a token signed with a new HS256 signing key of it.
async fn buyer_of(app: &TestApp, slug: &str, user: &str) -> As {
    let made = app
        .typed()
        .create_signing_key(
            slug,
            &boxoffice_client::api::SigningKeyBody {
                algorithm: "HS256".into(),
                public_key: None,
            },
        )
        .await
        .unwrap();
    let secret = made.secret.expect("an HS256 key's secret");
    let key = EncodingKey::from_secret(secret.as_bytes()).unwrap();
    As::Token(mint_signed_token(
        &key,
        Algorithm::HS256,
        &made.kid,
        user,
        chrono::Utc::now() + chrono::Duration::minutes(10),
    ))
}

/// `who` buys `seat` in `event`.
async fn buy(app: &TestApp, event: &str, who: &As, seat: &str) {
    let (status, hold) = app.post_holds(event, who, &[seat]).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, order) = app
        .post_orders(event, who, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
}

/// The outbox rows of `event`, in commit order: (id, delivered).
async fn rows_of(app: &TestApp, event: &str) -> Vec<(i64, bool)> {
    sqlx::query_as(
        "select outbox_id, delivered_at is not null from outbox
          where event_id = $1::uuid order by outbox_id",
    )
    .bind(event)
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// Waits until `receiver` got `want` deliveries (10 s at most); what it got.
async fn wait_for(receiver: &Receiver, want: usize) -> Vec<(reqwest::header::HeaderMap, Value)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = receiver.got.lock().unwrap().clone();
        if got.len() >= want {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {want} deliveries arrived",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether a delivery's signature is `secret`'s over its body.
fn signed_with(headers: &reqwest::header::HeaderMap, secret: &str) -> bool {
    let sent = headers["boxoffice-signature"].to_str().unwrap();
    let timestamp: i64 = sent
        .strip_prefix("t=")
        .and_then(|s| s.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    let raw = headers["x-raw-body"].to_str().unwrap();
    sent == signature(&Secret::new(secret), timestamp, raw.as_bytes())
}

async fn audit(app: &TestApp, who: &As, organization: &str, action: &str) -> Vec<Value> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/organizations/{organization}/audit?action={action}"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn events_wait_for_the_organizations_webhook_then_arrive_in_commit_order_signed_with_its_secret(
) {
    let app = spawn_app().await;
    let acme_event = organization_with_event(&app, "acme").await;
    let alice = buyer_of(&app, "acme", "alice").await;
    for seat in ["stalls-A-1", "stalls-A-2", "stalls-A-3"] {
        buy(&app, &acme_event, &alice, seat).await;
    }
    let default_event = make_changes(&app).await;
    let acme_id = app.typed().get_organization("acme").await.unwrap().id;
    let (admin, _) = key(&app, &acme_id.to_string(), "admin").await;

    // The server's relay runs (every 500 ms); with no webhook anywhere nothing goes out.
    two_relay_passes(&app).await;
    let waiting = rows_of(&app, &acme_event).await;
    assert_eq!(waiting.len(), 3);
    assert!(waiting.iter().all(|(_, delivered)| !delivered));

    let receiver = Receiver::start().await;
    let (status, set) = app
        .send(
            Method::PUT,
            "/v1/organizations/acme/webhook",
            &admin,
            Some(&json!({"url": receiver.url, "secret": "acme-webhook-secret-1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(
        set,
        json!({"url": receiver.url, "secret": "acme-webhook-secret-1"})
    );

    let got = wait_for(&receiver, 3).await;
    let ids: Vec<i64> = waiting.iter().map(|(id, _)| *id).collect();
    assert_eq!(receiver.ids(), ids, "Acme's rows, in commit order");
    for (headers, body) in &got {
        assert_eq!(body["event_id"], acme_event.as_str());
        assert_eq!(body["topic"], "order.created");
        assert!(signed_with(headers, "acme-webhook-secret-1"));
    }
    assert!(
        rows_of(&app, &default_event)
            .await
            .iter()
            .all(|(_, delivered)| !delivered),
        "the default organization's rows still wait: it has no webhook"
    );

    // Read back without the secret; the log has the URL and no secret.
    let (status, view) = app
        .send(Method::GET, "/v1/organizations/acme/webhook", &admin, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["url"], receiver.url.as_str());
    assert!(view.get("secret").is_none(), "{view}");
    let created = audit(&app, &admin, "acme", "webhook.created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["changes"], json!({"url": receiver.url}));
    assert_eq!(created[0]["target"]["type"], "webhook");

    // Set again without a secret: a new one is made and signs from now on.
    let (status, again) = app
        .send(
            Method::PUT,
            "/v1/organizations/acme/webhook",
            &admin,
            Some(&json!({"url": receiver.url})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let new_secret = again["secret"].as_str().unwrap().to_owned();
    assert!(new_secret.starts_with("whsec_") && new_secret.len() >= 40);
    let updated = audit(&app, &admin, "acme", "webhook.updated").await;
    assert_eq!(
        updated[0]["changes"],
        json!({"secret": ["(hidden)", "(replaced)"]})
    );
    buy(&app, &acme_event, &alice, "stalls-B-1").await;
    let got = wait_for(&receiver, 4).await;
    assert!(signed_with(&got[3].0, &new_secret));
    let (_, log) = app
        .send(Method::GET, "/v1/organizations/acme/audit", &admin, None)
        .await;
    let log = log.to_string();
    assert!(!log.contains("acme-webhook-secret-1") && !log.contains(&new_secret));

    // Removed: gone, and its events wait again.
    let (status, _) = app
        .send(
            Method::DELETE,
            "/v1/organizations/acme/webhook",
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for method in [Method::GET, Method::DELETE] {
        let (status, problem) = app
            .send(
                method.clone(),
                "/v1/organizations/acme/webhook",
                &admin,
                None,
            )
            .await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found")),
            "{method}"
        );
    }
    let deleted = audit(&app, &admin, "acme", "webhook.deleted").await;
    assert_eq!(deleted[0]["changes"], json!({"url": [receiver.url, null]}));
    buy(&app, &acme_event, &alice, "stalls-B-2").await;
    two_relay_passes(&app).await;
    assert_eq!(receiver.ids().len(), 4);
    assert!(
        !rows_of(&app, &acme_event).await.last().unwrap().1,
        "it waits again"
    );
}

#[tokio::test]
async fn a_bad_webhook_another_role_or_another_organization_changes_nothing() {
    let app = spawn_app().await;
    organization_with_event(&app, "acme").await;
    organization_with_event(&app, "globex").await;
    let acme_id = app.typed().get_organization("acme").await.unwrap().id;
    let globex_id = app.typed().get_organization("globex").await.unwrap().id;
    let (admin, _) = key(&app, &acme_id.to_string(), "admin").await;
    let path = "/v1/organizations/acme/webhook";

    for bad in [
        json!({"url": "not a url"}),
        json!({"url": "ftp://platform.example/hook"}),
        json!({"url": "/relative/hook"}),
        json!({"url": format!("https://platform.example/{}", "a".repeat(2000))}),
        json!({"url": "https://platform.example/hook", "secret": "short"}),
        json!({"url": "https://platform.example/hook", "secret": "has a space in it somewhere"}),
    ] {
        let (status, problem) = app.send(Method::PUT, path, &admin, Some(&bad)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {problem}");
    }
    let (status, _) = app
        .send(Method::PUT, path, &admin, Some(&json!({"secret": "x"})))
        .await;
    assert!(status.is_client_error(), "no url: {status}");

    // Other roles: 403 with the roles that may; another organization's admin: 404.
    for role in ["sales", "checkin", "reports"] {
        let (who, _) = key(&app, &acme_id.to_string(), role).await;
        for method in [Method::GET, Method::PUT, Method::DELETE] {
            let body = json!({"url": "https://platform.example/hook"});
            let (status, problem) = app.send(method.clone(), path, &who, Some(&body)).await;
            assert_eq!(
                (status, &problem["required_roles"]),
                (StatusCode::FORBIDDEN, &json!(["platform", "admin"])),
                "{role} {method}"
            );
        }
    }
    let (globex_admin, _) = key(&app, &globex_id.to_string(), "admin").await;
    let (status, problem) = app
        .send(
            Method::PUT,
            path,
            &globex_admin,
            Some(&json!({"url": "https://globex.example/steal"})),
        )
        .await;
    assert_eq!(
        (status, problem["detail"].as_str()),
        (StatusCode::NOT_FOUND, Some("no such organization"))
    );

    assert_eq!(app.count("organization_webhook").await, 0);
    let audited: i64 =
        sqlx::query_scalar("select count(*) from audit_entry where action like 'webhook.%'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(audited, 0, "a refused change writes no entry");
}

#[tokio::test]
async fn the_default_organization_keeps_its_configured_urls_beside_its_own_webhook() {
    let configured = Receiver::start().await;
    let url = configured.url.clone();
    let app = spawn_app_with(move |s| {
        s.operations.relay = RelayConfig::new(vec![url], Secret::new("whsec-configured"));
    })
    .await;
    let own = Receiver::start().await;
    let set = app
        .typed()
        .set_webhook(
            "default",
            &boxoffice_client::api::WebhookBody {
                url: own.url.clone(),
                secret: Some("default-own-secret".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(set.secret, "default-own-secret");
    assert_eq!(app.typed().webhook("default").await.unwrap().url, own.url);
    make_changes(&app).await;

    let to_configured = wait_for(&configured, 3).await;
    let to_own = wait_for(&own, 3).await;
    assert_eq!(configured.ids(), own.ids());
    assert!(to_configured
        .iter()
        .all(|(h, _)| signed_with(h, "whsec-configured")));
    assert!(to_own
        .iter()
        .all(|(h, _)| signed_with(h, "default-own-secret")));

    app.typed().delete_webhook("default").await.unwrap();
    assert!(app.typed().webhook("default").await.is_err());
}

#[tokio::test]
async fn events_that_waited_seven_days_for_a_webhook_are_swept_and_no_other() {
    // The server's relay makes its one pass at start, then waits an hour: rows stay as put.
    let app =
        spawn_app_with(|s| s.operations.relay.poll_interval = Duration::from_secs(3600)).await;
    let default_event = make_changes(&app).await;
    let acme_event = organization_with_event(&app, "acme").await;
    let alice = buyer_of(&app, "acme", "alice").await;
    buy(&app, &acme_event, &alice, "stalls-A-1").await;
    app.typed()
        .set_webhook(
            "acme",
            &boxoffice_client::api::WebhookBody {
                url: "http://127.0.0.1:9/hook".into(),
                secret: None,
            },
        )
        .await
        .unwrap();
    let defaults: Vec<i64> = rows_of(&app, &default_event)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    // The default organization's first row waited 8 days untried, its second 8 days and was
    // tried (a failing webhook), its third 6 days; Acme's waited 8 days with a webhook set.
    sqlx::query(
        "update outbox set created_at = now() - interval '8 days'
          where outbox_id = $1 or event_id = $2::uuid",
    )
    .bind(defaults[0])
    .bind(&acme_event)
    .execute(&app.db)
    .await
    .unwrap();
    sqlx::query(
        "update outbox set created_at = now() - interval '8 days', attempts = 1 where outbox_id = $1",
    )
    .bind(defaults[1])
    .execute(&app.db)
    .await
    .unwrap();
    sqlx::query("update outbox set created_at = now() - interval '6 days' where outbox_id = $1")
        .bind(defaults[2])
        .execute(&app.db)
        .await
        .unwrap();

    let swept = boxoffice_store::pg::sweep::sweep(&app.db, Retention::default())
        .await
        .unwrap();
    assert_eq!(swept.waited, 1);
    let left: Vec<i64> = sqlx::query_scalar("select outbox_id from outbox order by outbox_id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    let mut want = defaults[1..].to_vec();
    want.extend(rows_of(&app, &acme_event).await.iter().map(|(id, _)| *id));
    want.sort();
    assert_eq!(left, want);
    assert!(!left.contains(&defaults[0]));
}
