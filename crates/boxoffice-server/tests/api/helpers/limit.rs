//! A server whose adaptive limit is fixed and tiny, and writes held back on a lock, so a
//! test decides when the limit is full: what the limits' tests and the busy pages' tests
//! share.

use std::time::Duration;

use boxoffice_server::Settings;
use boxoffice_service::overload::OverloadSettings;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::task::JoinHandle;

use super::TestApp;

/// An adaptive limit fixed at `n` in flight (floor and ceiling), every answer within its
/// target, and writes that wait on a lock as long as a test holds it.
pub(crate) fn fixed_limit(n: usize) -> impl FnOnce(&mut Settings) {
    move |s| {
        s.limits.overload = Some(OverloadSettings {
            target: Duration::from_secs(60),
            floor: n,
            ceiling: n,
        });
        s.stores.database.lock_timeout = Duration::from_secs(60);
    }
}

/// Locks `reservation` against writes until the transaction ends: holds and checkouts let
/// in wait, in flight.
pub(crate) async fn writes_wait(app: &TestApp) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut lock = app.db.begin().await.unwrap();
    sqlx::query("LOCK TABLE reservation IN EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await
        .unwrap();
    lock
}

/// `name{path="<path>"}` of the server's metrics.
pub(crate) async fn of_path(app: &TestApp, name: &str, path: &str) -> f64 {
    app.counter(&format!("{name}{{path=\"{path}\"}}")).await
}

/// Waits until the server has refused `n` requests on `path` at its adaptive limit.
pub(crate) async fn shed(app: &TestApp, path: &str, n: f64) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while of_path(app, "boxoffice_overload_shed_total", path).await < n {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the server never refused {n} requests on {path}"));
}

/// Waits until `path` has `n` requests in flight under its limit.
pub(crate) async fn in_flight(app: &TestApp, path: &str, n: f64) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while of_path(app, "boxoffice_overload_in_flight", path).await != n {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{path} never had {n} in flight"));
}

/// With a limit of one: locks writes and sends another buyer's hold (of `stalls-A-1`),
/// which takes the one place and waits on the lock until the transaction ends; the lock,
/// and that hold's answer to come.
pub(crate) async fn the_one_place_taken(
    app: &TestApp,
    event: &str,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    JoinHandle<StatusCode>,
) {
    let lock = writes_wait(app).await;
    let request = app
        .request(
            Method::POST,
            &format!("/v1/events/{event}/holds"),
            &app.buyer("first"),
        )
        .json(&json!({"seats": ["stalls-A-1"]}));
    let first = tokio::spawn(async move { request.send().await.unwrap().status() });
    in_flight(app, "hold", 1.0).await;
    (lock, first)
}
