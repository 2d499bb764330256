//! A server on the redis store over a Redis of the test's own.

use std::time::Duration;

use boxoffice_server::config::HoldStoreKind;
use serde_json::Value;

use super::{spawn_app_with, TestApp};
use crate::helpers::stores::{test_redis, PrivateRedis};

pub(crate) async fn spawn_on(redis: &PrivateRedis) -> TestApp {
    spawn_on_redis(redis.url(), false).await
}

pub(crate) async fn spawn_on_redis(url: String, cluster: bool) -> TestApp {
    spawn_app_with(move |s| {
        s.stores.hold_store = HoldStoreKind::Redis;
        s.stores.redis = test_redis(url, cluster);
        s.stores.database.pool_size = 8;
        s.stores.database.acquire_timeout = Duration::from_secs(30);
    })
    .await
}

pub(crate) fn token(hold: &Value) -> &str {
    hold["hold_token"].as_str().unwrap()
}
