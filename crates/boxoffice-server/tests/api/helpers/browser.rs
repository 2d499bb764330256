//! Pages in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven
//! over WebDriver): the driver and a browser per buyer (desktop or phone), opening the
//! map, reading and waiting on the page's own state, clicks, screenshots to
//! `target/screenshots/`, axe-core, and signing in to the console.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use super::TestApp;

pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";

pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long a change may take to show on another buyer's page.
pub(crate) const LIVE_WITHIN: Duration = Duration::from_secs(2);

/// How long the page may take to load and draw.
pub(crate) const LOADS_WITHIN: Duration = Duration::from_secs(20);

/// One browser test at a time: each runs two Chromiums, and two cores are all there is.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// A chromedriver of this test's own, stopped when dropped.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn driver() -> Driver {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            std::path::Path::new(tool).exists(),
            "{tool} is missing: browser tests need Debian's chromium and chromium-driver \
             (apt-get install chromium chromium-driver; .ci/run installs them)"
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + LOADS_WITHIN;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    driver
}

/// A new browser with a profile of its own (so its own buyer session).
pub(crate) async fn browser(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM, "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--window-size=1280,900"]}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a Chromium session starts")
}

/// Opens `event`'s page and waits until its map is drawn and live.
pub(crate) async fn open(page: &Client, app: &TestApp, event: &str) {
    page.goto(&format!("{}/?event={event}", app.base))
        .await
        .unwrap();
    wait_until(page, LOADS_WITHIN, "the map is live", |p| async move {
        script(&p, "return document.getElementById('live').dataset.state === 'live' && document.querySelectorAll('.seat').length > 0").await == json!(true)
    })
    .await;
}

pub(crate) async fn script(page: &Client, js: &str) -> Value {
    page.execute(js, vec![]).await.expect("the script runs")
}

/// Polls `ready` until it holds, failing with `what` after `within`.
pub(crate) async fn wait_until<F, Fut>(page: &Client, within: Duration, what: &str, ready: F)
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    loop {
        if ready(page.clone()).await {
            return;
        }
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn seat(id: &str) -> String {
    format!("[data-seat-id=\"{id}\"]")
}

pub(crate) async fn status(page: &Client, id: &str) -> String {
    attr(page, id, "data-status").await
}

/// A seat's attribute, read in one step: the map may be redrawn between two WebDriver calls.
pub(crate) async fn attr(page: &Client, id: &str, name: &str) -> String {
    let value = page
        .execute(
            "const el = document.querySelector(arguments[0]); return el && el.getAttribute(arguments[1]);",
            vec![json!(seat(id)), json!(name)],
        )
        .await
        .expect("the script runs");
    value.as_str().unwrap_or_default().to_owned()
}

pub(crate) async fn wait_status(page: &Client, id: &str, want: &str, within: Duration) {
    wait_until(
        page,
        within,
        &format!("{id} turns {want}"),
        |p| async move { status(&p, id).await == want },
    )
    .await;
}

pub(crate) async fn click_seat(page: &Client, id: &str) {
    page.find(Locator::Css(&seat(id)))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

pub(crate) async fn click(page: &Client, id: &str) {
    page.find(Locator::Id(id))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Picks the option `value` of the select `css`, as a buyer would.
pub(crate) async fn pick(page: &Client, css: &str, value: &str) {
    page.find(Locator::Css(&format!("{css} option[value='{value}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

pub(crate) async fn text(page: &Client, id: &str) -> String {
    page.find(Locator::Id(id))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

pub(crate) async fn visible(page: &Client, id: &str) -> bool {
    page.find(Locator::Id(id))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap()
}

pub(crate) async fn screenshot(page: &Client, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = page.screenshot().await.expect("a screenshot");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// The page checked by axe-core (vendored in `vendor/axe-core`): no violation axe rates
/// serious or critical.
/// Waits until `js` (a script returning a value) returns `want`; on failure, says what it
/// returned last.
pub(crate) async fn wait_for(page: &Client, within: Duration, js: &str, want: Value) {
    let deadline = Instant::now() + within;
    loop {
        let got = script(page, js).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not within {within:?}: {js}\n  want {want}\n  got  {got}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn assert_accessible(page: &Client, what: &str) {
    const AXE: &str = include_str!("../../../../../vendor/axe-core/axe.min.js");
    page.execute(AXE, vec![]).await.expect("axe-core loads");
    let found = page
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, {resultTypes: ['violations']})
               .then((r) => done(r.violations
                 .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                 .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                               nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))))
               .catch((e) => done([{id: 'axe failed', help: String(e)}]));",
            vec![],
        )
        .await
        .expect("axe runs");
    assert_eq!(found, json!([]), "axe-core on {what}");
}

/// A browser the size of a phone (390 × 844 CSS pixels, touch), as Chromium emulates one.
pub(crate) async fn phone(driver: &Driver) -> Client {
    phone_with(driver, &[]).await
}

/// A phone-sized browser started with Chromium flags of the test's own (a fake camera).
pub(crate) async fn phone_with(driver: &Driver, flags: &[String]) -> Client {
    let mut args = vec![
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    args.extend(flags.iter().cloned());
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM,
               "mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": true}},
               "args": args}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a Chromium session starts")
}

/// Opens the console and signs in with the admin token.
pub(crate) async fn sign_in(page: &Client, app: &TestApp) {
    page.goto(&format!("{}/admin", app.base)).await.unwrap();
    type_into(page, "input[name=admin_token]", &app.admin_token).await;
    press(page, "#signin button[type=submit]").await;
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.querySelector('h1') && document.querySelector('h1').textContent",
        json!("Venues and events"),
    )
    .await;
}

pub(crate) async fn press(page: &Client, css: &str) {
    find(page, css).await.click().await.unwrap();
}

pub(crate) async fn type_into(page: &Client, css: &str, text: &str) {
    let input = find(page, css).await;
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

pub(crate) async fn find(page: &Client, css: &str) -> fantoccini::elements::Element {
    page.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
}

/// Runs `tests/js/<file>` under Node's test runner and checks that exactly `passes` tests
/// passed and none failed.
pub(crate) fn node_tests(file: &str, passes: usize) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let run = Command::new("node")
        .arg("--test")
        .arg(dir.join("tests/js").join(file))
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("node is missing ({e}): apt-get install nodejs (.ci/run installs it)")
        });
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "node --test tests/js/{file}:\n{out}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        out.contains(&format!("# pass {passes}\n")) && out.contains("# fail 0"),
        "{out}"
    );
}

/// Chooses a file holding `contents` (named `name`) in the file input `css`, once it is on
/// the page.
pub(crate) async fn upload(page: &Client, css: &str, name: &str, contents: &str) {
    wait_for(
        page,
        LOADS_WITHIN,
        &format!("return !!document.querySelector('{css}')"),
        json!(true),
    )
    .await;
    let file = std::env::temp_dir().join(format!("{}-{name}", uuid::Uuid::new_v4()));
    std::fs::write(&file, contents).unwrap();
    find(page, css)
        .await
        .send_keys(file.to_str().unwrap())
        .await
        .unwrap();
}
