//! Buyer tokens per organization: a token naming an organization's signing key (`kid`) is
//! checked with that key under its own algorithm only (HS256 with the secret made here,
//! EdDSA with the platform's public key), is valid for that organization's events alone,
//! and stops when the key is retired; a token without `kid` is the `default`
//! organization's, checked with `BOXOFFICE_JWT_SECRET`.

use boxoffice_client::api::SigningKeyBody;
use boxoffice_client::mint_signed_token;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};
use jsonwebtoken::{Algorithm, EncodingKey};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::staff::organization_with_event;
use crate::helpers::{spawn_app, As};

fn soon() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::minutes(10)
}

#[tokio::test]
async fn an_hs256_key_signs_its_organizations_buyers_only_until_it_is_retired() {
    let app = spawn_app().await;
    let acme_event = organization_with_event(&app, "acme").await;
    let default_event = app.create_event().await;
    let platform = app.typed();
    let made = platform
        .create_signing_key(
            "acme",
            &SigningKeyBody {
                algorithm: "HS256".into(),
                public_key: None,
            },
        )
        .await
        .unwrap();
    let secret = made
        .secret
        .clone()
        .expect("an HS256 key's secret, shown once");
    let key = EncodingKey::from_secret(secret.as_bytes()).unwrap();
    let token = mint_signed_token(&key, Algorithm::HS256, &made.kid, "alice", soon());
    let acme_buyer = As::Token(token.clone());

    let (status, hold) = app
        .post_holds(&acme_event, &acme_buyer, &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    // Not valid for another organization's event; nor is a default token for Acme's.
    let (status, problem) = app
        .post_holds(&default_event, &acme_buyer, &["stalls-B-1"])
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let (status, _) = app
        .post_holds(&acme_event, &app.buyer("bob"), &["stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The order follows its event: Acme's buyer checks out and reads it.
    let (status, order) = app
        .post_orders(
            &acme_event,
            &acme_buyer,
            hold["hold_token"].as_str().unwrap(),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let order_path = format!("/v1/orders/{}", order["order_id"].as_str().unwrap());
    let (status, _) = app.send(Method::GET, &order_path, &acme_buyer, None).await;
    assert_eq!(status, StatusCode::OK);
    // A default organization's "alice" is another person: not hers.
    let (status, _) = app
        .send(Method::GET, &order_path, &app.buyer("alice"), None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Forged: another secret under the same kid; `none`; a kid nobody made.
    let forged = mint_signed_token(
        &EncodingKey::from_secret(b"guess").unwrap(),
        Algorithm::HS256,
        &made.kid,
        "alice",
        soon(),
    );
    let unknown = mint_signed_token(&key, Algorithm::HS256, "sk_nobody", "alice", soon());
    let unsigned = format!(
        "{}.{}.",
        base64_url(&json!({"alg": "none", "kid": made.kid}).to_string()),
        token.split('.').nth(1).unwrap()
    );
    for bad in [forged, unknown, unsigned] {
        let (status, _) = app
            .post_holds(&acme_event, &As::Token(bad.clone()), &["stalls-C-1"])
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{bad}");
    }

    // Listed without its secret; retired, its tokens stop at once.
    let listed = platform.list_signing_keys("acme").await.unwrap();
    assert_eq!(listed.signing_keys.len(), 1);
    assert!(!serde_json::to_string(&listed).unwrap().contains(&secret));
    platform
        .retire_signing_key("acme", &made.kid)
        .await
        .unwrap();
    let (status, _) = app
        .post_holds(&acme_event, &acme_buyer, &["stalls-C-2"])
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let listed = platform.list_signing_keys("acme").await.unwrap();
    assert!(listed.signing_keys[0].retired_at.is_some());
    // Neither the secret nor the key made it into the audit log.
    let log = platform.audit("acme", "").await.unwrap();
    let actions: Vec<&str> = log.entries.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        &actions[..2],
        ["signing_key.retired", "signing_key.created"]
    );
    assert!(!serde_json::to_string(&log).unwrap().contains(&secret));
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

#[tokio::test]
async fn an_eddsa_key_checks_tokens_boxoffice_could_never_mint() {
    let app = spawn_app().await;
    let acme_event = organization_with_event(&app, "acme").await;
    let private = ed25519_dalek::SigningKey::from_bytes(&rand::random());
    let public_pem = private
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .unwrap();
    let private_pem = private.to_pkcs8_pem(LineEnding::LF).unwrap();
    let platform = app.typed();
    let made = platform
        .create_signing_key(
            "acme",
            &SigningKeyBody {
                algorithm: "EdDSA".into(),
                public_key: Some(public_pem.clone()),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        made.secret, None,
        "Boxoffice keeps no secret of an EdDSA key"
    );
    let key = EncodingKey::from_ed_pem(private_pem.as_bytes()).unwrap();
    let token = mint_signed_token(&key, Algorithm::EdDSA, &made.kid, "alice", soon());
    let (status, hold) = app
        .post_holds(&acme_event, &As::Token(token), &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");

    // HS256 presented for an EdDSA key, keyed with its public key: refused.
    let confused = mint_signed_token(
        &EncodingKey::from_secret(public_pem.as_bytes()).unwrap(),
        Algorithm::HS256,
        &made.kid,
        "mallory",
        soon(),
    );
    let (status, _) = app
        .post_holds(&acme_event, &As::Token(confused), &["stalls-B-2"])
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // What is not an Ed25519 public key is refused, and adds nothing.
    for (algorithm, public_key) in [
        ("EdDSA", Some("not a pem".to_owned())),
        ("EdDSA", Some(private_pem.to_string())),
        ("EdDSA", None),
        ("HS256", Some(public_pem.clone())),
        ("RS256", None),
    ] {
        let (status, problem) = app
            .send(
                Method::POST,
                "/v1/organizations/acme/signing-keys",
                &As::Admin,
                Some(&json!({"algorithm": algorithm, "public_key": public_key})),
            )
            .await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{algorithm} {public_key:?}: {problem}"
        );
    }
    assert_eq!(app.count("signing_key").await, 1);
}

#[tokio::test]
async fn a_retired_signing_key_stops_on_every_instance_within_a_second() {
    let app = spawn_app().await;
    let other =
        crate::helpers::another_instance(&app, crate::helpers::stores::Store::Postgres).await;
    let acme_event = organization_with_event(&app, "acme").await;
    let made = app
        .typed()
        .create_signing_key(
            "acme",
            &SigningKeyBody {
                algorithm: "HS256".into(),
                public_key: None,
            },
        )
        .await
        .unwrap();
    let key = EncodingKey::from_secret(made.secret.unwrap().as_bytes()).unwrap();
    let buyer = As::Token(mint_signed_token(
        &key,
        Algorithm::HS256,
        &made.kid,
        "alice",
        soon(),
    ));
    let path = format!("/v1/events/{acme_event}/waitlist");
    let body = json!({"quantity": 1});
    // Made on one instance, the key works on the other within a second.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let (status, answer) = other.send(Method::POST, &path, &buyer, Some(&body)).await;
        if status == StatusCode::CREATED {
            break;
        }
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert!(
            std::time::Instant::now() < deadline,
            "the new key is not known"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    app.typed()
        .retire_signing_key("acme", &made.kid)
        .await
        .unwrap();
    let retired = std::time::Instant::now();
    loop {
        let (status, _) = other.send(Method::POST, &path, &buyer, Some(&body)).await;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(
            retired.elapsed() < std::time::Duration::from_secs(1),
            "a retired key's token still works on the other instance ({status})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
