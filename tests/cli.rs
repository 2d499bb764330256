//! The `boxoffice` binary, run as a process against real Postgres. (A long file: each
//! subcommand started, read and stopped as a user would, with the helpers they share.)

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

fn server_url() -> String {
    std::env::var("BOXOFFICE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// A database for one test, dropped when the guard goes.
struct TestDb(String);

impl TestDb {
    fn new() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let name = format!(
            "boxoffice_test_{secs}_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        Self(format!("{}/{name}", server_url()))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let url = self.0.clone();
        let _ = std::thread::spawn(move || {
            tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(boxoffice_store::pg::db::drop_database(&url))
        })
        .join();
    }
}

fn boxoffice(db: &TestDb) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_boxoffice"));
    cmd.env("DATABASE_URL", &db.0)
        .env_remove("BOXOFFICE_ADMIN_TOKEN")
        .env_remove("BOXOFFICE_JWT_SECRET")
        .env("RUST_LOG", "error");
    cmd
}

/// Starts `boxoffice serve` with `args` on a free port and reads what it prints until a
/// line starting with `until`.
fn serve(db: &TestDb, args: &[&str], until: &str) -> (Server, BufReader<ChildStdout>, Vec<String>) {
    let mut cmd = boxoffice(db);
    cmd.args(["serve", "--bind", "127.0.0.1:0"]).args(args);
    start(cmd, until)
}

/// Starts `cmd` (a `boxoffice serve`) and reads what it prints until a line starting with
/// `until`.
fn start(mut cmd: Command, until: &str) -> (Server, BufReader<ChildStdout>, Vec<String>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let server = Server(Some(child));
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "server exited early after {lines:?}"
        );
        let done = line.starts_with(until);
        lines.push(line.trim_end().to_owned());
        if done {
            return (server, out, lines);
        }
    }
}

/// Starts `boxoffice serve --demo` and reads what it prints until the seat-map page line.
fn serve_demo(db: &TestDb) -> (Server, BufReader<ChildStdout>, Vec<String>) {
    serve(db, &["--demo"], "seat map page")
}

fn after<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in {lines:?}"))
}

/// A running server process, killed if a test fails before stopping it.
struct Server(Option<Child>);

