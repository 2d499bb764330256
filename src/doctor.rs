//! `boxoffice doctor`: checks what a server needs before it starts, prints what is wrong
//! and how to fix it, and exits non-zero when something is. Also the one-paragraph fixes
//! `serve`, `migrate` and `relay` print when a store cannot be reached at start. (A long
//! file: each check with its thresholds and the fixes it suggests.)

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::{Duration, Instant};

use boxoffice_server::config::{HoldStoreKind, ServeArgs, Settings};
use chrono::{DateTime, Utc};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};

/// `boxoffice doctor` flags: the server's own, and what the deployment around it holds.
#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Server instances sharing the database (each opens its pool and a listener).
    #[arg(long, default_value_t = 1, help_heading = "Deployment")]
    pub instances: u32,
    /// Stand-alone relays sharing the database (each opens a pool of its own).
    #[arg(long, default_value_t = 0, help_heading = "Deployment")]
    pub relays: u32,
    /// The settings given in the environment or on the command line, under their groups
    /// (`config::table::in_effect`).
    #[arg(skip)]
    pub in_effect: Vec<(String, Vec<String>)>,
}

/// How long each store has to answer the doctor.
const REACH_TIMEOUT: Duration = Duration::from_secs(5);

/// Past these, two clocks disagree enough to matter: the hold rules compare Postgres'
/// clock (pay_by, a hold's expiry on the postgres store) with Redis' (the redis store's
/// expiries, a payment's check), and servers check tokens' times by their own.
const STORES_SKEW_FAIL: Duration = Duration::from_millis(500);
const STORES_SKEW_WARN: Duration = Duration::from_millis(100);
const SERVER_SKEW_FAIL: Duration = Duration::from_secs(2);
const SERVER_SKEW_WARN: Duration = Duration::from_millis(500);

/// Descriptors a server needs besides its client connections: the pool, Redis, the
/// listener, files.
const OTHER_DESCRIPTORS: u64 = 128;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ok,
    Warn,
    Fail,
}

/// What one check found, and what to do about it.
struct Finding {
    level: Level,
    what: String,
    fix: Option<String>,
}

#[derive(Default)]
struct Report(Vec<Finding>);

impl Report {
    fn ok(&mut self, what: impl Into<String>) {
        self.0.push(Finding {
            level: Level::Ok,
            what: what.into(),
            fix: None,
        });
    }

    fn problem(&mut self, level: Level, what: impl Into<String>, fix: impl Into<String>) {
        self.0.push(Finding {
            level,
            what: what.into(),
            fix: Some(fix.into()),
        });
    }

    fn print(&self) -> bool {
        for f in &self.0 {
            let tag = match f.level {
                Level::Ok => "ok  ",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            println!("{tag}  {}", f.what);
            if let Some(fix) = &f.fix {
                println!("      fix: {fix}");
            }
        }
        let failed = self.0.iter().filter(|f| f.level == Level::Fail).count();
        let warned = self.0.iter().filter(|f| f.level == Level::Warn).count();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        if failed == 0 {
            println!("no problems ({})", plural(warned, "warning"));
        } else {
            println!(
                "{}, {}",
                plural(failed, "problem"),
                plural(warned, "warning")
            );
        }
        failed == 0
    }
}

/// Runs every check; answers whether nothing is wrong.
pub async fn run(args: DoctorArgs) -> bool {
    let mut report = Report::default();
    let settings = configuration(&args, &mut report);
    let db_url = args.serve.stores.database_url.clone();
    let pg = postgres(&db_url, &args, &mut report).await;
    let redis_needed = settings
        .as_ref()
        .is_some_and(|s| s.stores.hold_store == HoldStoreKind::Redis || s.stores.ga_gate);
    let redis = redis(
        &args.serve.stores.redis_url,
        args.serve.stores.redis_cluster,
        redis_needed,
        &mut report,
    )
    .await;
    clocks(pg, redis, &mut report);
    if let Some(settings) = &settings {
        open_files(settings, &mut report);
    }
    report.print()
}

fn configuration(args: &DoctorArgs, report: &mut Report) -> Option<Settings> {
    let (settings, generated) = match args.serve.settings() {
        Ok(s) => s,
        Err(e) => {
            report.problem(
                Level::Fail,
                format!("configuration: {e}"),
                "correct the setting (`boxoffice serve --help` lists each with its variable)",
            );
            return None;
        }
    };
    report.ok(format!(
        "configuration: the {} hold store, listening on {}, {} database connections, up to {} client connections",
        match settings.stores.hold_store {
            HoldStoreKind::Postgres => "postgres",
            HoldStoreKind::Redis => "redis",
        },
        settings.server.bind,
        settings.stores.database.pool_size,
        settings.limits.connections.max_connections,
    ));
    // What this server would run with that is not a default, group by group, as
    // `boxoffice serve --help` and docs/configuration.md group them.
    let set: Vec<String> = args
        .in_effect
        .iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(group, set)| format!("{}: {}", group.to_lowercase(), set.join(" ")))
        .collect();
    report.ok(if set.is_empty() {
        "settings: every one its default".to_owned()
    } else {
        format!("settings (the rest their defaults): {}", set.join("; "))
    });
    if generated.jwt_secret {
        report.problem(
            Level::Fail,
            "BOXOFFICE_JWT_SECRET is not set: each start signs user tokens with a new random secret, so every buyer's token dies with a restart and instances refuse each other's",
            "set BOXOFFICE_JWT_SECRET to the same long random value on every instance (`openssl rand -hex 32`), and give it to the platform that mints tokens",
        );
    }
    if generated.admin_token {
        let level = if args.instances > 1 {
            Level::Fail
        } else {
            Level::Warn
        };
        report.problem(
            level,
            "BOXOFFICE_ADMIN_TOKEN is not set: each start makes a random one and prints it, so it changes with every restart (and differs between instances)",
            "set BOXOFFICE_ADMIN_TOKEN to a long random value (`openssl rand -hex 32`), the same on every instance",
        );
    }
    Some(settings)
}

