//! The tickets' pages in headless Chromium. The buyer's page shows an order's tickets once
//! bought (QR codes that decode, in the page, to the tickets' secrets; the PDF) and again
//! at `/?order=<id>` on a phone. The scanner at `/scan` signs in with a check-in key, reads
//! a ticket from a fake camera (a video of its QR code) to a green answer, says each
//! refusal full screen, and, with its network cut by the test, checks tickets alone,
//! queues its check-ins and uploads them when the network returns. The console links a
//! check-in key to the scanner and shows the door's counts on the event's dashboard.
//! Node's test runner checks the scanner's offline judgement (`tests/js/`). Long because
//! the scanner's test is one story: a door's evening, camera to offline to upload, each
//! step asserting on the state the step before left.

use std::net::SocketAddr;
use std::path::PathBuf;

use fantoccini::Client;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::door::{summary, tickets_of};
use crate::helpers::pages::open_at;
use crate::helpers::proxy::ChaosProxy;
use crate::helpers::staff::key;
use crate::helpers::{
    assert_accessible, browser, buy, click, click_seat, driver, find, phone, phone_with, press,
    screenshot, script, spawn_app, spawn_app_with, type_into, wait_for, wait_status, As, TestApp,
    LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
};

const JSQR: &str = include_str!("../../../../vendor/jsqr/jsQR.js");

async fn tickets(app: &TestApp, order: &str, who: &As) -> Vec<Value> {
    tickets_of(app, &format!("/v1/orders/{order}/tickets"), who).await
}

fn secrets(tickets: &[Value]) -> Vec<Value> {
    tickets.iter().map(|t| t["secret"].clone()).collect()
}

/// The QR codes the page shows in the images `css`, decoded in the page by jsQR, as a
/// phone's camera app would read them off the screen.
async fn decoded(page: &Client, css: &str) -> Value {
    page.execute(JSQR, vec![]).await.expect("jsQR loads");
    script(
        page,
        &format!(
            "return [...document.querySelectorAll('{css}')].map((img) => {{
               const c = document.createElement('canvas');
               c.width = c.height = 400;
               const g = c.getContext('2d');
               g.fillStyle = '#fff';
               g.fillRect(0, 0, 400, 400);
               g.drawImage(img, 20, 20, 360, 360);
               const code = jsQR(g.getImageData(0, 0, 400, 400).data, 400, 400);
               return code ? code.data : null;
             }});"
        ),
    )
    .await
}

