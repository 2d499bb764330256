//! Work sent together to Postgres: under load, many requests of one kind wait for a
//! connection at once; a few lanes each take every one waiting (up to a batch's size) and
//! hand them to one batch function, which answers each in order. With nothing else
//! waiting, a request goes in a batch of its own, as soon as a lane is free. The claims
//! (`pg::holds::together`) and the checkouts (`sales::together`) go this way, each with
//! its own batch.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot, Mutex};

use crate::StoreError;

/// What a batch function answers: one result per item, in the items' order.
pub(crate) type Answers<A> = Pin<Box<dyn Future<Output = Vec<Result<A, StoreError>>> + Send>>;

/// A batch function: the items of one batch, made on `pool`.
pub(crate) type Batch<T, A> = fn(PgPool, Vec<T>) -> Answers<A>;

/// Batches in flight at once, one per lane, each on a pool connection: one per core of
/// this machine, for Postgres on the same machine works one batch a core, and more lanes
/// mean smaller batches, each costing a round trip and a commit (BENCHMARKS.md, "Lanes").
fn lanes() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

struct Waiting<T, A> {
    item: T,
    since: Instant,
    answer: oneshot::Sender<Result<A, StoreError>>,
}

/// The lanes of one kind of request on one store, started on the first request (inside
/// the runtime that serves it).
pub(crate) struct Lanes<T, A> {
    /// The most items in one batch.
    most: usize,
    /// The batch function.
    batch: Batch<T, A>,
    /// What the lanes are called in an error.
    what: &'static str,
    queue: OnceLock<mpsc::UnboundedSender<Waiting<T, A>>>,
    /// Items sent and not yet taken by a lane.
    waiting: Arc<AtomicUsize>,
}

impl<T, A> std::fmt::Debug for Lanes<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("what", &self.what)
            .field("waiting", &self.waiting.load(Ordering::SeqCst))
            .finish()
    }
}

impl<T: Send + 'static, A: Send + 'static> Lanes<T, A> {
    /// Lanes that send up to `most` items in a batch to `batch`.
    pub(crate) fn new(most: usize, batch: Batch<T, A>, what: &'static str) -> Self {
        Self {
            most,
            batch,
            what,
            queue: OnceLock::new(),
            waiting: Arc::default(),
        }
    }

    /// Sends `item` in the next batch a lane makes on `pool`; its answer.
    pub(crate) async fn send(&self, pool: &PgPool, item: T) -> Result<A, StoreError> {
        let queue = self.queue.get_or_init(|| self.start(pool.clone()));
        let (answer, answered) = oneshot::channel();
        let waiting = Waiting {
            item,
            since: Instant::now(),
            answer,
        };
        self.waiting.fetch_add(1, Ordering::SeqCst);
        if queue.send(waiting).is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(self.stopped());
        }
        answered.await.unwrap_or_else(|_| Err(self.stopped()))
    }

    /// How many items wait for a lane.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    fn stopped(&self) -> StoreError {
        StoreError::unavailable(format!("the {} lanes have stopped", self.what))
    }

    /// Starts the lanes; they end once the sender answered is dropped.
    fn start(&self, pool: PgPool) -> mpsc::UnboundedSender<Waiting<T, A>> {
        let (queue, waiting) = mpsc::unbounded_channel();
        let waiting = Arc::new(Mutex::new(waiting));
        for _ in 0..lanes() {
            tokio::spawn(lane(
                pool.clone(),
                waiting.clone(),
                self.waiting.clone(),
                self.most,
                self.batch,
            ));
        }
        queue
    }
}

/// Takes every item waiting (up to `most`), hands them to `batch`, answers each; again.
async fn lane<T, A>(
    pool: PgPool,
    waiting: Arc<Mutex<mpsc::UnboundedReceiver<Waiting<T, A>>>>,
    count: Arc<AtomicUsize>,
    most: usize,
    batch: Batch<T, A>,
) {
    // An item that waited longer than a connection may be waited for is answered as a
    // store that cannot keep up, as the pool would answer it.
    let patience = pool.options().get_acquire_timeout();
    let mut taken = Vec::with_capacity(most);
    loop {
        {
            let mut waiting = waiting.lock().await;
            if waiting.recv_many(&mut taken, most).await == 0 {
                return;
            }
        }
        count.fetch_sub(taken.len(), Ordering::SeqCst);
        let mut items = Vec::with_capacity(taken.len());
        let mut answers = Vec::with_capacity(taken.len());
        for w in taken.drain(..) {
            if w.since.elapsed() > patience {
                let _ = w.answer.send(Err(StoreError::unavailable(
                    "timed out waiting for a database connection",
                )));
            } else {
                items.push(w.item);
                answers.push(w.answer);
            }
        }
        if items.is_empty() {
            continue;
        }
        let n = items.len();
        let mut results = batch(pool.clone(), items).await.into_iter();
        for answer in answers.into_iter().take(n) {
            let result = results
                .next()
                .unwrap_or_else(|| Err(StoreError::unavailable("a batch answered too few")));
            let _ = answer.send(result);
        }
    }
}

/// The same failure, for each item of a batch that failed as a whole.
pub(crate) fn copy(error: &StoreError) -> StoreError {
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
        StoreError::Ahead(why) => StoreError::Ahead(why.clone()),
        StoreError::Other(e) => StoreError::Other(e.to_string().into()),
    }
}
