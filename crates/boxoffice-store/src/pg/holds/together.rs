//! Claims sent together. Under load, many holds' claims wait for a connection at once;
//! a few lanes each take every claim waiting (up to [`MOST`]) and send them in one call
//! of `boxoffice_claim_holds` (`sql/claim.sql`): one round trip, one transaction
//! start and one commit for all of them. With nothing else waiting, a claim goes in a
//! batch of its own, as soon as a lane is free.
//!
//! What a claim answers does not depend on its company: each is judged by the steps of
//! `boxoffice_claim_hold`, as if asked alone right after the ones before it in its batch.
//! (The holds of one seat whose seat and buyer come up nowhere else in the batch cannot
//! affect one another; the function claims those in one statement first, the others one
//! by one.) The seats go in basket order: the first claim's, then the second's, and so on.
//! A claim the batch could not settle (it waited on a lock, or failed) comes back as
//! [`Settled::Again`], for the caller to claim alone; so does every claim of a batch that
//! failed as a whole while the database was reachable (a statement timeout, say), so that
//! one slow claim never answers for the others.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use boxoffice_core::ids::EventId;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot, Mutex};
use uuid::Uuid;

use super::answer::ClaimRow;
use crate::error::is_connection_failure;
use crate::StoreError;

/// Most claims in one batch.
const MOST: usize = 32;

/// Batches in flight at once, one per lane, each on a pool connection: one per core of
/// this machine, for Postgres on the same machine works one batch a core, and more lanes
/// mean smaller batches, each costing a round trip and a commit (BENCHMARKS.md, "Lanes").
fn lanes() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// One claim: `boxoffice_claim_hold`'s arguments.
pub(super) struct Claim {
    pub(super) event: EventId,
    pub(super) token: Uuid,
    pub(super) user: String,
    pub(super) ttl_seconds: f64,
    pub(super) seats: Vec<String>,
    pub(super) max_seats: i64,
    pub(super) pass: Option<Uuid>,
    pub(super) channel: Option<String>,
}

/// What became of a claim sent together.
pub(super) enum Settled {
    /// `boxoffice_claim_hold`'s rows for it.
    Rows(Vec<ClaimRow>),
    /// Nothing was claimed for it: claim it again alone.
    Again,
}

struct Waiting {
    claim: Claim,
    since: Instant,
    answer: oneshot::Sender<Result<Settled, StoreError>>,
}

/// The lanes of one store, started on the first claim (inside the runtime that serves it).
#[derive(Debug, Default)]
pub(super) struct Together {
    queue: OnceLock<mpsc::UnboundedSender<Waiting>>,
}

impl Together {
    /// Claims `claim` in the next batch a lane sends on `pool`.
    pub(super) async fn claim(&self, pool: &PgPool, claim: Claim) -> Result<Settled, StoreError> {
        let queue = self.queue.get_or_init(|| start(pool.clone()));
        let (answer, answered) = oneshot::channel();
        let waiting = Waiting {
            claim,
            since: Instant::now(),
            answer,
        };
        if queue.send(waiting).is_err() {
            return Err(StoreError::unavailable("the claim lanes have stopped"));
        }
        answered
            .await
            .unwrap_or_else(|_| Err(StoreError::unavailable("the claim lanes have stopped")))
    }
}

/// Starts the lanes; they end once the sender answered is dropped.
fn start(pool: PgPool) -> mpsc::UnboundedSender<Waiting> {
    let (queue, waiting) = mpsc::unbounded_channel();
    let waiting = Arc::new(Mutex::new(waiting));
    for _ in 0..lanes() {
        tokio::spawn(lane(pool.clone(), waiting.clone()));
    }
    queue
}

/// Takes every claim waiting (up to [`MOST`]), sends them together, answers each; again.
async fn lane(pool: PgPool, waiting: Arc<Mutex<mpsc::UnboundedReceiver<Waiting>>>) {
    // A claim that waited longer than a connection may be waited for is answered as a
    // store that cannot keep up, as the pool would answer it.
    let patience = pool.options().get_acquire_timeout();
    let (mut taken, mut batch) = (Vec::with_capacity(MOST), Vec::with_capacity(MOST));
    loop {
        {
            let mut waiting = waiting.lock().await;
            if waiting.recv_many(&mut taken, MOST).await == 0 {
                return;
            }
        }
        for w in taken.drain(..) {
            if w.since.elapsed() > patience {
                let _ = w.answer.send(Err(StoreError::unavailable(
                    "timed out waiting for a database connection",
                )));
            } else {
                batch.push(w);
            }
        }
        if !batch.is_empty() {
            send(&pool, &mut batch).await;
        }
    }
}