/// Waits until every image `css` has loaded.
async fn images_loaded(page: &Client, css: &str) {
    wait_for(
        page,
        LOADS_WITHIN,
        &format!(
            "const imgs = [...document.querySelectorAll('{css}')];
             return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0);"
        ),
        json!(true),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_sees_their_tickets_once_bought_and_again_at_the_orders_address() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|s| s.server.anonymous_sessions = false).await;
    let event = app.create_event().await;
    let driver = driver().await;
    let page = browser(&driver).await;
    let token = app.user_token("ada");
    open_at(
        &page,
        &format!("{}/?event={event}#buyer_token={token}", app.base),
    )
    .await;
    click_seat(&page, "stalls-B-2").await;
    click_seat(&page, "stalls-B-3").await;
    click(&page, "hold").await;
    wait_status(&page, "stalls-B-3", "held", LIVE_WITHIN).await;
    click(&page, "buy").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "const t = document.querySelector('#order .tickets'); return t && t.dataset.tickets || null",
        json!("2"),
    )
    .await;
    images_loaded(&page, "#order .ticket img").await;
    let order = script(
        &page,
        "return document.getElementById('order').dataset.orderId",
    )
    .await
    .as_str()
    .unwrap()
    .to_owned();
    let issued = tickets(&app, &order, &app.buyer("ada")).await;
    assert_eq!(
        decoded(&page, "#order .ticket img").await,
        json!(secrets(&issued)),
        "each QR code on the page is its ticket's secret"
    );
    assert_eq!(
        script(
            &page,
            "return [...document.querySelectorAll('#order .ticket')].map((t) =>
               [t.querySelector('strong').textContent, t.querySelector('img').alt, t.dataset.status])"
        )
        .await,
        json!([
            ["Stalls, Row B, Seat 2", "Entry code of the ticket for Stalls, Row B, Seat 2", "valid"],
            ["Stalls, Row B, Seat 3", "Entry code of the ticket for Stalls, Row B, Seat 3", "valid"]
        ])
    );

    // The PDF button saves the order's PDF: the file it hands the browser is read back.
    script(
        &page,
        "window.saved = null;
         const blobs = new Map();
         const create = URL.createObjectURL;
         URL.createObjectURL = (blob) => { const url = create(blob); blobs.set(url, blob); return url; };
         const click = HTMLAnchorElement.prototype.click;
         HTMLAnchorElement.prototype.click = function () {
           if (!this.download) return click.call(this);
           const name = this.download;
           blobs.get(this.href).arrayBuffer().then((b) => {
             window.saved = {name, head: String.fromCharCode(...new Uint8Array(b).slice(0, 5))};
           });
         };",
    )
    .await;
    click(&page, "tickets-pdf").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return window.saved && [window.saved.name, window.saved.head]",
        json!([format!("tickets-{order}.pdf"), "%PDF-"]),
    )
    .await;
    assert_accessible(&page, "the buyer's page with the tickets").await;
    screenshot(&page, "tickets-bought-desktop").await;
    page.close().await.unwrap();

    // Later, on a phone: the order's address shows the tickets alone.
    let phone = phone(&driver).await;
    let url = format!("{}/?order={order}", app.base);
    phone
        .goto(&format!("{url}#buyer_token={token}"))
        .await
        .unwrap();
    wait_for(
        &phone,
        LOADS_WITHIN,
        "const t = document.querySelector('#order-page-box .tickets'); return t && t.dataset.tickets || null",
        json!("2"),
    )
    .await;
    images_loaded(&phone, "#order-page-box .ticket img").await;
    assert_eq!(
        decoded(&phone, "#order-page-box .ticket img").await,
        json!(secrets(&issued))
    );
    // Under each QR code, the code to type, as printed.
    let printed: Vec<String> = issued
        .iter()
        .map(|t| {
            let c = t["code"].as_str().unwrap();
            format!("{}-{}-{}", &c[..4], &c[4..8], &c[8..])
        })
        .collect();
    assert_eq!(
        script(
            &phone,
            "return [...document.querySelectorAll('#order-page-box .ticket-code')].map((c) => c.textContent)"
        )
        .await,
        json!(printed)
    );
    assert_eq!(
        script(
            &phone,
            "return [document.getElementById('order-page-name').textContent,
                     document.getElementById('event').hidden, document.getElementById('events').hidden]"
        )
        .await,
        json!(["Spring Gala", true, true])
    );
    assert_accessible(&phone, "the order's tickets on a phone").await;
    screenshot(&phone, "tickets-order-phone").await;

    // Cancelled: the order says so and shows no tickets.
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{order}/cancel"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    phone.refresh().await.unwrap();
    wait_for(
        &phone,
        LOADS_WITHIN,
        "return document.getElementById('order-page-box').dataset.status || null",
        json!("cancelled"),
    )
    .await;
    assert_eq!(
        script(
            &phone,
            "return document.querySelectorAll('#order-page-box .ticket').length"
        )
        .await,
        json!(0),
        "a cancelled order shows no tickets"
    );

    // Another buyer at that address sees no tickets.
    phone.goto("about:blank").await.unwrap();
    phone
        .goto(&format!("{url}#buyer_token={}", app.user_token("bea")))
        .await
        .unwrap();
    wait_for(
        &phone,
        LOADS_WITHIN,
        "const f = document.getElementById('fatal'); return !f.hidden && f.textContent",
        json!("This order is another buyer's."),
    )
    .await;
    assert_eq!(
        script(
            &phone,
            "return document.getElementById('order-page').hidden"
        )
        .await,
        json!(true)
    );
    phone.close().await.unwrap();
}

