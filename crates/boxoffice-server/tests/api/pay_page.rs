//! The test payment page of `--demo` (`/pay/{order}`) in headless Chromium: the buyer's page
//! checks out into a pending order, goes to the page, a failed payment leaves the order
//! pending, Pay sells the seats and brings the buyer back to their order; Abandon comes
//! back with the order awaiting payment. At desktop and phone size; the console then lists
//! one order paid and one awaiting payment.

use fantoccini::{Client, Locator};
use serde_json::json;

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
    wait_until(
        page,
        LOADS_WITHIN,
        "the payment page opens",
        |p| async move {
            script(&p, "return location.pathname.startsWith('/pay/')").await == json!(true)
        },
    )
    .await;
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
