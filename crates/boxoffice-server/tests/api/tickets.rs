//! Tickets and entry: a paid order's seats and a booking's places are tickets whose secret
//! checks with the organization's public entry key alone; the PDF's QR codes read back
//! with an ordinary reader (zbarimg) and let their holders in; fifty scanners on one ticket
//! let it in once; forged, truncated, foreign and revoked tickets are refused and change
//! nothing; exits, re-entry, offline uploads and the door's counts. (A long file: a
//! ticket's whole way from the sale to the door, each step on the state the last left.)

use std::collections::BTreeSet;
use std::process::Command;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::{Signer, Verifier};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::door::{summary, tickets_of};
use crate::helpers::seasons::season;
use crate::helpers::staff::key;
use crate::helpers::staff::organization_with_event;
use crate::helpers::stores::Store;
use crate::helpers::{buy, race, spawn_app, spawn_race_app_on, tally, As, TestApp};

async fn order_tickets(app: &TestApp, order: &Value, who: &As) -> Vec<Value> {
    let id = order["order_id"].as_str().unwrap();
    tickets_of(app, &format!("/v1/orders/{id}/tickets"), who).await
}

async fn check_in(app: &TestApp, event: &str, who: &As, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/events/{event}/checkins"),
        who,
        Some(&body),
    )
    .await
}

fn scan(secret: &Value, nonce: &str) -> Value {
    json!({"secret": secret, "nonce": nonce, "gate": "North"})
}

/// A compact secret's fields and signature as docs/api.md lays them out ("Compact
/// secrets"), read here on their own: `(fields, signature)`, the 44 bytes the signature
/// covers after the prefix and its 64.
pub(crate) fn compact_parts(secret: &str) -> (Vec<u8>, Vec<u8>) {
    let rest = secret.strip_prefix("BX2:").expect("a compact secret");
    assert_eq!(secret.len(), 166, "{secret}");
    let bytes = base45::decode(rest).unwrap();
    assert_eq!(bytes.len(), 108);
    (bytes[..44].to_vec(), bytes[44..].to_vec())
}

/// A compact secret of `fields` signed by `key`, as the server signs one.
pub(crate) fn compact_signed(fields: &[u8], key: &ed25519_dalek::SigningKey) -> String {
    let signature = key.sign(&[b"BX2:", fields].concat());
    format!(
        "BX2:{}",
        base45::encode([fields, &signature.to_bytes()[..]].concat())
    )
}

/// What a secret says, and whether one of `keys` (from `…/entry/keys`) signed it: what an
/// offline scanner does. A compact secret's indexes are named from the event's lists
/// (`seat` the seat's id, `area` and `type` their codes); `kid` is the key that signed it.
async fn verify_offline(app: &TestApp, secret: &str, keys: &Value) -> (Value, bool) {
    let keys: Vec<(String, ed25519_dalek::VerifyingKey)> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let raw: [u8; 32] = URL_SAFE_NO_PAD
                .decode(k["public_key"].as_str().unwrap())
                .unwrap()
                .try_into()
                .unwrap();
            let kid = k["kid"].as_str().unwrap().to_owned();
            (kid, ed25519_dalek::VerifyingKey::from_bytes(&raw).unwrap())
        })
        .collect();
    if secret.starts_with("bx1.") {
        let mut parts = secret.split('.').skip(1);
        let payload = URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap();
        let signature = URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap();
        let signature = ed25519_dalek::Signature::from_slice(&signature).unwrap();
        let json: Value = serde_json::from_slice(&payload).unwrap();
        let signed = keys
            .iter()
            .any(|(kid, k)| json["kid"] == *kid && k.verify(&payload, &signature).is_ok());
        return (json, signed);
    }
    let (fields, signature) = compact_parts(secret);
    let signature = ed25519_dalek::Signature::from_slice(&signature).unwrap();
    let message = [b"BX2:", &fields[..]].concat();
    let signer = keys.iter().find(|(_, k)| {
        k.as_bytes()[..2] == fields[32..34] && k.verify(&message, &signature).is_ok()
    });
    let uuid = |b: &[u8]| uuid::Uuid::from_slice(b).unwrap().to_string();
    let eid = uuid(&fields[16..32]);
    let (_, event) = app
        .send(Method::GET, &format!("/v1/events/{eid}"), &As::Admin, None)
        .await;
    let (_, seats) = app
        .send(
            Method::GET,
            &format!("/v1/events/{eid}/seats"),
            &As::Admin,
            None,
        )
        .await;
    let place = u32::from_be_bytes(fields[38..42].try_into().unwrap());
    let ticket_type = u16::from_be_bytes(fields[42..44].try_into().unwrap());
    let (seat, area) = if place & (1 << 31) == 0 {
        (seats["seats"][place as usize]["id"].clone(), Value::Null)
    } else {
        let area = &event["ga_areas"][(place & !(1 << 31)) as usize]["code"];
        (Value::Null, area.clone())
    };
    let type_code = if ticket_type == u16::MAX {
        area.clone()
    } else {
        event["ticket_types"][ticket_type as usize]["code"].clone()
    };
    let json = json!({
        "kid": signer.map(|(kid, _)| kid.clone()),
        "tid": uuid(&fields[..16]),
        "eid": eid,
        "seat": seat,
        "area": area,
        "type": type_code,
        "iat": u32::from_be_bytes(fields[34..38].try_into().unwrap()),
    });
    (json, signer.is_some())
}