/// A Y4M video (Chromium's fake camera reads these) of `secret`'s QR code on white, 640 ×
/// 480, two frames.
fn video_of(secret: &str) -> PathBuf {
    use std::io::Write;
    let code =
        qrcode::QrCode::with_error_correction_level(secret.as_bytes(), qrcode::EcLevel::M).unwrap();
    let modules = code.width();
    let colors = code.to_colors();
    let (width, height) = (640usize, 480usize);
    let scale = (height - 20) / (modules + 8);
    let size = scale * (modules + 8);
    let (left, top) = ((width - size) / 2, (height - size) / 2);
    let mut luma = vec![235u8; width * height];
    for (i, color) in colors.iter().enumerate() {
        if *color != qrcode::Color::Dark {
            continue;
        }
        let (mx, my) = (i % modules + 4, i / modules + 4);
        for y in 0..scale {
            let row = (top + my * scale + y) * width;
            let x0 = left + mx * scale;
            luma[row + x0..row + x0 + scale].fill(16);
        }
    }
    let chroma = vec![128u8; width * height / 4];
    let path = std::env::temp_dir().join(format!("ticket-{}.y4m", uuid::Uuid::new_v4()));
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, "YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg").unwrap();
    for _ in 0..2 {
        file.write_all(b"FRAME\n").unwrap();
        file.write_all(&luma).unwrap();
        file.write_all(&chroma).unwrap();
        file.write_all(&chroma).unwrap();
    }
    path
}

/// What the scanner's answer says, once it shows the answer to the `n`th scan.
async fn answer(page: &Client, n: usize) -> Value {
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.getElementById('recent').dataset.scans",
        json!(n.to_string()),
    )
    .await;
    script(
        page,
        "const a = document.getElementById('answer');
         return {shown: !a.hidden, result: a.dataset.result, kind: a.dataset.kind,
                 title: document.getElementById('answer-title').textContent,
                 detail: document.getElementById('answer-detail').textContent};",
    )
    .await
}

/// Types `secret` into the scanner and checks it; answers the answer, dismissed after.
async fn typed(page: &Client, secret: &str, n: usize) -> Value {
    type_into(page, "#typed-secret", secret).await;
    press(page, "#typed button[type=submit]").await;
    let said = answer(page, n).await;
    assert_eq!(said["shown"], true, "{said}");
    said
}

async fn dismiss(page: &Client) {
    press(page, "#answer-next").await;
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.getElementById('answer').hidden",
        json!(true),
    )
    .await;
}

fn said(result: &str, title: &str, detail: &str) -> Value {
    let kind = match result {
        "ok" => "ok",
        "already_redeemed" => "already",
        _ => "no",
    };
    json!({"shown": true, "result": result, "kind": kind,
           "title": title, "detail": detail})
}

async fn door(app: &TestApp, event: &str) -> Value {
    summary(app, event, &As::Admin).await
}

