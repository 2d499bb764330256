//! Reads from a Postgres streaming replica, when one is configured
//! (`BOXOFFICE_DATABASE_REPLICA_URL`).
//!
//! The seat map, availability and the stream's snapshots read the sold seats and the
//! allocations from the replica; everything that decides a sale (holds, orders, bookings,
//! cancellations, allocation changes, best available) goes to the primary. A reader can
//! so see a seat sold up to the replica's lag ago as available. If it asks for that seat,
//! the primary refuses it: a stale read never sells a seat twice.
//!
//! A watcher asks the replica every [`CHECK_EVERY`] how far its replay lags what it has
//! received. While the replica answers and lags less than the bound, reads go to it;
//! otherwise (down, lagging, or not yet checked) to the primary.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::watch;

/// How often the replica's lag is checked.
pub const CHECK_EVERY: Duration = Duration::from_millis(500);

/// A replica and whether reads may go to it now.
pub struct Replica {
    pool: PgPool,
    max_lag: Duration,
    usable: AtomicBool,
    checks: AtomicU64,
}

impl Replica {
    /// The replica behind `pool`, usable while it lags less than `max_lag`; not usable
    /// until [`watch`] has checked it.
    pub fn new(pool: PgPool, max_lag: Duration) -> Self {
        Self {
            pool,
            max_lag,
            usable: AtomicBool::new(false),
            checks: AtomicU64::new(0),
        }
    }

    /// How many checks have been made (`boxoffice_replica_checks_total`).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// The replica's pool, if reads may go to it now.
    pub fn pool(&self) -> Option<&PgPool> {
        self.usable.load(Ordering::Relaxed).then_some(&self.pool)
    }

    /// A read from the replica failed: reads go to the primary until a check finds the
    /// replica well again.
    pub fn failed(&self) {
        self.usable.store(false, Ordering::Relaxed);
    }

    /// Checks the replica once: whether it answers, and lags less than the bound.
    pub async fn check(&self) -> bool {
        // On a replica that has replayed all it received, the lag is none; otherwise it
        // is the age of the last transaction replayed. A server that is no replica at all
        // answers null: nothing to lag behind.
        let lag: Result<Option<f64>, _> = sqlx::query_scalar(
            "select case when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
                         else extract(epoch from now() - pg_last_xact_replay_timestamp())::float8
                    end",
        )
        .fetch_one(&self.pool)
        .await;
        let usable = match lag {
            Ok(lag) => lag.unwrap_or(0.0) < self.max_lag.as_secs_f64(),
            Err(_) => false,
        };
        let was = self.usable.swap(usable, Ordering::Relaxed);
        self.checks.fetch_add(1, Ordering::Relaxed);
        if was != usable {
            if usable {
                tracing::info!("reads go to the replica again");
            } else {
                tracing::warn!("replica down or lagging: reads go to the primary");
            }
        }
        usable
    }
}

/// Checks `replica` every [`CHECK_EVERY`] until `stopped` turns true.
pub fn watch(
    replica: Arc<Replica>,
    mut stopped: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            replica.check().await;
            tokio::select! {
                () = tokio::time::sleep(CHECK_EVERY) => {}
                _ = stopped.wait_for(|s| *s) => return,
            }
        }
    })
}
