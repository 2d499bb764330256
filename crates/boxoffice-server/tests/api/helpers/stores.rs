//! The hold stores under test, and the Redis servers they need.
//!
//! [`conformance!`] turns each test function taking a [`Store`] into three tests: on the
//! postgres store, on the redis store over one Redis server, and on the redis store over a
//! three-master Redis Cluster. The test bodies are the same for all three.
//!
//! The single server is the machine's Redis (`BOXOFFICE_TEST_REDIS_URL`, by default
//! `redis://127.0.0.1:6379`): every test uses events of its own, and every key carries its
//! event, so tests never see each other's keys. The cluster is started here on first use
//! (ports 7101–7103, `redis-server --cluster-enabled yes` and `redis-cli --cluster
//! create`) and left running for the next run, unless `BOXOFFICE_TEST_REDIS_CLUSTER`
//! names one. Tests that flush or stop Redis get a [`PrivateRedis`] of their own.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use boxoffice_server::config::HoldStoreKind;
use boxoffice_server::Settings;
use boxoffice_store::redis::link::{RedisConfig, RedisLink};

/// Where holds are kept in a conformance test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Rows in Postgres.
    Postgres,
    /// Keys in one Redis server.
    Redis,
    /// Keys in a three-master Redis Cluster.
    RedisCluster,
}

impl Store {
    /// Points the server's settings at this store.
    pub fn configure(self, settings: &mut Settings) {
        match self {
            Store::Postgres => settings.stores.hold_store = HoldStoreKind::Postgres,
            Store::Redis => {
                settings.stores.hold_store = HoldStoreKind::Redis;
                settings.stores.redis = test_redis(redis_url(), false);
            }
            Store::RedisCluster => {
                settings.stores.hold_store = HoldStoreKind::Redis;
                settings.stores.redis = test_redis(cluster_url(), true);
            }
        }
    }
}

/// Redis at `url` as the tests reach it: with a timeout far above the default, because two
/// cores running many tests at once can keep a healthy Redis waiting longer than a
/// production timeout allows. The tests of the timeout itself set their own.
pub fn test_redis(url: String, cluster: bool) -> RedisConfig {
    RedisConfig {
        cluster,
        timeout: Duration::from_secs(5),
        ..RedisConfig::new(url)
    }
}

/// Runs each named `async fn(Store)` as a test on every store.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::helpers::stores::Store::Postgres).await
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::helpers::stores::Store::Redis).await
                }
            )*
        }
        mod redis_cluster {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::helpers::stores::Store::RedisCluster).await
                }
            )*
        }
    };
}
pub(crate) use conformance;

/// The machine's Redis server.
pub fn redis_url() -> String {
    std::env::var("BOXOFFICE_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

const CLUSTER_PORTS: [u16; 3] = [7101, 7102, 7103];

/// The test cluster's nodes, comma-separated; started (once per run) if it is not up.
pub fn cluster_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("BOXOFFICE_TEST_REDIS_CLUSTER") {
            return url;
        }
        ensure_cluster();
        CLUSTER_PORTS
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    })
    .clone()
}

fn redis_cli(port: u16, args: &[&str]) -> Option<String> {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether every node on `ports` says the cluster serves every slot.
fn cluster_ok(ports: &[u16]) -> bool {
    ports.iter().all(|&p| {
        redis_cli(p, &["cluster", "info"]).is_some_and(|info| info.contains("cluster_state:ok"))
    })
}

/// Joins the servers on `ports` into one cluster, a master each, and waits until it serves
/// every slot.
fn create_cluster(ports: &[u16]) {
    let nodes: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let status = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&nodes)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli runs");
    assert!(status.success(), "redis-cli --cluster create failed");
    wait_for_cluster(ports);
}

fn wait_for_cluster(ports: &[u16]) {
    wait_for(
        "the redis cluster to be ok",
        Duration::from_secs(30),
        || cluster_ok(ports),
    );
}

fn wait_for(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen in {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts three cluster-enabled Redis servers and joins them into one cluster with a
/// master each, unless that cluster is already up.
fn ensure_cluster() {
    if cluster_ok(&CLUSTER_PORTS) {
        return;
    }
    let dir = std::env::temp_dir().join("boxoffice-redis-cluster");
    for port in CLUSTER_PORTS {
        if redis_cli(port, &["ping"]).is_some() {
            continue;
        }
        let node_dir = dir.join(port.to_string());
        std::fs::create_dir_all(&node_dir).unwrap();
        let status = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
            ])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "yes"])
            .arg("--dir")
            .arg(&node_dir)
            .arg("--logfile")
            .arg(node_dir.join("redis.log"))
            .status()
            .expect("redis-server runs (the redis cluster tests need it installed)");
        assert!(
            status.success(),
            "redis-server on port {port} did not start"
        );
    }
    for port in CLUSTER_PORTS {
        wait_for(
            &format!("redis on {port} answering"),
            Duration::from_secs(10),
            || redis_cli(port, &["ping"]).is_some(),
        );
    }
    // Nodes that remember a cluster of their own rejoin it by themselves.
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline && !cluster_ok(&CLUSTER_PORTS) {
        std::thread::sleep(Duration::from_millis(100));
    }
    if cluster_ok(&CLUSTER_PORTS) {
        return;
    }
    for port in CLUSTER_PORTS {
        redis_cli(port, &["flushall"]);
        redis_cli(port, &["cluster", "reset", "hard"]);
    }
    create_cluster(&CLUSTER_PORTS);
}