/// Where a Postgres URL points, without its password.
pub fn postgres_place(url: &str) -> String {
    match PgConnectOptions::from_str(url) {
        Ok(o) => format!(
            "{}@{}:{}/{}",
            o.get_username(),
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap_or("postgres")
        ),
        Err(_) => "the DATABASE_URL given".to_owned(),
    }
}

/// What to do when Postgres cannot be reached: the paragraph `serve`, `migrate`, `relay`
/// and `doctor` print.
pub fn postgres_fix(url: &str, reason: &str) -> String {
    format!(
        "cannot reach Postgres at {} ({reason}). Is it running and listening there? Start it \
         (`systemctl start postgresql`, or `pg_ctlcluster <version> main start`), check that \
         pg_hba.conf lets this user in from this host, or point DATABASE_URL (--database-url) \
         at a server that is up. `boxoffice doctor` checks every setting.",
        postgres_place(url)
    )
}

/// What to do when Redis cannot be reached.
pub fn redis_fix(url: &str, reason: &str) -> String {
    format!(
        "cannot reach Redis at {} ({reason}). Start it (`systemctl start redis-server`), or \
         point REDIS_URL (--redis-url) at one that is up; with BOXOFFICE_HOLD_STORE=postgres \
         only the waiting room and the sale-day gate need it. Until it answers, what needs it \
         answers 503.",
        redis_place(url)
    )
}

