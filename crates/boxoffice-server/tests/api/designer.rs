//! The venue designer (`/admin/venues/design`) in headless Chromium: a hall of three
//! sections (one curved, one turned upright), a standing area and a stage drawn with the
//! mouse and the keyboard, bad forms refused, undone and redone, a problem that stops the
//! save, and a save that the API and the pretix export read back as exactly what was
//! drawn; an imported plan opened in the designer, one row changed and saved; a venue in
//! use opened as a copy; a phone shown the drawing read-only. And the drawing's edits alone
//! under Node's test runner.
//!
//! (A long file: one drawing made step by step and read back whole through the API and the
//! export is one test, and reads best in one place.)

use std::time::Duration;

use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::key::Key;
use fantoccini::Client;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{
    assert_accessible, browser, driver, find, phone, press, screenshot, script, sign_in,
    spawn_app_with, type_into, upload, wait_for, As, TestApp, LOADS_WITHIN, ONE_AT_A_TIME,
};

#[test]
fn the_designers_drawing_and_its_edits_pass_nodes_test_runner() {
    crate::helpers::node_tests("design.test.mjs", 11);
}

fn key(k: Key) -> String {
    String::from(char::from(k))
}

/// Sends `keys` to whatever has the focus.
async fn keys(page: &Client, keys: &str) {
    page.active_element()
        .await
        .unwrap()
        .send_keys(keys)
        .await
        .unwrap();
}

/// How many items of `kind` ("rows", "seats", "shape", "text") the drawing shows.
async fn items(page: &Client, kind: &str) -> Value {
    script(
        page,
        &format!("return document.querySelectorAll('#drawing .item-{kind}').length"),
    )
    .await
}

/// The problems listed, by kind.
async fn problems(page: &Client) -> Value {
    script(
        page,
        "return [...document.querySelectorAll('#problems [data-problem]')].map((p) => p.dataset.problem)",
    )
    .await
}

/// Opens `tool`'s form, fills `fields` (name, value) and presses Add.
async fn add(page: &Client, tool: &str, fields: &[(&str, &str)]) {
    press(page, &format!("[data-tool={tool}]")).await;
    for (name, value) in fields {
        let css = format!("[data-tool-form={tool}] [name={name}]");
        if script(
            page,
            &format!("return document.querySelector('{css}').tagName"),
        )
        .await
            == "SELECT"
        {
            script(
                page,
                &format!(
                    "const s = document.querySelector('{css}'); s.value = '{value}'; return 0"
                ),
            )
            .await;
        } else {
            type_into(page, &css, value).await;
        }
    }
    press(
        page,
        &format!("[data-tool-form={tool}] button[type=submit]"),
    )
    .await;
}

/// The drawing's item whose accessible name starts with `name`.
fn item(name: &str) -> String {
    format!("#drawing [data-item][aria-label^=\"{name}\"]")
}

async fn focus(page: &Client, name: &str) {
    script(
        page,
        &format!(
            "document.querySelector('{}').focus(); return 0",
            item(name).replace('\'', "\\'")
        ),
    )
    .await;
}

async fn open_designer(page: &Client, app: &TestApp, path: &str, title: &str) {
    page.goto(&format!("{}{path}", app.base)).await.unwrap();
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!(title),
    )
    .await;
}

/// Presses "Save venue" and waits for the venue's page; the venue's id.
async fn save(page: &Client, name: &str) -> String {
    press(page, "#save").await;
    wait_for(
        page,
        LOADS_WITHIN,
        "return /^\\/admin\\/venues\\/[^/]+$/.test(location.pathname) && document.querySelector('h1').textContent",
        json!(name),
    )
    .await;
    let path = script(page, "return location.pathname").await;
    path.as_str()
        .unwrap()
        .trim_start_matches("/admin/venues/")
        .to_owned()
}