async fn entry_keys(app: &TestApp, event: &str, who: &As) -> Value {
    let (status, keys) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/entry/keys"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    keys
}

#[tokio::test]
async fn a_paid_orders_tickets_check_with_the_public_key_alone_and_read_the_same_each_time() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-A-1", "stalls-B-2"]).await;
    let alice = app.buyer("alice");
    let tickets = order_tickets(&app, &order, &alice).await;
    assert_eq!(tickets.len(), 2, "{tickets:?}");
    assert_eq!(tickets[0]["label"], "Stalls, Row A, Seat 1");
    assert_eq!(tickets[0]["ticket_type"], "premium");
    assert_eq!(tickets[1]["seat_id"], "stalls-B-2");
    for t in &tickets {
        assert_eq!(t["status"], "valid");
        assert_eq!(t["holder"], "alice");
        assert_eq!(t["order_id"], order["order_id"]);
        assert_eq!(t["event_id"].as_str(), Some(event.as_str()));
    }
    // The same secret on every read, for staff too.
    assert_eq!(tickets, order_tickets(&app, &order, &As::Admin).await);

    let (checkin, _) = key(&app, "default", "checkin").await;
    let keys = entry_keys(&app, &event, &checkin).await;
    assert_eq!(keys["keys"].as_array().unwrap().len(), 1, "{keys}");
    for t in &tickets {
        let (payload, signed) = verify_offline(&app, t["secret"].as_str().unwrap(), &keys).await;
        assert!(signed, "{t}");
        assert_eq!(payload["tid"], t["id"]);
        assert_eq!(payload["eid"].as_str(), Some(event.as_str()));
        assert_eq!(payload["seat"], t["seat_id"]);
        assert_eq!(payload["area"], Value::Null);
        assert_eq!(payload["type"], t["ticket_type"]);
        assert!(payload["iat"].as_i64().unwrap() > 1_700_000_000);
    }

    // A new entry key signs from now on; earlier tickets keep theirs and stay valid.
    let (status, rotated) = app
        .send(
            Method::POST,
            "/v1/organizations/default/entry-keys",
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rotated}");
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/organizations/default/entry-keys",
            &checkin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(tickets, order_tickets(&app, &order, &alice).await);
    let later = buy(&app, &event, "bob", &["stalls-C-1"]).await;
    let later = order_tickets(&app, &later, &app.buyer("bob")).await;
    let keys = entry_keys(&app, &event, &checkin).await;
    let listed = keys["keys"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{keys}");
    assert!(listed[0]["retired_at"].is_string());
    assert_eq!(listed[1]["kid"], rotated["kid"]);
    let (payload, signed) = verify_offline(&app, later[0]["secret"].as_str().unwrap(), &keys).await;
    assert!(signed);
    assert_eq!(payload["kid"], rotated["kid"]);
    assert!(
        verify_offline(&app, tickets[0]["secret"].as_str().unwrap(), &keys)
            .await
            .1
    );

    // The QR code alone, for its holder or staff; not for another buyer.
    let id = tickets[0]["id"].as_str().unwrap();
    let qr = app
        .request(Method::GET, &format!("/v1/tickets/{id}/qr.svg"), &alice)
        .send()
        .await
        .unwrap();
    assert_eq!(qr.status(), StatusCode::OK);
    assert_eq!(qr.headers()["content-type"], "image/svg+xml");
    assert!(qr.text().await.unwrap().contains("<svg"));
    for (who, status) in [
        (app.buyer("mallory"), StatusCode::FORBIDDEN),
        (As::Nobody, StatusCode::UNAUTHORIZED),
        (checkin.clone(), StatusCode::FORBIDDEN),
    ] {
        let (got, _) = app
            .send(Method::GET, &format!("/v1/tickets/{id}/qr.svg"), &who, None)
            .await;
        assert_eq!(got, status);
        let path = format!("/v1/orders/{}/tickets", order["order_id"].as_str().unwrap());
        let (got, _) = app.send(Method::GET, &path, &who, None).await;
        assert_eq!(got, status, "{path}");
    }
    let missing = uuid::Uuid::new_v4();
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{missing}/tickets"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("order_not_found"))
    );
}

