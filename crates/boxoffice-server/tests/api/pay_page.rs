//! The test payment page of `--demo` (`/pay/{order}`) in headless Chromium: the buyer's page
//! checks out into a pending order, goes to the page, a failed payment leaves the order
//! pending, Pay sells the seats and brings the buyer back to their order; Abandon comes
//! back with the order awaiting payment. At desktop and phone size; the console then lists
//! one order paid and one awaiting payment.

use fantoccini::{Client, Locator};
use serde_json::json;

use crate::helpers::stores::Store;
use crate::helpers::{
    assert_accessible, browser, click, driver, open, phone, screenshot, script, text, visible,
    wait_status, wait_until, LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
};
use crate::helpers::{gala, spawn_app_with, As, TestApp};

/// The standard event with ten minutes to pay, on a server serving the test payment page.
async fn demo_with_window() -> (TestApp, String) {
    let app = spawn_app_with(|s| s.server.demo_payments = true).await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(600);
    let (_, event) = app.post_events(&spec).await;
    (app, event["id"].as_str().unwrap().to_owned())
}

/// Holds `seats` on the buyer's page and buys: the page goes to the payment page. (The
/// seats are chosen by a click event, as a mouse would: a finger on a phone's whole-hall
/// view zooms in first, which the buyer's page tests show.)
async fn buy(page: &Client, seats: &[&str]) {
    for seat in seats {
        script(
            page,
            &format!("document.querySelector('[data-seat-id=\"{seat}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return 0"),
        )
        .await;
    }
    click(page, "hold").await;
    wait_until(page, LOADS_WITHIN, "the hold shows", |p| async move {
        visible(&p, "hold-info").await
    })
    .await;
    click(page, "buy").await;
    on_the_payment_page(page).await;
}

/// Waits for the payment page to open; answers the id it is for.
async fn on_the_payment_page(page: &Client) -> String {
    wait_until(
        page,
        LOADS_WITHIN,
        "the payment page opens",
        |p| async move {
            script(&p, "return location.pathname.startsWith('/pay/')").await == json!(true)
        },
    )
    .await;
    let id = script(page, "return location.pathname.split('/').pop()").await;
    id.as_str().unwrap().to_owned()
}

/// The order's status, as the API reads it.
async fn status_of(app: &TestApp, order: &str) -> String {
    let (_, read) = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/orders/{order}"),
            &As::Admin,
            None,
        )
        .await;
    read["status"].as_str().unwrap_or_default().to_owned()
}