fn redis_place(url: &str) -> String {
    url.split(',')
        .map(|u| match u.rsplit_once('@') {
            Some((_, host)) => format!("redis://{host}"),
            None => u.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Postgres' clock against this machine's: (Postgres' time, when it was read here).
type Reading = (DateTime<Utc>, DateTime<Utc>);

async fn postgres(url: &str, args: &DoctorArgs, report: &mut Report) -> Option<Reading> {
    let options = match PgConnectOptions::from_str(url) {
        Ok(o) => o,
        Err(e) => {
            report.problem(
                Level::Fail,
                format!("DATABASE_URL does not parse: {e}"),
                "give a URL like postgres://user:password@host:5432/boxoffice",
            );
            return None;
        }
    };
    let place = postgres_place(url);
    let mut conn = match tokio::time::timeout(REACH_TIMEOUT, options.connect()).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(sqlx::Error::Database(e))) if e.code().as_deref() == Some("3D000") => {
            report.problem(
                Level::Fail,
                format!("postgres at {place}: the database does not exist"),
                "run `boxoffice migrate` (it creates the database when the user may, then migrates it), or `createdb` it",
            );
            return None;
        }
        Ok(Err(e)) => {
            report.problem(
                Level::Fail,
                format!("postgres at {place}: {e}"),
                postgres_fix(url, &e.to_string()),
            );
            return None;
        }
        Err(_) => {
            let reason = format!("no answer within {} s", REACH_TIMEOUT.as_secs());
            report.problem(
                Level::Fail,
                format!("postgres at {place}: {reason}"),
                postgres_fix(url, &reason),
            );
            return None;
        }
    };
    let checked = async {
        let (version_num, version): (i32, String) = sqlx::query_as(
            "select current_setting('server_version_num')::int, current_setting('server_version')",
        )
        .fetch_one(&mut conn)
        .await?;
        if version_num < 150_000 {
            report.problem(
                Level::Warn,
                format!("postgres {version} at {place}: Boxoffice is built and tested on PostgreSQL 15 and later"),
                "upgrade PostgreSQL to 15 or later",
            );
        } else {
            report.ok(format!("postgres {version} at {place}"));
        }
        migrations(&mut conn, report).await?;
        claim(&mut conn, report).await;
        connections(&mut conn, args, report).await?;
        let before = Utc::now();
        let now: DateTime<Utc> = sqlx::query_scalar("select clock_timestamp()")
            .fetch_one(&mut conn)
            .await?;
        let after = Utc::now();
        Ok::<_, sqlx::Error>((now, before + (after - before) / 2))
    };
    let reading = match checked.await {
        Ok(r) => Some(r),
        Err(e) => {
            report.problem(
                Level::Fail,
                format!("postgres at {place}: {e}"),
                postgres_fix(url, &e.to_string()),
            );
            None
        }
    };
    let _ = conn.close().await;
    reading
}

async fn migrations(conn: &mut PgConnection, report: &mut Report) -> Result<(), sqlx::Error> {
    let migrator = &boxoffice_store::pg::db::MIGRATOR;
    let table: bool = sqlx::query_scalar("select to_regclass('_sqlx_migrations') is not null")
        .fetch_one(&mut *conn)
        .await?;
    let applied: BTreeMap<i64, (Vec<u8>, bool)> = if table {
        sqlx::query_as::<_, (i64, Vec<u8>, bool)>(
            "select version, checksum, success from _sqlx_migrations",
        )
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|(v, sum, ok)| (v, (sum, ok)))
        .collect()
    } else {
        BTreeMap::new()
    };
    let known: Vec<i64> = migrator.iter().map(|m| m.version).collect();
    let pending: Vec<i64> = known
        .iter()
        .copied()
        .filter(|v| !applied.contains_key(v))
        .collect();
    let changed: Vec<i64> = migrator
        .iter()
        .filter(|m| {
            applied
                .get(&m.version)
                .is_some_and(|(sum, _)| sum[..] != m.checksum[..])
        })
        .map(|m| m.version)
        .collect();
    let failed: Vec<i64> = applied
        .iter()
        .filter(|(_, (_, ok))| !ok)
        .map(|(v, _)| *v)
        .collect();
    let ahead: Vec<i64> = applied
        .keys()
        .copied()
        .filter(|v| !known.contains(v))
        .collect();
    if !ahead.is_empty() {
        report.problem(
            Level::Fail,
            format!("migrations: the database has {ahead:?}, which this Boxoffice does not know: a newer version migrated it"),
            "run the Boxoffice version that migrated it (instances are upgraded after the migration, never downgraded)",
        );
    }
    if !changed.is_empty() || !failed.is_empty() {
        report.problem(
            Level::Fail,
            format!("migrations: {changed:?} differ from what was applied, {failed:?} failed half-way"),
            "restore the database from a backup taken before, or ask the team that changed the migration; the server refuses to start this way",
        );
    }
    if pending.is_empty() {
        report.ok(format!("migrations: all {} applied", known.len()));
    } else {
        report.problem(
            Level::Fail,
            format!("migrations: {} of {} pending ({pending:?})", pending.len(), known.len()),
            "run `boxoffice migrate` before starting the servers (the systemd unit does, before each start)",
        );
    }
    Ok(())
}

/// The claim in force against this server's (`sql/claim.sql`): a newer one stops this
/// server from starting; an older one is replaced at its start, after which servers of the
/// older version refuse to restart.
async fn claim(conn: &mut PgConnection, report: &mut Report) {
    use boxoffice_store::pg::db;
    let ours = db::Claim::this_server();
    let in_force = match db::claim_in_force(conn).await {
        Ok(in_force) => in_force,
        Err(e) => {
            report.problem(
                Level::Fail,
                format!("claim: cannot read the claim in force: {e}"),
                "check that this role may read the table claim_in_force",
            );
            return;
        }
    };
    match in_force {
        None => report.ok(format!(
            "claim: version {} is applied at the next start (none recorded yet)",
            ours.version
        )),
        Some(in_force) => {
            if let Some(why) = db::claim_refusal(&in_force, &ours) {
                report.problem(
                    Level::Fail,
                    format!("claim: {why}"),
                    format!(
                        "run Boxoffice {} or newer; the server refuses to start this way",
                        in_force.applied_by
                    ),
                );
            } else if in_force.claim.version < ours.version {
                report.problem(
                    Level::Warn,
                    format!(
                        "claim: version {} in force (Boxoffice {}); this server applies version {} at its start",
                        in_force.claim.version, in_force.applied_by, ours.version
                    ),
                    format!(
                        "upgrade every instance: once version {} is in force, a server of Boxoffice {} refuses to restart",
                        ours.version, in_force.applied_by
                    ),
                );
            } else {
                report.ok(format!(
                    "claim: version {} in force, this server's (applied by Boxoffice {})",
                    ours.version, in_force.applied_by
                ));
            }
        }
    }
}

async fn connections(
    conn: &mut PgConnection,
    args: &DoctorArgs,
    report: &mut Report,
) -> Result<(), sqlx::Error> {
    let (max, reserved): (String, String) = sqlx::query_as(
        "select current_setting('max_connections'), current_setting('superuser_reserved_connections')",
    )
    .fetch_one(&mut *conn)
    .await?;
    let max: u32 = max.parse().unwrap_or(0);
    let reserved: u32 = reserved.parse().unwrap_or(0);
    let pool = args.serve.stores.db_pool_size;
    let relay_pool = boxoffice_store::pg::db::DbConfig::DEFAULT_POOL_SIZE;
    // Each instance: its pool and the change feed's listener.
    let needed = args.instances * (pool + 1) + args.relays * relay_pool;
    let usable = max.saturating_sub(reserved);
    let sum = format!(
        "{} instances × ({pool} pooled + 1 listener){}",
        args.instances,
        if args.relays > 0 {
            format!(" + {} relays × {relay_pool}", args.relays)
        } else {
            String::new()
        }
    );
    if needed > usable {
        report.problem(
            Level::Fail,
            format!("postgres max_connections {max} (less {reserved} reserved) is under the {needed} connections the servers may open: {sum}"),
            format!("raise max_connections to at least {} in postgresql.conf and restart Postgres, or lower BOXOFFICE_DB_POOL_SIZE (or put PgBouncer in transaction mode in between)", needed + reserved + 10),
        );
    } else {
        report.ok(format!(
            "postgres max_connections {max}: room for the {needed} connections the servers may open ({sum})"
        ));
    }
    Ok(())
}

async fn redis(url: &str, cluster: bool, needed: bool, report: &mut Report) -> Option<Reading> {
    let level = if needed { Level::Fail } else { Level::Warn };
    let place = redis_place(url);
    let first = url.split(',').next().unwrap_or(url);
    let reached = async {
        let client = redis::Client::open(first)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut conn)
            .await?;
        let cluster_info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut conn)
            .await?;
        let policy: Result<Vec<String>, _> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory*")
            .query_async(&mut conn)
            .await;
        let before = Utc::now();
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query_async(&mut conn).await?;
        let after = Utc::now();
        let time = DateTime::from_timestamp(secs, (micros * 1000) as u32).unwrap_or_default();
        Ok::<_, redis::RedisError>((
            info,
            cluster_info,
            policy,
            (time, before + (after - before) / 2),
        ))
    };
    let (info, cluster_info, policy, reading) =
        match tokio::time::timeout(REACH_TIMEOUT, reached).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                report.problem(
                    level,
                    format!("redis at {place}: {e}"),
                    redis_fix(url, &e.to_string()),
                );
                return None;
            }
            Err(_) => {
                let reason = format!("no answer within {} s", REACH_TIMEOUT.as_secs());
                report.problem(
                    level,
                    format!("redis at {place}: {reason}"),
                    redis_fix(url, &reason),
                );
                return None;
            }
        };
    let field = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let version = field(&info, "redis_version");
    let major_minor: Vec<u32> = version
        .split('.')
        .take(2)
        .filter_map(|p| p.parse().ok())
        .collect();
    if major_minor < vec![6, 2] {
        report.problem(
            level,
            format!("redis {version} at {place}: Boxoffice's scripts need Redis 6.2 or later"),
            "upgrade Redis to 7",
        );
    } else {
        report.ok(format!("redis {version} at {place}"));
    }
    let is_cluster = field(&cluster_info, "cluster_enabled") == "1";
    if is_cluster != cluster {
        report.problem(
            level,
            format!(
                "redis at {place} is {}a cluster, and BOXOFFICE_REDIS_CLUSTER says it is {}",
                if is_cluster { "" } else { "not " },
                if cluster { "one" } else { "not" }
            ),
            format!("set BOXOFFICE_REDIS_CLUSTER={is_cluster}"),
        );
    }
    match policy {
        Ok(pairs) => {
            let get = |name: &str| {
                pairs
                    .chunks(2)
                    .find(|p| p[0] == name)
                    .and_then(|p| p.get(1).cloned())
                    .unwrap_or_default()
            };
            let (policy, memory) = (get("maxmemory-policy"), get("maxmemory"));
            if policy != "noeviction" && memory != "0" {
                report.problem(
                    level,
                    format!("redis maxmemory-policy is {policy} with maxmemory {memory}: when memory runs out Redis would drop keys, holds and the waiting room's line among them (holds are keys with a TTL)"),
                    "set `maxmemory-policy noeviction` in redis.conf (CONFIG SET maxmemory-policy noeviction): a full Redis then refuses writes (503) instead of forgetting holds",
                );
            } else {
                report.ok(format!(
                    "redis evicts nothing (maxmemory-policy {policy}, maxmemory {memory})"
                ));
            }
        }
        Err(e) => report.problem(
            Level::Warn,
            format!("redis at {place}: cannot read maxmemory-policy ({e})"),
            "make sure the policy is noeviction: with any other, a full Redis drops holds",
        ),
    }
    Some(reading)
}

