//! The seat-map page in a real headless Chromium (Debian's `chromium` and
//! `chromium-driver`, driven over WebDriver; the helpers are `helpers/browser.rs`). A long
//! file: every test here drives the buyer's page, as a buyer would, from the first look to
//! the sale.
//!
//! Covered: two buyers' pages kept live, conflicts named, hold, countdown, extend,
//! release, expiry and checkout, the keyboard, two instances, and a 20,000-seat map.
//! Screenshots of the key states go to `target/screenshots/`.
//!
//! These tests need `/usr/bin/chromium` and `/usr/bin/chromedriver`; without them they
//! fail and say so (`.ci/run` installs both).

use std::time::{Duration, Instant};

use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{
    assert_accessible, attr, browser, click, click_seat, driver, hold_directly, open, phone, pick,
    screenshot, script, seat, spawn_app, spawn_app_on, spawn_app_with, status, text, visible,
    wait_status, wait_until, As, TestApp, LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_buyers_see_each_others_holds_conflicts_and_sales_live_postgres() {
    two_buyers_see_each_others_holds_conflicts_and_sales_live(Store::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_buyers_see_each_others_holds_conflicts_and_sales_live_redis() {
    two_buyers_see_each_others_holds_conflicts_and_sales_live(Store::Redis).await;
}

async fn two_buyers_see_each_others_holds_conflicts_and_sales_live(store: Store) {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_on(store).await;
    let event = app.create_event().await;
    let driver = driver().await;
    let (alice, bob) = (browser(&driver).await, browser(&driver).await);
    open(&alice, &app, &event).await;
    open(&bob, &app, &event).await;
    assert_eq!(status(&bob, "stalls-B-1").await, "available");
    assert_eq!(status(&bob, "circle-A-1").await, "not_for_sale");
    screenshot(&bob, &format!("01-map-{store:?}")).await;

    // Bob picks B-2 and B-3; alice then holds B-1 and B-2.
    click_seat(&bob, "stalls-B-2").await;
    click_seat(&bob, "stalls-B-3").await;
    click_seat(&alice, "stalls-B-1").await;
    click_seat(&alice, "stalls-B-2").await;
    assert_eq!(attr(&alice, "stalls-B-1", "aria-checked").await, "true");
    click(&alice, "hold").await;
    wait_until(&alice, LOADS_WITHIN, "alice's hold shows", |p| async move {
        visible(&p, "hold-info").await
    })
    .await;
    // Bob's page turns both held without a reload, and says which of his seats just went.
    wait_status(&bob, "stalls-B-1", "held", LIVE_WITHIN).await;
    wait_status(&bob, "stalls-B-2", "held", LIVE_WITHIN).await;
    assert!(text(&bob, "message")
        .await
        .contains("Stalls, Row B, Seat 2 just went"));
    assert_eq!(attr(&bob, "stalls-B-2", "aria-checked").await, "false");
    assert_eq!(attr(&bob, "stalls-B-3", "aria-checked").await, "true");
    screenshot(&alice, &format!("02-alice-holds-{store:?}")).await;
    screenshot(&bob, &format!("03-bob-sees-held-{store:?}")).await;

    // A held seat cannot be picked.
    click_seat(&bob, "stalls-B-1").await;
    assert_eq!(attr(&bob, "stalls-B-1", "aria-checked").await, "false");
    assert!(text(&bob, "message")
        .await
        .contains("Stalls, Row B, Seat 1 is held"));

    // A seat taken where this page could not see it: the hold's conflict names it and
    // keeps the rest of the selection. (The seat is taken by a reservation row written
    // behind the service's back, which only the Postgres store reads; on Redis the page
    // draws the same 409 the same way.)
    if store == Store::Postgres {
        hold_directly(&app, &event, &["stalls-C-1"], chrono::Duration::minutes(5)).await;
        click_seat(&bob, "stalls-C-1").await;
        click(&bob, "hold").await;
        wait_until(
            &bob,
            LOADS_WITHIN,
            "bob hears of the conflict",
            |p| async move {
                text(&p, "message")
                    .await
                    .contains("Stalls, Row C, Seat 1 just went")
            },
        )
        .await;
        assert_eq!(attr(&bob, "stalls-C-1", "aria-checked").await, "false");
        assert_eq!(attr(&bob, "stalls-B-3", "aria-checked").await, "true");
        assert!(!visible(&bob, "hold-info").await, "nothing was held");
        screenshot(&bob, &format!("04-bob-conflict-{store:?}")).await;
    }

    // Alice buys: sold on both pages.
    click(&alice, "buy").await;
    wait_until(
        &alice,
        LOADS_WITHIN,
        "alice's order shows",
        |p| async move { visible(&p, "order").await },
    )
    .await;
    assert!(text(&alice, "order").await.contains("Order confirmed"));
    for page in [&alice, &bob] {
        wait_status(page, "stalls-B-1", "sold", LIVE_WITHIN).await;
        wait_status(page, "stalls-B-2", "sold", LIVE_WITHIN).await;
    }
    screenshot(&alice, &format!("05-alice-bought-{store:?}")).await;
    screenshot(&bob, &format!("06-bob-sees-sold-{store:?}")).await;
    alice.close().await.unwrap();
    bob.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn countdown_extend_release_and_a_hold_that_expires_by_itself() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let (status_code, body) = app
        .post_events(&json!({"venue_id": venue, "name": "Matinee", "starts_at": "2030-03-01T14:00:00Z",
            "hold_ttl_seconds": 4, "max_hold_seconds": 60, "max_seats_per_user": 4,
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 2500, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "stalls"}]}))
        .await;
    assert_eq!(status_code, StatusCode::CREATED, "{body}");
    let event = body["id"].as_str().unwrap().to_owned();
    let driver = driver().await;
    let (alice, bob) = (browser(&driver).await, browser(&driver).await);
    open(&alice, &app, &event).await;
    open(&bob, &app, &event).await;

    click_seat(&alice, "stalls-A-1").await;
    assert!(text(&alice, "total").await.contains("25"));
    click(&alice, "hold").await;
    wait_until(
        &alice,
        LOADS_WITHIN,
        "the countdown shows",
        |p| async move { visible(&p, "hold-info").await },
    )
    .await;
    let countdown = text(&alice, "countdown").await;
    assert!(
        ["0:04", "0:03", "0:02"].contains(&countdown.as_str()),
        "{countdown}"
    );
    wait_status(&bob, "stalls-A-1", "held", LIVE_WITHIN).await;
    screenshot(&alice, "07-countdown").await;

    // Extend moves the expiry on (the countdown back near the TTL); release frees it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    click(&alice, "extend").await;
    wait_until(
        &alice,
        LOADS_WITHIN,
        "the hold is extended",
        |p| async move { text(&p, "message").await.contains("Extended") },
    )
    .await;
    let countdown = text(&alice, "countdown").await;
    assert!(
        ["0:04", "0:03"].contains(&countdown.as_str()),
        "{countdown}"
    );
    click(&alice, "release").await;
    // Bob's page may hear of it before Alice's has its answer.
    for page in [&bob, &alice] {
        wait_status(page, "stalls-A-1", "available", LIVE_WITHIN).await;
    }
    assert!(!visible(&alice, "hold-info").await);

    // Held again and left alone: both pages turn it available at its expiry, with no
    // message from the server.
    click_seat(&alice, "stalls-A-2").await;
    click(&alice, "hold").await;
    wait_status(&bob, "stalls-A-2", "held", LIVE_WITHIN).await;
    let held_at = Instant::now();
    for page in [&bob, &alice] {
        wait_status(page, "stalls-A-2", "available", Duration::from_secs(8)).await;
    }
    assert!(
        held_at.elapsed() >= Duration::from_secs(2),
        "not before its time"
    );
    wait_until(&alice, LIVE_WITHIN, "alice is told", |p| async move {
        text(&p, "message").await.contains("expired")
    })
    .await;
    screenshot(&alice, "08-expired").await;
    alice.close().await.unwrap();
    bob.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seats_are_named_and_chosen_with_the_keyboard() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    let driver = driver().await;
    let page = browser(&driver).await;
    // The event list links to the event's map.
    page.goto(&format!("{}/", app.base)).await.unwrap();
    let link = page
        .wait()
        .at_most(LOADS_WITHIN)
        .for_element(Locator::Css("#event-list a"))
        .await
        .expect("the event is listed");
    assert!(link.text().await.unwrap().contains("Spring Gala"));
    assert_eq!(
        link.attr("href").await.unwrap().as_deref(),
        Some(format!("/?event={event}").as_str())
    );
    link.click().await.unwrap();
    wait_until(
        &page,
        LOADS_WITHIN,
        "the linked map is live",
        |p| async move {
            script(
                &p,
                "return document.getElementById('live').dataset.state === 'live'",
            )
            .await
                == json!(true)
        },
    )
    .await;
    assert_eq!(text(&page, "event-name").await, "Spring Gala");
    assert_eq!(
        attr(&page, "stalls-A-1", "aria-label").await,
        "Stalls, Row A, Seat 1, Premium, €90.00"
    );
    assert_eq!(
        attr(&page, "stalls-B-4", "aria-label").await,
        "Stalls, Row B, Seat 4, Standard, €45.00"
    );
    // Exactly one seat is in the tab order; the arrows move between seats.
    let tabbable = script(
        &page,
        "return document.querySelectorAll('.seat[tabindex=\"0\"]').length",
    )
    .await;
    assert_eq!(tabbable, json!(1));
    let active = |p: Client| async move {
        script(
            &p,
            "return document.activeElement && document.activeElement.dataset.seatId",
        )
        .await
    };
    page.find(Locator::Css(&seat("stalls-A-1")))
        .await
        .unwrap()
        .send_keys(&String::from(char::from(Key::Right)))
        .await
        .unwrap();
    assert_eq!(active(page.clone()).await, json!("stalls-A-2"));
    let focused = page.active_element().await.unwrap();
    focused
        .send_keys(&String::from(char::from(Key::Down)))
        .await
        .unwrap();
    assert_eq!(active(page.clone()).await, json!("stalls-B-2"));
    let focused = page.active_element().await.unwrap();
    focused
        .send_keys(&String::from(char::from(Key::Enter)))
        .await
        .unwrap();
    assert_eq!(attr(&page, "stalls-B-2", "aria-checked").await, "true");
    focused
        .send_keys(&String::from(char::from(Key::Right)))
        .await
        .unwrap();
    let focused = page.active_element().await.unwrap();
    focused.send_keys(" ").await.unwrap();
    assert_eq!(attr(&page, "stalls-B-3", "aria-checked").await, "true");
    assert!(text(&page, "basket")
        .await
        .contains("Stalls, Row B, Seat 3"));
    screenshot(&page, "09-keyboard").await;
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_on_one_instance_sees_a_hold_made_through_another() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let first = spawn_app().await;
    let event = first.create_event().await;
    let url = first.database_url.clone();
    let second = spawn_app_with(move |s| s.stores.database.url = url).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    open(&page, &second, &event).await;
    let (status_code, hold) = first
        .post_holds(&event, &first.buyer("carol"), &["box-L-1"])
        .await;
    assert_eq!(status_code, StatusCode::CREATED, "{hold}");
    wait_status(&page, "box-L-1", "held", LIVE_WITHIN).await;
    // An allocation change sends a fresh snapshot: the page redraws from it, keeping the
    // buyer's selection and what is held.
    click_seat(&page, "stalls-C-4").await;
    first.put_circle_on_sale(&event).await;
    wait_status(&page, "circle-A-1", "available", LIVE_WITHIN).await;
    assert!(attr(&page, "circle-A-1", "aria-label")
        .await
        .contains("Standard"));
    assert_eq!(status(&page, "box-L-1").await, "held");
    assert_eq!(attr(&page, "stalls-C-4", "aria-checked").await, "true");
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_twenty_thousand_seat_map_draws_every_seat() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let rows: Vec<Value> = (0..100)
        .map(|r| json!({"label": format!("R{r}"), "seats": 200}))
        .collect();
    let (code, venue) = app
        .post_venues(
            &json!({"name": "Arena", "sections": [{"id": "floor", "name": "Floor", "rows": rows}]}),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{venue}");
    let (code, body) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Arena night", "starts_at": "2030-05-01T20:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 5000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "floor"}]}))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
    let event = body["id"].as_str().unwrap();
    let driver = driver().await;
    let page = browser(&driver).await;
    // The timings a benchmark reads, asked for with `?timings`.
    page.goto(&format!("{}/?event={event}&timings", app.base))
        .await
        .unwrap();
    wait_until(&page, LOADS_WITHIN, "the map is live", |p| async move {
        script(&p, "return document.getElementById('live').dataset.state === 'live' && document.querySelectorAll('.seat').length > 0").await == json!(true)
    })
    .await;
    let drawn = script(
        &page,
        "return document.querySelectorAll('.seat[data-status=\"available\"]').length",
    )
    .await;
    assert_eq!(drawn, json!(20_000));
    let timings = script(
        &page,
        "return JSON.parse(document.documentElement.dataset.timings)",
    )
    .await;
    eprintln!("20,000-seat map, ms since navigation: {timings}");
    for moment in ["start", "snapshotArrived", "parsed", "mapDrawn"] {
        assert!(timings[moment].is_number(), "{moment} in {timings}");
    }
    // Nothing of the page's own reaches the global scope.
    assert_eq!(
        script(&page, "return typeof window.boxoffice").await,
        json!("undefined")
    );
    // A change applies to its one seat.
    let (_, hold) = app
        .post_holds(event, &app.buyer("dave"), &["floor-R50-100"])
        .await;
    assert!(hold["hold_token"].is_string(), "{hold}");
    wait_status(&page, "floor-R50-100", "held", LIVE_WITHIN).await;
    screenshot(&page, "10-twenty-thousand").await;
    // The layout came compressed; loaded again, the browser revalidates it (a 304 of a few
    // hundred bytes) and the stream brings the statuses, the held seat among them.
    let layout = "return performance.getEntriesByType('resource')
        .filter((r) => r.name.endsWith('/layout'))
        .map((r) => ({transfer: r.transferSize, encoded: r.encodedBodySize, decoded: r.decodedBodySize}))";
    let first = script(&page, layout).await;
    let (encoded, decoded) = (first[0]["encoded"].as_u64(), first[0]["decoded"].as_u64());
    assert!(
        encoded.unwrap() * 4 < decoded.unwrap(),
        "the layout came compressed: {first}"
    );
    open(&page, &app, event).await;
    assert_eq!(status(&page, "floor-R50-100").await, "held");
    assert_eq!(status(&page, "floor-R50-99").await, "available");
    let again = script(&page, layout).await;
    assert_eq!(again[0]["decoded"], first[0]["decoded"], "{again}");
    assert!(
        again[0]["transfer"].as_u64().unwrap() < 2_000,
        "a repeat load revalidates the layout: {again}"
    );
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_quantity_picker_holds_the_best_seats_together() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    let driver = driver().await;
    let (alice, bob) = (browser(&driver).await, browser(&driver).await);
    open(&alice, &app, &event).await;
    open(&bob, &app, &event).await;

    // Alice asks for two standard seats: the front standard row is B, and the pair at its
    // end strands no single seat.
    pick(&alice, "#best-quantity", "2").await;
    pick(&alice, "#best-type", "standard").await;
    click(&alice, "best-hold").await;
    wait_until(
        &alice,
        LIVE_WITHIN,
        "alice holds two seats",
        |p| async move {
            script(
                &p,
                "return document.querySelectorAll('#map .seat.mine').length",
            )
            .await
                == json!(2)
        },
    )
    .await;
    for id in ["stalls-B-1", "stalls-B-2"] {
        assert_eq!(status(&alice, id).await, "held");
        assert!(attr(&alice, id, "class").await.contains("mine"), "{id}");
        wait_status(&bob, id, "held", LIVE_WITHIN).await;
        assert!(!attr(&bob, id, "class").await.contains("mine"), "{id}");
    }
    assert!(text(&alice, "message").await.contains("2 seats together"));
    assert!(text(&alice, "basket")
        .await
        .contains("Stalls, Row B, Seat 1"));
    // No second ask while holding, but the choice stays in sight and says why.
    assert!(visible(&alice, "best").await && visible(&alice, "best-busy").await);
    assert_eq!(
        script(
            &alice,
            "return document.getElementById('best-hold').disabled"
        )
        .await,
        json!(true)
    );
    // A seat clicked while holding says what to do rather than nothing.
    script(
        &alice,
        "document.querySelector('[data-seat-id=\"stalls-C-1\"]').dispatchEvent(new MouseEvent('click', {bubbles: true})); return 0",
    )
    .await;
    assert!(
        text(&alice, "message")
            .await
            .contains("release them to choose others"),
        "{}",
        text(&alice, "message").await
    );
    screenshot(&alice, "11-best-available").await;

    // Bob asks for four of any type: row A, the best row.
    pick(&bob, "#best-quantity", "4").await;
    screenshot(&bob, "12-best-available-picker").await;
    click(&bob, "best-hold").await;
    wait_until(&bob, LIVE_WITHIN, "bob holds four seats", |p| async move {
        script(
            &p,
            "return document.querySelectorAll('#map .seat.mine').length",
        )
        .await
            == json!(4)
    })
    .await;
    for n in 1..=4 {
        let id = format!("stalls-A-{n}");
        assert!(attr(&bob, &id, "class").await.contains("mine"), "{id}");
        wait_status(&alice, &id, "held", LIVE_WITHIN).await;
    }
    let mut held_by_api = crate::helpers::held(&app, &event).await;
    held_by_api.sort();
    assert_eq!(
        held_by_api,
        [
            "stalls-A-1",
            "stalls-A-2",
            "stalls-A-3",
            "stalls-A-4",
            "stalls-B-1",
            "stalls-B-2"
        ]
    );
    alice.close().await.unwrap();
    bob.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_page_is_served_at_the_root_with_its_assets() {
    let app = spawn_app().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/?event=x", "text/html"),
        ("/admin", "text/html"),
        ("/scan", "text/html"),
        ("/assets/page/main.js", "text/javascript"),
        ("/assets/core/hall.js", "text/javascript"),
        ("/assets/admin/main.js", "text/javascript"),
        ("/assets/app.css", "text/css"),
        ("/assets/admin.css", "text/css"),
    ] {
        let response = app
            .request(Method::GET, path, &As::Nobody)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let headers = response.headers();
        assert!(headers["content-type"].to_str().unwrap().starts_with(kind));
        assert!(headers.contains_key("content-security-policy"));
        let text = response.text().await.unwrap();
        assert!(!text.is_empty());
        if kind == "text/html" {
            assert!(
                text.contains(r#"<link rel="icon" href="/favicon.svg""#),
                "{path}"
            );
        }
    }
    // The icon, at the address browsers ask for and at the one the pages name.
    for path in ["/favicon.ico", "/favicon.svg"] {
        let response = app
            .request(Method::GET, path, &As::Nobody)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(response.headers()["content-type"], "image/svg+xml");
        assert!(response.text().await.unwrap().starts_with("<svg"));
    }
    // Only the web's own files: a path that names none is a 404 problem.
    for path in [
        "/assets/nothing.js",
        "/assets/../Cargo.toml",
        "/assets/core",
    ] {
        let response = app
            .request(Method::GET, path, &As::Nobody)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
    }
}

