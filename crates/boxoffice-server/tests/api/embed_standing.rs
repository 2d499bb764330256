//! `<boxoffice-seat-map>` sells standing places, in headless Chromium on a platform's
//! origin: each standing area under the map with its price and the places left, kept live
//! from the stream; a booking through its form is a `booking` event and the server's, the
//! last place taken by another buyer turns its button off, and one asked for anyway is a
//! `bookingfailed` with the server's problem. The hold's end reads in the event's time
//! zone, as the PDF and the page write it.

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::embed::{call, count_of, host_page, platform, shop_and_server};
use crate::helpers::{
    assert_accessible, browser, driver, gala, phone, screenshot, script, wait_for, As, LIVE_WITHIN,
    LOADS_WITHIN, ONE_AT_A_TIME,
};

const AREA: &str = "document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('.standing [data-area=floor]')";

fn left_shown() -> String {
    format!(
        "const f = {AREA}; return [f.querySelector('[data-ga-left]').textContent, f.book.disabled]"
    )
}

/// Places left in the floor, as the server counts them.
async fn left(app: &crate::helpers::TestApp, event: &str) -> i64 {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["ga_areas"][0]["left"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_element_books_standing_places_and_tells_its_holds_end_in_the_events_zone() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (shop_listener, shop, app) = shop_and_server(|_| {}).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["time_zone"] = json!("America/New_York");
    spec["ga_areas"][0]["capacity"] = json!(3);
    spec["ga_areas"][0]["max_per_booking"] = json!(3);
    let (status, created) = app
        .send(Method::POST, "/v1/events", &As::Admin, Some(&spec))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    platform(
        shop_listener,
        host_page(
            &app.base,
            &event,
            &app.user_token("shopper"),
            r#"locale="en""#,
        ),
    )
    .await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    assert_eq!(
        script(
            &page,
            &format!("const f = {AREA}; return [f.querySelector('.area-name').textContent, f.querySelector('.area-head').textContent.replace(/\\s+/g, ' ').trim()]")
        )
        .await,
        json!(["Standing floor", "Standing floor €30.00 each · 3 left"])
    );
    assert_accessible(&page, "the element with a standing area").await;

    // Two places through the area's form: a booking, the server's, told under the area.
    script(
        &page,
        &format!("const f = {AREA}; f.quantity.value = '2'; f.book.click(); return 0"),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, &count_of("booking"), json!(1)).await;
    let booking = script(
        &page,
        "return window.seen.find((e) => e.type === 'booking').detail",
    )
    .await;
    assert_eq!(
        (
            &booking["area"],
            &booking["quantity"],
            &booking["total_cents"],
            &booking["status"]
        ),
        (&json!("floor"), &json!(2), &json!(6000), &json!("paid")),
        "{booking}"
    );
    let (status, tickets) = app
        .send(
            Method::GET,
            &format!(
                "/v1/bookings/{}/tickets",
                booking["booking_id"].as_str().unwrap()
            ),
            &app.buyer("shopper"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{tickets}");
    assert_eq!(tickets["tickets"].as_array().unwrap().len(), 2, "{tickets}");
    assert_eq!(left(&app, &event).await, 1);
    wait_for(&page, LIVE_WITHIN, &left_shown(), json!(["1 left", false])).await;
    assert_eq!(
        script(
            &page,
            &format!("return {AREA}.querySelector('.area-result').textContent")
        )
        .await,
        "Booked 2 · €60.00"
    );

    // Another buyer takes the last place: the element shows none left, live, and its
    // button is off; asked anyway, the refusal is an event and nothing is booked.
    let (status, body) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &app.buyer("rival"),
            Some(&json!({"area": "floor", "quantity": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    wait_for(&page, LIVE_WITHIN, &left_shown(), json!(["0 left", true])).await;
    assert_eq!(call(&page, "map.book('floor', 1)").await, Value::Null);
    let refused = script(
        &page,
        "return window.seen.filter((e) => e.type === 'bookingfailed').map((e) => e.detail.code)",
    )
    .await;
    assert_eq!(refused, json!(["sold_out"]));
    assert_eq!(
        script(&page, &count_of("booking")).await,
        1,
        "no second booking"
    );
    assert_eq!(left(&app, &event).await, 0);

    // A hold's end, in New York's time as every surface writes it.
    call(&page, "map.select(['stalls-B-1'])").await;
    let hold = call(&page, "map.hold()").await;
    let ends: DateTime<Utc> = hold["expires_at"].as_str().unwrap().parse().unwrap();
    let status_line = "return document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('.status').textContent";
    let expected = format!(
        "1 held until {}",
        boxoffice_core::local_time::clock(ends, "America/New_York")
    );
    assert!(
        expected.ends_with(" EST") || expected.ends_with(" EDT"),
        "{expected}"
    );
    assert_eq!(script(&page, status_line).await, expected);
    screenshot(&page, "embed-standing-desktop").await;
    page.close().await.unwrap();

    let small = phone(&driver).await;
    small.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&small, LOADS_WITHIN, &count_of("ready"), json!(1)).await;
    wait_for(&small, LIVE_WITHIN, &left_shown(), json!(["0 left", true])).await;
    assert_accessible(&small, "the element with a standing area, on a phone").await;
    screenshot(&small, "embed-standing-phone").await;
    small.close().await.unwrap();
}
