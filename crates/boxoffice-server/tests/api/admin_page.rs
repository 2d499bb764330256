//! The organizer console (`/admin`) in a real headless Chromium, with the buyer page's
//! WebDriver helpers: signing in, importing a venue with its preview, creating an event
//! through the form, the live dashboard, the map in organizer mode and the orders, sales
//! channels and the waiting list. Each screen is checked with axe-core and saved to
//! `target/screenshots/console-*.png`. (A long file: three scenarios sharing the
//! helpers at the top.)

use std::time::Duration;

use fantoccini::key::Key;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::pages::pick_seats;
use crate::helpers::{
    assert_accessible, browser, buy, driver, find, phone, press, screenshot, script, sign_in,
    spawn_app, type_into, wait_for, wait_until, As, LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_organizer_signs_in_imports_a_venue_and_creates_an_event() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let driver = driver().await;
    let page = browser(&driver).await;

    page.goto(&format!("{}/admin", app.base)).await.unwrap();
    type_into(&page, "input[name=admin_token]", "not-the-token").await;
    press(&page, "#signin button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('signin-error').textContent",
        json!("That key is not valid here: unknown, revoked or expired."),
    )
    .await;
    assert_eq!(
        script(
            &page,
            "return getComputedStyle(document.getElementById('nav')).display"
        )
        .await,
        "none",
        "no console links before signing in"
    );
    assert_accessible(&page, "the console's sign-in").await;
    screenshot(&page, "console-01-sign-in").await;
    sign_in(&page, &app).await;
    let kept = script(
        &page,
        "return [sessionStorage.length, localStorage.length, location.href.includes(arguments[0])]",
    )
    .await;
    assert_eq!(
        kept,
        json!([2, 0, false]),
        "the token (and the organization shown) is kept for the session only"
    );
    assert_accessible(&page, "the console's home").await;
    screenshot(&page, "console-02-home").await;

    // Importing a venue: previewed from a dry run, saved only when asked.
    press(&page, "a[href='/admin/venues/new']").await;
    let plan = std::env::temp_dir().join(format!("riverside-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&plan, include_str!("../../demo/riverside-hall.pretix.json")).unwrap();
    find(&page, "input[type=file][name=venue_file]")
        .await
        .send_keys(plan.to_str().unwrap())
        .await
        .unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('#map [data-seat-id]').length",
        json!(310),
    )
    .await;
    let summary = script(
        &page,
        "return document.getElementById('preview-summary').textContent",
    )
    .await;
    assert_eq!(summary, "Riverside Hall: 310 seats in 3 sections");
    assert_eq!(app.count("venue").await, 0, "a preview saves nothing");
    assert_accessible(&page, "the venue import's preview").await;
    screenshot(&page, "console-03-import-preview").await;
    press(&page, "button[data-action=save-venue]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return location.pathname.startsWith('/admin/venues/') && document.querySelector('h1').textContent",
        json!("Riverside Hall"),
    )
    .await;
    assert_eq!(app.count("venue").await, 1);
    assert_eq!(
        script(
            &page,
            "return document.querySelectorAll('#map [data-seat-id]').length"
        )
        .await,
        json!(310)
    );
    screenshot(&page, "console-04-venue").await;

    // An event through the form: two ticket types, every seat on sale as the first.
    press(&page, "a[href^='/admin/events/new']").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !!document.getElementById('event-form')",
        json!(true),
    )
    .await;
    type_into(&page, "#event-form input[name=name]", "Gala night").await;
    press(&page, "#add-type").await;
    let second = |name: &str| format!("#types .row:nth-of-type(2) input[name={name}]");
    type_into(&page, &second("type_code"), "premium").await;
    type_into(&page, &second("type_name"), "Premium").await;
    type_into(&page, &second("type_price"), "90").await;
    press(&page, "#event-form input[name=queue]").await;
    type_into(&page, "#event-form input[name=admit_per_minute]", "120").await;
    assert_accessible(&page, "the new event's form").await;
    screenshot(&page, "console-05-new-event").await;
    press(&page, "#event-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return location.pathname.startsWith('/admin/events/') && document.querySelector('h1').textContent",
        json!("Gala night"),
    )
    .await;
    let event = script(&page, "return location.pathname.split('/').pop()").await;
    let event = event.as_str().unwrap();
    let (status, created) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(status, StatusCode::OK);
    let types: Vec<_> = created["ticket_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["code"].clone(), t["price_cents"].clone()))
        .collect();
    assert_eq!(
        types,
        [
            (json!("standard"), json!(4500)),
            (json!("premium"), json!(9000))
        ]
    );
    assert_eq!(created["counts"]["available"], 310);
    assert_eq!(
        (
            &created["queue"]["enabled"],
            &created["queue"]["admit_per_minute"]
        ),
        (&json!(true), &json!(120))
    );
    // Its dashboard shows the waiting room's line.
    wait_for(
        &page,
        LOADS_WITHIN,
        "return [document.getElementById('queue-counter').hidden, document.getElementById('queue-waiting').textContent]",
        json!([false, "0"]),
    )
    .await;
    // The rate in force, and why it is slower when it is.
    wait_for(
        &page,
        LOADS_WITHIN,
        "const r = document.getElementById('queue-rate'); return r && r.textContent",
        json!("admitting 120 a minute"),
    )
    .await;
    assert_accessible(&page, "a new event's dashboard").await;
    script(&page, "window.scrollTo(0, 0); return true").await;
    screenshot(&page, "console-05b-queue-line").await;
    let phone_page = phone(&driver).await;
    sign_in(&phone_page, &app).await;
    phone_page
        .goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(
        &phone_page,
        LOADS_WITHIN,
        "const r = document.getElementById('queue-rate'); return r && r.textContent",
        json!("admitting 120 a minute"),
    )
    .await;
    assert_accessible(&phone_page, "a queued event's dashboard on a phone").await;
    screenshot(&phone_page, "console-05c-queue-line-phone").await;
    phone_page.close().await.unwrap();
    // A form the API refuses says why, field by field.
    page.goto(&format!("{}/admin/events/new", app.base))
        .await
        .unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !!document.getElementById('event-form')",
        json!(true),
    )
    .await;
    press(&page, "#event-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return [...document.querySelectorAll('#event-error code')].map((c) => c.textContent).includes('name')",
        json!(true),
    )
    .await;
    page.close().await.unwrap();
    let _ = std::fs::remove_file(plan);
}

