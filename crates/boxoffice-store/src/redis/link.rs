//! One connection to Redis, a single node or a Redis Cluster, made on first use and
//! re-made by itself after Redis comes back.
//!
//! Every key this crate writes carries its event id as a hash tag (`…{<event id>}…`), so
//! the keys of one event live in one cluster slot and each Lua script touches one node.

use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{
    Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, ServerErrorKind, Value,
};
use tokio::sync::OnceCell;

use crate::StoreError;

/// Where Redis is.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://host:port`; for a cluster, one or more nodes separated by commas.
    pub url: String,
    /// Whether `url` names Redis Cluster nodes.
    pub cluster: bool,
    /// How long any command (or connecting) may take before Redis counts as unavailable.
    pub timeout: Duration,
}

impl RedisConfig {
    /// Default [`RedisConfig::timeout`], in milliseconds: a healthy Redis answers in well
    /// under a millisecond, so a quarter of a second means it is in trouble.
    pub const DEFAULT_TIMEOUT_MS: u64 = 250;

    /// One Redis server at `url`, with the default timeout.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            cluster: false,
            timeout: Duration::from_millis(Self::DEFAULT_TIMEOUT_MS),
        }
    }
}

enum Client {
    Single(redis::Client),
    Cluster(Box<ClusterClient>),
}

/// A multiplexed connection, cheap to clone; one per request. Every command through it is
/// bounded by the link's timeout and its circuit breaker.
#[derive(Clone)]
pub struct Connection {
    inner: Multiplexed,
    guard: Arc<Guard>,
}

#[derive(Clone)]
enum Multiplexed {
    /// One Redis server.
    Single(Box<ConnectionManager>),
    /// A Redis Cluster; commands go to the node serving their first key's slot.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let sent = match &mut self.inner {
            Multiplexed::Single(c) => c.req_packed_command(cmd),
            Multiplexed::Cluster(c) => c.req_packed_command(cmd),
        };
        Box::pin(self.guard.clone().run(sent))
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let sent = match &mut self.inner {
            Multiplexed::Single(c) => c.req_packed_commands(cmd, offset, count),
            Multiplexed::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        };
        Box::pin(self.guard.clone().run(sent))
    }

    fn get_db(&self) -> i64 {
        match &self.inner {
            Multiplexed::Single(c) => c.get_db(),
            Multiplexed::Cluster(c) => c.get_db(),
        }
    }
}

/// Failures in a row that open the circuit.
const TRIP_AFTER: u32 = 3;
/// How long an open circuit answers at once before it lets one command probe Redis.
const COOL_DOWN: Duration = Duration::from_secs(1);

/// The timeout and the circuit breaker every command of one link goes through.
///
/// A Redis that is stopped, frozen or swamped does not refuse commands: it leaves them
/// waiting. Each command therefore gets the link's timeout, and after [`TRIP_AFTER`]
/// failures in a row the circuit opens: for [`COOL_DOWN`] every command fails at once,
/// without touching Redis, so callers answer 503 (or read without holds) immediately
/// instead of each waiting out a timeout. Then one command probes; its success closes the
/// circuit, its failure opens it for another cool-down. Commands that Redis answered with
/// an error of its own (a script error) say Redis is up, and count as successes.
struct Guard {
    timeout: Duration,
    origin: Instant,
    /// Unreachable-Redis failures in a row.
    failures: AtomicU32,
    /// Milliseconds since `origin` until which commands fail at once (0: closed).
    open_until: AtomicU64,
}

