//! (A long file: three browser scenarios, the script's caching and declarations, and the
//! example platform run as a process, sharing one host page, `helpers::embed`.)
//! `<boxoffice-seat-map>` (`GET /embed.js`) on a platform's page served from another
//! origin (another port), in headless Chromium: ready, selection, a refused hold, a hold,
//! another buyer's hold arriving live inside the element, a reload that brings the hold
//! back, checkout; the host's colours reach the seats; a page on an origin not allowed
//! cannot call the API. With `hold-on-select`, in German: each click holds into one hold
//! that grows and shrinks, the picker holds the best seats, zoom and arrow keys work.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::embed::{
    call, click_seat, count_of, host_page, listener, platform, seat_status, shop_with,
};
use crate::helpers::{
    assert_accessible, browser, driver, phone, screenshot, script, wait_for, LIVE_WITHIN,
    LOADS_WITHIN, ONE_AT_A_TIME,
};
use crate::helpers::{held, sell_directly, spawn_app_with, As, TestApp};

/// A server that lets the shop's origin call it, an event, and the shop's page with the
/// element (`attributes` added) for the user `shopper`: the server, the event, the shop.
async fn shop_with_the_element(attributes: &str) -> (TestApp, String, String) {
    shop_with(attributes, |_| {}).await
}

const SEEN: &str = "return window.seen.map((e) => e.type)";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_platforms_page_on_another_origin_holds_follows_live_and_checks_out() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event, shop) = shop_with_the_element(r#"locale="en" max-seats="4""#).await;
    let (other_listener, other) = listener().await;
    platform(
        other_listener,
        format!(
            "<!doctype html><html lang=\"en\"><head><title>Elsewhere</title></head><body><main><h1>Elsewhere</h1></main>
             <script>window.reach = fetch('{}/v1/events').then(() => 'reached', () => 'blocked');</script></body></html>",
            app.base
        ),
    )
    .await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return window.seen.some((e) => e.type === 'ready')",
        json!(true),
    )
    .await;
    let fill = "return getComputedStyle(document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('[data-seat-id=\"stalls-B-3\"]')).fill";
    assert_eq!(
        script(&page, fill).await,
        "rgb(0, 170, 85)",
        "the host's colour"
    );
    assert_accessible(&page, "a platform's page with the element").await;

    // A seat sold where the element cannot see it: the hold is refused, as an event.
    sell_directly(&app, &event, &["stalls-C-2"]).await;
    call(&page, "map.select(['stalls-C-2'])").await;
    assert_eq!(call(&page, "map.hold()").await, Value::Null);
    let failed = script(
        &page,
        "return window.seen.find((e) => e.type === 'holdfailed').detail.code",
    )
    .await;
    assert_eq!(failed, "seat_unavailable");

    // A click chooses, select() chooses more, hold() holds them.
    call(&page, "map.clearSelection()").await;
    script(
        &page,
        "document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('[data-seat-id=\"stalls-B-1\"]')
           .dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true})); return 0",
    )
    .await;
    let changed = script(&page, "return window.seen.filter((e) => e.type === 'selectionchange').pop().detail.seats.map((s) => s.id)").await;
    assert_eq!(changed, json!(["stalls-B-1"]));
    call(&page, "map.select(['stalls-B-1', 'stalls-B-2'])").await;
    let hold = call(&page, "map.hold()").await;
    assert_eq!(hold["seats"].as_array().unwrap().len(), 2, "{hold}");
    assert_eq!(
        crate::helpers::held(&app, &event).await,
        ["stalls-B-1", "stalls-B-2"]
    );
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-B-1"),
        json!("held"),
    )
    .await;

    // Another buyer's hold arrives inside the element.
    let (status, _) = app
        .post_holds(&event, &app.buyer("rival"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-C-1"),
        json!("held"),
    )
    .await;
    screenshot(&page, "embed-01-host-desktop").await;

    // A reload while the hold lives brings it back as the selection.
    page.refresh().await.unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('boxoffice-seat-map').selection.map((s) => s.id)",
        json!(["stalls-B-1", "stalls-B-2"]),
    )
    .await;

    // Checkout.
    let order = call(&page, "map.checkout()").await;
    assert_eq!(order["status"], "paid", "{order}");
    assert!(script(&page, SEEN)
        .await
        .as_array()
        .unwrap()
        .contains(&json!("order")));
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-B-2"),
        json!("sold"),
    )
    .await;
    let (status, read) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{}", order["order_id"].as_str().unwrap()),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["user_id"], "shopper");

    // A page on an origin not named cannot call the API.
    page.goto(&format!("{other}/")).await.unwrap();
    let reach = page
        .execute_async(
            "const done = arguments[arguments.length - 1]; window.reach.then(done);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(reach, "blocked");
    page.close().await.unwrap();

    let phone_page = phone(&driver).await;
    phone_page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(
        &phone_page,
        LOADS_WITHIN,
        "return window.seen.some((e) => e.type === 'ready')",
        json!(true),
    )
    .await;
    screenshot(&phone_page, "embed-02-host-phone").await;
    phone_page.close().await.unwrap();
}