/// Ports a private Redis may take: below the ephemeral range (32768 and up on Linux), so no
/// outgoing connection takes one between the check and the start, and low enough that the
/// cluster bus port (port + 10000) is a port too; Redis refuses cluster mode above 55535.
const PRIVATE_PORTS: std::ops::Range<u16> = std::ops::Range {
    start: 12000,
    end: 22000,
};

/// A port in [`PRIVATE_PORTS`] that is free, with its cluster bus port free too. Each call
/// in this process starts from the next port, so tests never pick the same one.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: OnceLock<AtomicU16> = OnceLock::new();
    let span = PRIVATE_PORTS.end - PRIVATE_PORTS.start;
    // Start somewhere else in each run, so a run's ports rarely meet a crashed run's.
    let next = NEXT.get_or_init(|| AtomicU16::new((std::process::id() % u32::from(span)) as u16));
    for _ in 0..span {
        let port = PRIVATE_PORTS.start + next.fetch_add(1, Ordering::Relaxed) % span;
        let free = |p: u16| TcpListener::bind(("127.0.0.1", p)).is_ok();
        if free(port) && free(port + 10_000) {
            return port;
        }
    }
    panic!("no free port in {PRIVATE_PORTS:?} for a private redis-server");
}

/// A Redis server of one test's own, on a free port, that the test may flush, stop and
/// start again. Killed when dropped.
pub struct PrivateRedis {
    /// Its port.
    pub port: u16,
    dir: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
}

impl PrivateRedis {
    /// Starts one and waits until it answers.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts one with these extra `redis-server` arguments.
    fn start_with(args: &[&str]) -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("boxoffice-redis-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Self {
            port,
            dir,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            child: None,
        };
        redis.start_again();
        redis
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A connection to it, for looking at its keys.
    pub async fn connection(&self) -> boxoffice_store::redis::link::Connection {
        RedisLink::new(&test_redis(self.url(), false))
            .unwrap()
            .connection()
            .await
            .unwrap()
    }

    /// Stops it at once, as a crash would: every key is lost (it keeps nothing on disk).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (empty) and waits until it answers.
    pub fn start_again(&mut self) {
        self.stop();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(&self.args)
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (the redis store tests need it installed)");
        self.child = Some(child);
        let port = self.port;
        wait_for(
            &format!("redis on {port} answering"),
            Duration::from_secs(10),
            || redis_cli(port, &["ping"]).is_some(),
        );
    }

    /// SIGSTOP: Redis stays connected but answers nothing, as a server swapping, stuck
    /// on a slow disk or paused by its host does.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: a frozen Redis answers again, the commands it was sent meanwhile first.
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("redis is running").id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid} failed");
    }

    /// FLUSHALL: Redis loses every key, as after a failover to an empty replica.
    pub fn flushall(&self) {
        assert!(
            redis_cli(self.port, &["flushall"]).is_some(),
            "flushall failed"
        );
    }

    /// SCRIPT FLUSH: Redis forgets every loaded script.
    pub fn script_flush(&self) {
        assert!(
            redis_cli(self.port, &["script", "flush"]).is_some(),
            "script flush failed"
        );
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A three-master Redis Cluster of one test's own, whose nodes the test may stop and
/// start again. Killed when dropped.
pub struct PrivateCluster {
    /// The nodes.
    pub nodes: Vec<PrivateRedis>,
}

impl PrivateCluster {
    /// Starts three nodes, joins them into a cluster and waits until it serves every slot.
    pub fn start() -> Self {
        let nodes: Vec<PrivateRedis> = (0..3)
            .map(|_| {
                PrivateRedis::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                ])
            })
            .collect();
        create_cluster(&nodes.iter().map(|n| n.port).collect::<Vec<_>>());
        Self { nodes }
    }

    /// The nodes' URLs, comma-separated.
    pub fn url(&self) -> String {
        self.nodes
            .iter()
            .map(PrivateRedis::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Waits until every node says the cluster serves every slot.
    pub fn wait_until_ok(&self) {
        wait_for_cluster(&self.nodes.iter().map(|n| n.port).collect::<Vec<_>>());
    }

    /// The node serving `key`'s slot.
    pub fn node_of(&mut self, key: &str) -> &mut PrivateRedis {
        let port = self.nodes[0].port;
        let slot: u16 = redis_cli(port, &["cluster", "keyslot", key])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let nodes = redis_cli(port, &["cluster", "nodes"]).unwrap();
        let owner = nodes
            .lines()
            .find(|line| {
                line.split_whitespace().skip(8).any(|range| {
                    let (from, to) = range.split_once('-').unwrap_or((range, range));
                    matches!((from.parse::<u16>(), to.parse::<u16>()), (Ok(a), Ok(b)) if a <= slot && slot <= b)
                })
            })
            .expect("some node serves the slot");
        let address = owner.split_whitespace().nth(1).unwrap();
        let owner_port: u16 = address.split(['@', ':']).nth(1).unwrap().parse().unwrap();
        self.nodes
            .iter_mut()
            .find(|n| n.port == owner_port)
            .unwrap()
    }
}