fn skew(a: Reading, b: Reading) -> Duration {
    // Each reading is (the store's time, this machine's time then): compare the stores.
    let gap = (a.0 - a.1) - (b.0 - b.1);
    gap.abs().to_std().unwrap_or_default()
}

fn clocks(pg: Option<Reading>, redis: Option<Reading>, report: &mut Report) {
    let here = Utc::now();
    let judge = |report: &mut Report, what: &str, gap: Duration, warn: Duration, fail: Duration| {
        let text = format!("clocks: {what} differ by {} ms", gap.as_millis());
        let fix = "run NTP (chrony or systemd-timesyncd) on every machine: holds expire, payments close and tokens are checked by these clocks";
        if gap > fail {
            report.problem(Level::Fail, text, fix);
        } else if gap > warn {
            report.problem(Level::Warn, text, fix);
        } else {
            report.ok(text);
        }
    };
    if let Some(pg) = pg {
        judge(
            report,
            "this server and Postgres",
            skew(pg, (here, here)),
            SERVER_SKEW_WARN,
            SERVER_SKEW_FAIL,
        );
        if let Some(redis) = redis {
            judge(
                report,
                "Postgres and Redis",
                skew(pg, redis),
                STORES_SKEW_WARN,
                STORES_SKEW_FAIL,
            );
        }
    }
}

