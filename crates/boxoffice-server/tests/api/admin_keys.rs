//! The console with keys, in a real headless Chromium: a platform key picks an organization,
//! an admin makes a key (shown once, with a copy button), revokes it after a confirmation,
//! adds a signing key and sets the webhook, and reads the audit log with its filters; and
//! each role sees what it may do and nothing more. Every screen is checked with axe-core and
//! saved to `target/screenshots/keys-*.png`, at desktop and phone size.

use fantoccini::Client;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::staff::{key, organization};
use crate::helpers::{
    assert_accessible, browser, buy, driver, find, phone, press, screenshot, script, spawn_app,
    type_into, wait_for, As, TestApp, LOADS_WITHIN, ONE_AT_A_TIME,
};

/// Signs in at `/admin` with `key` and waits for the heading `lands_on`.
async fn sign_in_with(page: &Client, app: &TestApp, key: &str, lands_on: &str) {
    page.goto(&format!("{}/admin", app.base)).await.unwrap();
    type_into(page, "input[name=admin_token]", key).await;
    press(page, "#signin button[type=submit]").await;
    heading(page, lands_on).await;
}

/// On the organization chooser: opens the organization `id`.
async fn choose(page: &Client, id: &str) {
    page.execute(
        "document.querySelector('select[name=organization]').value = arguments[0]",
        vec![json!(id)],
    )
    .await
    .unwrap();
    press(page, "#organization-form button[type=submit]").await;
    heading(page, "Venues and events").await;
}

async fn heading(page: &Client, want: &str) {
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!(want),
    )
    .await;
}

async fn count(page: &Client, css: &str) -> u64 {
    script(
        page,
        &format!("return document.querySelectorAll({css:?}).length"),
    )
    .await
    .as_u64()
    .unwrap()
}

async fn shown(page: &Client, id: &str) -> bool {
    script(
        page,
        &format!("const el = document.getElementById({id:?}); return !!el && !el.hidden"),
    )
    .await
        == json!(true)
}