#[tokio::test]
async fn a_pending_order_has_no_tickets_until_it_is_paid() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["payment_window_seconds"] = json!(600);
    let (status, event) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    let event = event["id"].as_str().unwrap();
    let order = buy(&app, event, "alice", &["stalls-A-1"]).await;
    assert_eq!(order["status"], "pending_payment");
    let alice = app.buyer("alice");
    assert_eq!(
        order_tickets(&app, &order, &alice).await,
        Vec::<Value>::new()
    );
    let (status, paid) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/payment", order["order_id"].as_str().unwrap()),
            &As::Admin,
            Some(&json!({"reference": "psp-1", "amount_cents": order["total_cents"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    let tickets = order_tickets(&app, &order, &alice).await;
    assert_eq!(tickets.len(), 1);
    assert_eq!(tickets[0]["status"], "valid");
    let (payload, _) = verify_offline(
        &app,
        tickets[0]["secret"].as_str().unwrap(),
        &json!({"keys": []}),
    )
    .await;
    let paid_at = chrono::DateTime::parse_from_rfc3339(paid["paid_at"].as_str().unwrap())
        .unwrap()
        .timestamp();
    assert_eq!(payload["iat"].as_i64(), Some(paid_at), "issued when paid");
}

/// The text of `pdf`, as pdftotext (Debian's poppler-utils) reads it.
pub(crate) fn pdf_text(pdf: &[u8]) -> String {
    let file = std::env::temp_dir().join(format!("tickets-{}.pdf", uuid::Uuid::new_v4()));
    std::fs::write(&file, pdf).unwrap();
    let out = Command::new("pdftotext")
        .arg(&file)
        .arg("-")
        .output()
        .expect("pdftotext (Debian's poppler-utils) reads the PDF: .ci/run installs it");
    std::fs::remove_file(&file).ok();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Renders each page of `pdf` and reads its QR codes with zbarimg, as a phone's reader
/// would: every code's text, page by page.
fn qr_codes_in(pdf: &[u8]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("tickets-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tickets.pdf");
    std::fs::write(&file, pdf).unwrap();
    let rendered = Command::new("pdftoppm")
        .args(["-r", "150", "-png"])
        .arg(&file)
        .arg(dir.join("page"))
        .status()
        .expect("pdftoppm (Debian's poppler-utils) renders the PDF: .ci/run installs it");
    assert!(rendered.success());
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    pages.sort();
    let mut codes = Vec::new();
    for page in &pages {
        let out = Command::new("zbarimg")
            .args(["--raw", "-q", "-Sdisable", "-Sqrcode.enable"])
            .arg(page)
            .output()
            .expect("zbarimg (Debian's zbar-tools) reads QR codes: .ci/run installs it");
        assert!(out.status.success(), "{page:?}: no QR code read");
        codes.extend(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(str::to_owned),
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(codes.len(), pages.len(), "one code a page");
    codes
}

#[tokio::test]
async fn the_pdfs_qr_codes_read_back_with_an_ordinary_reader_and_let_their_holders_in() {
    let app = spawn_app().await;
    // An event in Berlin's time: 19:30 UTC on 1 March 2030 is 20:30 CET there.
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["time_zone"] = json!("Europe/Berlin");
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    let order = buy(
        &app,
        &event,
        "alice",
        &["stalls-A-1", "stalls-A-2", "box-L-1"],
    )
    .await;
    let alice = app.buyer("alice");
    let tickets = order_tickets(&app, &order, &alice).await;
    let id = order["order_id"].as_str().unwrap();
    let response = app
        .request(Method::GET, &format!("/v1/orders/{id}/tickets.pdf"), &alice)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    let pdf = response.bytes().await.unwrap();
    let codes = qr_codes_in(&pdf);
    let secrets: Vec<String> = tickets
        .iter()
        .map(|t| t["secret"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(codes, secrets, "a page per ticket, in order");
    // Each a compact secret in a QR code of 45×45 modules at most, and the code to type
    // and the order printed under it.
    let text = pdf_text(&pdf);
    for t in &tickets {
        let secret = t["secret"].as_str().unwrap();
        assert!(secret.len() <= 170, "{secret}");
        let qr = qrcode::QrCode::with_error_correction_level(secret, qrcode::EcLevel::M).unwrap();
        assert!(qr.width() <= 45, "{} modules", qr.width());
        let code = t["code"].as_str().unwrap();
        let printed = format!("{}-{}-{}", &code[..4], &code[4..8], &code[8..]);
        assert!(text.contains(&printed), "{printed} not in {text}");
        assert_eq!(t["currency"], "EUR");
        let cents = t["price_cents"].as_i64().unwrap();
        assert!(cents > 0);
        let price = format!("€{}.{:02}", cents / 100, cents % 100);
        assert!(text.contains(&price), "{price} not in {text}");
    }
    assert!(text.contains(&format!("Order {id}")), "{text}");
    assert!(
        text.contains("Fri 1 Mar 2030, 20:30 CET"),
        "local time: {text}"
    );
    assert!(!text.contains("alice"), "no buyer's id on paper: {text}");

    // A booking's places: a page each.
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &alice,
            Some(&json!({"area": "floor", "quantity": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    let booking_id = booking["booking_id"].as_str().unwrap();
    let places = tickets_of(&app, &format!("/v1/bookings/{booking_id}/tickets"), &alice).await;
    assert_eq!(places.len(), 2);
    assert_eq!(places[1]["label"], "Standing floor, place 2 of 2");
    assert_eq!(places[1]["area"], "floor");
    assert_eq!(places[1]["booking_id"], booking["booking_id"]);
    let pdf = app
        .request(
            Method::GET,
            &format!("/v1/bookings/{booking_id}/tickets.pdf"),
            &alice,
        )
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let place_codes = qr_codes_in(&pdf);
    assert_eq!(place_codes.len(), 2);
    let (checkin, _) = key(&app, "default", "checkin").await;
    let keys = entry_keys(&app, &event, &checkin).await;
    let (payload, signed) = verify_offline(&app, &place_codes[1], &keys).await;
    assert!(signed);
    assert_eq!(
        (&payload["area"], &payload["type"], &payload["seat"]),
        (&json!("floor"), &json!("floor"), &Value::Null)
    );
    assert_eq!(payload["tid"], places[1]["id"]);

    for (n, code) in codes.iter().chain(&place_codes).enumerate() {
        let (status, body) = check_in(
            &app,
            &event,
            &checkin,
            scan(&json!(code), &format!("scan-{n}")),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["result"], "ok");
        assert_eq!(body["ticket"]["holder"], "alice");
    }
    let (_, body) = check_in(&app, &event, &checkin, scan(&json!(codes[0]), "again")).await;
    assert_eq!(body["code"], "already_redeemed");
    assert_eq!(body["first"]["gate"], "North");
    let tickets = order_tickets(&app, &order, &alice).await;
    assert!(
        tickets.iter().all(|t| t["status"] == "redeemed"),
        "{tickets:?}"
    );
    let counts = summary(&app, &event, &checkin).await;
    assert_eq!(
        counts,
        json!({"tickets": 5, "entered": 5, "inside": 5, "duplicates": 0,
               "by_gate": [{"gate": "North", "entered": 5}]})
    );
}

async fn fifty_scanners_on_one_ticket_let_it_in_once(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-A-1"]).await;
    let ticket = &order_tickets(&app, &order, &app.buyer("alice")).await[0];
    let (checkin, _) = key(&app, "default", "checkin").await;
    let requests = (0..50)
        .map(|n| {
            app.request(
                Method::POST,
                &format!("/v1/events/{event}/checkins"),
                &checkin,
            )
            .json(
                &json!({"secret": ticket["secret"], "nonce": format!("scanner-{n}"),
                              "gate": format!("gate-{}", n % 4)}),
            )
        })
        .collect();
    let answers = race(requests).await;
    assert_eq!(
        tally(&answers),
        [(201, 1), (409, 49)].into_iter().collect(),
        "{answers:?}"
    );
    let (_, winner) = answers
        .iter()
        .find(|(s, _)| *s == StatusCode::CREATED)
        .unwrap();
    let first_gate = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .map(|(_, b)| {
            assert_eq!(b["code"], "already_redeemed");
            b["first"]["gate"].clone()
        })
        .map(|gate| gate.to_string())
        .collect::<BTreeSet<_>>();
    assert_eq!(first_gate.len(), 1, "every refusal names the one entry");
    assert_eq!(app.count("checkin").await, 1);
    assert_eq!(app.count("ticket_entry").await, 1);
    // The winner's scanner retries its lost answer: the same answer, nothing recorded.
    let nonce: String = sqlx::query_scalar("select nonce from checkin")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let (status, again) = check_in(
        &app,
        &event,
        &checkin,
        json!({"secret": ticket["secret"], "nonce": nonce}),
    )
    .await;
    assert_eq!((status, &again), (StatusCode::CREATED, winner));
    assert_eq!(app.count("checkin").await, 1);
    assert_eq!(summary(&app, &event, &checkin).await["entered"], 1);
}

crate::helpers::stores::conformance!(fifty_scanners_on_one_ticket_let_it_in_once);

#[tokio::test]
async fn forged_truncated_foreign_and_malformed_scans_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let other_event = app.create_event().await;
    let acme_event = organization_with_event(&app, "acme").await;
    let (checkin, _) = key(&app, "default", "checkin").await;
    let order = buy(&app, &event, "alice", &["stalls-A-1"]).await;
    let secret = order_tickets(&app, &order, &app.buyer("alice")).await[0]["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let (fields, signature) = compact_parts(&secret);
    // Another seat in the fields, the signature kept.
    let mut moved = fields.clone();
    moved[41] ^= 1;
    let altered = format!(
        "BX2:{}",
        base45::encode([&moved[..], &signature[..]].concat())
    );
    // Signed by a key of the forger's own, under the organization's key tag.
    let forger = ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let forged = compact_signed(&fields, &forger);
    // A JSON secret of the ticket under the organization's kid, signed by the forger.
    let kid: String = sqlx::query_scalar("select kid from entry_key limit 1")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let ticket_id = uuid::Uuid::from_slice(&fields[..16]).unwrap();
    let claims = json!({"kid": kid, "tid": ticket_id, "eid": event, "seat": "stalls-A-1",
                        "area": null, "type": "premium", "iat": 1_800_000_000});
    let bytes = serde_json::to_vec(&claims).unwrap();
    let forged_json = format!(
        "bx1.{}.{}",
        URL_SAFE_NO_PAD.encode(&bytes),
        URL_SAFE_NO_PAD.encode(forger.sign(&bytes).to_bytes())
    );
    for bad in [
        altered.as_str(),
        forged.as_str(),
        forged_json.as_str(),
        &secret[..secret.len() - 5],
        &secret[..40],
        &secret.to_lowercase(),
        "BX2:",
        "bx1.",
        "not a ticket",
        "",
    ] {
        let (status, body) = check_in(&app, &event, &checkin, scan(&json!(bad), "n1")).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("ticket_invalid")),
            "{bad}: {body}"
        );
    }
    // A real ticket of another event of the organization; of another organization's event
    // its key is not the organization's.
    let (status, body) = check_in(&app, &other_event, &checkin, scan(&json!(secret), "n2")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("wrong_event"))
    );
    assert_eq!(body["event_id"].as_str(), Some(event.as_str()));
    let (status, _) = check_in(&app, &acme_event, &As::Admin, scan(&json!(secret), "n3")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Bad fields.
    for body in [
        json!({"secret": secret, "nonce": "n".repeat(65)}),
        json!({"secret": secret, "nonce": ""}),
        json!({"secret": secret, "nonce": "n4", "gate": "g".repeat(65)}),
        json!({"secret": secret, "nonce": "n5", "type": "sideways"}),
        json!({"secret": secret, "nonce": "n6", "scanned_at": "2030-01-01T00:00:00Z"}),
        json!({"secret": secret}),
    ] {
        let (status, answer) = check_in(&app, &event, &checkin, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
    }
    // Roles that do not check in; a key of another organization.
    let (sales, _) = key(&app, "default", "sales").await;
    let (status, body) = check_in(&app, &event, &sales, scan(&json!(secret), "n7")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (acme_checkin, _) = key(&app, "acme", "checkin").await;
    let (status, _) = check_in(&app, &event, &acme_checkin, scan(&json!(secret), "n8")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(app.count("checkin").await, 0);
    assert_eq!(app.count("ticket_entry").await, 0);
    // The real one still goes in.
    let (status, _) = check_in(&app, &event, &checkin, scan(&json!(secret), "n9")).await;
    assert_eq!(status, StatusCode::CREATED);
}

async fn revoked_since(app: &TestApp, event: &str, who: &As, since: &str) -> (StatusCode, Value) {
    let since = since.replace('+', "%2B");
    app.send(
        Method::GET,
        &format!("/v1/events/{event}/entry/revoked?since={since}"),
        who,
        None,
    )
    .await
}

#[tokio::test]
async fn cancelled_bookings_and_released_nights_revoke_their_tickets_for_online_and_offline_scanners(
) {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (checkin, _) = key(&app, "default", "checkin").await;
    let alice = app.buyer("alice");
    let order = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let kept = buy(&app, &event, "bob", &["stalls-B-1"]).await;
    let before = order_tickets(&app, &order, &alice).await;
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &alice,
            Some(&json!({"area": "floor", "quantity": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    let booking_id = booking["booking_id"].as_str().unwrap();
    let places = tickets_of(&app, &format!("/v1/bookings/{booking_id}/tickets"), &alice).await;
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/entry/revoked"),
            &checkin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["revoked"], json!([]));

    let id = order["order_id"].as_str().unwrap();
    let (status, _) = app.cancel_order(id, &alice).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/bookings/{booking_id}/cancel"),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let after = order_tickets(&app, &order, &alice).await;
    assert_eq!(after.len(), 2);
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(
            (&a["id"], &a["secret"], &a["status"]),
            (&b["id"], &b["secret"], &json!("revoked"))
        );
    }
    for (n, t) in before.iter().chain(&places).enumerate() {
        let (status, body) =
            check_in(&app, &event, &checkin, scan(&t["secret"], &format!("r{n}"))).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::GONE, Some("ticket_revoked")),
            "{body}"
        );
    }
    let (_, listed) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/entry/revoked"),
            &checkin,
            None,
        )
        .await;
    let revoked: BTreeSet<&str> = listed["revoked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ticket_id"].as_str().unwrap())
        .collect();
    let expected: BTreeSet<&str> = before
        .iter()
        .chain(&places)
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(revoked, expected);
    // Asked again from `as_of`, the list may repeat, never miss; from later, it is empty.
    let since = listed["as_of"].as_str().unwrap();
    let (_, again) = revoked_since(&app, &event, &checkin, since).await;
    assert_eq!(again["revoked"].as_array().unwrap().len(), 4, "{again}");
    let later = (chrono::Utc::now() + chrono::Duration::minutes(1)).to_rfc3339();
    let (_, none) = revoked_since(&app, &event, &checkin, &later).await;
    assert_eq!(none["revoked"], json!([]));
    let (status, _) = revoked_since(&app, &event, &checkin, "yesterday").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // Bob's ticket is untouched.
    let bobs = order_tickets(&app, &kept, &app.buyer("bob")).await;
    assert_eq!(bobs[0]["status"], "valid");
    assert_eq!(summary(&app, &event, &checkin).await["tickets"], 1);

    // A season night released revokes that night's ticket alone.
    let (events, season_id) = season(&app).await;
    let (status, held) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season_id}/holds"),
            &alice,
            Some(&json!({"seats": ["stalls-A-3"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    let (status, bought) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season_id}/orders"),
            &alice,
            Some(&json!({"hold_token": held["hold_token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{bought}");
    let nights = order_tickets(&app, &bought, &alice).await;
    assert_eq!(nights.len(), events.len(), "a ticket a night");
    assert!(nights.iter().all(|t| t["order_id"] == bought["order_id"]));
    let season_order = bought["order_id"].as_str().unwrap();
    let (status, released) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{season_order}/events/{}/release", events[1]),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{released}");
    let statuses: Vec<(String, String)> = order_tickets(&app, &bought, &alice)
        .await
        .iter()
        .map(|t| {
            (
                t["event_id"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (event_id, status) in statuses {
        let want = if event_id == events[1] {
            "revoked"
        } else {
            "valid"
        };
        assert_eq!(status, want, "{event_id}");
    }
}

#[tokio::test]
async fn exits_re_entry_and_offline_uploads_are_counted_at_the_door() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let (checkin, _) = key(&app, "default", "checkin").await;
    let (reports, _) = key(&app, "default", "reports").await;
    let order = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let tickets = order_tickets(&app, &order, &app.buyer("alice")).await;
    let (one, two) = (&tickets[0]["secret"], &tickets[1]["secret"]);

    let (status, _) = check_in(&app, &event, &checkin, scan(one, "a1")).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, out) = check_in(
        &app,
        &event,
        &checkin,
        json!({"secret": one, "nonce": "a2", "type": "exit"}),
    )
    .await;
    assert_eq!(
        (status, &out["result"]),
        (StatusCode::CREATED, &json!("ok")),
        "{out}"
    );
    assert_eq!(summary(&app, &event, &reports).await["inside"], 0);
    // Re-entry is off by default: once in is once.
    let (status, body) = check_in(&app, &event, &checkin, scan(one, "a3")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_redeemed"))
    );
    let patched = app
        .patch_event(&event, &json!({"entry": {"reentry": true}}))
        .await;
    assert_eq!(patched["entry"], json!({"reentry": true}));
    let (status, _) = check_in(
        &app,
        &event,
        &checkin,
        json!({"secret": one, "nonce": "a4", "gate": "South"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    // Inside now: a second entry is refused, since the entry at South.
    let (_, body) = check_in(&app, &event, &checkin, scan(one, "a5")).await;
    assert_eq!(body["first"]["gate"], "South");

    // Two offline scanners let ticket two in; their uploads come later.
    let at = "2030-03-01T19:02:00Z";
    let upload = |nonce: &str, gate: &str| json!({"secret": two, "nonce": nonce, "gate": gate, "scanned_at": at, "force": true});
    let (status, first) = check_in(&app, &event, &checkin, upload("off-1", "East")).await;
    assert_eq!(
        (status, &first["result"]),
        (StatusCode::CREATED, &json!("ok")),
        "{first}"
    );
    let (status, second) = check_in(&app, &event, &checkin, upload("off-2", "West")).await;
    assert_eq!(
        (status, &second["result"]),
        (StatusCode::CREATED, &json!("duplicate")),
        "{second}"
    );
    // The same upload again (the connection dropped before the answer): the same answer.
    let (_, repeat) = check_in(&app, &event, &checkin, upload("off-2", "West")).await;
    assert_eq!(repeat, second);

    let counts = summary(&app, &event, &reports).await;
    assert_eq!(
        counts,
        json!({"tickets": 2, "entered": 2, "inside": 2, "duplicates": 1,
               "by_gate": [{"gate": "East", "entered": 1}, {"gate": "North", "entered": 1},
                           {"gate": "South", "entered": 1}, {"gate": "West", "entered": 1}]})
    );
    let (sales, _) = key(&app, "default", "sales").await;
    let (status, _) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/entry/revoked"),
            &sales,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let audit: i64 = sqlx::query_scalar(
        "select count(*) from audit_entry where action = 'event.updated' and changes ? 'entry'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(audit, 1);
}

/// The 48 bits a ticket's code stands for, read as docs/api.md says (Crockford's base32,
/// 10 characters, the last two bits zero).
fn code_bits(code: &str) -> [u8; 6] {
    const ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    assert_eq!(code.len(), 10, "{code}");
    let bits = code.chars().fold(0u64, |n, c| {
        (n << 5) | ALPHABET.find(c).unwrap_or_else(|| panic!("{code}")) as u64
    });
    assert_eq!(bits & 0b11, 0, "{code}");
    (bits >> 2).to_be_bytes()[2..].try_into().unwrap()
}

#[tokio::test]
async fn a_typed_code_checks_in_as_its_secret_does_and_a_json_secret_still_scans() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let other_event = app.create_event().await;
    let (checkin, _) = key(&app, "default", "checkin").await;
    let order = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let tickets = order_tickets(&app, &order, &app.buyer("alice")).await;
    for t in &tickets {
        let id = uuid::Uuid::parse_str(t["id"].as_str().unwrap()).unwrap();
        assert_eq!(code_bits(t["code"].as_str().unwrap()), id.as_bytes()[..6]);
    }
    let code = tickets[0]["code"].as_str().unwrap();
    let by_code = |code: &str, nonce: &str| json!({"code": code, "nonce": nonce, "gate": "North"});

    // As printed, lowercase, with dashes: the ticket goes in once.
    let printed = format!("{}-{}-{}", &code[..4], &code[4..8], &code[8..]).to_lowercase();
    let (status, body) = check_in(&app, &event, &checkin, by_code(&printed, "c1")).await;
    assert_eq!(
        (status, body["result"].as_str()),
        (StatusCode::CREATED, Some("ok")),
        "{body}"
    );
    assert_eq!(body["ticket"]["id"], tickets[0]["id"]);
    assert_eq!(body["ticket"]["label"], "Stalls, Row A, Seat 1");
    let (status, body) = check_in(&app, &event, &checkin, by_code(code, "c2")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_redeemed")),
        "{body}"
    );
    assert_eq!(body["first"]["gate"], "North");
    let (status, _) = check_in(&app, &event, &checkin, scan(&tickets[0]["secret"], "c3")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // The same nonce again: the first answer.
    let (status, body) = check_in(&app, &event, &checkin, by_code(code, "c1")).await;
    assert_eq!(
        (status, body["result"].as_str()),
        (StatusCode::CREATED, Some("ok"))
    );

    // Another event's door; codes of no ticket; malformed bodies.
    let second = tickets[1]["code"].as_str().unwrap();
    let (status, body) = check_in(&app, &other_event, &checkin, by_code(second, "c4")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("wrong_event"))
    );
    assert_eq!(body["event_id"].as_str(), Some(event.as_str()));
    let unknown = if second.starts_with('0') {
        "ZZZZZZZZZ0"
    } else {
        "0000000000"
    };
    for bad in [unknown, "hello", "7KQF-2M9X-PDX", "UUUUUUUUUU", ""] {
        let (status, body) = check_in(&app, &event, &checkin, by_code(bad, "c5")).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("ticket_invalid")),
            "{bad}: {body}"
        );
    }
    for body in [
        json!({"code": second, "secret": tickets[1]["secret"], "nonce": "c6"}),
        json!({"nonce": "c7"}),
        json!({"code": 12, "nonce": "c8"}),
    ] {
        let (status, answer) = check_in(&app, &event, &checkin, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
    }
    assert_eq!(app.count("ticket_entry").await, 1);

    // A JSON secret (`bx1.`) printed before compact secrets still lets its holder in.
    let (kid, seed): (String, Vec<u8>) =
        sqlx::query_as("select kid, private_key from entry_key where retired_at is null limit 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    let signing = ed25519_dalek::SigningKey::from_bytes(&seed.try_into().unwrap());
    let claims = json!({"kid": kid, "tid": tickets[1]["id"], "eid": event, "seat": "stalls-A-2",
                        "area": null, "type": "premium", "iat": 1_800_000_000});
    let bytes = serde_json::to_vec(&claims).unwrap();
    let old = format!(
        "bx1.{}.{}",
        URL_SAFE_NO_PAD.encode(&bytes),
        URL_SAFE_NO_PAD.encode(signing.sign(&bytes).to_bytes())
    );
    let (status, body) = check_in(&app, &event, &checkin, scan(&json!(old), "c9")).await;
    assert_eq!(
        (status, body["result"].as_str()),
        (StatusCode::CREATED, Some("ok")),
        "{body}"
    );
    assert_eq!(body["ticket"]["id"], tickets[1]["id"]);
    assert_eq!(app.count("ticket_entry").await, 2);
}
