//! The buyer's page at `/` in headless Chromium as a production server runs it and on a
//! busy sale: without anonymous sessions the map draws and follows the sale, and the page
//! says holding needs a signed-in buyer; a platform hands it one (`#buyer_token=…`) and the
//! buyer holds and buys as themselves. With the adaptive limit full, a hold is told to come
//! back: the page says it is busy, waits its turn without a second click, and the hold lands.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::limit::{fixed_limit, of_path, shed, the_one_place_taken};
use crate::helpers::pages::open_at;
use crate::helpers::stores::Store;
use crate::helpers::{
    assert_accessible, browser, click, click_seat, driver, phone, screenshot, script,
    spawn_app_with, visible, wait_for, wait_status, As, TestApp, LIVE_WITHIN, LOADS_WITHIN,
    ONE_AT_A_TIME,
};

/// What the panel shows: the sign-in notice, Hold, the busy line, and the message.
const PANEL: &str = "const shown = (id) => !document.getElementById(id).hidden;
    return {signin: shown('signin-needed'), hold: shown('hold'), busy: shown('busy'),
            message: document.getElementById('message').textContent, fatal: shown('fatal')};";

/// Whether the element `id` is shown within the window as the page stands (unscrolled).
fn in_view(id: &str) -> String {
    format!(
        "const r = document.getElementById('{id}').getBoundingClientRect();
         return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;"
    )
}