impl Guard {
    fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            origin: Instant::now(),
            failures: AtomicU32::new(0),
            open_until: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    /// Whether a command may go to Redis now. Past the cool-down, the first caller claims
    /// the probe (the circuit stays open for everyone else while it runs).
    fn admit(&self) -> bool {
        let until = self.open_until.load(Ordering::Acquire);
        if until == 0 {
            return true;
        }
        let now = self.now_ms();
        let probe_until = now + self.timeout.as_millis() as u64 + 1;
        now >= until
            && self
                .open_until
                .compare_exchange(until, probe_until, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    fn succeeded(&self) {
        if self.failures.swap(0, Ordering::AcqRel) > 0
            || self.open_until.load(Ordering::Acquire) != 0
        {
            self.open_until.store(0, Ordering::Release);
        }
    }

    fn failed(&self) {
        let failures = self.failures.fetch_add(1, Ordering::AcqRel) + 1;
        if failures >= TRIP_AFTER {
            let until = self.now_ms() + COOL_DOWN.as_millis() as u64;
            if self.open_until.swap(until, Ordering::AcqRel) == 0 {
                tracing::warn!(failures, "redis is not answering: failing fast for a while");
            }
        }
    }

    /// Whether the circuit is open now.
    fn is_open(&self) -> bool {
        let until = self.open_until.load(Ordering::Acquire);
        until != 0 && self.now_ms() < until
    }

    /// Runs a command under the timeout, counting its outcome.
    async fn run<T>(self: Arc<Self>, sent: impl Future<Output = RedisResult<T>>) -> RedisResult<T> {
        if !self.admit() {
            return Err(circuit_open());
        }
        match tokio::time::timeout(self.timeout, sent).await {
            Ok(Ok(value)) => {
                self.succeeded();
                Ok(value)
            }
            Ok(Err(e)) => {
                if is_unreachable(&e) {
                    self.failed();
                } else {
                    self.succeeded();
                }
                Err(e)
            }
            Err(_) => {
                self.failed();
                Err(RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {:?}", self.timeout),
                )))
            }
        }
    }
}

fn circuit_open() -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "circuit open after repeated failures; retrying shortly",
    ))
}

/// Redis, connected lazily: a server starts while Redis is down, answers 503 for what
/// needs Redis, and connects on the first call after Redis returns.
pub struct RedisLink {
    client: Client,
    connection: OnceCell<Multiplexed>,
    guard: Arc<Guard>,
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
            Client::Cluster(Box::new(
                ClusterClient::builder(nodes)
                    .connection_timeout(config.timeout)
                    .response_timeout(config.timeout)
                    .retries(2)
                    .build()
                    .map_err(invalid)?,
            ))
        } else {
            Client::Single(redis::Client::open(config.url.as_str()).map_err(invalid)?)
        };
        Ok(Self {
            client,
            connection: OnceCell::new(),
            guard: Arc::new(Guard::new(config.timeout)),
        })
    }

    /// The shared connection, connecting first if this is the first call (or every call
    /// so far failed to connect).
    pub async fn connection(&self) -> Result<Connection, StoreError> {
        if let Some(inner) = self.connection.get() {
            return Ok(Connection {
                inner: inner.clone(),
                guard: self.guard.clone(),
            });
        }
        let timeout = self.guard.timeout;
        let inner = self
            .connection
            .get_or_try_init(|| async {
                let connect = async {
                    match &self.client {
                        Client::Single(client) => {
                            // No retries inside a reconnection: while Redis is down each
                            // request fails at once (503), and the next one tries again.
                            // No response timeout either: the guard times every command,
                            // and a second timer per command would only cost.
                            let config = ConnectionManagerConfig::new()
                                .set_connection_timeout(Some(timeout))
                                .set_response_timeout(None)
                                .set_number_of_retries(0);
                            ConnectionManager::new_with_config(client.clone(), config)
                                .await
                                .map(|c| Multiplexed::Single(Box::new(c)))
                        }
                        Client::Cluster(client) => client
                            .get_async_connection()
                            .await
                            .map(Multiplexed::Cluster),
                    }
                };
                // Connecting goes through the breaker too: while Redis is away each
                // request fails at once instead of waiting to connect.
                self.guard.clone().run(connect).await.map_err(redis_error)
            })
            .await?;
        Ok(Connection {
            inner: inner.clone(),
            guard: self.guard.clone(),
        })
    }

    /// Whether the circuit breaker is failing commands at once (Redis stopped answering
    /// moments ago).
    pub fn is_failing_fast(&self) -> bool {
        self.guard.is_open()
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
    if is_unreachable(&e) {
        StoreError::unavailable(format!("redis: {e}"))
    } else {
        StoreError::Other(Box::new(e))
    }
}

/// Whether a failure means Redis could not be reached (as opposed to Redis answering with
/// an error).
fn is_unreachable(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_cluster_error()
        || matches!(
            e.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(
                    ServerErrorKind::BusyLoading
                        | ServerErrorKind::TryAgain
                        | ServerErrorKind::ClusterDown
                        | ServerErrorKind::MasterDown
                        | ServerErrorKind::ReadOnly
                )
        )
}
