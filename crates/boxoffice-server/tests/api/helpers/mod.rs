//! `spawn_app`: a server on port 0 over its own fresh database, dropped when the test ends.
//! (A long file: the server, its database and Redis key space, and the calls every
//! test makes through it.)

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::sync::Arc;

use boxoffice_core::ids::EventId;
use boxoffice_server::config::{HoldStoreKind, Secret};
use boxoffice_server::{Application, Settings};
use boxoffice_store::hold_store::HoldStore;
use boxoffice_store::pg::db;
use boxoffice_store::redis::link::RedisConfig;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};
use sqlx::postgres::PgPoolOptions;
use sqlx::AssertSqlSafe;
use sqlx::PgPool;

use crate::helpers::stores::Store;

mod browser;
mod direct;
pub(crate) mod door;
pub(crate) mod embed;
pub(crate) mod limit;
pub(crate) mod pages;
pub mod proxy;
mod queue;
mod race;
mod redis;
pub(crate) mod season_orders;
pub(crate) mod seasons;
pub(crate) mod staff;
pub mod stores;
pub(crate) mod webhooks;
pub(crate) use browser::*;
pub use direct::{
    commit_order_directly, held, hold_directly, rewind_hold, seat_set, sell_directly,
};
pub(crate) use queue::{admitted, event_with_queue, hold_with_pass, join, join_and_wait, poll};
pub(crate) use race::{
    big_event, hold_request, race, race_riding_out, spawn_race_app, spawn_race_app_on, tally,
};
pub(crate) use redis::{spawn_on, spawn_on_redis, token};

