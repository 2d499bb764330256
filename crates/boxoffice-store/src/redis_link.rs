//! One connection to Redis, a single node or a Redis Cluster, made on first use and
//! re-made by itself after Redis comes back.
//!
//! Every key this crate writes carries its event id as a hash tag (`…{<event id>}…`), so
//! the keys of one event live in one cluster slot and each Lua script touches one node.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, Value};
use tokio::sync::OnceCell;

use crate::StoreError;

/// Where Redis is.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://host:port`; for a cluster, one or more nodes separated by commas.
    pub url: String,
    /// Whether `url` names Redis Cluster nodes.
    pub cluster: bool,
}

/// How long a command may take before Redis counts as unavailable.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

enum Client {
    Single(redis::Client),
    Cluster(ClusterClient),
}

/// A multiplexed connection, cheap to clone; one per request.
#[derive(Clone)]
pub enum Connection {
    /// One Redis server.
    Single(Box<ConnectionManager>),
    /// A Redis Cluster; commands go to the node serving their first key's slot.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(c) => c.req_packed_commands(cmd, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}

/// Redis, connected lazily: a server starts while Redis is down, answers 503 for what
/// needs Redis, and connects on the first call after Redis returns.
pub struct RedisLink {
    client: Client,
    connection: OnceCell<Connection>,
}

impl std::fmt::Debug for RedisLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedisLink")
    }
}

impl RedisLink {
    /// A link to the Redis `config` names; nothing is connected yet. Fails only for a
    /// malformed URL.
    pub fn new(config: &RedisConfig) -> Result<Self, StoreError> {
        let invalid = |e: RedisError| StoreError::Other(Box::new(e));
        let client = if config.cluster {
            let nodes: Vec<&str> = config.url.split(',').map(str::trim).collect();
            Client::Cluster(
                ClusterClient::builder(nodes)
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(RESPONSE_TIMEOUT)
                    .retries(2)
                    .build()
                    .map_err(invalid)?,
            )
        } else {
            Client::Single(redis::Client::open(config.url.as_str()).map_err(invalid)?)
        };
        Ok(Self {
            client,
            connection: OnceCell::new(),
        })
    }

    /// The shared connection, connecting first if this is the first call (or every call
    /// so far failed to connect).
    pub async fn connection(&self) -> Result<Connection, StoreError> {
        self.connection
            .get_or_try_init(|| async {
                match &self.client {
                    Client::Single(client) => {
                        // No retries inside a reconnection: while Redis is down each
                        // request fails at once (503), and the next one tries again.
                        let config = ConnectionManagerConfig::new()
                            .set_connection_timeout(CONNECT_TIMEOUT)
                            .set_response_timeout(RESPONSE_TIMEOUT)
                            .set_number_of_retries(0);
                        ConnectionManager::new_with_config(client.clone(), config)
                            .await
                            .map(|c| Connection::Single(Box::new(c)))
                    }
                    Client::Cluster(client) => {
                        client.get_async_connection().await.map(Connection::Cluster)
                    }
                }
                .map_err(redis_error)
            })
            .await
            .cloned()
    }

    /// Whether Redis answers a PING.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .map_err(redis_error)?;
        Ok(())
    }
}

/// Sorts a Redis failure: anything about reaching Redis (refused, dropped, timed out, a
/// cluster without a master for the slot, a server loading its data) is `Unavailable`;
/// anything else (a script error) is a bug and stays `Other`.
pub fn redis_error(e: RedisError) -> StoreError {
    let unreachable = e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_cluster_error()
        || matches!(
            e.kind(),
            ErrorKind::BusyLoadingError
                | ErrorKind::TryAgain
                | ErrorKind::ClusterDown
                | ErrorKind::MasterDown
                | ErrorKind::ReadOnly
                | ErrorKind::ClusterConnectionNotFound
        );
    if unreachable {
        StoreError::unavailable(format!("redis: {e}"))
    } else {
        StoreError::Other(Box::new(e))
    }
}