async fn press(page: &Client, action: &str) {
    page.find(Locator::Css(&format!("button[value='{action}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_pays_on_the_test_page_and_comes_back_to_their_order() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event) = demo_with_window().await;
    let driver = driver().await;
    let page = browser(&driver).await;
    open(&page, &app, &event).await;
    buy(&page, &["stalls-B-1", "stalls-B-2"]).await;
    let order = script(&page, "return location.pathname.split('/').pop()").await;
    let order = order.as_str().unwrap().to_owned();
    assert_eq!(status_of(&app, &order).await, "pending_payment");
    assert!(script(&page, "return document.body.innerText")
        .await
        .as_str()
        .unwrap()
        .contains("Stalls, Row B, Seat 1"));
    assert_accessible(&page, "the test payment page").await;
    screenshot(&page, "pay-01-page-desktop").await;

    press(&page, "fail").await;
    wait_until(&page, LOADS_WITHIN, "the failure shows", |p| async move {
        script(&p, "return !!document.querySelector('[role=alert]')").await == json!(true)
    })
    .await;
    assert_eq!(
        status_of(&app, &order).await,
        "pending_payment",
        "a failed payment changes nothing"
    );
    screenshot(&page, "pay-02-failed-desktop").await;

    press(&page, "pay").await;
    wait_until(&page, LOADS_WITHIN, "back on the event's page", |p| async move {
        script(&p, "return location.pathname === '/' && !!document.getElementById('order') && !document.getElementById('order').hidden").await == json!(true)
    })
    .await;
    assert!(
        text(&page, "order").await.contains("Order confirmed"),
        "{}",
        text(&page, "order").await
    );
    wait_status(&page, "stalls-B-1", "sold", LIVE_WITHIN).await;
    assert_eq!(status_of(&app, &order).await, "paid");
    screenshot(&page, "pay-03-paid-desktop").await;
    page.close().await.unwrap();

    // On a phone: Abandon comes back with the order awaiting payment.
    let phone_page = phone(&driver).await;
    open(&phone_page, &app, &event).await;
    buy(&phone_page, &["stalls-C-3"]).await;
    assert_accessible(&phone_page, "the test payment page on a phone").await;
    screenshot(&phone_page, "pay-04-page-phone").await;
    press(&phone_page, "abandon").await;
    wait_until(&phone_page, LOADS_WITHIN, "back with the order", |p| async move {
        script(&p, "const o = document.getElementById('order'); return !!o && !o.hidden && o.dataset.status === 'pending_payment'").await == json!(true)
    })
    .await;
    assert!(text(&phone_page, "order")
        .await
        .contains("Awaiting payment"));
    wait_status(&phone_page, "stalls-C-3", "held", LIVE_WITHIN).await;
    let mine =
        "return document.querySelector('[data-seat-id=\"stalls-C-3\"]').classList.contains('mine')";
    assert_eq!(
        script(&phone_page, mine).await,
        json!(true),
        "drawn as the buyer's own"
    );
    script(
        &phone_page,
        "document.getElementById('order').scrollIntoView(); return 0",
    )
    .await;
    screenshot(&phone_page, "pay-05-awaiting-phone").await;
    phone_page.close().await.unwrap();

    // The organizer's console names both: one paid, one awaiting payment with its deadline.
    let console = browser(&driver).await;
    crate::helpers::sign_in(&console, &app).await;
    console
        .goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_until(
        &console,
        LOADS_WITHIN,
        "both orders listed",
        |p| async move {
            script(
                &p,
                "return document.querySelectorAll('[data-order-id]').length",
            )
            .await
                == json!(2)
        },
    )
    .await;
    let statuses = script(
        &console,
        "return [...document.querySelectorAll('[data-order-id] [class^=status-]')].map((s) => s.className + ': ' + s.parentElement.textContent.includes('pay by'))",
    )
    .await;
    assert_eq!(
        statuses,
        json!(["status-pending_payment: true", "status-paid: false"]),
        "newest first"
    );
    script(
        &console,
        "document.getElementById('orders').scrollIntoView(); return 0",
    )
    .await;
    assert_accessible(&console, "the console's orders with one awaiting payment").await;
    screenshot(&console, "pay-06-console-orders-desktop").await;
    console.close().await.unwrap();
}

/// The standard event in Berlin's time with ten minutes to pay, on a server of `store`
/// serving the test payment page.
async fn standing_demo(store: Store) -> (TestApp, String) {
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.server.demo_payments = true;
    })
    .await;
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(600);
    spec["time_zone"] = json!("Europe/Berlin");
    let (_, event) = app.post_events(&spec).await;
    (app, event["id"].as_str().unwrap().to_owned())
}

/// Books `places` on the standing floor from the buyer's page: the page goes to the
/// payment page.
async fn book_standing(page: &Client, places: u32) {
    script(
        page,
        &format!("const f = document.querySelector('.ga-area form'); f.querySelector('input').value = {places}; f.requestSubmit(); return 0"),
    )
    .await;
    on_the_payment_page(page).await;
}

/// The booking's status as stored.
async fn booking_status(app: &TestApp, booking: &str) -> String {
    sqlx::query_scalar("select status from ga_booking where booking_id = $1::uuid")
        .bind(booking)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// A standing buyer books two places, is taken to the payment page (the event's name, its
/// local time, the places with their price in euros), pays, and comes back to their booking
/// in view with its two tickets (QR codes and codes to type) and "Your orders" listing it
/// paid. On a phone a booking abandoned at the payment page comes back awaiting payment,
/// and opening the event again lists it with "Pay now".
async fn a_standing_buyer_pays_and_gets_their_tickets(store: Store) {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event) = standing_demo(store).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    open(&page, &app, &event).await;
    book_standing(&page, 2).await;
    let booking = script(&page, "return location.pathname.split('/').pop()").await;
    let booking = booking.as_str().unwrap().to_owned();
    let body = script(&page, "return document.body.innerText").await;
    let body = body.as_str().unwrap();
    for said in [
        "Pay for Spring Gala",
        "Fri 1 Mar 2030, 20:30 CET",
        "2 places, Standing floor (€30.00 each)",
        "Total €60.00",
        "Pay €60.00",
    ] {
        assert!(body.contains(said), "{said:?} not in {body}");
    }
    assert!(!body.contains("EUR"), "{body}");
    assert_accessible(&page, "the payment page of a standing booking").await;
    screenshot(&page, "pay-07-standing-page-desktop").await;

    press(&page, "pay").await;
    wait_until(&page, LOADS_WITHIN, "back with the booking's tickets", |p| async move {
        script(&p, "const o = document.getElementById('order'); return !!o && !o.hidden && o.dataset.status === 'paid' && o.querySelector('.tickets').dataset.tickets === '2'").await == json!(true)
    })
    .await;
    let shown = text(&page, "order").await;
    assert!(shown.contains("Booking confirmed"), "{shown}");
    assert!(shown.contains("2 places, Standing floor"), "{shown}");
    let codes = script(
        &page,
        "return [...document.querySelectorAll('#order .ticket-code')].map((c) => c.dataset.code.length)",
    )
    .await;
    assert_eq!(codes, json!([10, 10]));
    wait_until(&page, LOADS_WITHIN, "the QR codes load", |p| async move {
        script(&p, "return [...document.querySelectorAll('#order .ticket img')].every((i) => i.complete && i.naturalWidth > 0)").await == json!(true)
    })
    .await;
    let listed = script(
        &page,
        "return [...document.querySelectorAll('#mine-list li')].map((l) => l.dataset.status)",
    )
    .await;
    assert_eq!(listed, json!(["paid"]));
    let (_, read) = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/bookings/{booking}/tickets"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(read["tickets"].as_array().map(Vec::len), Some(2), "{read}");
    assert_eq!(booking_status(&app, &booking).await, "confirmed");
    assert_accessible(&page, "a standing booking paid, with its tickets").await;
    screenshot(&page, "pay-08-standing-tickets-desktop").await;
    page.close().await.unwrap();

    // On a phone: Abandon comes back with the booking awaiting payment, in view.
    let phone_page = phone(&driver).await;
    open(&phone_page, &app, &event).await;
    book_standing(&phone_page, 1).await;
    screenshot(&phone_page, "pay-09-standing-page-phone").await;
    let pending = script(&phone_page, "return location.pathname.split('/').pop()").await;
    let pending = pending.as_str().unwrap().to_owned();
    press(&phone_page, "abandon").await;
    wait_until(&phone_page, LOADS_WITHIN, "back with the booking", |p| async move {
        script(&p, "const o = document.getElementById('order'); return !!o && !o.hidden && o.dataset.status === 'pending_payment'").await == json!(true)
    })
    .await;
    let in_view = script(
        &phone_page,
        "const r = document.getElementById('order').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight",
    )
    .await;
    assert_eq!(in_view, json!(true), "the booking is in view on a phone");
    screenshot(&phone_page, "pay-10-standing-awaiting-phone").await;

    // Coming back to the event later, the buyer (this phone's: the desktop's is another)
    // finds it with "Pay now".
    open(&phone_page, &app, &event).await;
    wait_until(
        &phone_page,
        LOADS_WITHIN,
        "their orders listed",
        |p| async move {
            script(
                &p,
                "return document.querySelectorAll('#mine-list li').length",
            )
            .await
                == json!(1)
        },
    )
    .await;
    let first = script(
        &phone_page,
        "const l = document.querySelector('#mine-list li'); return [l.dataset.orderId, l.dataset.status, l.querySelector('.pay-now').getAttribute('href')]",
    )
    .await;
    assert_eq!(
        first,
        json!([pending, "pending_payment", format!("/pay/{pending}")])
    );
    assert_eq!(booking_status(&app, &pending).await, "pending_payment");
    script(
        &phone_page,
        "document.getElementById('mine').scrollIntoView(); return 0",
    )
    .await;
    assert_accessible(&phone_page, "the buyer's orders on a phone").await;
    screenshot(&phone_page, "pay-11-your-orders-phone").await;
    phone_page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standing_buyer_pays_and_gets_their_tickets_postgres() {
    a_standing_buyer_pays_and_gets_their_tickets(Store::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standing_buyer_pays_and_gets_their_tickets_redis() {
    a_standing_buyer_pays_and_gets_their_tickets(Store::Redis).await;
}

#[tokio::test]
async fn without_demo_there_is_no_payment_page() {
    let app = crate::helpers::spawn_app().await;
    let order = uuid::Uuid::new_v4();
    let (status, problem) = app.get(&format!("/pay/{order}")).await;
    assert_eq!(
        (status.as_u16(), problem["code"].as_str()),
        (404, Some("not_found"))
    );
}