async fn secret_of(app: &TestApp, order: &Value) -> String {
    let id = order["order_id"].as_str().unwrap();
    tickets(app, id, &As::Admin).await[0]["secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_scanner_reads_the_camera_says_each_refusal_and_checks_alone_while_offline() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    let elsewhere = app.create_event().await;
    let at_camera = secret_of(&app, &buy(&app, &event, "alice", &["stalls-A-1"]).await).await;
    let typed_in = secret_of(&app, &buy(&app, &event, "bob", &["stalls-A-2"]).await).await;
    let cancelled = buy(&app, &event, "cem", &["stalls-A-3"]).await;
    let revoked = secret_of(&app, &cancelled).await;
    let (status, body) = app
        .send(
            Method::POST,
            &format!(
                "/v1/orders/{}/cancel",
                cancelled["order_id"].as_str().unwrap()
            ),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let other_event = secret_of(&app, &buy(&app, &elsewhere, "dan", &["stalls-A-1"]).await).await;
    let (As::Token(checkin), _) = key(&app, "default", "checkin").await else {
        unreachable!()
    };
    let (As::Token(reports), _) = key(&app, "default", "reports").await else {
        unreachable!()
    };

    // The scanner reaches the server through a link the test cuts.
    let upstream: SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let link = ChaosProxy::start(upstream).await;
    let base = format!("http://{}", link.addr);
    let video = video_of(&at_camera);
    let driver = driver().await;
    let page = phone_with(
        &driver,
        &[
            "--use-fake-device-for-media-stream".into(),
            "--use-fake-ui-for-media-stream".into(),
            format!("--use-file-for-fake-video-capture={}", video.display()),
        ],
    )
    .await;
    page.goto(&format!("{base}/scan?event={event}"))
        .await
        .unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !document.getElementById('signin').hidden",
        json!(true),
    )
    .await;
    // This phone stands at the north gate (the scanner keeps its gate across sessions).
    script(
        &page,
        "localStorage.setItem('boxoffice.scan.gate', 'North')",
    )
    .await;
    assert_accessible(&page, "the scanner's sign-in").await;
    screenshot(&page, "scan-signin-phone").await;
    type_into(&page, "#signin-key", &reports).await;
    press(&page, "#signin-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "const e = document.getElementById('signin-error'); return !e.hidden && e.textContent",
        json!("A reports key may not check tickets in: use a check-in key."),
    )
    .await;
    type_into(&page, "#signin-key", &checkin).await;
    press(&page, "#signin-form button[type=submit]").await;

    // The camera sees Alice's ticket: green, and she is in. It stays in view and is not
    // read twice.
    let first = answer(&page, 1).await;
    assert_eq!(first["result"], "ok", "{first}");
    assert_eq!(first["title"], "Valid");
    assert_eq!(first["detail"], "Stalls, Row A, Seat 1 · Premium");
    assert_eq!(
        script(&page, "return document.body.dataset.decoder").await,
        json!("jsQR"),
        "Chromium on Linux has no BarcodeDetector: the vendored decoder reads the camera"
    );
    let counts = door(&app, &event).await;
    assert_eq!(
        (counts["entered"].clone(), counts["inside"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(counts["by_gate"], json!([{"gate": "North", "entered": 1}]));
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('answer').hidden",
        json!(true),
    )
    .await;
    assert_accessible(&page, "the scanner with the camera on").await;
    screenshot(&page, "scan-camera-phone").await;

    // Typed codes, each answered full screen until dismissed.
    assert_eq!(
        typed(&page, &typed_in, 2).await,
        said("ok", "Valid", "Stalls, Row A, Seat 2 · Premium")
    );
    assert_accessible(&page, "a green answer").await;
    screenshot(&page, "scan-valid-phone").await;
    dismiss(&page).await;
    let again = typed(&page, &at_camera, 3).await;
    assert_eq!(again["result"], "already_redeemed", "{again}");
    assert_eq!(again["title"], "Already in");
    let detail = again["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("since ") && detail.ends_with(" (North) · Stalls, Row A, Seat 1"),
        "{detail}"
    );
    assert_accessible(&page, "a red answer").await;
    screenshot(&page, "scan-already-in-phone").await;
    dismiss(&page).await;
    // A signature changed in its middle: the server and, later, the phone alone refuse it.
    let mut forged = typed_in.clone().into_bytes();
    let middle = typed_in.len() - 40;
    forged[middle] = if forged[middle] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(
        typed(&page, &forged, 4).await,
        said("ticket_invalid", "Not a ticket", "")
    );
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &other_event, 5).await,
        said("wrong_event", "Another event", "")
    );
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &revoked, 6).await,
        said("ticket_revoked", "Revoked", "Stalls, Row A, Seat 3")
    );
    dismiss(&page).await;
    assert_eq!(
        door(&app, &event).await["entered"],
        2,
        "refusals let no one in"
    );

    // The network goes. Erin's ticket, bought before, is checked here alone and queued;
    // Fay's was let in meanwhile by another scanner the phone cannot hear of.
    let erin = secret_of(&app, &buy(&app, &event, "erin", &["stalls-A-4"]).await).await;
    let fay = secret_of(&app, &buy(&app, &event, "fay", &["stalls-B-1"]).await).await;
    link.break_link();
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/checkins"),
            &As::Token(checkin.clone()),
            Some(&json!({"secret": fay, "nonce": "south-1", "gate": "South"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let offline = typed(&page, &erin, 7).await;
    assert_eq!(
        (offline["result"].clone(), offline["detail"].clone()),
        (json!("ok"), json!("Stalls, Row A, Seat 4 · Premium")),
        "{offline}"
    );
    assert_eq!(
        script(
            &page,
            "const l = document.getElementById('link'); return [l.dataset.state, l.dataset.queued, l.textContent]"
        )
        .await,
        json!(["offline", "1", "Offline: checking here · 1 check-in to upload"])
    );
    assert_accessible(&page, "an answer given offline").await;
    screenshot(&page, "scan-offline-phone").await;
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &erin, 8).await["result"],
        "already_redeemed",
        "the phone remembers whom it let in"
    );
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &revoked, 9).await,
        said("ticket_revoked", "Revoked", "Stalls, Row A, Seat 3"),
        "from the revocation list it keeps"
    );
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &forged, 10).await,
        said("ticket_invalid", "Not a ticket", ""),
        "the signature, checked with the entry key alone"
    );
    dismiss(&page).await;
    assert_eq!(
        typed(&page, &other_event, 11).await,
        said("wrong_event", "Another event", "")
    );
    dismiss(&page).await;
    assert_eq!(typed(&page, &fay, 12).await["result"], "ok");
    dismiss(&page).await;
    // A typed code is the server's to check: offline the phone says so.
    let gus = buy(&app, &event, "gus", &["stalls-B-2"]).await;
    let gus = tickets(&app, gus["order_id"].as_str().unwrap(), &As::Admin).await[0]["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let printed = format!("{}-{}-{}", &gus[..4], &gus[4..8], &gus[8..]).to_lowercase();
    let not_checked = typed(&page, &printed, 13).await;
    assert_eq!(
        (
            &not_checked["result"],
            &not_checked["kind"],
            &not_checked["title"]
        ),
        (
            &json!("offline_code"),
            &json!("warn"),
            &json!("Not checked")
        ),
        "{not_checked}"
    );
    dismiss(&page).await;
    assert_eq!(
        door(&app, &event).await["entered"],
        3,
        "nothing reached the server"
    );

    // The network returns: the queue goes up, Fay's second entry as a duplicate.
    link.restore_link();
    wait_for(
        &page,
        LOADS_WITHIN,
        "const l = document.getElementById('link'); return [l.dataset.state, l.dataset.queued, l.textContent]",
        json!(["online", "0", "Online"]),
    )
    .await;
    let counts = door(&app, &event).await;
    assert_eq!(
        [&counts["entered"], &counts["inside"], &counts["duplicates"]],
        [&json!(4), &json!(4), &json!(1)],
        "{counts}"
    );
    let forced: Vec<(String, bool)> = sqlx::query_as(
        "select result, forced from checkin where gate = 'North' and forced order by scanned_at",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        forced,
        vec![("ok".to_owned(), true), ("duplicate".to_owned(), true)]
    );
    // Online again, the code typed from under Gus's QR code lets him in.
    assert_eq!(
        typed(&page, &printed, 14).await,
        said("ok", "Valid", "Stalls, Row B, Seat 2 · Standard")
    );
    dismiss(&page).await;
    assert_eq!(door(&app, &event).await["entered"], 5);
    page.close().await.unwrap();
    std::fs::remove_file(&video).unwrap();

    // In the console, a check-in key finds the scanner beside each event, signed in with
    // the same key; the event's dashboard shows the door.
    let console = browser(&driver).await;
    console.goto(&format!("{}/admin", app.base)).await.unwrap();
    type_into(&console, "input[name=admin_token]", &checkin).await;
    press(&console, "#signin button[type=submit]").await;
    let link = format!("[data-event-id='{event}'] a[data-scan]");
    wait_for(
        &console,
        LOADS_WITHIN,
        &format!("return !!document.querySelector(\"{link}\")"),
        json!(true),
    )
    .await;
    press(&console, &link).await;
    wait_for(
        &console,
        LOADS_WITHIN,
        "return location.pathname + ' ' + document.getElementById('event-name').textContent + ' ' + document.getElementById('signin').hidden",
        json!("/scan Spring Gala true"),
    )
    .await;
    assert_accessible(&console, "the scanner on a desktop").await;
    screenshot(&console, "scan-desktop").await;
    console.goto(&format!("{}/scan", app.base)).await.unwrap();
    wait_for(
        &console,
        LOADS_WITHIN,
        "return document.querySelectorAll('#event-list a').length",
        json!(2),
    )
    .await;
    assert_accessible(&console, "the scanner's choice of event").await;
    screenshot(&console, "scan-events-desktop").await;
    console
        .goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(
        &console,
        LOADS_WITHIN,
        "const n = (k) => { const e = document.querySelector(`[data-door=${k}]`); return e && e.textContent; };
         return [n('entered'), n('tickets'), n('inside'), n('duplicates'),
                 [...document.querySelectorAll('#by-gate li')].map((li) => li.dataset.gate)];",
        json!(["5", "5", "5", "1", ["North", "South"]]),
    )
    .await;
    find(&console, "#door-title").await;
    assert_accessible(&console, "the dashboard with the door").await;
    screenshot(&console, "console-door-desktop").await;
    console.close().await.unwrap();
}

