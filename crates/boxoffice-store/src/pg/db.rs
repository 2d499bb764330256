//! Connecting to Postgres: the pool, its timeouts, creating the database and migrating it.

use std::str::FromStr;
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::AssertSqlSafe;
use sqlx::{Connection, PgConnection, PgPool};

use crate::StoreError;

/// The schema, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The claim's functions in force (`sql/claim.sql`): applied whole after the migrations at
/// every start, each a `create or replace`.
pub static CLAIM_RULES: &str = include_str!("../../sql/claim.sql");

/// A version of the claim: the number its file declares (`-- claim version N`) and the
/// SHA-256 of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// One higher at every change of `sql/claim.sql`.
    pub version: i32,
    /// Hex SHA-256 of the file's text.
    pub checksum: String,
}

impl Claim {
    /// The claim this server carries ([`CLAIM_RULES`]).
    pub fn this_server() -> Claim {
        Claim {
            version: CLAIM_RULES
                .lines()
                .find_map(|l| l.strip_prefix("-- claim version "))
                .and_then(|v| v.trim().parse().ok())
                .expect("sql/claim.sql declares `-- claim version N`"),
            checksum: hex::encode(Sha256::digest(CLAIM_RULES.as_bytes())),
        }
    }
}

/// The claim recorded in force in a database, and which server applied it.
#[derive(Clone, Debug)]
pub struct ClaimInForce {
    /// Its version and checksum.
    pub claim: Claim,
    /// The version of the Boxoffice that applied it.
    pub applied_by: String,
}

/// The claim in force in the database, if a server of this version or newer recorded one.
pub async fn claim_in_force(conn: &mut PgConnection) -> Result<Option<ClaimInForce>, StoreError> {
    let recorded: bool = sqlx::query_scalar("select to_regclass('claim_in_force') is not null")
        .fetch_one(&mut *conn)
        .await?;
    if !recorded {
        return Ok(None);
    }
    let row: Option<(i32, String, String)> =
        sqlx::query_as("select version, checksum, applied_by from claim_in_force")
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(version, checksum, applied_by)| ClaimInForce {
        claim: Claim { version, checksum },
        applied_by,
    }))
}

/// Why this server's claim may not replace the one in force, or `None` if it may.
pub fn claim_refusal(in_force: &ClaimInForce, ours: &Claim) -> Option<String> {
    let theirs = &in_force.claim;
    if theirs.version > ours.version {
        Some(format!(
            "the database's claim (sql/claim.sql) is version {}, applied by Boxoffice {}; this \
             server carries version {}, older: it will not put older rules back over newer \
             ones. Run Boxoffice {} or newer on this database",
            theirs.version, in_force.applied_by, ours.version, in_force.applied_by
        ))
    } else if theirs.version == ours.version && theirs.checksum != ours.checksum {
        Some(format!(
            "the database's claim is version {} with checksum {}, applied by Boxoffice {}; \
             this server's version {} has checksum {}: two texts under one version. Every \
             change of sql/claim.sql raises its version",
            theirs.version,
            &theirs.checksum[..12.min(theirs.checksum.len())],
            in_force.applied_by,
            ours.version,
            &ours.checksum[..12]
        ))
    } else {
        None
    }
}

/// How to reach the database and how long to wait for it.
#[derive(Clone, Debug)]
pub struct DbConfig {
    /// `postgres://…` URL of the database.
    pub url: String,
    /// Most connections the pool opens.
    pub pool_size: u32,
    /// How long a request waits for a free connection before it is answered 503.
    pub acquire_timeout: Duration,
    /// Postgres `statement_timeout` on every connection: no statement runs longer.
    pub statement_timeout: Duration,
    /// Postgres `lock_timeout` on every connection: no statement waits longer for a lock.
    pub lock_timeout: Duration,
}

impl DbConfig {
    /// Default [`DbConfig::pool_size`].
    pub const DEFAULT_POOL_SIZE: u32 = 16;
    /// Default [`DbConfig::acquire_timeout`], in milliseconds.
    pub const DEFAULT_ACQUIRE_TIMEOUT_MS: u64 = 2_000;
    /// Default [`DbConfig::statement_timeout`], in milliseconds.
    pub const DEFAULT_STATEMENT_TIMEOUT_MS: u64 = 10_000;
    /// Default [`DbConfig::lock_timeout`], in milliseconds.
    pub const DEFAULT_LOCK_TIMEOUT_MS: u64 = 2_000;