/// Sends `batch` in one call and answers every claim of it; leaves `batch` empty.
async fn send(pool: &PgPool, batch: &mut Vec<Waiting>) {
    let claims = batch.iter().map(|w| &w.claim);
    let events: Vec<Uuid> = claims.clone().map(|c| c.event.0).collect();
    let tokens: Vec<Uuid> = claims.clone().map(|c| c.token).collect();
    let users: Vec<&str> = claims.clone().map(|c| c.user.as_str()).collect();
    let ttls: Vec<f64> = claims.clone().map(|c| c.ttl_seconds).collect();
    let maxes: Vec<i64> = claims.clone().map(|c| c.max_seats).collect();
    let passes: Vec<Option<Uuid>> = claims.clone().map(|c| c.pass).collect();
    let channels: Vec<Option<&str>> = claims.clone().map(|c| c.channel.as_deref()).collect();
    let (baskets, seats): (Vec<i32>, Vec<&str>) = claims
        .zip(1..)
        .flat_map(|(c, n)| c.seats.iter().map(move |s| (n, s.as_str())))
        .unzip();
    let rows: Result<Vec<BatchRow>, sqlx::Error> =
        sqlx::query_as("select * from boxoffice_claim_holds($1, $2, $3, $4, $5, $6, $7, $8, $9)")
            .bind(&events)
            .bind(&tokens)
            .bind(&users)
            .bind(&ttls)
            .bind(&maxes)
            .bind(&passes)
            .bind(&channels)
            .bind(&baskets)
            .bind(&seats)
            .fetch_all(pool)
            .await;
    let rows = match rows {
        Ok(rows) => rows,
        // The batch failed as a whole, for something one of its claims met (a statement
        // timeout, a deadlock, an unexpected error): each is claimed again alone, where it
        // is judged on its own and the one that caused it fails by itself.
        Err(error) if batch.len() > 1 && !is_connection_failure(&error) => {
            for w in batch.drain(..) {
                let _ = w.answer.send(Ok(Settled::Again));
            }
            return;
        }
        // The database could not serve the batch at all: alone, each would fare the same.
        Err(error) => {
            let error = StoreError::from(error);
            for w in batch.drain(..) {
                let _ = w.answer.send(Err(copy(&error)));
            }
            return;
        }
    };
    let mut answers: Vec<Vec<ClaimRow>> = batch.iter().map(|_| Vec::new()).collect();
    let mut again = vec![false; batch.len()];
    for row in rows {
        // Numbered from 1, in the batch's order.
        let n = usize::try_from(row.hold)
            .ok()
            .and_then(|n| n.checked_sub(1));
        let Some(n) = n.filter(|&n| n < batch.len()) else {
            continue;
        };
        if row.claim.outcome == "retry" {
            again[n] = true;
        } else {
            answers[n].push(row.claim);
        }
    }
    for ((w, rows), again) in batch.drain(..).zip(answers).zip(again) {
        let _ = w.answer.send(Ok(if again || rows.is_empty() {
            Settled::Again
        } else {
            Settled::Rows(rows)
        }));
    }
}

/// One row of `boxoffice_claim_holds`' answer: the hold's number, then
/// `boxoffice_claim_hold`'s row for it.
#[derive(sqlx::FromRow)]
struct BatchRow {
    hold: i32,
    #[sqlx(flatten)]
    claim: ClaimRow,
}

/// The same failure, for each claim of a batch that failed as a whole.
fn copy(error: &StoreError) -> StoreError {
    match error {
        StoreError::NotFound => StoreError::NotFound,
        StoreError::Conflict { constraint } => StoreError::Conflict {
            constraint: constraint.clone(),
        },
        StoreError::Contention => StoreError::Contention,
        StoreError::Unavailable {
            reason,
            retry_after,
        } => StoreError::Unavailable {
            reason: reason.clone(),
            retry_after: *retry_after,
        },
        StoreError::Other(e) => StoreError::Other(e.to_string().into()),
    }
}