#[test]
fn the_scanners_offline_judgement_passes_nodes_test_runner() {
    crate::helpers::node_tests("entry.test.mjs", 10);
}

/// A key for one event: a `checkin` key made with `events` checks in there and answers 404
/// on any other event; `events` is refused on other roles and on another organization's
/// events. Pairing makes such a key (expiring a day after the event) with its link.
#[tokio::test]
async fn a_key_for_one_event_checks_in_there_alone() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let elsewhere = app.create_event().await;
    let keys = "/v1/organizations/default/keys";
    let body = json!({"name": "Door 1", "role": "checkin", "events": [event]});
    let (status, made) = app.send(Method::POST, keys, &As::Admin, Some(&body)).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["events"], json!([event]));
    let door_key = As::Token(made["key"].as_str().unwrap().to_owned());
    let here = secret_of(&app, &buy(&app, &event, "alice", &["stalls-A-1"]).await).await;
    let there = secret_of(&app, &buy(&app, &elsewhere, "bob", &["stalls-A-1"]).await).await;
    let checkin = |event: &str, secret: &str| {
        let body = json!({"secret": secret, "nonce": uuid::Uuid::new_v4().to_string()});
        let path = format!("/v1/events/{event}/checkins");
        let app = &app;
        let door_key = &door_key;
        async move { app.send(Method::POST, &path, door_key, Some(&body)).await }
    };
    let (status, admitted) = checkin(&event, &here).await;
    assert_eq!(
        (status, &admitted["result"]),
        (StatusCode::CREATED, &json!("ok")),
        "{admitted}"
    );
    let (status, refused) = checkin(&elsewhere, &there).await;
    assert_eq!(
        (status, &refused["code"]),
        (StatusCode::NOT_FOUND, &json!("event_not_found")),
        "{refused}"
    );
    for path in [
        format!("/v1/events/{elsewhere}/entry/keys"),
        format!("/v1/events/{elsewhere}/entry/revoked"),
    ] {
        let (status, _) = app.send(Method::GET, &path, &door_key, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    let (status, _) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/entry/keys"),
            &door_key,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // Only a check-in key is limited to events, and only to its organization's.
    let sales = json!({"name": "Till", "role": "sales", "events": [event]});
    let (status, problem) = app.send(Method::POST, keys, &As::Admin, Some(&sales)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let unknown = json!({"name": "Door 2", "role": "checkin", "events": [uuid::Uuid::new_v4()]});
    let (status, problem) = app
        .send(Method::POST, keys, &As::Admin, Some(&unknown))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");

    // Pairing: such a key, until a day after the event, and the link that signs a phone in.
    let pair = format!("/v1/events/{event}/scanner-pairings");
    let origin = json!({"origin": "https://box.example"});
    let (status, pairing) = app
        .send(Method::POST, &pair, &As::Admin, Some(&origin))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{pairing}");
    let key = pairing["key"].as_str().unwrap();
    assert_eq!(
        pairing["url"],
        format!("https://box.example/scan?event={event}#key={key}")
    );
    assert_eq!(pairing["expires_at"], "2030-03-02T19:30:00Z");
    assert!(pairing["qr_svg"].as_str().unwrap().starts_with("<?xml"));
    let (_, listed) = app.send(Method::GET, keys, &As::Admin, None).await;
    let paired = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == pairing["key_id"])
        .cloned()
        .unwrap();
    assert_eq!(
        (&paired["role"], &paired["events"], &paired["name"]),
        (
            &json!("checkin"),
            &json!([event]),
            &json!("Scanner for Spring Gala")
        )
    );
    let (status, _) = app
        .send(
            Method::POST,
            &pair,
            &As::Admin,
            Some(&json!({"origin": "javascript:alert(1)"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = app
        .send(Method::POST, &pair, &door_key, Some(&origin))
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a check-in key pairs nothing"
    );
}

/// The console's "Pair a scanner" shows a QR code an ordinary reader decodes into the
/// scanner's link; the phone that opens it is signed in for that event without typing a
/// key (which leaves the address at once), and admits a ticket by its typed code.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scanner_paired_from_the_console_admits_a_typed_code() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-A-3"]).await;
    let code = tickets(&app, order["order_id"].as_str().unwrap(), &As::Admin).await[0]["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let driver = driver().await;
    let console = browser(&driver).await;
    crate::helpers::sign_in(&console, &app).await;
    console
        .goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(
        &console,
        LOADS_WITHIN,
        "return !!document.getElementById('pair-scanner')",
        json!(true),
    )
    .await;
    press(&console, "#pair-scanner").await;
    wait_for(
        &console,
        LOADS_WITHIN,
        "const i = document.querySelector('#pairing img'); return !!i && i.complete && i.naturalWidth > 0",
        json!(true),
    )
    .await;
    let url = script(
        &console,
        "return document.querySelector('[data-pairing-url]').textContent",
    )
    .await;
    let url = url.as_str().unwrap().to_owned();
    assert!(
        url.starts_with(&format!("{}/scan?event={event}#key=bxk_", app.base)),
        "{url}"
    );
    script(
        &console,
        "document.getElementById('pairing').scrollIntoView(); return 0",
    )
    .await;
    assert_accessible(&console, "the console with a scanner paired").await;
    let shot = console.screenshot().await.unwrap();
    screenshot(&console, "console-pair-scanner-desktop").await;
    // An ordinary QR reader reads the link off the screen.
    let file = std::env::temp_dir().join(format!("pairing-{}.png", uuid::Uuid::new_v4()));
    std::fs::write(&file, &shot).unwrap();
    let read = std::process::Command::new("zbarimg")
        .args(["--raw", "-q"])
        .arg(&file)
        .output()
        .expect("zbarimg (Debian's zbar-tools) reads QR codes: .ci/run installs it");
    std::fs::remove_file(&file).ok();
    assert_eq!(String::from_utf8_lossy(&read.stdout).trim(), url);
    console.close().await.unwrap();

    // The phone opens the link: signed in for the event, the key gone from the address.
    let phone_page = phone(&driver).await;
    phone_page.goto(&url).await.unwrap();
    wait_for(
        &phone_page,
        LOADS_WITHIN,
        "return !document.getElementById('scanner').hidden && location.hash",
        json!(""),
    )
    .await;
    let printed = format!("{}-{}-{}", &code[..4], &code[4..8], &code[8..]);
    let said = typed(&phone_page, &printed, 1).await;
    assert_eq!(said["result"], "ok", "{said}");
    assert_accessible(&phone_page, "a paired scanner's answer").await;
    screenshot(&phone_page, "scan-paired-typed-code-phone").await;
    assert_eq!(door(&app, &event).await["entered"], 1);
    phone_page.close().await.unwrap();
}

/// A new ticket's QR code (a compact secret: at most 45×45 modules) still reads with an
/// ordinary reader when shown 100 px wide, blurred and washed out on a grey background: at
/// one device pixel per CSS pixel (about two pixels a module) and on a phone's screen
/// (three, blurred more). zbar reads neither once it is also turned a degree or two, so the
/// code stays square here.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tickets_qr_code_reads_from_a_photo_like_screenshot_at_100_px() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-A-1"]).await;
    let ticket = tickets(&app, order["order_id"].as_str().unwrap(), &As::Admin).await[0].clone();
    let secret = ticket["secret"].as_str().unwrap().to_owned();
    let qr = qrcode::QrCode::with_error_correction_level(&secret, qrcode::EcLevel::M).unwrap();
    assert!(qr.width() <= 45, "{} modules", qr.width());
    let svg = app
        .request(
            Method::GET,
            &format!("/v1/tickets/{}/qr.svg", ticket["id"].as_str().unwrap()),
            &app.buyer("alice"),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let driver = driver().await;
    for (name, look) in [
        (
            "desktop",
            "filter:blur(0.35px) contrast(0.8) brightness(1.04)",
        ),
        (
            "phone",
            "filter:blur(0.6px) contrast(0.75) brightness(1.05)",
        ),
    ] {
        let page = if name == "phone" {
            phone(&driver).await
        } else {
            browser(&driver).await
        };
        page.goto("data:text/html,<!doctype html><title>photo</title><body style='margin:0;background:%23cfc9bb'></body>")
            .await
            .unwrap();
        script(
            &page,
            &format!(
                "const img = new Image(100, 100);
                 img.style = 'position:absolute;left:60px;top:50px;{look}';
                 img.src = 'data:image/svg+xml;base64,{}';
                 document.body.append(img);
                 return 0",
                base64_svg(&svg)
            ),
        )
        .await;
        wait_for(
            &page,
            LOADS_WITHIN,
            "const i = document.querySelector('img'); return i.complete && i.naturalWidth > 0 && i.offsetWidth",
            json!(100),
        )
        .await;
        let png = page.screenshot().await.unwrap();
        let kept = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
        std::fs::create_dir_all(&kept).unwrap();
        let file = kept.join(format!("ticket-qr-100px-photo-{name}.png"));
        std::fs::write(&file, &png).unwrap();
        let read = std::process::Command::new("zbarimg")
            .args(["--raw", "-q"])
            .arg(&file)
            .output()
            .expect("zbarimg (Debian's zbar-tools) reads QR codes: .ci/run installs it");
        assert_eq!(
            String::from_utf8_lossy(&read.stdout).trim(),
            secret,
            "{name}"
        );
        page.close().await.unwrap();
    }
}

fn base64_svg(svg: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(svg)
}