fn token_of(who: &As) -> String {
    match who {
        As::Token(token) => token.clone(),
        _ => unreachable!("a key"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_admin_makes_and_revokes_keys_sets_the_webhook_and_reads_the_audit_log() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let acme = organization(&app, "Acme Concerts").await;
    let acme_id = acme["id"].as_str().unwrap().to_owned();
    let driver = driver().await;
    let page = browser(&driver).await;

    // A platform key picks the organization first.
    sign_in_with(&page, &app, &app.admin_token, "Choose an organization").await;
    assert_eq!(count(&page, "select[name=organization] option").await, 2);
    assert_accessible(&page, "choosing an organization").await;
    screenshot(&page, "keys-01-choose-organization").await;
    choose(&page, &acme_id).await;
    assert_eq!(
        script(&page, "return document.getElementById('who').textContent").await,
        "Server administrator · platform · Acme Concerts"
    );

    // A new key: shown once, with a copy button, and it works at once.
    press(&page, "#nav-keys").await;
    heading(&page, "Keys").await;
    type_into(&page, "#new-key input[name=name]", "Front desk").await;
    page.execute(
        "document.querySelector('#new-key select[name=role]').value = 'sales'",
        vec![],
    )
    .await
    .unwrap();
    press(&page, "#new-key button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('#keys [data-key-id]').length",
        json!(1),
    )
    .await;
    let made = script(
        &page,
        "return [document.getElementById('new-key-value').textContent,
                 document.getElementById('key-result').textContent.includes('shown once'),
                 !!document.querySelector('#key-result [data-action=copy]')]",
    )
    .await;
    let secret = made[0].as_str().unwrap().to_owned();
    assert!(secret.starts_with("bxk_") && secret.len() == 47, "{secret}");
    assert_eq!((&made[1], &made[2]), (&json!(true), &json!(true)));
    let front_desk = As::Token(secret.clone());
    let (status, me) = app.send(Method::GET, "/v1/me", &front_desk, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (me["role"].as_str(), me["organization_id"].as_str()),
        (Some("sales"), Some(acme_id.as_str()))
    );
    press(&page, "#key-result [data-action=copy]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('[data-copied=new-key-value]').textContent !== ''",
        json!(true),
    )
    .await;
    let listed = script(&page, "return document.getElementById('keys').textContent").await;
    let listed = listed.as_str().unwrap();
    assert!(
        listed.contains("Front desk") && listed.contains("sales") && listed.contains(&secret[..12])
    );
    assert!(!listed.contains(&secret), "the list shows the prefix only");

    // A signing key and the webhook: their secrets shown once too.
    press(&page, "#new-signing-key button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('#signing-keys [data-kid]').length",
        json!(1),
    )
    .await;
    assert!(
        script(
            &page,
            "return document.getElementById('new-signing-secret').textContent.length"
        )
        .await
        .as_u64()
        .unwrap()
            > 20
    );
    type_into(
        &page,
        "#webhook-form input[name=url]",
        "https://platform.example/hooks/acme",
    )
    .await;
    press(&page, "#webhook-form button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "const el = document.querySelector('[data-webhook-url]'); return el && el.textContent",
        json!("https://platform.example/hooks/acme"),
    )
    .await;
    let webhook_secret = script(
        &page,
        "return document.getElementById('webhook-secret').textContent",
    )
    .await;
    assert!(webhook_secret.as_str().unwrap().starts_with("whsec_"));
    assert_accessible(&page, "the keys screen").await;
    screenshot(&page, "keys-02-made").await;

    // Revoked after a confirmation: it stops at once.
    press(&page, "#keys [data-action=revoke]").await;
    assert_eq!(
        script(&page, "return document.getElementById('confirm').open").await,
        json!(true)
    );
    assert_accessible(&page, "the revocation's confirmation").await;
    screenshot(&page, "keys-03-revoke-confirm").await;
    press(&page, "#confirm-yes").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('#keys [data-action=revoke]').length",
        json!(0),
    )
    .await;
    assert_eq!(
        app.send(Method::GET, "/v1/me", &front_desk, None).await.0,
        StatusCode::UNAUTHORIZED
    );

    // The audit log: newest first, filtered, each change before → after; no secret.
    press(&page, "#nav-audit").await;
    heading(&page, "Audit log").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return Array.from(document.querySelectorAll('[data-audit-id]'), (e) => e.dataset.auditAction)",
        json!([
            "key.revoked",
            "webhook.created",
            "signing_key.created",
            "key.created",
            "organization.created"
        ]),
    )
    .await;
    let log = script(&page, "return document.getElementById('audit').textContent").await;
    let log = log.as_str().unwrap();
    assert!(!log.contains(&secret) && !log.contains(webhook_secret.as_str().unwrap()));
    assert!(
        log.contains("by Server administrator · platform")
            && !log.contains("BOXOFFICE_ADMIN_TOKEN"),
        "the server's token is its administrator: {log}"
    );
    assert_accessible(&page, "the audit log").await;
    screenshot(&page, "keys-04-audit").await;
    type_into(&page, "#audit-filter input[name=action]", "key.revoked").await;
    press(&page, "#audit-filter button[type=submit]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelectorAll('[data-audit-id]').length",
        json!(1),
    )
    .await;
    let row = script(
        &page,
        "return Array.from(document.querySelectorAll('[data-audit-id] .changes tbody tr'), (r) => Array.from(r.cells, (c) => c.textContent.trim()).join(' '))",
    )
    .await;
    assert!(
        row[0].as_str().unwrap().starts_with("revoked_at none → ")
            && row[0].as_str().unwrap().len() > "revoked_at none → ".len(),
        "{row}"
    );
    screenshot(&page, "keys-05-audit-filtered").await;
    page.close().await.unwrap();

    // At a phone's size.
    let page = phone(&driver).await;
    sign_in_with(&page, &app, &app.admin_token, "Choose an organization").await;
    screenshot(&page, "keys-06-choose-phone").await;
    choose(&page, &acme_id).await;
    for (path, title, name) in [
        ("/admin/keys", "Keys", "keys-07-keys-phone"),
        ("/admin/audit", "Audit log", "keys-08-audit-phone"),
    ] {
        page.goto(&format!("{}{path}", app.base)).await.unwrap();
        heading(&page, title).await;
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.querySelectorAll('[data-key-id], [data-audit-id]').length > 0",
            json!(true),
        )
        .await;
        assert_accessible(&page, &format!("{title} on a phone")).await;
        screenshot(&page, name).await;
    }
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_role_sees_what_it_may_do_and_nothing_more() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app().await;
    let event = app.create_event().await;
    buy(&app, &event, "alice", &["stalls-A-1"]).await;
    let default = "00000000-0000-0000-0000-000000000001";
    let driver = driver().await;
    let page = browser(&driver).await;

    // Not a key: refused with a reason.
    for (value, said) in [
        (
            "bxk_nothing",
            "That key is not valid here: unknown, revoked or expired.",
        ),
        (
            token_of(&app.buyer("alice")).as_str(),
            "That is a buyer's token, not a key.",
        ),
    ] {
        page.goto(&format!("{}/admin", app.base)).await.unwrap();
        type_into(&page, "input[name=admin_token]", value).await;
        press(&page, "#signin button[type=submit]").await;
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.getElementById('signin-error').textContent",
            json!(said),
        )
        .await;
    }

    // What each role finds: (links on the home, nav, the dashboard's actions).
    let dashboard = format!("/admin/events/{event}");
    let mut seen: Vec<(String, Value)> = Vec::new();
    for role in ["admin", "sales", "reports", "checkin"] {
        let (who, _) = key(&app, default, role).await;
        sign_in_with(&page, &app, &token_of(&who), "Venues and events").await;
        let home = script(
            &page,
            "return {
               import: !!document.querySelector(\"a[href='/admin/venues/new']\"),
               new_event: !!document.querySelector(\"a[href='/admin/events/new']\"),
               new_season: !!document.querySelector(\"a[href='/admin/seasons/new']\"),
               events: document.querySelectorAll('[data-event-id]').length }",
        )
        .await;
        let nav = json!({"keys": shown(&page, "nav-keys").await, "audit": shown(&page, "nav-audit").await});
        page.goto(&format!("{}{dashboard}", app.base))
            .await
            .unwrap();
        heading(&page, "Spring Gala").await;
        wait_for(
            &page,
            LOADS_WITHIN,
            "return document.querySelectorAll('#map [data-seat-id]').length > 0",
            json!(true),
        )
        .await;
        if role != "checkin" {
            wait_for(
                &page,
                LOADS_WITHIN,
                "return document.querySelectorAll('[data-order-id]').length",
                json!(1),
            )
            .await;
        }
        let actions = script(
            &page,
            "return {
               put_on_sale: !!document.querySelector('[data-action=put-on-sale]'),
               orders: document.querySelectorAll('[data-order-id]').length,
               cancel: document.querySelectorAll('[data-action=cancel]').length,
               csv: !!document.getElementById('csv') }",
        )
        .await;
        assert_accessible(&page, &format!("the dashboard for a {role} key")).await;
        screenshot(&page, &format!("keys-10-dashboard-{role}")).await;
        page.goto(&format!("{}/admin/keys", app.base))
            .await
            .unwrap();
        let keys_heading = if role == "admin" {
            "Keys"
        } else {
            "Not for this key"
        };
        heading(&page, keys_heading).await;
        seen.push((
            role.to_owned(),
            json!({"home": home, "nav": nav, "dashboard": actions}),
        ));
        press(&page, "#sign-out").await;
        find(&page, "input[name=admin_token]").await;
    }
    let all = |import, nav_keys, audit, put, orders, cancel, csv| {
        json!({
            "home": {"import": import, "new_event": import, "new_season": import, "events": 1},
            "nav": {"keys": nav_keys, "audit": audit},
            "dashboard": {"put_on_sale": put, "orders": orders, "cancel": cancel, "csv": csv},
        })
    };
    assert_eq!(
        seen,
        [
            ("admin".to_owned(), all(true, true, true, true, 1, 1, true)),
            (
                "sales".to_owned(),
                all(false, false, false, false, 1, 1, true)
            ),
            (
                "reports".to_owned(),
                all(false, false, true, false, 1, 0, true)
            ),
            (
                "checkin".to_owned(),
                all(false, false, false, false, 0, 0, false)
            ),
        ]
    );

    // A reports key's phone screen: the read-only dashboard.
    let (reports, _) = key(&app, default, "reports").await;
    let phone_page = phone(&driver).await;
    sign_in_with(&phone_page, &app, &token_of(&reports), "Venues and events").await;
    assert_accessible(&phone_page, "the home for a reports key on a phone").await;
    screenshot(&phone_page, "keys-11-home-reports-phone").await;
    phone_page.close().await.unwrap();
    page.close().await.unwrap();
}
