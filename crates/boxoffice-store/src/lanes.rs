//! Work sent together to Postgres: under load, many requests of one kind wait for a
//! connection at once; a few lanes each take every one waiting (up to a batch's size) and
//! hand them to one batch function, which answers each in order. With nothing else
//! waiting, a request goes in a batch of its own, as soon as a lane is free. The claims
//! (`pg::holds::together`) and the checkouts (`sales::together`) go this way, each with
//! its own batch. The queue before the lanes is bounded: an instance sent more than its
//! lanes can work through refuses the rest at once, with a turn (503 and when to come
//! back), rather than growing a queue nobody would be answered from in time.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

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

/// Items that may wait for a lane, per item a batch takes and per lane: at a batch a few
/// milliseconds, a queue this deep is worked through well within a connection's timeout.
const QUEUED_BATCHES_PER_LANE: usize = 64;

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
    queue: OnceLock<mpsc::Sender<Waiting<T, A>>>,
    /// The most items that may wait for a lane.
    capacity: usize,
    /// Items sent and not yet taken by a lane.
    waiting: Arc<AtomicUsize>,
    /// How long the latest batch took, in microseconds: the pace a turn is reckoned at.
    pace: Arc<AtomicU64>,
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
            capacity: most * lanes() * QUEUED_BATCHES_PER_LANE,
            waiting: Arc::default(),
            pace: Arc::default(),
        }
    }

    /// The same lanes with room for `capacity` items waiting.
    #[cfg(test)]
    fn with_capacity(self, capacity: usize) -> Self {
        Self { capacity, ..self }
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
        if let Err(refused) = queue.try_send(waiting) {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(match refused {
                mpsc::error::TrySendError::Full(_) => self.full(),
                mpsc::error::TrySendError::Closed(_) => self.stopped(),
            });
        }
        answered.await.unwrap_or_else(|_| Err(self.stopped()))
    }

    /// The answer when the queue is full: come back once the lanes have worked through
    /// it, at the latest batch's pace (at least 100 ms, at most 5 s).
    fn full(&self) -> StoreError {
        let batches = self.capacity.div_ceil(self.most * lanes()) as u64;
        let pace = Duration::from_micros(self.pace.load(Ordering::Relaxed));
        let turn =
            (pace * batches as u32).clamp(Duration::from_millis(100), Duration::from_secs(5));
        StoreError::Unavailable {
            reason: format!(
                "{} {} requests already wait for the database on this instance",
                self.capacity, self.what
            ),
            retry_after: turn,
        }
    }

    /// How many items wait for a lane.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    fn stopped(&self) -> StoreError {
        StoreError::unavailable(format!("the {} lanes have stopped", self.what))
    }

    /// Starts the lanes; they end once the sender answered is dropped.
    fn start(&self, pool: PgPool) -> mpsc::Sender<Waiting<T, A>> {
        let (queue, waiting) = mpsc::channel(self.capacity);
        let waiting = Arc::new(Mutex::new(waiting));
        for _ in 0..lanes() {
            tokio::spawn(lane(
                pool.clone(),
                waiting.clone(),
                (self.waiting.clone(), self.pace.clone()),
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
    waiting: Arc<Mutex<mpsc::Receiver<Waiting<T, A>>>>,
    (count, pace): (Arc<AtomicUsize>, Arc<AtomicU64>),
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
        let began = Instant::now();
        let mut results = batch(pool.clone(), items).await.into_iter();
        pace.store(began.elapsed().as_micros() as u64, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::Semaphore;

    /// Lets the stuck batches go, one permit per batch.
    static GATE: Semaphore = Semaphore::const_new(0);
    /// Batches begun.
    static BEGUN: AtomicUsize = AtomicUsize::new(0);

    /// A batch that waits at the gate, then answers each item with itself.
    fn stuck(_: PgPool, items: Vec<u32>) -> Answers<u32> {
        Box::pin(async move {
            BEGUN.fetch_add(1, Ordering::SeqCst);
            GATE.acquire().await.unwrap().forget();
            items.into_iter().map(Ok).collect()
        })
    }

    /// With every lane busy and the queue full, what comes next is refused at once with a
    /// turn; what waited is answered once the lanes move again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_queue_refuses_at_once_with_a_turn() {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .connect_lazy("postgres://nobody@127.0.0.1:1/none")
            .unwrap();
        let queue = Arc::new(Lanes::new(1, stuck, "test").with_capacity(8));
        let send = |i: u32| {
            let (queue, pool) = (queue.clone(), pool.clone());
            tokio::spawn(async move { queue.send(&pool, i).await })
        };
        // Every lane takes one item and is stuck with it.
        let mut sent: Vec<_> = (0..lanes()).map(|i| send(i as u32)).collect();
        while BEGUN.load(Ordering::SeqCst) < lanes() {
            tokio::task::yield_now().await;
        }
        assert_eq!(queue.waiting(), 0, "each lane took its item");
        // Eight wait in the queue; the next three are refused.
        sent.extend((100..108).map(send));
        while queue.waiting() < 8 {
            tokio::task::yield_now().await;
        }
        for i in 200..203 {
            match queue.send(&pool, i).await {
                Err(StoreError::Unavailable {
                    retry_after,
                    reason,
                }) => {
                    assert!(retry_after >= Duration::from_millis(100), "{retry_after:?}");
                    assert!(reason.contains("8 test requests already wait"), "{reason}");
                }
                other => panic!("a full queue answered {other:?}"),
            }
        }
        GATE.add_permits(1000);
        let mut answered = Vec::new();
        for s in sent {
            answered.push(s.await.unwrap().unwrap());
        }
        answered.sort();
        let expected: Vec<u32> = (0..lanes() as u32).chain(100..108).collect();
        assert_eq!(answered, expected);
    }
}