async fn production_default(store: Store) {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|s| {
        store.configure(s);
        s.server.anonymous_sessions = false;
    })
    .await;
    let event = app.create_event().await;
    let (_, held) = app
        .post_holds(&event, &app.buyer("bea"), &["stalls-A-1"])
        .await;
    assert!(held["hold_token"].is_string(), "{held}");
    let driver = driver().await;
    let url = format!("{}/?event={event}", app.base);

    for (name, page) in [
        ("desktop", browser(&driver).await),
        ("phone", phone(&driver).await),
    ] {
        open_at(&page, &url).await;
        // The map draws and follows the sale; holding is explained, not offered.
        assert_eq!(
            script(&page, PANEL).await,
            json!({"signin": true, "hold": false, "busy": false, "message": "", "fatal": false})
        );
        wait_status(&page, "stalls-A-1", "held", LIVE_WITHIN).await;
        let (_, other) = app
            .post_holds(&event, &app.buyer("cem"), &["stalls-C-4"])
            .await;
        assert!(other["hold_token"].is_string(), "{other}");
        wait_status(&page, "stalls-C-4", "held", LIVE_WITHIN).await;
        assert!(script(
            &page,
            "return document.getElementById('signin-needed').textContent"
        )
        .await
        .as_str()
        .unwrap()
        .contains("#buyer_token="));
        // The notice is in view with the map, on a phone too (where the panel is below).
        assert_eq!(
            script(&page, &in_view("signin-needed")).await,
            true,
            "{name}"
        );
        // A click chooses nothing and says why, where the buyer is looking.
        if name == "phone" {
            // A finger's taps, as the map hears them: the first may zoom in on seats too
            // small for a finger, the second picks.
            // A tap that zoomed says so on the map, where the finger is.
            let zoomed = script(
                &page,
                "const tap = () => {
                   const seat = document.querySelector('[data-seat-id=\"stalls-B-2\"]'), r = seat.getBoundingClientRect();
                   const at = {pointerId: 3, pointerType: 'touch', clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true};
                   seat.dispatchEvent(new PointerEvent('pointerdown', at));
                   seat.dispatchEvent(new PointerEvent('pointerup', at));
                   seat.dispatchEvent(new MouseEvent('click', at));
                 };
                 tap();
                 const zoomed = !document.getElementById('message').textContent;
                 const hinted = !document.getElementById('map-hint').hidden;
                 if (zoomed) tap();
                 return [zoomed, hinted];",
            )
            .await;
            assert_eq!(zoomed[0], zoomed[1], "a zoom is hinted, and only a zoom");
        } else {
            click_seat(&page, "stalls-B-2").await;
        }
        assert_eq!(
            script(&page, PANEL).await["message"],
            "Holding seats needs a signed-in buyer.",
            "{name}"
        );
        assert_eq!(script(&page, &in_view("message")).await, true, "{name}");
        assert_eq!(
            crate::helpers::attr(&page, "stalls-B-2", "aria-checked").await,
            "false"
        );
        assert_accessible(&page, &format!("the production page on a {name}")).await;
        screenshot(&page, &format!("page-production-{name}")).await;
        let (code, _) = app
            .send(
                Method::DELETE,
                &format!(
                    "/v1/events/{event}/holds/{}",
                    other["hold_token"].as_str().unwrap()
                ),
                &app.buyer("cem"),
                None,
            )
            .await;
        assert!(code.is_success());
        page.close().await.unwrap();
    }

    // A platform signs its buyer in and hands the page the buyer's token.
    let page = browser(&driver).await;
    let token = app.user_token("ada");
    open_at(&page, &format!("{url}#buyer_token={token}")).await;
    assert_eq!(
        script(&page, "return location.hash").await,
        "",
        "the token leaves the address"
    );
    assert_eq!(
        script(&page, PANEL).await,
        json!({"signin": false, "hold": true, "busy": false, "message": "", "fatal": false})
    );
    click_seat(&page, "stalls-B-2").await;
    click_seat(&page, "stalls-B-3").await;
    click(&page, "hold").await;
    wait_status(&page, "stalls-B-3", "held", LIVE_WITHIN).await;
    assert!(visible(&page, "buy").await);
    click(&page, "buy").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.getElementById('order').dataset.status || null",
        json!("paid"),
    )
    .await;
    assert_accessible(&page, "the production page with a platform's buyer").await;
    screenshot(&page, "page-production-bought").await;
    // The order is the platform's buyer's.
    let (_, orders) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/orders?q=ada"),
            &As::Admin,
            None,
        )
        .await;
    let seats: Vec<Value> = orders["orders"][0]["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(orders["orders"][0]["user_id"], "ada", "{orders}");
    assert_eq!(seats, vec![json!("stalls-B-2"), json!("stalls-B-3")]);
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_a_production_server_the_map_draws_and_a_platforms_buyer_holds_postgres() {
    production_default(Store::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_a_production_server_the_map_draws_and_a_platforms_buyer_holds_redis() {
    production_default(Store::Redis).await;
}

/// How many holds the page has asked for (each a `POST …/holds` fetch).
const HOLD_CALLS: &str = "return performance.getEntriesByType('resource')
    .filter((r) => r.initiatorType === 'fetch' && /\\/holds$/.test(new URL(r.name).pathname)).length";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_busy_sale_is_waited_out_and_the_hold_lands_without_a_second_click() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app: TestApp = spawn_app_with(fixed_limit(1)).await;
    let event = app.create_event().await;
    let driver = driver().await;
    let page = browser(&driver).await;
    open_at(&page, &format!("{}/?event={event}", app.base)).await;
    click_seat(&page, "stalls-B-1").await;
    click_seat(&page, "stalls-B-2").await;

    // Another buyer's hold takes the one place and waits on the lock.
    let (lock, first) = the_one_place_taken(&app, &event).await;

    // The page's hold is told to come back: it says so, and the buyer does nothing more.
    click(&page, "hold").await;
    shed(&app, "hold", 1.0).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !document.getElementById('busy').hidden",
        json!(true),
    )
    .await;
    let busy = script(&page, "return document.getElementById('busy').textContent").await;
    assert!(busy.as_str().unwrap().contains("Trying again in"), "{busy}");
    assert_eq!(
        script(&page, "return document.getElementById('hold').disabled").await,
        json!(true),
        "no second hold while the first waits its turn"
    );
    assert_accessible(&page, "the page waiting its turn").await;
    screenshot(&page, "page-busy").await;

    lock.commit().await.unwrap();
    assert!(first.await.unwrap().is_success());
    wait_status(&page, "stalls-B-2", "held", LOADS_WITHIN).await;
    assert_eq!(
        script(&page, PANEL).await,
        json!({"signin": false, "hold": false, "busy": false,
               "message": "Held. Buy before the time runs out.", "fatal": false})
    );
    // One call, and one more for each turn it was told to wait: nothing sent twice at once.
    let refused = of_path(&app, "boxoffice_overload_shed_total", "hold").await;
    assert!(refused >= 1.0);
    assert_eq!(script(&page, HOLD_CALLS).await, json!(refused as u64 + 1));
    let (_, seats) = app.get(&format!("/v1/events/{event}/seats")).await;
    let held: Vec<&str> = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "held")
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(held, ["stalls-A-1", "stalls-B-1", "stalls-B-2"]);
    page.close().await.unwrap();
}