#[tokio::test]
async fn embed_js_is_cached_by_etag_and_its_declarations_name_what_it_does() {
    let app = crate::helpers::spawn_app().await;
    let get = |path: &'static str, etag: Option<String>| {
        let mut request = app.client.get(format!("{}{path}", app.base));
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        request.send()
    };
    let first = get("/embed.js", None).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let headers = first.headers().clone();
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert_eq!(headers["cache-control"], "public, max-age=300");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let script = first.text().await.unwrap();
    assert!(script.contains("customElements.define(\"boxoffice-seat-map\""));
    let again = get("/embed.js", Some(etag.clone())).await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    let types = get("/embed.d.ts", None).await.unwrap();
    assert_eq!(types.status(), StatusCode::OK);
    let types = types.text().await.unwrap();
    for name in [
        "select(",
        "clearSelection(",
        "hold(",
        "release(",
        "checkout(",
        "selection",
        "ready",
        "selectionchange",
        "holdfailed",
        "expired",
        "order",
        "--bo-available",
        "--bo-held",
        "--bo-sold",
        "--bo-selected",
        "--bo-font",
        "max-seats",
        "ticket-types",
        "locale",
        "hold-on-select",
        "holdBest",
        "token",
        "book(",
        "bookingfailed",
    ] {
        assert!(script.contains(name), "embed.js lacks {name}");
        assert!(types.contains(name), "embed.d.ts lacks {name}");
    }
}