/// Where the tests' Postgres server is; each test makes its own database on it.
pub fn server_url() -> String {
    std::env::var("BOXOFFICE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

const PREFIX: &str = "boxoffice_test_";
/// Databases left by crashed runs are swept once they are this old.
const SWEEP_AFTER: Duration = Duration::from_secs(3600);

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A database name carrying its creation time, so sweeping never touches a live test's.
pub fn fresh_database_name() -> String {
    format!(
        "{PREFIX}{}_{}",
        now_secs(),
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// Drops test databases older than [`SWEEP_AFTER`], left behind by runs that crashed.
async fn sweep_leftovers() {
    let admin = format!("{}/postgres", server_url());
    let Ok(pool) = PgPoolOptions::new()
        .max_connections(1)
        .connect(&admin)
        .await
    else {
        return;
    };
    let names: Vec<String> =
        sqlx::query_scalar("select datname from pg_database where datname like $1")
            .bind(format!("{PREFIX}%"))
            .fetch_all(&pool)
            .await
            .unwrap_or_default();
    let cutoff = now_secs().saturating_sub(SWEEP_AFTER.as_secs());
    for name in names {
        let created = name[PREFIX.len()..]
            .split('_')
            .next()
            .and_then(|t| t.parse::<u64>().ok());
        if created.is_some_and(|t| t < cutoff) {
            let _ = db::drop_database(&format!("{}/{name}", server_url())).await;
        }
    }
}

/// A running server and what a test needs to talk to it.
pub struct TestApp {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// HTTP client.
    pub client: reqwest::Client,
    /// The admin bearer token.
    pub admin_token: String,
    /// The JWT secret, for minting user tokens in tests.
    pub jwt_secret: String,
    /// URL of this test's database (as the server sees it).
    pub database_url: String,
    /// A direct pool on the test's database, for arranging and checking rows.
    pub db: PgPool,
    /// The server's hold store, for checking what it holds.
    pub holds: Arc<dyn HoldStore>,
    /// Which hold store the server runs.
    pub hold_store: HoldStoreKind,
    /// Where the server's Redis is.
    pub redis: RedisConfig,
    drop_url: String,
    server: tokio::task::JoinHandle<()>,
}

/// A server with default settings.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// A server with default settings, holding seats in `store`.
pub async fn spawn_app_on(store: Store) -> TestApp {
    spawn_app_with(|s| store.configure(s)).await
}

/// Another server instance beside `first`: its database and JWT secret, holding seats in
/// `store`.
pub async fn another_instance(first: &TestApp, store: Store) -> TestApp {
    let (url, secret) = (first.database_url.clone(), first.jwt_secret.clone());
    spawn_app_with(move |s| {
        store.configure(s);
        s.stores.database.url = url;
        s.server.jwt_secret = boxoffice_server::config::Secret::new(secret);
    })
    .await
}

/// A server whose settings `configure` may change first. `configure` may point
/// `settings.stores.database.url` elsewhere: through a proxy, or at another test's database.
pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    static SWEPT: OnceLock<()> = OnceLock::new();
    if SWEPT.set(()).is_ok() {
        sweep_leftovers().await;
    }
    let name = fresh_database_name();
    let direct_url = format!("{}/{name}", server_url());
    let mut settings = Settings::new(direct_url.clone());
    settings.server.bind = "127.0.0.1:0".parse().unwrap();
    settings.stores.database.pool_size = 4;
    settings.server.admin_token = Secret::new(format!("admin-{}", uuid::Uuid::new_v4()));
    settings.server.jwt_secret = Secret::new(format!("jwt-{}", uuid::Uuid::new_v4()));
    // Tests fire many requests from one address and as one user; the limits' own tests
    // set them low again.
    settings.limits.sessions_per_minute = 1_000_000;
    // The buyer's page and many tests take anonymous sessions, as with `--demo`.
    settings.server.anonymous_sessions = true;
    settings.limits.holds_per_minute = 1_000_000;
    // What the store said of a seat stands for a minute, not two seconds: a test's next
    // request may come late on a loaded machine, and no test loses a change on the bus
    // (the one that drops what Redis knew sets its own).
    settings.live.known_taken = std::time::Duration::from_secs(60);
    configure(&mut settings);

    // The test's own connections go straight to Postgres, whatever route the server takes.
    let db_name = settings
        .stores
        .database
        .url
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let direct_url = format!("{}/{db_name}", server_url());
    let app = Application::build(&settings).await.expect("server builds");
    let base = format!("http://{}", app.local_addr());
    let holds = app.state().holds.clone();
    let state = app.state().clone();
    // The listener is bound already, so requests queue until the server polls it: no sleep.
    let server = tokio::spawn(async move {
        app.run_until(std::future::pending())
            .await
            .expect("server runs");
    });
    // Live updates published before the server listens to the bus would reach its streams
    // only as a later snapshot; tests expect each change as it happens.
    tokio::time::timeout(Duration::from_secs(30), state.live.listening())
        .await
        .expect("the server listens for live updates");
    let db = PgPoolOptions::new()
        .max_connections(2)
        .connect(&direct_url)
        .await
        .expect("test pool connects");
    TestApp {
        base,
        client: reqwest::Client::new(),
        admin_token: settings.server.admin_token.expose().to_owned(),
        jwt_secret: settings.server.jwt_secret.expose().to_owned(),
        database_url: settings.stores.database.url.clone(),
        db,
        holds,
        hold_store: settings.stores.hold_store,
        redis: settings.stores.redis.clone(),
        drop_url: direct_url,
        server,
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
        let url = self.drop_url.clone();
        // Drop runs inside the test's runtime; dropping the database needs one of its own.
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(db::drop_database(&url))
        })
        .join();
    }
}

/// Who a request is made as.
#[derive(Clone, Debug)]
pub enum As {
    /// No Authorization header.
    Nobody,
    /// The admin token.
    Admin,
    /// A bearer token as given.
    Token(String),
}

impl TestApp {
    /// A request to `path` as `who`.
    pub fn request(&self, method: Method, path: &str, who: &As) -> RequestBuilder {
        let req = self.client.request(method, format!("{}{path}", self.base));
        match who {
            As::Nobody => req,
            As::Admin => req.bearer_auth(&self.admin_token),
            As::Token(t) => req.bearer_auth(t),
        }
    }

    /// Sends `body` as JSON and returns the status and the parsed body (`Null` if empty).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        who: &As,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.request(method, path, who);
        if let Some(body) = body {
            req = req.json(body);
        }
        read(req.send().await.expect("request is sent")).await
    }

    /// `GET path` without credentials.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(Method::GET, path, &As::Nobody, None).await
    }

    /// `POST /v1/venues` as admin.
    pub async fn post_venues(&self, body: &Value) -> (StatusCode, Value) {
        self.send(Method::POST, "/v1/venues", &As::Admin, Some(body))
            .await
    }

    /// `POST /v1/events` as admin.
    pub async fn post_events(&self, body: &Value) -> (StatusCode, Value) {
        self.send(Method::POST, "/v1/events", &As::Admin, Some(body))
            .await
    }

    /// `POST /v1/orders/{id}/cancel` as `who`.
    pub async fn cancel_order(&self, id: &str, who: &As) -> (StatusCode, Value) {
        let path = format!("/v1/orders/{id}/cancel");
        self.send(Method::POST, &path, who, None).await
    }

    /// `PATCH /v1/events/{event}` as admin with `body`; the event it answers.
    pub async fn patch_event(&self, event: &str, body: &Value) -> Value {
        let path = format!("/v1/events/{event}");
        let (status, patched) = self
            .send(Method::PATCH, &path, &As::Admin, Some(body))
            .await;
        assert_eq!(status, StatusCode::OK, "{patched}");
        patched
    }

    /// Who `user` is, as a bearer of a user token signed with this server's secret.
    pub fn buyer(&self, user: &str) -> As {
        As::Token(self.user_token(user))
    }

    /// A buyer of the sales channel `channel`: a user token with that `channel` claim, as
    /// the platform mints them for a partner's buyers.
    pub fn channel_buyer(&self, user: &str, channel: &str) -> As {
        As::Token(boxoffice_client::mint_channel_token(
            &self.jwt_secret,
            user,
            Some(channel),
            chrono::Utc::now() + chrono::Duration::hours(1),
        ))
    }

    /// `POST /v1/events/{event}/holds` for these seats.
    pub async fn post_holds(&self, event: &str, who: &As, seats: &[&str]) -> (StatusCode, Value) {
        self.send(
            Method::POST,
            &format!("/v1/events/{event}/holds"),
            who,
            Some(&json!({"seats": seats})),
        )
        .await
    }

    /// A call on the hold `token` of `event`: `GET` or `DELETE` it, or `POST` its
    /// `/extend` (pass `"/extend"` as `action`, else `""`).
    pub async fn hold_call(
        &self,
        method: Method,
        event: &str,
        token: &str,
        action: &str,
        who: &As,
    ) -> (StatusCode, Value) {
        self.send(
            method,
            &format!("/v1/events/{event}/holds/{token}{action}"),
            who,
            None,
        )
        .await
    }

    /// `who` holds `seats` and checks the hold out: the order (both answers `201`).
    pub async fn order_seats(&self, event: &str, who: &As, seats: &[&str]) -> Value {
        let (status, hold) = self.post_holds(event, who, seats).await;
        assert_eq!(status, StatusCode::CREATED, "{hold}");
        let (status, order) = self
            .post_orders(event, who, hold["hold_token"].as_str().unwrap())
            .await;
        assert_eq!(status, StatusCode::CREATED, "{order}");
        order
    }

    /// `POST /v1/events/{event}/orders` for this hold token.
    pub async fn post_orders(&self, event: &str, who: &As, token: &str) -> (StatusCode, Value) {
        self.send(
            Method::POST,
            &format!("/v1/events/{event}/orders"),
            who,
            Some(&json!({"hold_token": token})),
        )
        .await
    }

    /// A user token for `user`, signed with this server's secret, as a ticketing platform
    /// mints them (through the typed client's helper).
    pub fn user_token(&self, user: &str) -> String {
        boxoffice_client::mint_user_token(
            &self.jwt_secret,
            user,
            chrono::Utc::now() + chrono::Duration::hours(1),
        )
    }

    /// The typed client of this server, making admin calls with its admin token.
    pub fn typed(&self) -> boxoffice_client::Client {
        boxoffice_client::Client::with_http(&self.base, self.client.clone())
            .admin(&self.admin_token)
    }

    /// Creates the standard test venue through the typed client and returns its id.
    pub async fn create_venue(&self) -> String {
        let spec = serde_json::from_value(hall()).expect("the test venue is a venue spec");
        let created = self
            .typed()
            .create_venue(&spec)
            .await
            .expect("venue created");
        created.id.to_string()
    }

    /// Creates the standard test venue and an event on it through the typed client; returns
    /// the event id.
    pub async fn create_event(&self) -> String {
        let venue = self.create_venue().await;
        let spec = serde_json::from_value(gala(&venue)).expect("the test event is an event spec");
        let created = self
            .typed()
            .create_event(&spec)
            .await
            .expect("event created");
        created.id.to_string()
    }

    /// Puts the circle of the standard test event on sale at the standard ticket type (an
    /// allocation change), failing the test if the server refuses.
    pub async fn put_circle_on_sale(&self, event: &str) {
        let (status, body) = self
            .send(
                Method::PUT,
                &format!("/v1/events/{event}/allocations"),
                &As::Admin,
                Some(&json!({"allocations": [{"ticket_type": "standard", "section": "circle"}]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// Each seat's status in `GET /v1/events/{event}/seats` (read through the typed client),
    /// by seat id.
    pub async fn seat_statuses(&self, event: &str) -> std::collections::BTreeMap<String, String> {
        let seats = self
            .typed()
            .seats(EventId::parse(event).expect("an event id"))
            .await
            .expect("the seat map answers");
        seats
            .seats
            .into_iter()
            .map(|s| (s.seat.id, s.status.as_str().to_owned()))
            .collect()
    }

    /// The server's `/metrics` text.
    pub async fn metrics(&self) -> String {
        let response = self
            .client
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .unwrap();
        response.text().await.unwrap()
    }

    /// The value of a counter without labels in the server's `/metrics`; 0 if it was never
    /// counted. Each server has metrics of its own, so this is what this server counted.
    pub async fn counter(&self, name: &str) -> f64 {
        let text = self.metrics().await;
        text.lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .map_or(0.0, |l| l.rsplit(' ').next().unwrap().parse().unwrap())
    }

    /// Number of rows in `table`.
    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(AssertSqlSafe(format!("select count(*) from {table}")))
            .fetch_one(&self.db)
            .await
            .unwrap()
    }

    /// Takes the per-user hold locks of `users` in `event` on one connection of the test's
    /// own, with the key recipe the hold store uses, and keeps them until the transaction
    /// ends.
    pub async fn user_locks(
        &self,
        event: &str,
        users: &[&str],
    ) -> sqlx::Transaction<'static, sqlx::Postgres> {
        let mut tx = self.db.begin().await.unwrap();
        for user in users {
            sqlx::query("select pg_advisory_xact_lock(boxoffice_buyer_lock($1::uuid, $2))")
                .bind(event.parse::<uuid::Uuid>().unwrap())
                .bind(user)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx
    }

    /// How many hold claims wait on a buyer's lock in this server's database.
    pub async fn claims_waiting_on_a_buyer(&self) -> i64 {
        sqlx::query_scalar(
            "select count(*) from pg_locks where locktype = 'advisory' and not granted
               and database = (select oid from pg_database where datname = current_database())",
        )
        .fetch_one(&self.db)
        .await
        .unwrap()
    }
}

/// Reads a response: status and JSON body (`Null` when empty), checking that every error
/// is a problem document whose status matches.
pub async fn read(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response.bytes().await.expect("body is read");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    if status.is_client_error() || status.is_server_error() {
        assert_eq!(content_type, "application/problem+json", "{status}: {body}");
        assert_eq!(body["status"], json!(status.as_u16()), "{body}");
        assert!(
            body["code"].is_string() && body["type"].is_string() && body["title"].is_string(),
            "{body}"
        );
    }
    (status, body)
}

/// Riverside Hall: stalls rows A–C of 4 seats, a circle row A of 3, and a box with two
/// explicitly placed seats.
pub fn hall() -> Value {
    json!({"name": "Riverside Hall", "sections": [
        {"id": "stalls", "name": "Stalls", "origin": {"x": 0, "y": 0}, "seat_spacing": 1.0, "row_spacing": 1.2,
         "rows": [{"label": "A", "seats": 4}, {"label": "B", "seats": 4, "first_number": 1}, {"label": "C", "seats": 4}]},
        {"id": "circle", "name": "Circle", "origin": {"x": 0, "y": 10}, "rows": [{"label": "A", "seats": 3}]},
        {"id": "box", "name": "Box", "rows": [{"label": "L", "seats": [
            {"number": "1", "x": -2.0, "y": 1.5}, {"number": "2", "x": -2.0, "y": 2.5}]}]}]})
}

/// An event on `venue`: stalls standard, stalls row A premium, the box premium, the circle
/// held back; a standing floor for 50.
pub fn gala(venue: &str) -> Value {
    json!({"venue_id": venue, "name": "Spring Gala", "starts_at": "2030-03-01T19:30:00Z",
        "hold_ttl_seconds": 120, "max_hold_seconds": 900, "max_seats_per_user": 4,
        "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                         {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
        "allocations": [{"ticket_type": "standard", "section": "stalls"},
                        {"ticket_type": "premium", "section": "stalls", "rows": ["A"]},
                        {"ticket_type": "premium", "seats": ["box-L-1", "box-L-2"]}],
        "ga_areas": [{"code": "floor", "name": "Standing floor", "capacity": 50,
                      "price_cents": 3000, "currency": "EUR", "max_per_booking": 10}]})
}

/// `who` holds `seats` and buys them; the order.
pub(crate) async fn buy(app: &TestApp, event: &str, who: &str, seats: &[&str]) -> Value {
    let buyer = app.buyer(who);
    let (status, hold) = app.post_holds(event, &buyer, seats).await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, order) = app
        .post_orders(event, &buyer, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    order
}