/// Drags a box from the top-left of the first seat to the bottom-right of the second.
const DRAG: &str = "
    const svg = document.getElementById('map');
    const box = (id) => svg.querySelector(`[data-seat-id=\"${id}\"]`).getBoundingClientRect();
    const a = box(arguments[0]), b = box(arguments[1]);
    const at = (x, y) => ({bubbles: true, pointerId: 1, clientX: x, clientY: y});
    svg.dispatchEvent(new PointerEvent('pointerdown', at(a.left - 2, a.top - 2)));
    svg.dispatchEvent(new PointerEvent('pointermove', at(b.right + 2, b.bottom + 2)));
    svg.dispatchEvent(new PointerEvent('pointerup', at(b.right + 2, b.bottom + 2)));
    return document.getElementById('picked').textContent;";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_dashboard_follows_a_sale_and_the_organizer_changes_seats_and_cancels_an_order() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    buy(&app, &event, "bob", &["stalls-B-1"]).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    let counters = "return ['sold', 'held', 'available', 'not_for_sale']
        .map((c) => document.querySelector(`[data-count=${c}]`)?.textContent)";
    // 17 seats: the circle's 3 held back, bob's seat sold.
    wait_for(&page, LOADS_WITHIN, counters, json!(["1", "0", "13", "3"])).await;

    // The sale moves the counters live, and the revenue after it.
    buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("carol"), &["stalls-C-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    wait_for(&page, LIVE_WITHIN, counters, json!(["3", "1", "10", "3"])).await;
    wait_for(
        &page,
        Duration::from_secs(5),
        "return document.getElementById('revenue').dataset.revenueCents",
        json!("22500"),
    )
    .await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[data-order-id]').length",
        json!(2),
    )
    .await;
    assert_accessible(&page, "the event's dashboard").await;
    screenshot(&page, "console-06-dashboard").await;

    // The held-back circle put on sale as premium: a click and two shift-clicks.
    let picked = pick_seats(&page, &["circle-A-1", "circle-A-2", "circle-A-3"]).await;
    assert_eq!(picked, "3 seats selected");
    press(&page, "select[name=ticket_type] option[value=premium]").await;
    let button = script(
        &page,
        "return document.querySelector('[data-action=put-on-sale]').textContent",
    )
    .await;
    assert_eq!(
        button, "Put 3 on sale as Premium",
        "the button says what it will do"
    );
    press(&page, "button[data-action=put-on-sale]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('map-result').textContent.trim()",
        json!("3 seats put on sale as Premium."),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, counters, json!(["3", "1", "13", "0"])).await;
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let circle: Vec<_> = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["section"] == "circle")
        .map(|s| (s["ticket_type"].clone(), s["status"].clone()))
        .collect();
    assert_eq!(circle, vec![(json!("premium"), json!("available")); 3]);

    // Row C held back with a box: carol's held seat is reported, not changed.
    let picked = page
        .execute(DRAG, vec![json!("stalls-C-1"), json!("stalls-C-4")])
        .await
        .unwrap();
    assert_eq!(picked, "4 seats selected");
    press(&page, "button[data-action=hold-back]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('map-result').innerText.replace(/\\s+/g, ' ').trim()",
        json!("3 seats held back. Left as they are (held or sold): Stalls, Row C, Seat 1 (held)."),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, counters, json!(["3", "1", "10", "3"])).await;

    // The keyboard: one seat in the tab order, arrows move, Enter picks, Shift with an arrow
    // extends the pick, Space unpicks.
    let tabbable = script(
        &page,
        "return [...document.querySelectorAll('#map .seat[tabindex=\"0\"]')].map((e) => e.dataset.seatId)",
    )
    .await;
    assert_eq!(tabbable.as_array().unwrap().len(), 1, "{tabbable}");
    script(
        &page,
        "document.querySelector('#map [data-seat-id=\"stalls-A-1\"]').focus(); return 0",
    )
    .await;
    let keys = |k: Key| String::from(char::from(k));
    let focused = page.active_element().await.unwrap();
    focused.send_keys(&keys(Key::Right)).await.unwrap();
    let focused = page.active_element().await.unwrap();
    focused.send_keys(&keys(Key::Enter)).await.unwrap();
    assert_eq!(
        script(
            &page,
            "return document.getElementById('picked').textContent"
        )
        .await,
        "1 seat selected"
    );
    let focused = page.active_element().await.unwrap();
    focused
        .send_keys(&format!(
            "{}{}{}",
            keys(Key::Shift),
            keys(Key::Right),
            keys(Key::Right)
        ))
        .await
        .unwrap();
    let picked = "return [...document.querySelectorAll('#map .seat[aria-checked=\"true\"]')].map((e) => e.dataset.seatId)";
    assert_eq!(
        script(&page, picked).await,
        json!(["stalls-A-2", "stalls-A-3", "stalls-A-4"])
    );
    assert_eq!(
        script(&page, "return document.activeElement.dataset.seatId").await,
        "stalls-A-4"
    );
    let focused = page.active_element().await.unwrap();
    focused
        .send_keys(&format!("{} ", keys(Key::Null)))
        .await
        .unwrap();
    assert_eq!(
        script(&page, picked).await,
        json!(["stalls-A-2", "stalls-A-3"])
    );
    assert_accessible(&page, "the organizer's map, picked with the keyboard").await;
    press(&page, "#clear").await;
    script(
        &page,
        "document.getElementById('map-title').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "console-07-organizer").await;

    // Orders: found by buyer, cancelled after a confirmation.
    type_into(&page, "#search input[name=q]", "alice").await;
    press(&page, "#search button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return [...document.querySelectorAll('[data-order-id] strong')].map((s) => s.textContent)",
        json!(["alice"]),
    )
    .await;
    press(&page, "[data-order-id] button[data-action=cancel]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('confirm').open",
        json!(true),
    )
    .await;
    assert_accessible(&page, "the cancel confirmation").await;
    screenshot(&page, "console-08-cancel").await;
    press(&page, "#confirm-yes").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return [...document.querySelectorAll('[data-order-id] .status-cancelled')].length",
        json!(1),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, counters, json!(["1", "1", "12", "3"])).await;
    let (_, orders) = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/events/{event}/orders?status=cancelled"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(orders["orders"][0]["user_id"], "alice");
    // The CSV the download button fetches.
    let csv = page
        .execute_async(
            "const done = arguments[arguments.length - 1];
             fetch(location.pathname.replace('/admin/events/', '/v1/events/') + '/orders.csv',
                   {headers: {authorization: 'Bearer ' + sessionStorage.getItem('boxoffice.console.token')}})
               .then((r) => r.text()).then(done);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(csv.as_str().unwrap().lines().count(), 4, "{csv}");
    page.close().await.unwrap();

    let page = phone(&driver).await;
    page.goto(&format!("{}/admin", app.base)).await.unwrap();
    find(&page, "input[name=admin_token]").await;
    assert_accessible(&page, "the sign-in on a phone").await;
    screenshot(&page, "console-09-sign-in-phone").await;
    sign_in(&page, &app).await;
    screenshot(&page, "console-09-home-phone").await;
    // Every other screen at a phone's size too.
    let (_, venues) = app
        .send(reqwest::Method::GET, "/v1/venues", &As::Admin, None)
        .await;
    let venue = venues["venues"][0]["id"].as_str().unwrap().to_owned();
    for (path, heading, name) in [
        (
            "/admin/venues/new".to_owned(),
            "Import a venue",
            "console-09-import-phone",
        ),
        (
            format!("/admin/venues/{venue}"),
            "",
            "console-09-venue-phone",
        ),
        (
            "/admin/events/new".to_owned(),
            "New event",
            "console-09-new-event-phone",
        ),
    ] {
        page.goto(&format!("{}{path}", app.base)).await.unwrap();
        wait_until(&page, LOADS_WITHIN, name, |p| async move {
            let h1 = script(
                &p,
                "const h = document.querySelector('h1'); return h ? h.textContent : ''",
            )
            .await;
            let h1 = h1.as_str().unwrap_or_default().to_owned();
            !h1.is_empty() && h1 != "Sign in" && (heading.is_empty() || h1 == heading)
        })
        .await;
        assert_accessible(&page, name).await;
        screenshot(&page, name).await;
    }
    page.goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(&page, LOADS_WITHIN, counters, json!(["1", "1", "12", "3"])).await;
    assert_accessible(&page, "the dashboard on a phone").await;
    screenshot(&page, "console-10-dashboard-phone").await;
    script(
        &page,
        "document.getElementById('map-title').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "console-11-seats-phone").await;
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_organizer_gives_seats_to_a_channel_and_releases_them_to_the_waiting_list() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["channels"] = json!([{"code": "partner-a", "name": "Partner A"}]);
    let (_, created) = app.post_events(&spec).await;
    let event = created["id"].as_str().unwrap().to_owned();
    let waiter = app.buyer("wendy");
    let (status, entry) = app
        .send(
            reqwest::Method::POST,
            &format!("/v1/events/{event}/waitlist"),
            &waiter,
            Some(&json!({"quantity": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{entry}");

    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    let waitlist = "return [document.getElementById('waitlist-counter')?.hidden,
        document.getElementById('waitlist-waiting')?.textContent,
        document.getElementById('waitlist-offered')?.textContent]";
    wait_for(&page, LOADS_WITHIN, waitlist, json!([false, "1", "0"])).await;

    // The held-back circle given to Partner A.
    let picked = pick_seats(&page, &["circle-A-1", "circle-A-2", "circle-A-3"]).await;
    assert_eq!(picked, "3 seats selected");
    press(&page, "select[name=channel] option[value=partner-a]").await;
    press(&page, "button[data-action=put-on-sale]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('map-result').textContent.trim()",
        json!("3 seats put on sale as Standard in Partner A."),
    )
    .await;
    let channel = "return document.querySelector('[data-channel=partner-a] span')?.textContent.replace(/\\s+/g, ' ').trim()";
    wait_for(
        &page,
        LIVE_WITHIN,
        channel,
        json!("Partner A · 3 seats: 3 available, 0 held, 0 sold"),
    )
    .await;
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let circle = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "circle-A-1")
        .unwrap()
        .clone();
    assert_eq!(circle["status"], "not_for_sale", "the public sees nothing");
    assert_accessible(&page, "the dashboard with a sales channel").await;
    script(
        &page,
        "document.getElementById('channels-title').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "console-12-channels").await;

    // Released: the first buyer in line is offered a seat, the rest go on general sale.
    press(&page, "[data-release=partner-a]").await;
    press(&page, "#confirm-yes").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('channels-result').textContent.trim()",
        json!("3 seats of Partner A released to general sale."),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, waitlist, json!([false, "0", "1"])).await;
    let entry_id = entry["entry_id"].as_str().unwrap();
    let (_, offered) = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/events/{event}/waitlist/{entry_id}"),
            &waiter,
            None,
        )
        .await;
    assert_eq!(
        offered["offer"]["seats"][0]["id"], "circle-A-1",
        "{offered}"
    );
    page.close().await.unwrap();

    let page = phone(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(&page, LOADS_WITHIN, waitlist, json!([false, "0", "1"])).await;
    assert_accessible(&page, "the dashboard with a sales channel on a phone").await;
    script(
        &page,
        "document.getElementById('channels-title').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&page, "console-13-channels-phone").await;
    page.close().await.unwrap();
}

/// A venue drawn with a standing area and a seat category: the new-event form offers the
/// area to sell with its places and price, the category as a ticket type of its own and
/// the venue's time zone; the event it makes sells the area from the buyer's page (paid at
/// once, its tickets shown) and prices the category's seats as chosen.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_new_event_form_sells_a_drawn_area_and_a_category() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let (status, venue) = app
        .post_venues(&json!({"name": "Club", "time_zone": "Europe/Berlin", "sections": [
            {"id": "stalls", "name": "Stalls", "origin": {"x": 0, "y": 0}, "seat_spacing": 1.0, "row_spacing": 1.2,
             "rows": [{"label": "A", "seats": 4, "category": "Front"}, {"label": "B", "seats": 4}]}],
            "shapes": [{"kind": "stage", "rect": {"x": 0, "y": -4, "w": 4, "h": 2}},
                       {"kind": "area", "text": "Dance floor", "rect": {"x": 7, "y": 0, "w": 5, "h": 4}}]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{venue}");
    let venue = venue["id"].as_str().unwrap().to_owned();
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/events/new?venue={venue}", app.base))
        .await
        .unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !!document.querySelector('[data-ga-area=\"Dance floor\"]') && !!document.querySelector('[data-category=\"Front\"]')",
        json!(true),
    )
    .await;
    assert_eq!(
        script(
            &page,
            "return document.querySelector('#event-form [name=time_zone]').placeholder"
        )
        .await,
        json!("Europe/Berlin")
    );
    type_into(&page, "#event-form input[name=name]", "Club night").await;
    let area = |name: &str| format!("[data-ga-area=\"Dance floor\"] input[name={name}]");
    type_into(&page, &area("area_capacity"), "120").await;
    type_into(&page, &area("area_price"), "18").await;
    press(&page, "#add-type").await;
    let second = |name: &str| format!("#types .row:nth-of-type(2) input[name={name}]");
    type_into(&page, &second("type_code"), "front").await;
    type_into(&page, &second("type_name"), "Front").await;
    type_into(&page, &second("type_price"), "60").await;
    script(
        &page,
        "const s = document.querySelector('[data-category=\"Front\"] select'); s.value = 'front'; return s.value",
    )
    .await;
    assert_accessible(&page, "the new event's form with an area and a category").await;
    screenshot(&page, "console-new-event-areas-desktop").await;
    press(&page, "#event-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return location.pathname.startsWith('/admin/events/') && document.querySelector('h1').textContent",
        json!("Club night"),
    )
    .await;
    let event = script(&page, "return location.pathname.split('/').pop()").await;
    let event = event.as_str().unwrap().to_owned();
    let (_, created) = app.get(&format!("/v1/events/{event}")).await;
    assert_eq!(created["time_zone"], "Europe/Berlin");
    assert_eq!(
        created["ga_areas"],
        json!([{"code": "dance_floor", "name": "Dance floor", "capacity": 120, "price_cents": 1800,
                "currency": "EUR", "max_per_booking": 10, "max_per_user": 10, "left": 120}])
    );
    // 19:30 in Berlin is 18:30 or 17:30 UTC, as the day falls in winter or summer time.
    let starts: chrono::DateTime<chrono::Utc> =
        created["starts_at"].as_str().unwrap().parse().unwrap();
    assert!(
        [(18, 30), (17, 30)].contains(&(
            chrono::Timelike::hour(&starts),
            chrono::Timelike::minute(&starts)
        )),
        "{starts}"
    );
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let type_of = |id: &str| {
        seats["seats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| s["ticket_type"].clone())
    };
    assert_eq!(type_of("stalls-A-1"), Some(json!("front")));
    assert_eq!(type_of("stalls-B-1"), Some(json!("standard")));

    // The buyer's page sells the area: paid at once, its tickets shown.
    crate::helpers::open(&page, &app, &event).await;
    let shown = script(
        &page,
        "const a = document.querySelector('.ga-area'); return [a.querySelector('h3').textContent, a.querySelector('[data-ga-left]').textContent]",
    )
    .await;
    assert_eq!(shown, json!(["Dance floor", "120"]));
    script(
        &page,
        "const f = document.querySelector('.ga-area form'); f.querySelector('input').value = 2; f.requestSubmit(); return 0",
    )
    .await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "const o = document.getElementById('order'); return !o.hidden && o.querySelector('.tickets').dataset.tickets === '2'",
        json!(true),
    )
    .await;
    let left: i32 = sqlx::query_scalar("select seats_left from ga_area where code = 'dance_floor'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(left, 118);
    screenshot(&page, "buyer-drawn-area-booked-desktop").await;
    page.close().await.unwrap();

    let phone_page = phone(&driver).await;
    sign_in(&phone_page, &app).await;
    phone_page
        .goto(&format!("{}/admin/events/new?venue={venue}", app.base))
        .await
        .unwrap();
    wait_for(
        &phone_page,
        LOADS_WITHIN,
        "return !!document.querySelector('[data-ga-area=\"Dance floor\"]')",
        json!(true),
    )
    .await;
    assert_accessible(&phone_page, "the new event's form on a phone").await;
    screenshot(&phone_page, "console-new-event-areas-phone").await;
    phone_page.close().await.unwrap();
}