/// The example platform (`examples/embed/shop.py`), run as a process.
struct Shop(std::process::Child);

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_example_shop_takes_a_buyer_from_sign_in_to_order() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let shop = format!("http://127.0.0.1:{port}");
    let origin = shop.clone();
    let app = spawn_app_with(move |s| {
        s.server.allowed_origins = boxoffice_server::config::parse_origins(&[origin]).unwrap()
    })
    .await;
    let event = app.create_event().await;
    let script_path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/embed/shop.py");
    let _shop = Shop(
        std::process::Command::new("python3")
            .arg(script_path)
            .args(["--boxoffice", &app.base, "--secret", &app.jwt_secret])
            .args(["--event", &event, "--port", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("python3 runs the example shop"),
    );
    let deadline = std::time::Instant::now() + LOADS_WITHIN;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the example shop did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let driver = driver().await;
    let ready = "const map = document.querySelector('boxoffice-seat-map');
        return !!map && map.shadowRoot.querySelectorAll('[data-seat-id]').length";
    for (page, name) in [
        (browser(&driver).await, "desktop"),
        (phone(&driver).await, "phone"),
    ] {
        page.goto(&format!("{shop}/")).await.unwrap();
        assert_accessible(&page, "the example shop's sign-in").await;
        let input = page
            .find(fantoccini::Locator::Css("input[name=name]"))
            .await
            .unwrap();
        input.send_keys(&format!("ada-{name}")).await.unwrap();
        page.find(fantoccini::Locator::Css("#sign-in button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for(&page, LOADS_WITHIN, ready, json!(17)).await;
        // The element is all the script adds to the shop's page: no global of its own
        // (`ret_nodes` is chromedriver's, left by its own script runs).
        let added = script(
            &page,
            "const blank = document.createElement('iframe');
             document.body.append(blank);
             const before = new Set(Object.getOwnPropertyNames(blank.contentWindow));
             blank.remove();
             return Object.getOwnPropertyNames(window).filter((n) => !before.has(n) && n !== 'ret_nodes');",
        )
        .await;
        assert_eq!(added, json!([]), "globals the shop's page gained");
        assert_eq!(
            script(
                &page,
                "return customElements.get('boxoffice-seat-map') !== undefined"
            )
            .await,
            json!(true)
        );
        let seat = if name == "desktop" {
            "stalls-B-2"
        } else {
            "stalls-B-3"
        };
        script(
            &page,
            &format!(
                "document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('[data-seat-id=\"{seat}\"]')
                   .dispatchEvent(new MouseEvent('click', {{bubbles: true, composed: true}})); return 0"
            ),
        )
        .await;
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.getElementById('hold').disabled",
            json!(false),
        )
        .await;
        page.find(fantoccini::Locator::Id("hold"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.getElementById('buy').hidden",
            json!(false),
        )
        .await;
        assert_accessible(&page, "the example shop with a hold").await;
        screenshot(&page, &format!("embed-03-shop-held-{name}")).await;
        page.find(fantoccini::Locator::Id("buy"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.getElementById('message').textContent.startsWith('Paid. Order')",
            json!(true),
        )
        .await;
        screenshot(&page, &format!("embed-04-shop-paid-{name}")).await;
        let (_, orders) = app
            .send(
                Method::GET,
                &format!("/v1/events/{event}/orders?q=shop-ada-{name}"),
                &As::Admin,
                None,
            )
            .await;
        assert_eq!(orders["orders"][0]["seats"][0]["id"], seat, "{orders}");
        page.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hold_on_select_builds_one_hold_click_by_click_and_the_picker_holds_the_best() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event, shop) =
        shop_with_the_element(r#"locale="de" max-seats="4" hold-on-select"#).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    let root = "document.querySelector('boxoffice-seat-map').shadowRoot";
    let texts = script(
        &page,
        &format!("const r = {root}; return [r.querySelector('.status').textContent, r.querySelector('[name=go]').textContent, r.querySelector('[data-zoom=in]').getAttribute('aria-label')]"),
    )
    .await;
    assert_eq!(
        texts,
        json!(["Keine Plätze gewählt", "Beste Plätze", "Vergrößern"])
    );

    // Each click holds its seat at once, into one hold.
    script(&page, &click_seat("stalls-B-1")).await;
    wait_for(&page, LIVE_WITHIN, &count_of("hold"), json!(1)).await;
    script(&page, &click_seat("stalls-B-2")).await;
    wait_for(&page, LIVE_WITHIN, &count_of("hold"), json!(2)).await;
    assert_eq!(held(&app, &event).await, ["stalls-B-1", "stalls-B-2"]);
    let tokens = script(&page, "return [...new Set(window.seen.filter((e) => e.type === 'hold').map((e) => e.detail.hold_token))].length").await;
    assert_eq!(tokens, 1, "one hold that grew");
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-B-2"),
        json!("held"),
    )
    .await;
    assert_accessible(&page, "the element holding on select, in German").await;
    screenshot(&page, "embed-05-hold-on-select-desktop").await;

    // A seat gone where the element cannot see it: refused as an event, not chosen.
    sell_directly(&app, &event, &["stalls-C-2"]).await;
    script(&page, &click_seat("stalls-C-2")).await;
    wait_for(&page, LIVE_WITHIN, &count_of("holdfailed"), json!(1)).await;
    let failed = script(
        &page,
        "return window.seen.find((e) => e.type === 'holdfailed').detail.code",
    )
    .await;
    assert_eq!(failed, "seat_unavailable");
    let selection =
        "return document.querySelector('boxoffice-seat-map').selection.map((s) => s.id)";
    assert_eq!(
        script(&page, selection).await,
        json!(["stalls-B-1", "stalls-B-2"])
    );

    // Each unclick frees its seat; the last one ends the hold.
    script(&page, &click_seat("stalls-B-1")).await;
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-B-1"),
        json!("available"),
    )
    .await;
    assert_eq!(held(&app, &event).await, ["stalls-B-2"]);
    script(&page, &click_seat("stalls-B-2")).await;
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-B-2"),
        json!("available"),
    )
    .await;
    assert_eq!(held(&app, &event).await, Vec::<String>::new());
    assert_eq!(script(&page, selection).await, json!([]));

    // The picker holds the best three standard seats side by side; a click adds a fourth.
    // (Every change of the hold is a `hold` event, the shrinking ones too.)
    let holds = script(&page, &count_of("hold")).await.as_u64().unwrap();
    script(
        &page,
        &format!("const f = {root}.querySelector('form'); f.quantity.value = '3'; f.type.value = 'standard';
                  f.querySelector('[name=go]').click(); return 0"),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, &count_of("hold"), json!(holds + 1)).await;
    let best = script(
        &page,
        "return window.seen.filter((e) => e.type === 'hold').pop().detail",
    )
    .await;
    assert_eq!(best["seats"].as_array().unwrap().len(), 3, "{best}");
    assert!(best["seats"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["ticket_type"] == "standard"));
    let picked: Vec<String> = best["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(held(&app, &event).await, picked);
    let extra = if picked.contains(&"stalls-C-4".to_owned()) {
        "stalls-B-4"
    } else {
        "stalls-C-4"
    };
    script(&page, &click_seat(extra)).await;
    wait_for(&page, LIVE_WITHIN, &count_of("hold"), json!(holds + 2)).await;
    assert_eq!(held(&app, &event).await.len(), 4);

    // A reload while the hold lives brings back all four as the selection.
    page.refresh().await.unwrap();
    wait_for(&page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    let mut four = picked.clone();
    four.push(extra.to_owned());
    four.sort();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('boxoffice-seat-map').selection.map((s) => s.id).sort()",
        json!(four),
    )
    .await;

    // Zoom and arrow keys inside the element.
    let width = format!("return {root}.querySelector('[data-seat-id=\"stalls-A-1\"]').getBoundingClientRect().width");
    let before = script(&page, &width).await.as_f64().unwrap();
    script(
        &page,
        &format!("{root}.querySelector('[data-zoom=in]').click(); return 0"),
    )
    .await;
    let after = script(&page, &width).await.as_f64().unwrap();
    assert!(after > before * 1.2, "zoomed from {before} to {after} px");
    let moved = script(
        &page,
        &format!("const r = {root}; const a = r.querySelector('[data-seat-id=\"stalls-A-1\"]'); a.focus();
                  a.dispatchEvent(new KeyboardEvent('keydown', {{key: 'ArrowRight', bubbles: true}}));
                  r.activeElement.dispatchEvent(new KeyboardEvent('keydown', {{key: 'ArrowDown', bubbles: true}}));
                  return r.activeElement.dataset.seatId"),
    )
    .await;
    assert_eq!(moved, "stalls-B-2");
    page.close().await.unwrap();

    let phone_page = phone(&driver).await;
    phone_page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&phone_page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    assert_accessible(&phone_page, "the element holding on select, on a phone").await;
    screenshot(&phone_page, "embed-06-hold-on-select-phone").await;
    phone_page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_channels_buyer_sees_and_holds_the_channels_seats_in_the_element() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (partner_listener, partner) = listener().await;
    let (public_listener, public) = listener().await;
    let origins = [partner.clone(), public.clone()];
    let app = spawn_app_with(move |s| {
        s.server.allowed_origins = boxoffice_server::config::parse_origins(&origins).unwrap()
    })
    .await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["channels"] = json!([{"code": "partner-a", "name": "Partner A"}]);
    spec["allocations"].as_array_mut().unwrap().push(
        json!({"ticket_type": "premium", "seats": ["box-L-1", "box-L-2"], "channel": "partner-a"}),
    );
    let (_, created) = app.post_events(&spec).await;
    let event = created["id"].as_str().unwrap().to_owned();
    let channel_token = boxoffice_client::mint_channel_token(
        &app.jwt_secret,
        "partner-buyer",
        Some("partner-a"),
        chrono::Utc::now() + chrono::Duration::hours(1),
    );
    platform(
        partner_listener,
        host_page(&app.base, &event, &channel_token, ""),
    )
    .await;
    let public_token = app.user_token("public-buyer");
    platform(
        public_listener,
        host_page(&app.base, &event, &public_token, ""),
    )
    .await;

    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{public}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    assert_eq!(script(&page, &seat_status("box-L-1")).await, "not_for_sale");
    page.close().await.unwrap();

    let page = browser(&driver).await;
    page.goto(&format!("{partner}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    assert_eq!(script(&page, &seat_status("box-L-1")).await, "available");
    // The partner's buyer holds a box seat; a stall someone else holds shows live too.
    script(&page, &click_seat("box-L-1")).await;
    let hold = call(&page, "map.hold()").await;
    assert_eq!(hold["seats"][0]["id"], "box-L-1", "{hold}");
    let (status, _) = app
        .post_holds(&event, &app.buyer("someone"), &["stalls-C-2"])
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-C-2"),
        json!("held"),
    )
    .await;
    assert_accessible(&page, "the element of a channel's buyer").await;
    screenshot(&page, "embed-07-channel-buyer").await;
    page.close().await.unwrap();
}