/// A buyer's waiting-room call made outside the page: joins `who` to the line and polls
/// until admitted (or, with `wait` false, answers the ticket at once); the ticket, and the
/// pass if admitted.
async fn in_line(app: &TestApp, event: &str, who: &As, wait: bool) -> (String, Option<String>) {
    let (status, joined) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/queue"),
            who,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    let ticket = joined["ticket"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + LOADS_WITHIN;
    loop {
        let path = format!("/v1/events/{event}/queue/{ticket}");
        let (_, standing) = app.send(Method::GET, &path, who, None).await;
        if standing["admitted"] == true {
            return (ticket, Some(standing["pass"].as_str().unwrap().to_owned()));
        }
        if !wait {
            return (ticket, None);
        }
        assert!(Instant::now() < deadline, "never admitted: {standing}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Holds `seat` as `who` showing `pass`; answers the hold token.
async fn hold_with_pass(app: &TestApp, event: &str, who: &As, pass: &str, seat: &str) -> String {
    let response = app
        .request(Method::POST, &format!("/v1/events/{event}/holds"), who)
        .header("Boxoffice-Pass", pass)
        .json(&json!({"seats": [seat]}))
        .send()
        .await
        .unwrap();
    let (status, hold) = crate::helpers::read(response).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    hold["hold_token"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_waits_in_the_line_and_reaches_the_map_when_admitted() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    // One admission a minute, open for a minute: one buyer now, the next a minute later,
    // unless someone is done sooner.
    spec["queue"] = json!({"enabled": true, "opens_at": chrono::Utc::now() - chrono::Duration::minutes(1),
        "admit_per_minute": 1, "session_seconds": 300});
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    let (bob, carol) = (app.buyer("bob"), app.buyer("carol"));
    let bob_pass = in_line(&app, &event, &bob, true).await.1.unwrap();
    let (carol_ticket, _) = in_line(&app, &event, &carol, false).await;

    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{}/?event={event}", app.base))
        .await
        .unwrap();
    wait_until(
        &page,
        LOADS_WITHIN,
        "the page waits second in line",
        |p| async move {
            visible(&p, "waiting").await
                && text(&p, "waiting-position").await == "You are number 2 in line"
        },
    )
    .await;
    assert!(!visible(&page, "event").await, "no map while waiting");
    assert_eq!(
        text(&page, "waiting-estimate").await,
        "Estimated wait: about a minute"
    );
    screenshot(&page, "queue-01-waiting").await;
    assert_accessible(&page, "the waiting room").await;

    // Bob buys: his slot goes to Carol, and the page moves up to next in line.
    let token = hold_with_pass(&app, &event, &bob, &bob_pass, "stalls-B-1").await;
    assert_eq!(
        app.post_orders(&event, &bob, &token).await.0,
        StatusCode::CREATED
    );
    let carol_pass = loop {
        let path = format!("/v1/events/{event}/queue/{carol_ticket}");
        let (_, standing) = app.send(Method::GET, &path, &carol, None).await;
        if standing["admitted"] == true {
            break standing["pass"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    wait_until(&page, LOADS_WITHIN, "the page is next", |p| async move {
        text(&p, "waiting-position").await == "You are next in line"
    })
    .await;
    screenshot(&page, "queue-02-next").await;

    // Carol holds a seat and lets it go again: done, her slot is the page's, and the page
    // shows the map by itself.
    let token = hold_with_pass(&app, &event, &carol, &carol_pass, "stalls-B-2").await;
    let (status, _) = app
        .hold_call(Method::DELETE, &event, &token, "", &carol)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    wait_until(&page, LOADS_WITHIN, "the map is live", |p| async move {
        script(&p, "return document.getElementById('live').dataset.state === 'live' && document.querySelectorAll('.seat').length > 0").await == json!(true)
    })
    .await;
    assert!(!visible(&page, "waiting").await);
    assert!(
        visible(&page, "pass-info").await,
        "the page shows the turn's time"
    );
    wait_status(&page, "stalls-B-1", "sold", LIVE_WITHIN).await;

    // The page's holds carry its pass.
    click_seat(&page, "stalls-C-1").await;
    click(&page, "hold").await;
    wait_until(
        &page,
        LOADS_WITHIN,
        "the page's hold shows",
        |p| async move { visible(&p, "hold-info").await },
    )
    .await;
    assert_eq!(status_of(&app, &event, "stalls-C-1").await, "held");
    screenshot(&page, "queue-03-admitted-and-holding").await;
    page.close().await.unwrap();
}

async fn status_of(app: &TestApp, event: &str, seat: &str) -> String {
    app.seat_statuses(event).await[seat].clone()
}

/// Riverside Hall imported from its pretix plan, on sale but for stalls row H.
async fn riverside_event(app: &TestApp) -> String {
    let plan = include_str!("../../demo/riverside-hall.pretix.json");
    let response = app
        .request(Method::POST, "/v1/venues/import?format=pretix", &As::Admin)
        .header("content-type", "application/json")
        .body(plan)
        .send()
        .await
        .unwrap();
    let (code, venue) = crate::helpers::read(response).await;
    assert_eq!(code, StatusCode::CREATED, "{venue}");
    let (code, event) = app
        .post_events(&json!({"venue_id": venue["id"], "name": "Hall night", "starts_at": "2030-05-01T20:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                             {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "stalls", "rows": ["D", "E", "F", "G", "I", "J"]},
                            {"ticket_type": "premium", "category": "Front stalls"},
                            {"ticket_type": "premium", "section": "boxes"},
                            {"ticket_type": "standard", "section": "balcony"}]}))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{event}");
    event["id"].as_str().unwrap().to_owned()
}

/// How many section titles overlap a seat or another title, as drawn.
const OVERLAPS: &str = "
    const boxes = (sel) => [...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect());
    const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const titles = boxes('.section-label'), seats = boxes('#map .seat');
    let n = 0;
    titles.forEach((t, i) => {
      n += seats.filter((s) => hit(t, s)).length;
      n += titles.slice(i + 1).filter((o) => hit(t, o)).length;
    });
    return n;";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_hall_is_drawn_as_it_is_on_a_desktop_and_on_a_phone() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = riverside_event(&app).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{}/", app.base)).await.unwrap();
    wait_until(&page, LOADS_WITHIN, "the event list", |p| async move {
        script(
            &p,
            "return document.querySelectorAll('#event-list a').length",
        )
        .await
            == json!(1)
    })
    .await;
    assert_accessible(&page, "the event list").await;
    screenshot(&page, "19-event-list").await;
    open(&page, &app, &event).await;
    let counts = script(
        &page,
        "const n = (sel) => document.querySelectorAll(sel).length;
         return [n('#map .seat'), n('[data-shape-kind=stage]'), n('.row-label'), n('.section-label'), n('.seat-mark')];",
    )
    .await;
    // 310 seats; the stage; both ends of 16 rows; stalls, balcony and each box titled; 3
    // wheelchair spaces, 3 companion seats, 4 restricted views marked.
    assert_eq!(counts, json!([310, 1, 32, 4, 10]));
    assert_eq!(script(&page, OVERLAPS).await, json!(0), "titles overlap");
    assert!(attr(&page, "stalls-J-1", "aria-label")
        .await
        .starts_with("Stalls, Row J, Seat 1, wheelchair space, Standard"));
    assert!(attr(&page, "stalls-J-2", "aria-label")
        .await
        .contains("companion seat"));
    assert_accessible(&page, "the hall's map on a desktop").await;
    screenshot(&page, "20-hall-desktop").await;
    page.close().await.unwrap();

    let page = phone(&driver).await;
    open(&page, &app, &event).await;
    let fit = script(
        &page,
        "const map = document.getElementById('map').getBoundingClientRect();
         const seats = [...document.querySelectorAll('#map .seat')].map((e) => e.getBoundingClientRect());
         const inside = seats.every((s) => s.left >= map.left - 1 && s.right <= map.right + 1 && s.top >= map.top - 1 && s.bottom <= map.bottom + 1);
         return {inside, width: innerWidth, mapRight: map.right, mapBottom: map.bottom, seat: seats[0].width};",
    )
    .await;
    assert_eq!(fit["width"], 390, "{fit}");
    assert_eq!(
        fit["inside"], true,
        "the first view shows the whole hall: {fit}"
    );
    assert!(fit["mapRight"].as_f64().unwrap() <= 390.0, "{fit}");
    assert!(fit["mapBottom"].as_f64().unwrap() <= 844.0, "{fit}");
    assert_eq!(script(&page, OVERLAPS).await, json!(0), "titles overlap");
    assert_accessible(&page, "the hall's map on a phone").await;
    screenshot(&page, "21-hall-phone").await;
    // One zoom and a seat is big enough for a finger.
    click(&page, "zoom-in").await;
    let seat = "return document.querySelector('[data-seat-id=\"stalls-E-8\"]').getBoundingClientRect().width";
    let zoomed = script(&page, seat).await.as_f64().unwrap();
    assert!(zoomed >= 24.0, "a seat is {zoomed} px wide after one zoom");
    screenshot(&page, "22-hall-phone-zoomed").await;
    // Two fingers spreading zoom in further; a finger on tiny seats zooms before it picks.
    let pinched = script(
        &page,
        "const map = document.getElementById('map'), r = map.getBoundingClientRect();
         const at = (id, x) => ({pointerId: id, pointerType: 'touch', clientX: r.left + x, clientY: r.top + r.height / 2, bubbles: true});
         const before = map.viewBox.baseVal.width;
         map.dispatchEvent(new PointerEvent('pointerdown', at(1, 150)));
         map.dispatchEvent(new PointerEvent('pointerdown', at(2, 200)));
         map.dispatchEvent(new PointerEvent('pointermove', at(2, 250)));
         map.dispatchEvent(new PointerEvent('pointerup', at(2, 250)));
         map.dispatchEvent(new PointerEvent('pointerup', at(1, 150)));
         return [before, map.viewBox.baseVal.width];",
    )
    .await;
    let (before, after) = (pinched[0].as_f64().unwrap(), pinched[1].as_f64().unwrap());
    assert!(
        (after - before / 2.0).abs() < 0.01 * before,
        "a spread of 50 to 100 px halves the view: {pinched}"
    );
    click(&page, "zoom-fit").await;
    let tapped = script(
        &page,
        "const seat = document.querySelector('[data-seat-id=\"stalls-E-8\"]'), r = seat.getBoundingClientRect();
         const at = {pointerId: 3, pointerType: 'touch', clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true};
         seat.dispatchEvent(new PointerEvent('pointerdown', at));
         seat.dispatchEvent(new PointerEvent('pointerup', at));
         seat.dispatchEvent(new MouseEvent('click', at));
         return [seat.getAttribute('aria-checked'), seat.getBoundingClientRect().width];",
    )
    .await;
    assert_eq!(tapped[0], "false", "the tap zoomed instead: {tapped}");
    assert!(tapped[1].as_f64().unwrap() >= 24.0, "{tapped}");
    page.close().await.unwrap();
}
