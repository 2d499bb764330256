//! `<boxoffice-seat-map>` at its edges, in headless Chromium on a platform's origin: what
//! `/embed.js` leaves in the host's page (the element and no global, loaded as a module or
//! as a classic script, twice), `hold()` with nothing chosen (`nothing_selected`, nothing
//! sent), `select()` telling which seats it could not take and why, and a busy sale's turn
//! waited out until the hold lands. The bundle as served is also checked by Node's parser,
//! as a classic script and as a module (`node --check`, Debian's `nodejs`).

use serde_json::json;

use crate::helpers::embed::{call, count_of, platform, seat_status, shop_and_server, shop_with};
use crate::helpers::limit::{fixed_limit, of_path, shed, the_one_place_taken};
use crate::helpers::{
    assert_accessible, browser, driver, screenshot, script, wait_for, LIVE_WITHIN, LOADS_WITHIN,
    ONE_AT_A_TIME,
};

const READY: &str = "return window.seen.some((e) => e.type === 'ready')";

/// How many holds the element has asked for (each a `POST …/holds` fetch).
const HOLD_CALLS: &str = "return performance.getEntriesByType('resource')
    .filter((r) => r.initiatorType === 'fetch' && /\\/holds$/.test(new URL(r.name).pathname)).length";

/// `/embed.js` is joined from the element's modules when it is served: whatever the joiner
/// makes of them must parse, as a classic script and as a module.
#[tokio::test]
async fn the_served_embed_js_parses_as_a_script_and_as_a_module() {
    let app = crate::helpers::spawn_app().await;
    let bundle = reqwest::get(format!("{}/embed.js", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(bundle.contains("boxoffice-seat-map"), "{}", &bundle[..200]);
    let dir = std::env::temp_dir().join(format!("embed-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["embed.js", "embed.mjs"] {
        let path = dir.join(name);
        std::fs::write(&path, &bundle).unwrap();
        let checked = std::process::Command::new("node")
            .arg("--check")
            .arg(&path)
            .output()
            .unwrap_or_else(|e| {
                panic!("node is missing ({e}): apt-get install nodejs (.ci/run installs it)")
            });
        assert!(
            checked.status.success(),
            "node --check {name}: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embed_js_defines_the_element_and_nothing_else_as_a_module_or_a_classic_script() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (shop_listener, shop, app) = shop_and_server(|_| {}).await;
    let event = app.create_event().await;
    let token = app.user_token("shopper");
    let base = &app.base;
    // A host with a `Hall` of its own that loads the script three times, both ways.
    platform(
        shop_listener,
        format!(
            r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>
<script>
window.errors = [];
window.addEventListener('error', (e) => window.errors.push(String(e.message)));
var Hall = "the host's own";
window.before = Object.getOwnPropertyNames(window);
</script>
<script src="{base}/embed.js"></script>
<script type="module" src="{base}/embed.js"></script>
<script src="{base}/embed.js"></script>
</head><body><main><h1>Host</h1>
<boxoffice-seat-map server="{base}" event="{event}" token="{token}"></boxoffice-seat-map>
</main><script>
window.seen = [];
document.querySelector('boxoffice-seat-map').addEventListener('ready', (e) => window.seen.push({{type: 'ready', detail: e.detail}}));
</script></body></html>"#
        ),
    )
    .await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, READY, json!(true)).await;
    // What the host's page gained besides its own `before` and `seen` (and chromedriver's
    // `ret_nodes`, left by its own script runs).
    let host = script(
        &page,
        "return {errors: window.errors, hall: Hall,
                 added: Object.getOwnPropertyNames(window).filter((n) => !window.before.includes(n) && !['before', 'seen', 'ret_nodes'].includes(n))}",
    )
    .await;
    assert_eq!(
        host,
        json!({"errors": [], "hall": "the host's own", "added": []})
    );
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hold_with_nothing_chosen_sends_nothing_and_select_says_what_it_could_not_take() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event, shop) = shop_with(r#"locale="en" max-seats="2""#, |_| {}).await;
    let (_, other) = app
        .post_holds(&event, &app.buyer("bea"), &["stalls-A-1"])
        .await;
    assert!(other["hold_token"].is_string(), "{other}");
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, READY, json!(true)).await;
    wait_for(
        &page,
        LIVE_WITHIN,
        &seat_status("stalls-A-1"),
        json!("held"),
    )
    .await;

    assert_eq!(call(&page, "map.hold()").await, json!(null));
    let failed = script(
        &page,
        "return window.seen.filter((e) => e.type === 'holdfailed').map((e) => e.detail.code)",
    )
    .await;
    assert_eq!(failed, json!(["nothing_selected"]));
    assert_eq!(
        script(&page, HOLD_CALLS).await,
        json!(0),
        "nothing was sent"
    );

    let refused = call(
        &page,
        "map.select(['stalls-A-1', 'circle-A-1', 'nowhere-9', 'stalls-B-1', 'stalls-B-2', 'stalls-B-3'])",
    )
    .await;
    assert_eq!(
        refused,
        json!([
            {"id": "stalls-A-1", "reason": "taken"},
            {"id": "circle-A-1", "reason": "not_for_sale"},
            {"id": "nowhere-9", "reason": "unknown"},
            {"id": "stalls-B-3", "reason": "limit"},
        ])
    );
    assert_eq!(
        call(&page, "map.selection.map((s) => s.id)").await,
        json!(["stalls-B-1", "stalls-B-2"])
    );
    // A programmatic change: no selectionchange.
    assert_eq!(script(&page, &count_of("selectionchange")).await, json!(0));
    let hold = call(&page, "map.hold()").await;
    assert_eq!(hold["seats"].as_array().unwrap().len(), 2, "{hold}");
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_element_waits_out_a_busy_sale_and_its_hold_lands() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let (app, event, shop) = shop_with(r#"locale="en""#, fixed_limit(1)).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    page.goto(&format!("{shop}/")).await.unwrap();
    wait_for(&page, LOADS_WITHIN, READY, json!(true)).await;
    assert_eq!(call(&page, "map.select(['stalls-B-1'])").await, json!([]));

    // Another buyer's hold takes the one place and waits on the lock.
    let (lock, first) = the_one_place_taken(&app, &event).await;

    script(
        &page,
        "window.holding = document.querySelector('boxoffice-seat-map').hold(); return 0",
    )
    .await;
    shed(&app, "hold", 1.0).await;
    let busy =
        "const b = document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('.busy');
        return b.hidden ? null : b.textContent";
    wait_for(
        &page,
        LOADS_WITHIN,
        &format!("{busy} !== null"),
        json!(true),
    )
    .await;
    let said = script(&page, busy).await;
    assert!(said.as_str().unwrap().contains("Trying again in"), "{said}");
    assert_accessible(&page, "the element waiting its turn").await;
    script(&page, "document.querySelector('boxoffice-seat-map').shadowRoot.querySelector('.busy').scrollIntoView({block: 'end'}); return 0").await;
    screenshot(&page, "embed-05-busy").await;

    lock.commit().await.unwrap();
    assert!(first.await.unwrap().is_success());
    let hold = call(&page, "window.holding").await;
    assert_eq!(hold["seats"][0]["id"], "stalls-B-1", "{hold}");
    assert_eq!(script(&page, busy).await, json!(null));
    assert_eq!(script(&page, &count_of("holdfailed")).await, json!(0));
    let refused = of_path(&app, "boxoffice_overload_shed_total", "hold").await;
    assert_eq!(script(&page, HOLD_CALLS).await, json!(refused as u64 + 1));
    assert_eq!(
        crate::helpers::held(&app, &event).await,
        ["stalls-A-1", "stalls-B-1"]
    );
    page.close().await.unwrap();
}
