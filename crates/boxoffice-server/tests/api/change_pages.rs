//! Changing sold seats in headless Chromium: the console moves an order's seats to seats
//! picked on the map ("Move seats") and shows a listed seat on the organizer's map; the
//! buyer's page offers a ticket's seat for resale ("Resell") and takes it back, another
//! buyer sees it on the map as resale (its own legend entry) and buys it, and the seller's
//! page no longer shows that ticket.

use fantoccini::Client;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::pages::open_at;
use crate::helpers::pages::pick_seats;
use crate::helpers::{
    assert_accessible, browser, buy, click, click_seat, driver, phone, press, screenshot, script,
    sign_in, spawn_app_with, wait_for, wait_status, As, LIVE_WITHIN, LOADS_WITHIN, ONE_AT_A_TIME,
};

/// The seat ids of the order `id`, as the API reads it.
async fn seats_of(app: &crate::helpers::TestApp, id: &str) -> Vec<String> {
    let (status, order) = app
        .send(Method::GET, &format!("/v1/orders/{id}"), &As::Admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{order}");
    order["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The status of `seat` on the console's map.
fn map_status(seat: &str) -> String {
    format!(
        "return document.querySelector('#map [data-seat-id=\"{seat}\"]')?.dataset.status ?? null"
    )
}

async fn tickets_shown(page: &Client, count: usize) {
    wait_for(
        page,
        LOADS_WITHIN,
        "const t = document.querySelector('#order-page-box .tickets'); return t && t.dataset.tickets || null",
        json!(count.to_string()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_moves_an_orders_seats_to_seats_picked_on_the_map() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|_| {}).await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "alice", &["stalls-A-1", "stalls-A-2"]).await;
    let id = order["order_id"].as_str().unwrap();
    let bob = buy(&app, &event, "bob", &["stalls-B-1"]).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    let alice = format!("[data-order-id=\"{id}\"]");
    wait_for(
        &page,
        LOADS_WITHIN,
        &format!("return !!document.querySelector('{alice} [data-action=move]')"),
        json!(true),
    )
    .await;

    // The panel: the order's seats, each checked to move.
    press(&page, &format!("{alice} [data-action=move]")).await;
    assert_eq!(
        script(
            &page,
            &format!("return [...document.querySelectorAll('{alice} [data-move] input[name=from]')].map((i) => [i.value, i.checked])")
        )
        .await,
        json!([["stalls-A-1", true], ["stalls-A-2", true]])
    );
    // Two seats to move and none picked: said, and nothing moves.
    press(&page, &format!("{alice} [data-action=move-here]")).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        &format!("return document.querySelector('{alice} .move-result').textContent"),
        json!("Pick 2 seats on the map for the seats checked: 0 picked."),
    )
    .await;
    // Only the first moves, to a standard seat picked on the map.
    press(&page, &format!("{alice} input[value=\"stalls-A-2\"]")).await;
    let picked = pick_seats(&page, &["stalls-C-3"]).await;
    assert_eq!(picked, "1 seat selected");
    assert_accessible(&page, "the console moving an order's seats").await;
    screenshot(&page, "console-move-desktop").await;
    press(&page, &format!("{alice} [data-action=move-here]")).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('#orders-result .ok')?.textContent ?? document.querySelector('.move-result')?.textContent",
        json!("Moved. The order has Stalls, Row A, Seat 2; Stalls, Row C, Seat 3. The order costs €45.00 less: refund the buyer."),
    )
    .await;
    assert_eq!(seats_of(&app, id).await, ["stalls-A-2", "stalls-C-3"]);
    wait_for(
        &page,
        LIVE_WITHIN,
        &map_status("stalls-A-1"),
        json!("available"),
    )
    .await;
    wait_for(&page, LIVE_WITHIN, &map_status("stalls-C-3"), json!("sold")).await;
    // A seat taken meanwhile is refused by name.
    press(
        &page,
        &format!("[data-order-id=\"{id}\"] [data-action=move]"),
    )
    .await;
    press(&page, &format!("{alice} input[value=\"stalls-A-2\"]")).await;
    pick_seats(&page, &["stalls-B-1"]).await;
    press(&page, &format!("{alice} [data-action=move-here]")).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        &format!("return (document.querySelector('{alice} .move-result').textContent || '').includes('Stalls, Row B, Seat 1')"),
        json!(true),
    )
    .await;
    assert_eq!(seats_of(&app, id).await, ["stalls-A-2", "stalls-C-3"]);

    // Bob lists his seat: the organizer's map shows it, and the counter counts it.
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/resale", bob["order_id"].as_str().unwrap()),
            &app.buyer("bob"),
            Some(&json!({"seats": ["stalls-B-1"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    wait_for(
        &page,
        LIVE_WITHIN,
        &map_status("stalls-B-1"),
        json!("resale"),
    )
    .await;
    wait_for(
        &page,
        LIVE_WITHIN,
        "return document.querySelector('[data-count=resale]').textContent",
        json!("1"),
    )
    .await;
    script(
        &page,
        "document.getElementById('map').scrollIntoView(); return 0",
    )
    .await;
    assert_accessible(&page, "the console with a seat listed for resale").await;
    screenshot(&page, "console-resale-desktop").await;
    page.close().await.unwrap();

    // On a phone, the move's panel fits the order it belongs to.
    let small = phone(&driver).await;
    sign_in(&small, &app).await;
    small
        .goto(&format!("{}/admin/events/{event}", app.base))
        .await
        .unwrap();
    wait_for(
        &small,
        LOADS_WITHIN,
        &format!("return !!document.querySelector('{alice} [data-action=move]')"),
        json!(true),
    )
    .await;
    press(&small, &format!("{alice} [data-action=move]")).await;
    script(
        &small,
        &format!("document.querySelector('{alice} [data-move]').scrollIntoView(); return 0"),
    )
    .await;
    assert_accessible(&small, "the console moving an order's seats on a phone").await;
    screenshot(&small, "console-move-phone").await;
    small.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_resells_a_seat_another_buys_it_on_the_map() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|s| s.server.anonymous_sessions = false).await;
    let event = app.create_event().await;
    let order = buy(&app, &event, "ada", &["stalls-B-2", "stalls-B-3"]).await;
    let id = order["order_id"].as_str().unwrap();
    let driver = driver().await;

    // Ada, on her phone, offers one seat and takes the other back.
    let ada = phone(&driver).await;
    let token = app.user_token("ada");
    ada.goto(&format!("{}/?order={id}#buyer_token={token}", app.base))
        .await
        .unwrap();
    tickets_shown(&ada, 2).await;
    let resale_buttons = "return [...document.querySelectorAll('#order-page-box .ticket [data-resale]')].map((b) => [b.dataset.resale, b.getAttribute('aria-label')])";
    assert_eq!(
        script(&ada, resale_buttons).await,
        json!([
            ["resell", "Resell Stalls, Row B, Seat 2"],
            ["resell", "Resell Stalls, Row B, Seat 3"]
        ])
    );
    // Offering asks first, and says what becomes of the ticket and the money.
    press(&ada, "[aria-label='Resell Stalls, Row B, Seat 3']").await;
    wait_for(
        &ada,
        LOADS_WITHIN,
        resale_buttons,
        json!([
            ["resell", "Resell Stalls, Row B, Seat 2"],
            ["offer", "Offer it for resale: Stalls, Row B, Seat 3"],
            ["keep", "Keep it: Stalls, Row B, Seat 3"]
        ]),
    )
    .await;
    let question = script(
        &ada,
        "return document.querySelector('.resale-question').textContent",
    )
    .await;
    let question = question.as_str().unwrap();
    assert!(
        question.contains("stops working") && question.contains("refunds you"),
        "{question}"
    );
    assert_accessible(&ada, "the resale's question").await;
    screenshot(&ada, "resale-question-phone").await;
    press(&ada, "[aria-label='Keep it: Stalls, Row B, Seat 3']").await;
    wait_for(
        &ada,
        LOADS_WITHIN,
        resale_buttons,
        json!([
            ["resell", "Resell Stalls, Row B, Seat 2"],
            ["resell", "Resell Stalls, Row B, Seat 3"]
        ]),
    )
    .await;
    let (_, listed) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{id}/resale"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(listed["listed"], json!([]), "kept: nothing listed");
    press(&ada, "[aria-label='Resell Stalls, Row B, Seat 3']").await;
    press(
        &ada,
        "[aria-label='Offer it for resale: Stalls, Row B, Seat 3']",
    )
    .await;
    wait_for(
        &ada,
        LOADS_WITHIN,
        resale_buttons,
        json!([
            ["resell", "Resell Stalls, Row B, Seat 2"],
            ["take-back", "Take back from resale: Stalls, Row B, Seat 3"]
        ]),
    )
    .await;
    press(
        &ada,
        "[aria-label='Take back from resale: Stalls, Row B, Seat 3']",
    )
    .await;
    wait_for(
        &ada,
        LOADS_WITHIN,
        resale_buttons,
        json!([
            ["resell", "Resell Stalls, Row B, Seat 2"],
            ["resell", "Resell Stalls, Row B, Seat 3"]
        ]),
    )
    .await;
    press(&ada, "[aria-label='Resell Stalls, Row B, Seat 2']").await;
    press(
        &ada,
        "[aria-label='Offer it for resale: Stalls, Row B, Seat 2']",
    )
    .await;
    wait_for(
        &ada,
        LOADS_WITHIN,
        "return document.querySelector('#order-page-box .ticket .resale[data-state=listed] span')?.textContent ?? null",
        json!("Offered for resale: yours until someone buys it."),
    )
    .await;
    let (_, listed) = app
        .send(
            Method::GET,
            &format!("/v1/orders/{id}/resale"),
            &app.buyer("ada"),
            None,
        )
        .await;
    assert_eq!(listed, json!({"listed": ["stalls-B-2"]}));
    assert_accessible(&ada, "the buyer's tickets, one offered for resale").await;
    screenshot(&ada, "tickets-resale-phone").await;

    // Eve sees it on the map as resale, with its legend entry, and buys it.
    let eve = browser(&driver).await;
    let eve_token = app.user_token("eve");
    open_at(
        &eve,
        &format!("{}/?event={event}#buyer_token={eve_token}", app.base),
    )
    .await;
    wait_status(&eve, "stalls-B-2", "resale", LIVE_WITHIN).await;
    assert_eq!(
        script(
            &eve,
            "return [...document.querySelectorAll('#legend li')].map((l) => l.textContent).includes('Resale: offered again by its buyer')"
        )
        .await,
        json!(true)
    );
    assert_eq!(
        script(
            &eve,
            "return document.querySelector('[data-seat-id=\"stalls-B-2\"]').getAttribute('aria-disabled') === 'true'"
        )
        .await,
        json!(false)
    );
    assert_accessible(&eve, "the buyer's map with a seat for resale").await;
    screenshot(&eve, "map-resale-desktop").await;
    click_seat(&eve, "stalls-B-2").await;
    click(&eve, "hold").await;
    wait_status(&eve, "stalls-B-2", "held", LIVE_WITHIN).await;
    click(&eve, "buy").await;
    wait_for(
        &eve,
        LOADS_WITHIN,
        "const t = document.querySelector('#order .tickets'); return t && t.dataset.tickets || null",
        json!("1"),
    )
    .await;
    let bought: Value = script(
        &eve,
        "return document.getElementById('order').dataset.orderId",
    )
    .await;
    assert_eq!(
        seats_of(&app, bought.as_str().unwrap()).await,
        ["stalls-B-2"]
    );

    // Ada's page now shows the seat she kept alone.
    ada.refresh().await.unwrap();
    tickets_shown(&ada, 1).await;
    assert_eq!(
        script(&ada, "return [...document.querySelectorAll('#order-page-box .ticket strong')].map((s) => s.textContent)").await,
        json!(["Stalls, Row B, Seat 3"])
    );
    assert_eq!(seats_of(&app, id).await, ["stalls-B-3"]);
    ada.close().await.unwrap();
    eve.close().await.unwrap();
}
