//! The console's season screens in a real headless Chromium: a season created from three
//! events through the form (its ticket type, the section it sells, a partial), its page
//! with the sales by partial and the season orders, one found by its buyer and one
//! released for a night; at desktop and phone size, each checked with axe-core and saved
//! to `target/screenshots/console-season-*.png`.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{
    assert_accessible, browser, driver, phone, press, screenshot, script, sign_in, spawn_app,
    type_into, wait_for, As, TestApp, LOADS_WITHIN, ONE_AT_A_TIME,
};

/// Holds and buys `seats` of the season for `who` (in `partial`, if given).
async fn buy_season(app: &TestApp, season: &str, who: &str, seats: &[&str], partial: Option<&str>) {
    let (status, held) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season}/holds"),
            &app.buyer(who),
            Some(&json!({"seats": seats, "partial": partial})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    let (status, order) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season}/orders"),
            &app.buyer(who),
            Some(&json!({"hold_token": held["hold_token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_organizer_creates_a_season_and_releases_a_seat_for_one_night() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let (_, events) = crate::helpers::seasons::three_nights(&app).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !!document.getElementById('seasons-title')",
        json!(true),
    )
    .await;

    // The form: three nights, the stalls at 360.00, a partial of the first two at 200.00.
    press(&page, "a[href='/admin/seasons/new']").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[name=event_ids]').length",
        json!(3),
    )
    .await;
    type_into(&page, "#season-form input[name=name]", "2027 Season").await;
    for i in 0..3 {
        press(&page, &format!("#ev-{i}")).await;
    }
    type_into(&page, "#types input[name=type_price]", "360").await;
    type_into(&page, "#season-form input[name=sections]", "stalls").await;
    press(&page, "#add-partial").await;
    type_into(&page, ".partial input[name=partial_code]", "autumn").await;
    type_into(&page, ".partial input[name=partial_name]", "Autumn half").await;
    type_into(&page, ".partial input[name=partial_price]", "200").await;
    press(&page, "#partial-1-ev-0").await;
    press(&page, "#partial-1-ev-1").await;
    assert_accessible(&page, "the new season's form").await;
    screenshot(&page, "console-season-1-new").await;
    press(&page, "#season-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return location.pathname.startsWith('/admin/seasons/') && document.querySelector('h1').textContent",
        json!("2027 Season"),
    )
    .await;
    let season = script(&page, "return location.pathname.split('/').pop()").await;
    let season = season.as_str().unwrap().to_owned();
    let (_, created) = app.get(&format!("/v1/seasons/{season}")).await;
    // In the order the form lists the events.
    let listed: Vec<String> = serde_json::from_value(created["event_ids"].clone()).unwrap();
    let mut sorted = listed.clone();
    sorted.sort();
    let mut nights = events.clone();
    nights.sort();
    assert_eq!(sorted, nights);
    let events = listed;
    assert_eq!(created["ticket_types"][0]["price_cents"], 36000);
    assert_eq!(
        created["partials"],
        json!([{"code": "autumn", "name": "Autumn half", "event_ids": [events[0], events[1]],
                "prices": {"season": 20000}}])
    );

    // Two buyers; the page shows their orders and the sales by partial.
    buy_season(&app, &season, "ann", &["stalls-A-1", "stalls-A-2"], None).await;
    buy_season(&app, &season, "bob", &["stalls-A-3"], Some("autumn")).await;
    page.refresh().await.unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return [...document.querySelectorAll('[data-order-id] strong')].map((s) => s.textContent)",
        json!(["bob", "ann"]),
    )
    .await;
    let sales = script(
        &page,
        "return [...document.querySelectorAll('#sales tbody tr')].map((r) => [...r.children].map((c) => c.textContent))",
    )
    .await;
    assert_eq!(
        sales,
        json!([
            ["Whole season", "1", "2", "€720.00"],
            ["Autumn half", "1", "1", "€200.00"]
        ])
    );
    assert_accessible(&page, "the season's page").await;
    screenshot(&page, "console-season-2-page").await;

    // Found by buyer; ann's seats released for the second night.
    type_into(&page, "#search input[name=q]", "ann").await;
    press(&page, "#search button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[data-order-id]').length",
        json!(1),
    )
    .await;
    press(
        &page,
        &format!(
            "[data-order-id] button[data-action=release][data-event-id='{}']",
            events[1]
        ),
    )
    .await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('confirm').open",
        json!(true),
    )
    .await;
    assert_accessible(&page, "the release confirmation").await;
    screenshot(&page, "console-season-3-release").await;
    press(&page, "#confirm-yes").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[data-order-id] button[data-action=release]').length",
        json!(2),
    )
    .await;
    let (_, orders) = app
        .send(
            Method::GET,
            &format!("/v1/seasons/{season}/orders?q=ann"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(
        orders["orders"][0]["released"][0]["event_id"],
        events[1].as_str()
    );
    assert_eq!(
        app.seat_statuses(&events[1]).await["stalls-A-1"],
        "available"
    );
    assert_eq!(app.seat_statuses(&events[0]).await["stalls-A-1"], "sold");
    screenshot(&page, "console-season-4-released").await;
    page.close().await.unwrap();

    // At a phone's size: home, the form and the season's page.
    let page = phone(&driver).await;
    sign_in(&page, &app).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[data-season-id]').length",
        json!(1),
    )
    .await;
    screenshot(&page, "console-season-5-home-phone").await;
    for (path, ready, name) in [
        (
            "/admin/seasons/new".to_owned(),
            "return document.querySelectorAll('[name=event_ids]').length",
            "console-season-6-new-phone",
        ),
        (
            format!("/admin/seasons/{season}"),
            "return document.querySelectorAll('[data-order-id]').length",
            "console-season-7-page-phone",
        ),
    ] {
        page.goto(&format!("{}{path}", app.base)).await.unwrap();
        let want = if path.ends_with("new") { 3 } else { 2 };
        wait_for(&page, LOADS_WITHIN, ready, json!(want)).await;
        assert_accessible(&page, &format!("{path} on a phone")).await;
        screenshot(&page, name).await;
    }
    page.close().await.unwrap();
}