    /// The defaults (the same as `boxoffice serve`'s), suited to one server on this kind
    /// of machine.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            pool_size: Self::DEFAULT_POOL_SIZE,
            acquire_timeout: Duration::from_millis(Self::DEFAULT_ACQUIRE_TIMEOUT_MS),
            statement_timeout: Duration::from_millis(Self::DEFAULT_STATEMENT_TIMEOUT_MS),
            lock_timeout: Duration::from_millis(Self::DEFAULT_LOCK_TIMEOUT_MS),
        }
    }

    fn connect_options(&self) -> Result<PgConnectOptions, StoreError> {
        let options = PgConnectOptions::from_str(&self.url)
            .map_err(|e| StoreError::Other(format!("invalid DATABASE_URL: {e}").into()))?;
        Ok(options.application_name("boxoffice").options([
            (
                "statement_timeout",
                self.statement_timeout.as_millis().to_string(),
            ),
            ("lock_timeout", self.lock_timeout.as_millis().to_string()),
            // Postgres' own default, pinned: a hold's claim runs in an implicit
            // transaction whose per-user count relies on it (`boxoffice_claim_hold`). sqlx
            // escapes the space itself.
            ("default_transaction_isolation", "read committed".to_owned()),
            // Every statement here is a point lookup or a short scan keyed by event id, for
            // which a generic plan is as good as a custom one. Without this, Postgres keeps
            // re-planning the hold statement (its `= any($n)` array makes the generic plan
            // look dearer than it is), which more than halves the holds a second.
            ("plan_cache_mode", "force_generic_plan".to_owned()),
        ]))
    }
}