impl Server {
    /// Sends SIGTERM and checks that the server exits cleanly.
    fn stop(mut self) {
        let mut child = self.0.take().unwrap();
        kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
        let status = child.wait().unwrap();
        assert!(
            status.success(),
            "SIGTERM ends the server cleanly, got {status}"
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn get_json(client: &reqwest::Client, url: &str) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_demo_creates_the_demo_once_prints_where_it_is_and_stops_on_sigterm() {
    let db = TestDb::new();
    let (child, _out, lines) = serve_demo(&db);
    let base = after(&lines, "Boxoffice listening on ").to_owned();
    let admin = after(&lines, "admin token: ").to_owned();
    let demo = after(&lines, "demo event ");
    assert!(demo.contains("(created)"), "{demo}");
    let seats_url = demo.rsplit(' ').next().unwrap().to_owned();
    assert!(seats_url.starts_with(&base), "{seats_url}");

    let client = reqwest::Client::new();
    let page_url = after(&lines, "seat map page: ").to_owned();
    assert_eq!(
        page_url,
        format!("{base}/?event=5eed0000-0000-4000-8000-000000000002")
    );
    // Where the console and the scanner are, each a page.
    let console = after(&lines, "console: ");
    assert!(console.starts_with(&format!("{base}/admin ")), "{console}");
    let scanner = after(&lines, "scanner: ");
    assert!(
        scanner.starts_with(&format!(
            "{base}/scan?event=5eed0000-0000-4000-8000-000000000002 "
        )),
        "{scanner}"
    );
    for url in [console, scanner] {
        let url = url.split(' ').next().unwrap();
        let page = client.get(url).send().await.unwrap();
        assert_eq!(page.status(), reqwest::StatusCode::OK, "{url}");
        assert!(page.text().await.unwrap().contains("<html"), "{url}");
    }
    let page = client.get(&page_url).send().await.unwrap();
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let session = client
        .post(format!("{base}/v1/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(session.status(), 201, "the demo mints anonymous sessions");
    let buyer = session.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let seats = get_json(&client, &seats_url).await;
    let seats = seats["seats"].as_array().unwrap();
    assert_eq!(seats.len(), 310);
    let held_back: Vec<_> = seats
        .iter()
        .filter(|s| s["status"] == "not_for_sale")
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        held_back.len(),
        25,
        "stalls row H is held back: {held_back:?}"
    );
    assert!(held_back.iter().all(|id| id.starts_with("stalls-H-")));
    assert!(seats
        .iter()
        .all(|s| s["status"] == "not_for_sale" || s["price_cents"].is_i64()));
    let events: Value = get_json(&client, &format!("{base}/v1/events")).await;
    assert_eq!(events["events"].as_array().unwrap().len(), 1);
    let event: Value = get_json(
        &client,
        &format!(
            "{base}/v1/events/{}",
            events["events"][0]["id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(event["ga_areas"][0]["code"], "floor");
    assert_eq!(
        event["payment_window_seconds"], 600,
        "the demo pays on its test page"
    );
    let unknown = client
        .get(format!("{base}/pay/{}", uuid::Uuid::new_v4()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        unknown.status(),
        404,
        "the test payment page knows no such order"
    );
    assert_eq!(event["ticket_types"].as_array().unwrap().len(), 2);

    // The printed admin token is the admin token.
    let created = client
        .post(format!("{base}/v1/venues"))
        .bearer_auth(&admin)
        .json(&json!({"name": "Annex", "sections": [{"id": "a", "name": "A", "rows": [{"label": "1", "seats": 2}]}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    child.stop();

    // A second start finds the demo and makes no second one, and keeps its secrets: the
    // buyer's session and the admin token from before are good still.
    let (child, _out, lines) = serve_demo(&db);
    assert!(after(&lines, "demo event ").contains("(already there)"));
    let base = after(&lines, "Boxoffice listening on ");
    let events: Value = get_json(&client, &format!("{base}/v1/events")).await;
    assert_eq!(events["events"].as_array().unwrap().len(), 1);
    assert_eq!(after(&lines, "admin token: "), admin);
    let mine = client
        .get(format!(
            "{base}/v1/me/orders?event=5eed0000-0000-4000-8000-000000000002"
        ))
        .bearer_auth(&buyer)
        .send()
        .await
        .unwrap();
    assert_eq!(mine.status(), 200, "a buyer's token outlives the restart");
    let forged = client
        .get(format!(
            "{base}/v1/me/orders?event=5eed0000-0000-4000-8000-000000000002"
        ))
        .bearer_auth(format!("{buyer}x"))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401, "and a token is still checked");
    child.stop();
}

#[test]
fn migrate_creates_the_database_once() {
    let db = TestDb::new();
    let first = boxoffice(&db).arg("migrate").output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        "database created and migrated"
    );
    let second = boxoffice(&db).arg("migrate").output().unwrap();
    assert!(second.status.success());
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).trim(),
        "database exists and migrated"
    );
}

#[test]
fn an_unreachable_database_at_start_fails_with_a_message_not_a_panic() {
    // serve, relay and migrate say what to do in one paragraph, never an error chain.
    let unreachable = "postgres://postgres@127.0.0.1:1/boxoffice";
    for args in [
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            unreachable,
        ][..],
        &[
            "relay",
            "--webhook-url",
            "http://127.0.0.1:1/hook",
            "--webhook-secret",
            "s",
            "--database-url",
            unreachable,
        ],
        // Without URLs it serves organizations' own webhooks.
        &["relay", "--database-url", unreachable],
        &["migrate", "--database-url", unreachable],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_boxoffice"))
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .env_remove("BOXOFFICE_WEBHOOK_URLS")
            .env("BOXOFFICE_JWT_SECRET", "unreachable")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(
                "boxoffice: cannot reach Postgres at postgres@127.0.0.1:1/boxoffice ("
            ) && stderr.contains("pg_ctlcluster")
                && !stderr.contains("panicked")
                && !stderr.contains("Error:"),
            "{args:?}: {stderr}"
        );
    }
}

/// `boxoffice <tool> <args>` against a server with the race credentials: whether it
/// succeeded, its stdout and its stderr.
fn against_server(tool: &str, args: &[&str], db: &TestDb) -> (bool, String, String) {
    let output = boxoffice(db)
        .arg(tool)
        .args(args)
        .env("BOXOFFICE_ADMIN_TOKEN", "race-admin")
        .env("BOXOFFICE_JWT_SECRET", "race-secret")
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A server with the race credentials, and its base URL.
fn serve_for_tools(db: &TestDb) -> (Server, String) {
    let (server, _out, lines) = serve(
        db,
        &["--admin-token", "race-admin", "--jwt-secret", "race-secret"],
        "Boxoffice listening on",
    );
    let base = after(&lines, "Boxoffice listening on ").to_owned();
    (server, base)
}

fn race(args: &[&str], db: &TestDb) -> (bool, String, String) {
    against_server("race", args, db)
}

fn bench(args: &[&str], db: &TestDb) -> (bool, String, String) {
    against_server("bench", args, db)
}

#[tokio::test]
async fn anonymous_sessions_are_off_unless_asked_for() {
    let db = TestDb::new();
    let client = reqwest::Client::new();
    for (args, status) in [(&[][..], 404), (&["--anonymous-sessions", "true"][..], 201)] {
        let (server, _out, lines) = serve(&db, args, "Boxoffice listening on");
        let base = after(&lines, "Boxoffice listening on ");
        let answer = client
            .post(format!("{base}/v1/sessions"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), status, "{args:?}");
        server.stop();
    }
}

#[test]
fn the_race_demos_show_no_overselling_and_one_seat_holder() {
    let db = TestDb::new();
    let (server, base) = serve_for_tools(&db);

    let (ok, out, err) = race(
        &["ga", "--buyers", "20", "--places", "5", "--url", &base],
        &db,
    );
    assert!(ok, "{err}");
    assert_eq!(out, "5 bookings, 15 answers of 409, 0 places left");

    let (ok, out, err) = race(&["seat", "--buyers", "50", "--url", &base], &db);
    assert!(ok, "{err}");
    assert!(out.starts_with("1 hold, 49 answers of 409"), "{out}");
    server.stop();
}

#[test]
fn bench_reports_as_text_and_json_and_needs_the_jwt_secret() {
    let db = TestDb::new();
    let (server, base) = serve_for_tools(&db);

    let (ok, out, err) = bench(&["hot-seat", "--buyers", "30", "--url", &base], &db);
    assert!(ok, "{err}");
    assert!(out.starts_with("hot-seat (buyers=30)"), "{out}");
    assert!(out.contains("[201×1 409×29]"), "{out}");
    assert!(
        out.contains("ok   exactly one buyer holds the seat"),
        "{out}"
    );

    let (ok, out, err) = bench(
        &[
            "ga-rush", "--places", "10", "--buyers", "20", "--json", "--url", &base,
        ],
        &db,
    );
    assert!(ok, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["scenario"], "ga-rush");
    // Each buyer asks for 1–4 places at random, 20 of them for 10 places: some are
    // refused, and a refusal means fewer places were left than it asked for, so at most
    // 3 are left unbooked. (The report's own checks compare the count with the server's.)
    let booked = report["figures"]["places_booked"].as_f64().unwrap();
    assert!((7.0..=10.0).contains(&booked), "{report}");
    assert_eq!(report["operations"][0]["requests"], 20);
    for key in ["p50", "p90", "p99", "p99_9", "max"] {
        assert!(
            report["operations"][0]["latency_ms"][key].is_number(),
            "{report}"
        );
    }
    assert!(report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["passed"] == true));

    let output = boxoffice(&db)
        .args(["bench", "hot-seat", "--url", &base])
        .env("BOXOFFICE_ADMIN_TOKEN", "race-admin")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--jwt-secret"));
    let (ok, _, err) = bench(&["holds", "--duration", "soon", "--url", &base], &db);
    assert!(!ok && err.contains("not a duration"), "{err}");
    server.stop();
}

#[test]
fn the_seat_race_on_the_redis_hold_store_leaves_one_holder() {
    let db = TestDb::new();
    let redis = std::env::var("BOXOFFICE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let (server, _out, lines) = serve(
        &db,
        &[
            "--admin-token",
            "race-admin",
            "--jwt-secret",
            "race-secret",
            "--hold-store",
            "redis",
            "--redis-url",
            &redis,
        ],
        "Boxoffice listening on",
    );
    let base = after(&lines, "Boxoffice listening on ").to_owned();
    let (ok, out, err) = race(&["seat", "--buyers", "100", "--url", &base], &db);
    assert!(ok, "{err}");
    assert!(out.starts_with("1 hold, 99 answers of 409"), "{out}");
    server.stop();
}

#[test]
fn the_unsafe_demo_oversells_on_its_own_scratch_table_only() {
    let db = TestDb::new();
    let created = boxoffice(&db).arg("migrate").output().unwrap();
    assert!(created.status.success());
    let (ok, out, err) = race(
        &[
            "ga",
            "--unsafe",
            "--buyers",
            "20",
            "--places",
            "5",
            "--database-url",
            &db.0,
        ],
        &db,
    );
    assert!(ok, "{err}");
    let booked: usize = out.split(' ').next().unwrap().parse().unwrap();
    assert!(booked > 5, "the naive read-then-write oversells: {out}");
    assert!(out.ends_with(&format!("{} oversold", booked - 5)), "{out}");
    // It cleaned up after itself and left the server's tables alone.
    let leftovers = std::thread::spawn({
        let url = db.0.clone();
        move || {
            tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(async move {
                    let pool = sqlx::PgPool::connect(&url).await.unwrap();
                    let n: i64 = sqlx::query_scalar(
                        "select count(*) from pg_tables where tablename like 'race_demo_unsafe_%'",
                    )
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                    n
                })
        }
    })
    .join()
    .unwrap();
    assert_eq!(leftovers, 0);
}

#[test]
fn sigterm_ends_the_server_within_its_grace_period_even_with_a_half_sent_request_open() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let db = TestDb::new();
    // The header timeout is far longer than the grace period: only the grace period can
    // end the half-sent request.
    let (mut server, _out, lines) = serve(
        &db,
        &[
            "--header-timeout-ms",
            "600000",
            "--shutdown-grace-ms",
            "1000",
        ],
        "Boxoffice listening on ",
    );
    let address = after(&lines, "Boxoffice listening on http://").to_owned();
    let mut stalled = std::net::TcpStream::connect(&address).unwrap();
    stalled
        .write_all(b"POST /v1/sessions HTTP/1.1\r\nHost: t\r\n")
        .unwrap();
    // A request served before the signal shows the server was up and serving.
    let mut served = std::net::TcpStream::connect(&address).unwrap();
    served
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    served.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let mut child = server.0.take().unwrap();
    let signalled = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    // Generous bounds: the point is that it ends at all, and does not wait for the client.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(30),
            "still running long after its grace period"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    assert!(
        std::net::TcpStream::connect(&address).is_err(),
        "no longer accepting"
    );
    drop(stalled);
}

#[test]
fn an_empty_jwt_secret_is_refused_with_a_message_not_a_panic() {
    let output = Command::new(env!("CARGO_BIN_EXE_boxoffice"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .args(["serve", "--bind", "127.0.0.1:0", "--jwt-secret", ""])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("BOXOFFICE_JWT_SECRET must not be empty") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// `boxoffice doctor` with `db`, the secrets set and `args`: whether it passed, and its
/// report.
fn doctor(db: &TestDb, args: &[&str]) -> (bool, String) {
    let output = boxoffice(db)
        .env("BOXOFFICE_JWT_SECRET", "doctor-jwt")
        .env("BOXOFFICE_ADMIN_TOKEN", "doctor-admin")
        .env_remove("REDIS_URL")
        .env_remove("BOXOFFICE_HOLD_STORE")
        .arg("doctor")
        .args(args)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(if output.status.success() { 0 } else { 1 }),
        "{report}"
    );
    (output.status.success(), report)
}

fn migrated() -> TestDb {
    let db = TestDb::new();
    let out = boxoffice(&db).arg("migrate").output().unwrap();
    assert!(out.status.success());
    db
}

#[test]
fn doctor_passes_a_server_that_would_start_and_says_so() {
    let db = migrated();
    let (passed, report) = doctor(&db, &["--holds-per-minute", "12"]);
    assert!(passed, "{report}");
    for line in [
        // The test's database (DATABASE_URL) and secrets are set, the hold rate given.
        "ok    settings (the rest their defaults): server: BOXOFFICE_ADMIN_TOKEN=(set) BOXOFFICE_JWT_SECRET=(set); stores: DATABASE_URL=postgres://",
        "ok    migrations: all ",
        "ok    claim: version ",
        "ok    postgres max_connections ",
        "ok    redis ",
        "ok    redis evicts nothing",
        "ok    clocks: this server and Postgres differ by ",
        "ok    open files: limit ",
        "no problems",
    ] {
        assert!(
            report.lines().any(|l| l.starts_with(line)),
            "{line}: {report}"
        );
    }
    let settings = report.lines().find(|l| l.contains("settings")).unwrap();
    assert!(
        settings.ends_with("; limits: BOXOFFICE_HOLDS_PER_MINUTE=12")
            && !settings.contains("doctor-jwt"),
        "{settings}"
    );
}

#[test]
fn doctor_says_what_is_wrong_and_how_to_fix_it() {
    // A database nobody migrated.
    let db = TestDb::new();
    let (passed, report) = doctor(&db, &[]);
    assert!(!passed);
    assert!(
        report.contains("FAIL  postgres at postgres@127.0.0.1:5432/boxoffice_test_")
            && report.contains("the database does not exist")
            && report.contains("fix: run `boxoffice migrate`"),
        "{report}"
    );
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(boxoffice_store::pg::db::ensure_database(&db.0))
        .unwrap();
    let (_, report) = doctor(&db, &[]);
    let all = boxoffice_store::pg::db::MIGRATOR.iter().count();
    assert!(
        report.contains(&format!("FAIL  migrations: {all} of {all} pending")),
        "{report}"
    );

    // More instances than Postgres has connections for; no JWT secret.
    let db = migrated();
    let (passed, report) = doctor(&db, &["--instances", "100000"]);
    assert!(!passed);
    assert!(
        report.contains(
            "connections the servers may open: 100000 instances × (16 pooled + 1 listener)"
        ) && report.contains("fix: raise max_connections to at least"),
        "{report}"
    );
    let output = boxoffice(&db).arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success());
    assert!(
        report.contains("FAIL  BOXOFFICE_JWT_SECRET is not set"),
        "{report}"
    );

    // An open-file limit under the connection limit.
    let output = Command::new("sh")
        .env("DATABASE_URL", &db.0)
        .env("BOXOFFICE_JWT_SECRET", "doctor-jwt")
        .env("BOXOFFICE_MAX_CONNECTIONS", "10000")
        .args([
            "-c",
            "ulimit -n 512 && exec \"$0\" doctor",
            env!("CARGO_BIN_EXE_boxoffice"),
        ])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success());
    assert!(
        report.contains("FAIL  open files: the limit is 512, under the ")
            && report.contains("LimitNOFILE="),
        "{report}"
    );
}

/// A Redis of this test's own, started with `args`, stopped when dropped.
struct OwnRedis(Child, u16);

impl OwnRedis {
    fn start(args: &[&str]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self(child, port);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server never listened on {port}");
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A newer server applied a newer claim (`sql/claim.sql`): this one refuses to start, says
/// why, and `doctor` says the same.
#[test]
fn an_older_server_refuses_to_start_against_a_newer_claim_and_doctor_says_so() {
    let db = migrated();
    let (_, report) = doctor(&db, &[]);
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("ok    claim: version ")),
        "{report}"
    );
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let pool = sqlx::PgPool::connect(&db.0).await.unwrap();
        sqlx::query("update claim_in_force set version = version + 1, applied_by = '99.1.0'")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
    let output = boxoffice(&db)
        .env("BOXOFFICE_JWT_SECRET", "newer-claim")
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("boxoffice: the database's claim (sql/claim.sql) is version ")
            && stderr.contains("Run Boxoffice 99.1.0 or newer")
            && !stderr.contains("panicked"),
        "{stderr}"
    );
    let (passed, report) = doctor(&db, &[]);
    assert!(!passed);
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("FAIL  claim: the database's claim"))
            && report.contains("fix: run Boxoffice 99.1.0 or newer"),
        "{report}"
    );
}

#[test]
fn doctor_refuses_a_redis_that_would_evict_holds() {
    let db = migrated();
    let redis = OwnRedis::start(&["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    let url = format!("redis://127.0.0.1:{}", redis.1);
    let run = |store: &str| {
        let output = boxoffice(&db)
            .env("BOXOFFICE_JWT_SECRET", "doctor-jwt")
            .env("BOXOFFICE_ADMIN_TOKEN", "doctor-admin")
            .env("REDIS_URL", &url)
            .env("BOXOFFICE_HOLD_STORE", store)
            .arg("doctor")
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (passed, report) = run("redis");
    assert!(!passed, "{report}");
    assert!(
        report.contains("FAIL  redis maxmemory-policy is allkeys-lru with maxmemory 67108864")
            && report.contains("fix: set `maxmemory-policy noeviction`"),
        "{report}"
    );
    // Where only the waiting room would use it, the same Redis is a warning.
    let (passed, report) = run("postgres");
    assert!(passed, "{report}");
    assert!(
        report.contains("warn  redis maxmemory-policy is allkeys-lru"),
        "{report}"
    );
}

#[tokio::test]
async fn json_logs_carry_the_request_id_on_every_line_of_a_request() {
    let db = TestDb::new();
    let (server, base, _stdout) = serving(
        boxoffice(&db)
            .env("BOXOFFICE_LOG_FORMAT", "json")
            .env("RUST_LOG", "info,tower_http=debug")
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--admin-token",
                "logs-admin",
            ]),
    );
    let client = reqwest::Client::new();
    let answer = client
        .get(format!("{base}/v1/venues"))
        .header("authorization", "Bearer logs-admin")
        .header("x-request-id", "probe-7f3a")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["x-request-id"], "probe-7f3a");
    let fresh = client.get(format!("{base}/healthz")).send().await.unwrap();
    let id = fresh.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");

    let lines: Vec<Value> = stopped(server)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let of = |id: &str| {
        lines
            .iter()
            .filter(|l| l["span"]["request_id"] == id)
            .collect::<Vec<_>>()
    };
    // tower_http logs the request's start and its answer, inside its span.
    for id in ["probe-7f3a", id.as_str()] {
        let served = of(id);
        assert!(served.len() >= 2, "{id}: {lines:#?}");
        assert!(served
            .iter()
            .all(|l| l["level"].is_string() && l["fields"]["message"].is_string()));
    }
    assert_eq!(of("probe-7f3a")[0]["span"]["path"], "/v1/venues");
}

#[test]
fn an_unknown_log_format_is_refused_with_a_message() {
    let db = TestDb::new();
    let output = boxoffice(&db)
        .env("BOXOFFICE_LOG_FORMAT", "xml")
        .arg("migrate")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "boxoffice: BOXOFFICE_LOG_FORMAT is \"xml\": it may be \"text\" (the default) or \"json\".\n"
    );
}

#[tokio::test]
async fn serve_says_what_to_do_when_the_redis_it_needs_is_away_and_starts_anyway() {
    let db = TestDb::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (server, base, _stdout) = serving(
        boxoffice(&db)
            .env("BOXOFFICE_HOLD_STORE", "redis")
            .env("REDIS_URL", format!("redis://127.0.0.1:{port}"))
            .env("BOXOFFICE_JWT_SECRET", "away-jwt")
            .args(["serve", "--bind", "127.0.0.1:0"]),
    );
    // It serves: what needs no Redis answers.
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    let stderr = stopped(server);
    assert!(
        stderr.contains(&format!(
            "boxoffice: cannot reach Redis at redis://127.0.0.1:{port} ("
        )) && stderr.contains("systemctl start redis-server")
            && stderr.contains("answers 503")
            && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// Starts `command` (a `serve`) with stdout and stderr piped: the server, its address once
/// it printed it, and the rest of its stdout (keep it open: the server prints more, and
/// a closed pipe would end it).
fn serving(command: &mut Command) -> (Server, String, BufReader<ChildStdout>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let base = line
        .trim()
        .strip_prefix("Boxoffice listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    (Server(Some(child)), base, out)
}

/// Stops `server` with SIGTERM, checks it exits cleanly, and answers what it logged.
fn stopped(mut server: Server) -> String {
    let mut child = server.0.take().unwrap();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    assert!(child.wait().unwrap().success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    stderr
}

/// POSTs `body` to `url` as the bearer of `token`; the JSON answered.
async fn post_json(http: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    http.post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A waiting-list offer is bought only before its deadline as Postgres' clock has it, not
/// the server's: here the server runs ten minutes behind (libfaketime, Debian's
/// `faketime`), and an offer whose deadline Postgres has passed is refused although the
/// server's clock says it stands.
#[tokio::test(flavor = "multi_thread")]
async fn an_offer_past_its_deadline_is_refused_by_postgres_clock_whatever_the_servers() {
    // libfaketime preloaded into the server alone (the `faketime` command would stand
    // between the test and the server, and take the test's SIGTERM itself).
    const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
    assert!(
        std::path::Path::new(LIBFAKETIME).exists(),
        "this test needs Debian's faketime (apt-get install faketime; .ci/run installs it)"
    );
    let db = TestDb::new();
    let mut cmd = boxoffice(&db);
    cmd.args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .args(["--admin-token", "behind", "--expiry-interval-secs", "3600"])
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME", "-10m");
    let (server, _out, lines) = start(cmd, "seat map page");
    let base = after(&lines, "Boxoffice listening on ").to_owned();
    let event = "5eed0000-0000-4000-8000-000000000002";
    let http = reqwest::Client::new();

    // The premise: the server's clock is ten minutes behind this one.
    let answer = http.get(format!("{base}/healthz")).send().await.unwrap();
    let date = answer.headers()["date"].to_str().unwrap().to_owned();
    let server_now = chrono::DateTime::parse_from_rfc2822(&date).unwrap();
    let behind = chrono::Utc::now().signed_duration_since(server_now);
    assert!(
        behind > chrono::Duration::minutes(9),
        "the server's clock is not behind (Date: {date})"
    );

    let session = || async {
        let s: Value = http
            .post(format!("{base}/v1/sessions"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        s["token"].as_str().unwrap().to_owned()
    };
    let (buyer, waiting) = (session().await, session().await);
    let seats = get_json(&http, &format!("{base}/v1/events/{event}/seats")).await;
    let seat = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["status"] == "available")
        .unwrap()["id"]
        .clone();
    let hold = post_json(
        &http,
        format!("{base}/v1/events/{event}/holds"),
        &buyer,
        json!({"seats": [seat]}),
    )
    .await;
    let order = post_json(
        &http,
        format!("{base}/v1/events/{event}/orders"),
        &buyer,
        json!({"hold_token": hold["hold_token"]}),
    )
    .await;
    let joined = post_json(
        &http,
        format!("{base}/v1/events/{event}/waitlist"),
        &waiting,
        json!({"quantity": 1}),
    )
    .await;
    let cancelled = http
        .post(format!(
            "{base}/v1/orders/{}/cancel",
            order["order_id"].as_str().unwrap()
        ))
        .bearer_auth("behind")
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), reqwest::StatusCode::OK);
    let entry_url = format!(
        "{base}/v1/events/{event}/waitlist/{}",
        joined["entry_id"].as_str().unwrap()
    );
    let offered: Value = http
        .get(&entry_url)
        .bearer_auth(&waiting)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = offered["offer"]["hold_token"].as_str().unwrap().to_owned();

    // Postgres' clock passes the deadline; the offer's hold lives on a little longer, and
    // the server's clock, ten minutes behind, would still call the offer open.
    let pool = sqlx::PgPool::connect(&db.0).await.unwrap();
    sqlx::query("update waitlist_entry set offer_expires_at = now() - interval '1 second' where status = 'O'")
        .execute(&pool)
        .await
        .unwrap();
    let refused = http
        .post(format!("{base}/v1/events/{event}/orders"))
        .bearer_auth(&waiting)
        .json(&json!({"hold_token": token}))
        .send()
        .await
        .unwrap();
    let status = refused.status();
    let body: Value = refused.json().await.unwrap();
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "hold_not_live");
    let (entry_status, orders): (String, i64) = sqlx::query_as(
        "select w.status::text,
                (select count(*) from ticket_order o where o.hold_token = w.offer_token)
           from waitlist_entry w where w.offer_token = $1::uuid",
    )
    .bind(&token)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((entry_status.as_str(), orders), ("O", 0));
    pool.close().await;
    server.stop();
}

/// A newcomer's first `serve --demo`, on a new database, with its log in a pipe (as under
/// a service manager or `2> file`): nothing about functions Postgres skipped while the
/// claim was defined, and no terminal colour codes.
#[tokio::test(flavor = "multi_thread")]
async fn a_first_start_logs_plain_lines_without_postgres_notices() {
    let db = TestDb::new();
    let mut command = boxoffice(&db);
    command
        .env("RUST_LOG", "info")
        .args(["serve", "--bind", "127.0.0.1:0", "--demo"]);
    let (server, _base, _out) = serving(&mut command);
    let stderr = stopped(server);
    assert!(stderr.contains("INFO"), "the log says something: {stderr}");
    assert!(
        !stderr.contains("does not exist, skipping") && !stderr.contains("notice"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a pipe: {stderr:?}"
    );
}