fn open_files(settings: &Settings, report: &mut Report) {
    let Ok((soft, hard)) = rlimit::getrlimit(rlimit::Resource::NOFILE) else {
        return;
    };
    let connections = settings.limits.connections.max_connections as u64;
    let needed = connections + u64::from(settings.stores.database.pool_size) + OTHER_DESCRIPTORS;
    // The server raises its soft limit to the hard one at start.
    if hard < needed {
        report.problem(
            Level::Fail,
            format!("open files: the limit is {hard}, under the {needed} a server may need (BOXOFFICE_MAX_CONNECTIONS {connections} + its pool + {OTHER_DESCRIPTORS})"),
            format!("raise it (LimitNOFILE={} in the systemd unit, or `ulimit -n`), or lower BOXOFFICE_MAX_CONNECTIONS", needed.next_power_of_two()),
        );
    } else {
        report.ok(format!(
            "open files: limit {hard} (now {soft}; the server raises it) for up to {connections} connections"
        ));
    }
}

/// Whether `error` (from starting) is a store that could not be reached.
pub fn unreachable(error: &anyhow::Error) -> Option<String> {
    error
        .chain()
        .find_map(|e| match e.downcast_ref::<boxoffice_store::StoreError>() {
            Some(boxoffice_store::StoreError::Unavailable { reason, .. }) => Some(reason.clone()),
            _ => None,
        })
}

/// Whether `error` (from starting) is a database ahead of this server, and why.
pub fn ahead(error: &anyhow::Error) -> Option<String> {
    error
        .chain()
        .find_map(|e| match e.downcast_ref::<boxoffice_store::StoreError>() {
            Some(boxoffice_store::StoreError::Ahead(why)) => Some(why.clone()),
            _ => None,
        })
}

/// How long a start may wait for Redis before saying it is away.
pub const START_PROBE: Duration = Duration::from_secs(2);

/// Whether Redis at `url` answers a PING within [`START_PROBE`].
pub async fn redis_answers(url: &str) -> Result<(), String> {
    let first = url.split(',').next().unwrap_or(url);
    let began = Instant::now();
    let ping = async {
        let client = redis::Client::open(first)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    match tokio::time::timeout(START_PROBE, ping).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no answer within {} ms",
            began.elapsed().as_millis()
        )),
    }
}