/// The database name in `url`, and options for the server's maintenance database.
fn maintenance_options(url: &str) -> Result<(String, PgConnectOptions), StoreError> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| StoreError::Other(format!("invalid DATABASE_URL: {e}").into()))?;
    let name = options
        .get_database()
        .ok_or_else(|| StoreError::Other("DATABASE_URL names no database".into()))?
        .to_owned();
    Ok((name, options.database("postgres")))
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Creates the database named in `url` unless it exists. Returns whether it was created.
pub async fn ensure_database(url: &str) -> Result<bool, StoreError> {
    let (name, admin) = maintenance_options(url)?;
    let mut conn = PgConnection::connect_with(&admin).await?;
    let exists: bool =
        sqlx::query_scalar("select exists (select 1 from pg_database where datname = $1)")
            .bind(&name)
            .fetch_one(&mut conn)
            .await?;
    if exists {
        return Ok(false);
    }
    match sqlx::query(AssertSqlSafe(format!(
        "create database {}",
        quote_ident(&name)
    )))
    .execute(&mut conn)
    .await
    {
        Ok(_) => Ok(true),
        // Another process created it between our check and our create.
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Drops the database named in `url`, disconnecting anyone still using it.
pub async fn drop_database(url: &str) -> Result<(), StoreError> {
    let (name, admin) = maintenance_options(url)?;
    let mut conn = PgConnection::connect_with(&admin).await?;
    sqlx::query(AssertSqlSafe(format!(
        "drop database if exists {} with (force)",
        quote_ident(&name)
    )))
    .execute(&mut conn)
    .await?;
    Ok(())
}

/// Opens a pool lazily: the server starts even while the database is down, and answers
/// 503 until it is back.
pub fn connect_lazy(config: &DbConfig) -> Result<PgPool, StoreError> {
    Ok(PgPoolOptions::new()
        .max_connections(config.pool_size)
        .acquire_timeout(config.acquire_timeout)
        // No ping before every checkout: it is a round trip on every request, and a
        // connection that died is found on its next use anyway (that request answers 503
        // and the pool drops the connection).
        .test_before_acquire(false)
        // A connection given back while it is still inside a transaction (its work was
        // dropped between `BEGIN` and the end, which sqlx counts from the moment `BEGIN` is
        // sent) is closed, never handed to the next borrower, whose statements would run
        // inside it and hold its locks. A dropped transaction's own `ROLLBACK` is queued
        // first and sent with the release, so it does not count here.
        .after_release(|conn, _| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
        .connect_lazy_with(config.connect_options()?))
}

/// The demo's kept secret called `name` (`jwt_secret` or `admin_token`): `made` if this is
/// the first start to ask, else what the first one kept. Servers starting at once keep one.
pub async fn demo_secret(pool: &PgPool, name: &str, made: &str) -> Result<String, StoreError> {
    sqlx::query(
        "insert into demo_secret (name, secret) values ($1, $2) on conflict (name) do nothing",
    )
    .bind(name)
    .bind(made)
    .execute(pool)
    .await?;
    // A statement of its own: it sees the row of a start that won the insert meanwhile.
    Ok(
        sqlx::query_scalar("select secret from demo_secret where name = $1")
            .bind(name)
            .fetch_one(pool)
            .await?,
    )
}

/// Applies every migration not yet applied, then the claim's functions in force
/// ([`CLAIM_RULES`]).
pub async fn migrate(pool: &PgPool) -> Result<(), StoreError> {
    let mut conn = pool.acquire().await?;
    // Migrations that drop what an older claim defined, "if exists", find nothing on a new
    // database: Postgres notices each skip, which sqlx would log as news at a first start.
    sqlx::query("set client_min_messages = warning")
        .execute(&mut *conn)
        .await?;
    let migrated = MIGRATOR.run(&mut *conn).await;
    sqlx::query("reset client_min_messages")
        .execute(&mut *conn)
        .await?;
    drop(conn);
    migrated.map_err(|e| match e {
        sqlx::migrate::MigrateError::Execute(e) => e.into(),
        other => StoreError::Other(Box::new(other)),
    })?;
    apply_claim_rules(pool).await
}

/// Defines the claim's functions as `sql/claim.sql` writes them, in one transaction: a
/// claim running meanwhile sees either the old definitions or the new ones, never a mix.
/// Servers starting together take turns on an advisory lock, as sqlx's migrations do
/// (two sessions replacing one function at once would fail with "tuple concurrently
/// updated"). A newer claim in force is never replaced ([`StoreError::Ahead`], saying why:
/// [`claim_refusal`]), and the server refuses to start.
async fn apply_claim_rules(pool: &PgPool) -> Result<(), StoreError> {
    let ours = Claim::this_server();
    let mut tx = pool.begin().await?;
    sqlx::query("select pg_advisory_xact_lock(hashtextextended('boxoffice.claim_rules', 0))")
        .execute(&mut *tx)
        .await?;
    if let Some(in_force) = claim_in_force(&mut tx).await? {
        if let Some(why) = claim_refusal(&in_force, &ours) {
            return Err(StoreError::Ahead(why));
        }
    }
    // The file drops functions it replaced, "if exists": on a new database Postgres
    // notices each one it skips, which sqlx would log as news at every first start.
    sqlx::query("set local client_min_messages = warning")
        .execute(&mut *tx)
        .await?;
    sqlx::raw_sql(CLAIM_RULES).execute(&mut *tx).await?;
    sqlx::query(
        "insert into claim_in_force (version, checksum, applied_by) values ($1, $2, $3)
         on conflict (one) do update
            set version = excluded.version, checksum = excluded.checksum,
                applied_by = excluded.applied_by, applied_at = now()
          where (claim_in_force.version, claim_in_force.checksum)
                is distinct from (excluded.version, excluded.checksum)",
    )
    .bind(ours.version)
    .bind(&ours.checksum)
    .bind(env!("CARGO_PKG_VERSION"))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// How long one statement of a bulk admin write (a 200,000-seat venue, an event allocating
/// all of it) may run, instead of the connection's `statement_timeout`.
const BULK_STATEMENT_TIMEOUT: &str = "60s";

/// Lifts the statement timeout for the rest of this transaction: bulk admin writes are rare
/// and large, unlike the short statements the connection-wide timeout is sized for.
pub async fn allow_bulk_write(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
) -> Result<(), StoreError> {
    sqlx::query(AssertSqlSafe(format!(
        "set local statement_timeout = '{BULK_STATEMENT_TIMEOUT}'"
    )))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Round trip to the database.
pub async fn ping(pool: &PgPool) -> Result<(), StoreError> {
    sqlx::query("select 1").execute(pool).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `migration_checksums.txt`: one line per migration that has landed, `<version>
    /// <sha384 of its text>`, as sqlx records them in `_sqlx_migrations`.
    const LANDED: &str = include_str!("../../migration_checksums.txt");

    /// sqlx refuses to start against a database whose applied migration's text changed, so
    /// an edited migration would stop every existing installation at its next upgrade.
    /// This pins the text of every landed migration; a new one is added to the file.
    #[test]
    fn landed_migrations_are_never_edited() {
        let landed: Vec<(i64, &str)> = LANDED
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (version, sum) = l.split_once(' ').expect("<version> <checksum>");
                (version.parse().expect("a version number"), sum.trim())
            })
            .collect();
        let current: Vec<(i64, String)> = MIGRATOR
            .iter()
            .map(|m| (m.version, hex(&m.checksum)))
            .collect();
        for (version, sum) in &landed {
            let now = current.iter().find(|(v, _)| v == version);
            assert!(
                now.is_some(),
                "migration {version} has landed and was removed"
            );
            assert_eq!(
                now.map(|(_, s)| s.as_str()),
                Some(*sum),
                "migration {version} has landed and was edited: add a new migration instead"
            );
        }
        for (version, sum) in &current {
            assert!(
                landed.iter().any(|(v, _)| v == version),
                "migration {version} is new: add the line `{version} {sum}` to migration_checksums.txt"
            );
        }
    }

    /// `claim_versions.txt`: each version of `sql/claim.sql` that has landed, with the
    /// checksum of its text.
    const CLAIM_VERSIONS: &str = include_str!("../../claim_versions.txt");

    /// A server refuses a claim of its own version with another text, and applies an older
    /// version over nothing it should not: so one version is one text, and a changed file
    /// carries a new version.
    #[test]
    fn each_claim_version_has_one_text() {
        let ours = Claim::this_server();
        let landed: Vec<(i32, &str)> = CLAIM_VERSIONS
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (version, sum) = l.split_once(' ').expect("<version> <checksum>");
                (version.parse().expect("a version number"), sum.trim())
            })
            .collect();
        let newest = landed.iter().map(|(v, _)| *v).max().unwrap_or(0);
        match landed.iter().find(|(v, _)| *v == ours.version) {
            Some((_, sum)) => assert_eq!(
                *sum,
                ours.checksum,
                "sql/claim.sql changed under version {}: raise its `-- claim version` to {} and \
                 add the line `{} {}` to claim_versions.txt",
                ours.version,
                newest + 1,
                newest + 1,
                ours.checksum
            ),
            None => panic!(
                "claim version {} is new: add the line `{} {}` to claim_versions.txt",
                ours.version, ours.version, ours.checksum
            ),
        }
        assert_eq!(
            ours.version, newest,
            "the file's version is the newest landed"
        );
    }

    #[test]
    fn a_newer_claim_or_another_text_under_one_version_is_refused() {
        let ours = Claim::this_server();
        let in_force = |version, checksum: &str| ClaimInForce {
            claim: Claim {
                version,
                checksum: checksum.to_owned(),
            },
            applied_by: "9.9.9".into(),
        };
        assert_eq!(
            claim_refusal(&in_force(ours.version, &ours.checksum), &ours),
            None
        );
        assert_eq!(
            claim_refusal(&in_force(ours.version - 1, "older"), &ours),
            None
        );
        let newer = claim_refusal(&in_force(ours.version + 1, "newer"), &ours).unwrap();
        assert!(newer.contains("Run Boxoffice 9.9.9 or newer"), "{newer}");
        let other = claim_refusal(&in_force(ours.version, "0123456789abcdef"), &ours).unwrap();
        assert!(other.contains("two texts under one version"), "{other}");
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