async fn venue(app: &TestApp, id: &str) -> Value {
    let (status, venue) = app
        .send(Method::GET, &format!("/v1/venues/{id}"), &As::Admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{venue}");
    venue
}

fn section<'a>(venue: &'a Value, id: &str) -> &'a Value {
    venue["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no section {id} in {venue}"))
}

fn numbers(row: &Value) -> Vec<&str> {
    row["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["number"].as_str().unwrap())
        .collect()
}

fn xy(seat: &Value) -> (f64, f64) {
    (seat["x"].as_f64().unwrap(), seat["y"].as_f64().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_organizer_draws_a_hall_with_mouse_and_keyboard_and_saves_exactly_it() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|_| {}).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    press(&page, "a[href='/admin/venues/design']").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!("Draw a venue"),
    )
    .await;
    assert_eq!(
        problems(&page).await,
        json!(["name", "no-seats"]),
        "an empty drawing says what it lacks"
    );
    // A blank canvas says where to start, shows its grid and what a square measures, and
    // lists nothing drawn.
    assert_eq!(
        script(
            &page,
            "const hint = document.getElementById('empty-hint'); return [hint.hidden, hint.textContent.includes('Add rows'), document.querySelectorAll('#drawing .grid rect').length, document.getElementById('grid-legend').textContent.startsWith('Grid: a square is 1 unit'), document.querySelectorAll('#drawn [data-nothing-drawn]').length]"
        )
        .await,
        json!([false, true, 2, true, 1])
    );
    screenshot(&page, "designer-blank").await;

    // Bad forms are refused field by field and draw nothing.
    for (field, value) in [
        ("rows", "0"),
        ("seatsPerRow", "5000"),
        ("curve", "200"),
        ("firstRow", "!?"),
    ] {
        let mut fields = vec![("section", "Stalls"), ("rows", "3"), ("seatsPerRow", "6")];
        fields.push((field, value));
        add(&page, "rows", &fields).await;
        assert_eq!(
            script(
                &page,
                &format!("return document.querySelector('[data-tool-form=rows] [name={field}]').getAttribute('aria-invalid')")
            )
            .await,
            "true",
            "{field} = {value}"
        );
        assert_eq!(items(&page, "rows").await, 0, "{field} = {value}");
        press(&page, "[data-action=cancel-tool]").await;
    }

    type_into(&page, "#venue-name", "Riverside Hall").await;
    add(
        &page,
        "rows",
        &[("section", "Stalls"), ("rows", "3"), ("seatsPerRow", "6")],
    )
    .await;
    // Its first two seats: a wheelchair space and its companion seat.
    focus(&page, "Stalls").await;
    type_into(&page, "[data-item-form] [name=accessible]", "A-1").await;
    type_into(&page, "[data-item-form] [name=companion]", "A-2").await;
    press(&page, "[data-item-form] button[type=submit]").await;
    assert_eq!(
        script(
            &page,
            "return [document.querySelectorAll('#drawing .seat.accessible').length, document.querySelectorAll('#drawing .seat.companion').length]"
        )
        .await,
        json!([1, 1])
    );
    add(
        &page,
        "rows",
        &[
            ("section", "Circle"),
            ("rows", "2"),
            ("seatsPerRow", "8"),
            ("numbering", "centre"),
            ("curve", "40"),
        ],
    )
    .await;
    add(
        &page,
        "rows",
        &[
            ("section", "Box"),
            ("rows", "1"),
            ("seatsPerRow", "2"),
            ("firstRow", "1"),
            ("numbering", "rtl"),
        ],
    )
    .await;
    // The box, just added, has the focus: Shift with the right arrow turns it upright.
    let turn = (0..18).map(|_| key(Key::Right)).collect::<String>();
    keys(&page, &format!("{}{turn}", key(Key::Shift))).await;
    add(&page, "area", &[("text", "Floor"), ("w", "10"), ("h", "6")]).await;
    add(
        &page,
        "shape",
        &[("text", "STAGE"), ("w", "16"), ("h", "4")],
    )
    .await;
    // The stage goes up three with the keyboard (its outline shows where it is).
    focus(&page, "Stage").await;
    let top =
        "return Number(document.querySelector('#drawing .selected .selection').getAttribute('y'))";
    let before = script(&page, top).await.as_f64().unwrap();
    keys(&page, &key(Key::Up).repeat(3)).await;
    let stage_top = script(&page, top).await.as_f64().unwrap();
    assert!(
        (before - stage_top - 3.0).abs() < 1e-6,
        "{before} {stage_top}"
    );
    assert_eq!(items(&page, "rows").await, 3);
    assert_eq!(items(&page, "shape").await, 2);
    assert_eq!(problems(&page).await, json!([]));
    // The list of what is drawn names every item; choosing one there selects it.
    assert_eq!(
        script(
            &page,
            "return [document.getElementById('empty-hint').hidden, [...document.querySelectorAll('#drawn [data-pick]')].map((b) => b.textContent)]"
        )
        .await,
        json!([true, ["Stalls, rows A to C, 18 seats", "Circle, rows A to B, 16 seats", "Box, row 1, 2 seats", "Area Floor", "Stage STAGE"]])
    );
    press(&page, "#drawn li:nth-child(2) [data-pick]").await;
    assert_eq!(
        script(
            &page,
            "return [document.querySelector('#drawing .selected').getAttribute('aria-label'), document.activeElement.getAttribute('aria-label'), document.querySelector('#drawn [aria-current=true]').textContent]"
        )
        .await,
        json!(["Circle, rows A to B, 16 seats", "Circle, rows A to B, 16 seats", "Circle, rows A to B, 16 seats"])
    );

    // The area goes right with the mouse, past the seats.
    let area = find(&page, &format!("{} .outline", item("Area Floor"))).await;
    let drag = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: area,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(150)),
            x: 150.0,
            y: 0.0,
        })
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(150)),
            x: 200.0,
            y: 0.0,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    page.perform_actions(drag).await.unwrap();

    // A text, undone and redone by the buttons and the keys.
    add(&page, "text", &[("text", "Exit")]).await;
    assert_eq!(items(&page, "text").await, 1);
    press(&page, "#undo").await;
    assert_eq!(items(&page, "text").await, 0);
    press(&page, "#redo").await;
    assert_eq!(items(&page, "text").await, 1);
    focus(&page, "Text Exit").await;
    keys(&page, &format!("{}z", key(Key::Control))).await;
    assert_eq!(items(&page, "text").await, 0);
    script(&page, "document.getElementById('undo').focus(); return 0").await;
    keys(&page, &format!("{}{}z", key(Key::Control), key(Key::Shift))).await;
    assert_eq!(items(&page, "text").await, 1);
    // With the focus nowhere (the button pressed gone, say), the keys still undo and redo.
    script(&page, "document.activeElement.blur(); return 0").await;
    keys(&page, &format!("{}z", key(Key::Control))).await;
    assert_eq!(items(&page, "text").await, 0);
    keys(&page, &format!("{}{}z", key(Key::Control), key(Key::Shift))).await;
    assert_eq!(items(&page, "text").await, 1);

    // A row label twice in a section stops the save, until undone.
    add(
        &page,
        "rows",
        &[
            ("section", "Stalls"),
            ("rows", "1"),
            ("seatsPerRow", "4"),
            ("firstRow", "C"),
        ],
    )
    .await;
    assert_eq!(problems(&page).await, json!(["repeated-row"]));
    press(&page, "#save").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !!document.querySelector('#design-result .error')",
        json!(true),
    )
    .await;
    assert_eq!(app.count("venue").await, 0, "nothing saved");
    press(&page, "#undo").await;
    assert_eq!(problems(&page).await, json!([]));

    press(&page, "#focal").await;
    assert_accessible(&page, "the designer with a hall drawn").await;
    screenshot(&page, "designer-desktop").await;
    page.set_window_size(820, 1180).await.unwrap();
    screenshot(&page, "designer-tablet").await;
    page.set_window_size(1280, 900).await.unwrap();

    let id = save(&page, "Riverside Hall").await;
    let saved = venue(&app, &id).await;
    assert_eq!(saved["seat_count"], 36, "{saved}");
    let ids: Vec<_> = saved["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let rows: Vec<_> = s["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r["label"].as_str().unwrap(),
                        r["seats"].as_array().unwrap().len(),
                    )
                })
                .collect();
            (s["id"].as_str().unwrap(), s["name"].as_str().unwrap(), rows)
        })
        .collect();
    assert_eq!(
        ids,
        vec![
            ("stalls", "Stalls", vec![("A", 6), ("B", 6), ("C", 6)]),
            ("circle", "Circle", vec![("A", 8), ("B", 8)]),
            ("box", "Box", vec![("1", 2)]),
        ]
    );
    let stalls = section(&saved, "stalls");
    assert_eq!(numbers(&stalls["rows"][0]), ["1", "2", "3", "4", "5", "6"]);
    let front = &stalls["rows"][0]["seats"];
    assert_eq!(
        (
            &front[0]["accessible"],
            &front[1]["companion"],
            front[2].get("accessible")
        ),
        (&json!(true), &json!(true), None)
    );
    let (a1, a2) = (xy(&front[0]), xy(&front[1]));
    assert!(
        (a2.0 - a1.0 - 1.0).abs() < 1e-6 && a1.1 == a2.1,
        "{a1:?} {a2:?}"
    );
    let circle = &section(&saved, "circle")["rows"][0];
    assert_eq!(numbers(circle), ["8", "6", "4", "2", "1", "3", "5", "7"]);
    let (end, middle) = (xy(&circle["seats"][0]), xy(&circle["seats"][3]));
    assert!(
        end.1 < middle.1,
        "a curved row's ends come forward: {end:?} {middle:?}"
    );
    let boxed = &section(&saved, "box")["rows"][0];
    assert_eq!(numbers(boxed), ["2", "1"]);
    let (b1, b2) = (xy(&boxed["seats"][0]), xy(&boxed["seats"][1]));
    assert!(
        (b1.0 - b2.0).abs() < 1e-6 && ((b2.1 - b1.1).abs() - 1.0).abs() < 1e-6,
        "turned upright: {b1:?} {b2:?}"
    );
    let shapes: Vec<_> = saved["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        shapes,
        vec![("area", "Floor"), ("stage", "STAGE"), ("label", "Exit")]
    );
    let seats_right = saved["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
        .flat_map(|r| r["seats"].as_array().unwrap())
        .map(|s| s["x"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    assert!(
        saved["shapes"][0]["rect"]["x"].as_f64().unwrap() > seats_right,
        "dragged right of every seat: {saved}"
    );
    let stage = &saved["shapes"][1]["rect"];
    assert!(
        (stage["y"].as_f64().unwrap() - (stage_top + 0.3)).abs() < 1e-6,
        "the stage where the keys left it: {stage} {stage_top}"
    );
    let focal = &saved["focal_point"];
    assert_eq!(
        (focal["x"].as_f64().unwrap(), focal["y"].as_f64().unwrap()),
        (
            stage["x"].as_f64().unwrap() + stage["w"].as_f64().unwrap() / 2.0,
            stage["y"].as_f64().unwrap() + stage["h"].as_f64().unwrap() / 2.0
        ),
        "the focal point at the stage's centre"
    );

    // The pretix export has exactly those rows and seats.
    let (status, plan) = app
        .send(
            Method::GET,
            &format!("/v1/venues/{id}/export?format=pretix"),
            &As::Admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    let exported: Vec<_> = plan["zones"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|z| !z["rows"].as_array().unwrap().is_empty())
        .map(|z| {
            let rows: Vec<_> = z["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let seats: Vec<_> = r["seats"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["seat_number"].as_str().unwrap().to_owned())
                        .collect();
                    (r["row_number"].as_str().unwrap().to_owned(), seats)
                })
                .collect();
            (z["name"].as_str().unwrap().to_owned(), rows)
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let stalls_row = s(&["1", "2", "3", "4", "5", "6"]);
    assert_eq!(
        exported,
        vec![
            (
                "Stalls".to_owned(),
                vec![
                    ("A".to_owned(), stalls_row.clone()),
                    ("B".to_owned(), stalls_row.clone()),
                    ("C".to_owned(), stalls_row)
                ]
            ),
            (
                "Circle".to_owned(),
                vec![
                    ("A".to_owned(), s(&["8", "6", "4", "2", "1", "3", "5", "7"])),
                    ("B".to_owned(), s(&["8", "6", "4", "2", "1", "3", "5", "7"]))
                ]
            ),
            ("Box".to_owned(), vec![("1".to_owned(), s(&["2", "1"]))]),
        ]
    );
    page.close().await.unwrap();

    // On a phone the drawing is shown, read-only, and says why.
    let small = phone(&driver).await;
    sign_in(&small, &app).await;
    open_designer(
        &small,
        &app,
        &format!("/admin/venues/{id}/design"),
        "Edit Riverside Hall",
    )
    .await;
    assert_eq!(
        script(
            &small,
            "return [document.querySelectorAll('#drawing circle.seat').length, !!document.querySelector('.notice'), getComputedStyle(document.querySelector('[role=toolbar]')).display, getComputedStyle(document.querySelector('.designer-side')).display, document.querySelectorAll('#drawing [tabindex]').length]"
        )
        .await,
        json!([36, true, "none", "none", 0])
    );
    assert_accessible(&small, "the designer on a phone").await;
    screenshot(&small, "designer-phone").await;
    small.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_imported_plan_opens_in_the_designer_and_one_row_changed_is_saved() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|_| {}).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;

    // The import's preview opens in the designer, each row an item of its own.
    page.goto(&format!("{}/admin/venues/new", app.base))
        .await
        .unwrap();
    upload(
        &page,
        "input[type=file][name=venue_file]",
        "riverside.json",
        include_str!("../../demo/riverside-hall.pretix.json"),
    )
    .await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return !document.querySelector('[data-action=open-in-designer]').disabled",
        json!(true),
    )
    .await;
    press(&page, "[data-action=open-in-designer]").await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!("Imported: Riverside Hall"),
    )
    .await;
    assert_eq!(
        script(
            &page,
            "return document.querySelectorAll('#drawing circle.seat').length"
        )
        .await,
        json!(310)
    );
    assert_eq!(problems(&page).await, json!([]));
    assert_eq!(app.count("venue").await, 0, "opening saves nothing");

    // Row B of the stalls: renamed BB, and two to the right.
    focus(&page, "Stalls, row B,").await;
    type_into(&page, "[data-item-form] [name=label]", "BB").await;
    press(&page, "[data-item-form] button[type=submit]").await;
    focus(&page, "Stalls, row BB,").await;
    keys(&page, &key(Key::Right).repeat(2)).await;
    // A plan in pixels: the grid's square is the roundest step within the seats' spacing.
    assert_eq!(
        script(
            &page,
            "return document.getElementById('grid-legend').textContent.split(',')[0]"
        )
        .await,
        "Grid: a square is 20 units"
    );
    assert_accessible(&page, "the designer with an imported plan").await;
    screenshot(&page, "designer-imported-desktop").await;
    let id = save(&page, "Riverside Hall").await;

    // Saved as drawn: that row's seats moved and renamed, every other seat as imported.
    let (status, imported) = app
        .request(
            Method::POST,
            "/v1/venues/import?format=pretix&dry_run=true",
            &As::Admin,
        )
        .header("content-type", "application/json")
        .body(include_str!("../../demo/riverside-hall.pretix.json"))
        .send()
        .await
        .map(|r| (r.status(), r))
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let imported: Value = imported.json().await.unwrap();
    let saved = venue(&app, &id).await;
    assert_eq!(saved["seat_count"], imported["seat_count"]);
    for (s, was) in saved["sections"]
        .as_array()
        .unwrap()
        .iter()
        .zip(imported["sections"].as_array().unwrap())
    {
        assert_eq!(s["id"], was["id"]);
        for (row, before) in s["rows"]
            .as_array()
            .unwrap()
            .iter()
            .zip(was["rows"].as_array().unwrap())
        {
            let moved = s["id"] == "stalls" && before["label"] == "B";
            assert_eq!(
                row["label"],
                if moved {
                    json!("BB")
                } else {
                    before["label"].clone()
                }
            );
            for (seat, old) in row["seats"]
                .as_array()
                .unwrap()
                .iter()
                .zip(before["seats"].as_array().unwrap())
            {
                let (x, y) = xy(seat);
                let (ox, oy) = xy(old);
                let dx = if moved { 2.0 } else { 0.0 };
                assert!(
                    (x - ox - dx).abs() < 1e-6 && (y - oy).abs() < 1e-6,
                    "{seat} was {old}"
                );
                assert_eq!(seat["number"], old["number"]);
                assert_eq!(seat.get("category"), old.get("category"));
                assert_eq!(seat.get("accessible"), old.get("accessible"));
            }
        }
    }

    // No event uses it yet: it opens as itself, and a save replaces it (the same venue).
    page.goto(&format!("{}/admin/venues/{id}/design", app.base))
        .await
        .unwrap();
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!("Edit Riverside Hall"),
    )
    .await;
    focus(&page, "Stalls, row BB,").await;
    keys(&page, &key(Key::Delete)).await;
    assert_eq!(
        script(
            &page,
            "return document.querySelectorAll('#drawing circle.seat').length"
        )
        .await,
        json!(310 - 12)
    );
    assert_eq!(
        save(&page, "Riverside Hall").await,
        id,
        "replaced, not copied"
    );
    let replaced = venue(&app, &id).await;
    assert_eq!(replaced["seat_count"], 310 - 12);
    assert!(!section(&replaced, "stalls")["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["label"] == "BB" || r["label"] == "B"));
    assert_eq!(app.count("venue").await, 1);
    page.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_venue_events_use_opens_as_a_copy_and_saves_as_a_new_venue() {
    let _turn = ONE_AT_A_TIME.acquire().await.unwrap();
    let app = spawn_app_with(|_| {}).await;
    let event = app.create_event().await;
    let (_, about) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}"),
            &As::Admin,
            None,
        )
        .await;
    let used = about["venue_id"].as_str().unwrap().to_owned();
    let before = venue(&app, &used).await;
    let driver = driver().await;
    let page = browser(&driver).await;
    sign_in(&page, &app).await;
    page.goto(&format!("{}/admin/venues/{used}", app.base))
        .await
        .unwrap();
    let link = format!("a[href='/admin/venues/{used}/design']");
    wait_for(
        &page,
        LOADS_WITHIN,
        &format!("return !!document.querySelector(\"{link}\")"),
        json!(true),
    )
    .await;
    press(&page, &link).await;
    wait_for(
        &page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!(format!("A copy of {}", before["name"].as_str().unwrap())),
    )
    .await;
    assert_eq!(
        script(&page, "return document.getElementById('venue-name').value").await,
        json!(format!("{} (copy)", before["name"].as_str().unwrap()))
    );
    let copy = save(
        &page,
        &format!("{} (copy)", before["name"].as_str().unwrap()),
    )
    .await;
    assert_ne!(copy, used);
    assert_eq!(
        venue(&app, &used).await,
        before,
        "the venue in use is unchanged"
    );
    assert_eq!(venue(&app, &copy).await["seat_count"], before["seat_count"]);
    page.close().await.unwrap();
}
