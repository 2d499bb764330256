//! An adaptive concurrency limit in front of the paths that write holds, bookings and
//! orders: past what the server serves quickly, it says no at once instead of queueing
//! everyone behind the pool. (A long file, half of it the tests of its rounds and
//! turns, which read best beside them.)
//!
//! Holds (with bookings and extensions) and checkouts have a limit each: they wait on
//! different things (the best-available chooser and row locks; the commit's flush to
//! disk), and one path's slow answers must not starve the other. Each limit follows AIMD
//! (additive increase, multiplicative decrease), as TCP's congestion window does, decided
//! once a round (as many answers as the limit): a round in which more than a tenth of the
//! answers were slower than the latency target, or a store answered 503, cuts the limit by
//! a tenth; a round answered within the target while at least half the limit was in use
//! raises it by one.
//!
//! A limit starts at its floor and doubles each quick, busy round until the first slow one
//! (TCP's slow start), so a sale that opens with everyone at once finds its level within a
//! few hundred answers rather than a few thousand. A round in which every answer failed
//! (the store was down: a restart, a failover) starts the slow start again, as TCP does
//! after a timeout: the outage cut the limit to its floor, and once the store is back the
//! sale regains its level in a few rounds rather than one place a round.
//!
//! A hold past its limit is refused before anything is read, which costs microseconds: the
//! buyer loses nothing and is told when to come back. Those turns are paced: each refusal
//! is given the next free slot, and slots follow one another as fast as the limit answers
//! (the limit over the answers' mean latency, Little's law). A crowd refused together is
//! spread out over the time the server needs to serve it, so returns arrive about as fast
//! as they can be served: the server does not idle while the refused sleep, nor is it asked
//! again by everyone at once. No turn is set more than [`MAX_TURN`] ahead; past that the
//! slots start again from the front.
//!
//! A hold past its limit that would be told to come back at the soonest turn ([`MIN_TURN`])
//! waits for a place instead, up to [`HOLD_PATIENCE`]: when the holds already waiting, plus
//! itself, over the limit, times the answers' mean latency, come within that patience (and
//! fewer holds wait than the limit lets in). A burst a little past the limit is then served
//! instead of refused, while a crowd far past it is refused at once. When its patience ends
//! without a place, a hold let wait goes in over the limit if answers came meanwhile (the
//! places went to others, but the limit moves as reckoned; at most twice the limit are
//! then in flight), and is refused if none did (the store has stalled): under load every
//! refusal is decided the moment a hold arrives, never after a wait, which on two busy cores
//! can take a woken request many milliseconds past its patience (half the soonest turn).
//!
//! A checkout past its limit waits for a place, up to [`CHECKOUT_PATIENCE`], before it is
//! refused: it finishes what a hold started, and refusing it would waste the seats held
//! meanwhile. While a checkout waits, holds are refused (given turns): a new hold that
//! cannot be bought soon is worth nothing, and sales finish first. Checkouts in flight
//! stay few even so, since each needs a live hold and holds are limited.
//!
//! The service takes a place only for the store's part of a request ([`limited`]): what
//! the server answers without a store (a seat known taken, a basket that breaks a rule, a
//! buyer past their rate) neither counts against a limit nor waits for one, so a crowd on
//! one seat is answered as without any limit.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::Error;

/// How long a checkout past its limit waits for a place before it is refused.
pub const CHECKOUT_PATIENCE: Duration = Duration::from_secs(2);

/// The furthest ahead a refused hold is told to come back.
pub const MAX_TURN: Duration = Duration::from_secs(2);

/// The soonest a refused hold is told to come back.
pub const MIN_TURN: Duration = Duration::from_millis(10);

/// The longest a hold past its limit waits for a place before it is refused.
pub const HOLD_PATIENCE: Duration = Duration::from_millis(5);

/// When a checkout refused after its patience is told to come back.
pub const CHECKOUT_RETRY: Duration = Duration::from_secs(1);

/// How much each answer moves the mean latency the turns are paced by.
const LATENCY_WEIGHT: f64 = 0.05;

/// How the limits behave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverloadSettings {
    /// Rounds with more than a tenth of their answers slower than this cut the limit.
    pub target: Duration,
    /// A limit never falls below this (at least one).
    pub floor: usize,
    /// Nor rises above this.
    pub ceiling: usize,
}

impl OverloadSettings {
    /// The default floor: the default pool's connections.
    pub const DEFAULT_FLOOR: usize = 16;
    /// The default ceiling.
    pub const DEFAULT_CEILING: usize = 1024;

    /// These settings with every default but the target.
    pub fn with_target(target: Duration) -> Self {
        Self {
            target,
            floor: Self::DEFAULT_FLOOR,
            ceiling: Self::DEFAULT_CEILING,
        }
    }
}

/// Which limit a request goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// A new hold, an extension or a general-admission booking: refused at once past the
    /// limit.
    Hold,
    /// A checkout: past the limit, waits for a place up to [`CHECKOUT_PATIENCE`].
    Checkout,
}

impl Path {
    /// Every path, in the order of [`Overload::limits`].
    pub const ALL: [Path; 2] = [Path::Hold, Path::Checkout];

    /// Its name in metrics.
    pub fn name(self) -> &'static str {
        match self {
            Path::Hold => "hold",
            Path::Checkout => "checkout",
        }
    }
}

/// What a cut multiplies a limit by.
const BACKOFF: f64 = 0.9;

/// One path's limit, what is in flight under it, and the round being answered.
#[derive(Debug)]
struct Window {
    limit: usize,
    in_flight: usize,
    /// Doubling each good round, until the first slow one.
    slow_start: bool,
    /// The answers' mean latency, in seconds (moving, [`LATENCY_WEIGHT`] per answer).
    latency: f64,
    /// The slot the next refused request is given, if one was given lately.
    next_turn: Option<Instant>,
    /// Requests waiting for a place (holds only: checkouts are counted apart).
    waiting: usize,
    /// Answers in this round, those slower than the target (or failed), those failed (a
    /// store down), and those given while at least half the limit was in flight.
    answered: usize,
    slow: usize,
    failed: usize,
    busy: usize,
}

impl Window {
    /// The next free slot from `now` on, taken: how long until it comes. Slots are as far
    /// apart as one answer takes at this limit (the mean latency over the limit).
    fn turn(&mut self, now: Instant) -> Duration {
        let gap = Duration::from_secs_f64(self.latency.max(0.0) / self.limit.max(1) as f64);
        let soonest = now + MIN_TURN.max(gap).min(MAX_TURN);
        let turn = match self.next_turn {
            Some(next) if next > soonest && next - now <= MAX_TURN => next,
            _ => soonest,
        };
        self.next_turn = Some(turn + gap);
        turn - now
    }
}

/// A checkout counted as waiting for a place while this lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A hold counted as waiting for a place while this lives.
struct Queued<'a>(&'a Overload, Path);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let mut w = self.0.lock(self.1);
        w.waiting = w.waiting.saturating_sub(1);
    }
}

/// The adaptive limits of one server (or none: every request goes through).
#[derive(Debug)]
pub struct Overload {
    settings: Option<OverloadSettings>,
    windows: [Mutex<Window>; 2],
    /// Told when a place frees on a path.
    freed: [Notify; 2],
    shed: [AtomicU64; 2],
    /// Answers under each limit so far, and those slower than the target or failed.
    answered: [AtomicU64; 2],
    slow: [AtomicU64; 2],
    /// Checkouts waiting for a place: while any does, holds are refused.
    checkouts_waiting: AtomicUsize,
}

/// A request refused by the limit: answer 503, telling the client to come back after
/// `retry_after` (its turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shed {
    /// How long from now the client should wait before asking again.
    pub retry_after: Duration,
}

impl Overload {
    /// Limits with `settings`, or no limit at all with `None`.
    pub fn new(settings: Option<OverloadSettings>) -> Arc<Self> {
        let settings = settings.map(|s| OverloadSettings {
            floor: s.floor.max(1),
            ceiling: s.ceiling.max(s.floor.max(1)),
            ..s
        });
        let window = || {
            Mutex::new(Window {
                limit: settings.map_or(0, |s| s.floor),
                in_flight: 0,
                slow_start: true,
                // Until answers tell: well within the target.
                latency: settings.map_or(0.0, |s| s.target.as_secs_f64() / 4.0),
                next_turn: None,
                waiting: 0,
                answered: 0,
                slow: 0,
                failed: 0,
                busy: 0,
            })
        };
        Arc::new(Self {
            settings,
            windows: [window(), window()],
            freed: [Notify::new(), Notify::new()],
            shed: [AtomicU64::new(0), AtomicU64::new(0)],
            answered: [AtomicU64::new(0), AtomicU64::new(0)],
            slow: [AtomicU64::new(0), AtomicU64::new(0)],
            checkouts_waiting: AtomicUsize::new(0),
        })
    }

    /// Takes a place under `path`'s limit, or refuses the request at once. The place is
    /// given back when the [`Permit`] is finished or dropped.
    pub fn enter(self: &Arc<Self>, path: Path) -> Result<Permit, Shed> {
        self.take(path).ok_or_else(|| self.refuse(path))
    }

    /// Takes a place under `path`'s limit, waiting up to `patience` for one.
    pub async fn enter_within(
        self: &Arc<Self>,
        path: Path,
        patience: Duration,
    ) -> Result<Permit, Shed> {
        if let Some(permit) = self.take(path) {
            return Ok(permit);
        }
        // Only a checkout that found no place waits, and only then are holds refused.
        let _waiting = (path == Path::Checkout).then(|| Waiting::new(&self.checkouts_waiting));
        self.wait_for(path, tokio::time::Instant::now() + patience)
            .await
            .ok_or_else(|| self.refuse(path))
    }

    /// Takes a place under `path`'s limit as the path does: a hold at once, or after a
    /// short wait when one is expected to free soon enough (see the module's notes), or is
    /// refused; a checkout waits up to [`CHECKOUT_PATIENCE`].
    pub async fn admit(self: &Arc<Self>, path: Path) -> Result<Permit, Shed> {
        if path == Path::Checkout {
            return self.enter_within(path, CHECKOUT_PATIENCE).await;
        }
        if let Some(permit) = self.take(path) {
            return Ok(permit);
        }
        let Some(patience) = self.queue(path) else {
            return Err(self.refuse(path));
        };
        let _queued = Queued(self, path);
        let answered = self.answered[path as usize].load(Ordering::Relaxed);
        if let Some(permit) = self
            .wait_for(path, tokio::time::Instant::now() + patience)
            .await
        {
            return Ok(permit);
        }
        // Answers came while it waited, yet others took the places they freed: the limit
        // is moving as reckoned, and refusing now would make a slow refusal. Let it in
        // over the limit, by no more than the limit itself. Without answers the store has
        // stalled, and it is refused.
        let moving = self.answered[path as usize].load(Ordering::Relaxed) != answered;
        match moving.then(|| self.overdraw(path)).flatten() {
            Some(permit) => Ok(permit),
            None => Err(self.refuse(path)),
        }
    }

    /// A place on `path`, counted in flight by the caller.
    fn permit(self: &Arc<Self>, path: Path) -> Permit {
        Permit {
            overload: self.clone(),
            path,
            started: Instant::now(),
            finished: false,
        }
    }

    /// A place over `path`'s limit, if fewer than twice the limit are in flight.
    fn overdraw(self: &Arc<Self>, path: Path) -> Option<Permit> {
        let mut w = self.lock(path);
        if w.in_flight >= 2 * w.limit {
            return None;
        }
        w.in_flight += 1;
        Some(self.permit(path))
    }

    /// Lets a hold wait for a place if the holds waiting ahead of it and itself would be
    /// let in within [`HOLD_PATIENCE`] at the pace answers come, and fewer than the limit
    /// wait: how long it may wait (that long), counted as waiting. Never while a checkout
    /// waits.
    fn queue(&self, path: Path) -> Option<Duration> {
        self.settings?;
        if self.checkouts_waiting.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let mut w = self.lock(path);
        let expected = (w.waiting + 1) as f64 * w.latency.max(0.0) / w.limit.max(1) as f64;
        if expected > HOLD_PATIENCE.as_secs_f64() || w.waiting >= w.limit {
            return None;
        }
        w.waiting += 1;
        Some(HOLD_PATIENCE)
    }

    /// Waits until `deadline` for a place under `path`'s limit; none if none freed.
    async fn wait_for(
        self: &Arc<Self>,
        path: Path,
        deadline: tokio::time::Instant,
    ) -> Option<Permit> {
        loop {
            // Listening before trying, so a place freed in between is not missed.
            let freed = self.freed[path as usize].notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(permit) = self.take(path) {
                return Some(permit);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }

    /// Holds waiting for a place (`boxoffice_overload_waiting`).
    pub fn waiting(&self, path: Path) -> usize {
        match path {
            Path::Hold => self.lock(path).waiting,
            Path::Checkout => self.checkouts_waiting.load(Ordering::Relaxed),
        }
    }

    /// A place under `path`'s limit, if one is free. A hold gets none while a checkout
    /// waits for a place.
    fn take(self: &Arc<Self>, path: Path) -> Option<Permit> {
        if self.settings.is_some() {
            if path == Path::Hold && self.checkouts_waiting.load(Ordering::Relaxed) > 0 {
                return None;
            }
            let mut window = self.lock(path);
            if window.in_flight >= window.limit {
                return None;
            }
            window.in_flight += 1;
        }
        Some(self.permit(path))
    }

    /// Counts a refusal on `path` and gives it its turn: for a hold the next free slot, for
    /// a checkout (which already waited) [`CHECKOUT_RETRY`].
    fn refuse(&self, path: Path) -> Shed {
        self.shed[path as usize].fetch_add(1, Ordering::Relaxed);
        let retry_after = match path {
            Path::Hold => self.lock(path).turn(Instant::now()),
            Path::Checkout => CHECKOUT_RETRY,
        };
        Shed { retry_after }
    }

    /// `path`'s limit now (0 when there is none).
    pub fn limit(&self, path: Path) -> usize {
        self.lock(path).limit
    }

    /// Requests in flight under `path`'s limit.
    pub fn in_flight(&self, path: Path) -> usize {
        self.lock(path).in_flight
    }

    /// Requests on `path` refused since the server started.
    pub fn shed_total(&self, path: Path) -> u64 {
        self.shed[path as usize].load(Ordering::Relaxed)
    }

    /// Answers on `path` since the server started, and how many of them were slower than
    /// the latency target or failed (both 0 when there is no limit).
    pub fn answers(&self, path: Path) -> (u64, u64) {
        let i = path as usize;
        (
            self.answered[i].load(Ordering::Relaxed),
            self.slow[i].load(Ordering::Relaxed),
        )
    }

    /// Whether there is a limit at all.
    pub fn is_on(&self) -> bool {
        self.settings.is_some()
    }

    fn lock(&self, path: Path) -> std::sync::MutexGuard<'_, Window> {
        self.windows[path as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// A request on `path` that held a place for `took` leaves; `failed` says a store was
    /// down or too slow for it.
    fn leave(&self, path: Path, took: Duration, failed: bool) {
        let Some(settings) = self.settings else {
            return;
        };
        let too_slow = failed || took > settings.target;
        self.answered[path as usize].fetch_add(1, Ordering::Relaxed);
        self.slow[path as usize].fetch_add(u64::from(too_slow), Ordering::Relaxed);
        let mut w = self.lock(path);
        self.freed[path as usize].notify_one();
        w.answered += 1;
        w.latency += LATENCY_WEIGHT * (took.as_secs_f64() - w.latency);
        w.slow += usize::from(too_slow);
        w.failed += usize::from(failed);
        w.busy += usize::from(2 * w.in_flight >= w.limit);
        w.in_flight = w.in_flight.saturating_sub(1);
        if w.answered < w.limit {
            return;
        }
        if 10 * w.slow > w.answered {
            w.slow_start = w.failed == w.answered;
            w.limit = ((w.limit as f64 * BACKOFF) as usize).max(settings.floor);
        } else if 2 * w.busy >= w.answered {
            let raised = if w.slow_start {
                2 * w.limit
            } else {
                w.limit + 1
            };
            w.limit = raised.min(settings.ceiling);
        }
        (w.answered, w.slow, w.failed, w.busy) = (0, 0, 0, 0);
    }
}

/// A place under a limit, held while a request is served.
#[derive(Debug)]
pub struct Permit {
    overload: Arc<Overload>,
    path: Path,
    started: Instant,
    finished: bool,
}

impl Permit {
    /// The request was answered; `failed` says a store was down or too slow for it (it
    /// answered 503).
    pub fn finish(mut self, failed: bool) {
        self.finished = true;
        self.overload
            .leave(self.path, self.started.elapsed(), failed);
    }
}

impl Drop for Permit {
    /// A request dropped before its answer (the client went away, or the request timed
    /// out) counts as slow if it was.
    fn drop(&mut self) {
        if !self.finished {
            self.overload
                .leave(self.path, self.started.elapsed(), false);
        }
    }
}

/// Runs `work`, the store's part of a request, under `path`'s limit: refused with
/// [`Error::Overloaded`] when the limit says no; a place taken otherwise, given back when
/// `work` is done, which counts as failed if a store was down or too slow for it.
pub(crate) async fn limited<T>(
    overload: &Arc<Overload>,
    path: Path,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let permit = overload
        .admit(path)
        .await
        .map_err(|shed| Error::Overloaded(shed.retry_after))?;
    let answer = work.await;
    permit.finish(answer.as_ref().is_err_and(Error::is_unavailable));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(floor: usize, ceiling: usize) -> OverloadSettings {
        OverloadSettings {
            target: Duration::from_millis(50),
            floor,
            ceiling,
        }
    }

    /// Keeps the hold limit full for `answers` answers, each followed by a new request;
    /// `failed` says whether the answers failed. The limit then, before the requests still
    /// in flight are dropped (which answers them too).
    fn busy_for(overload: &Arc<Overload>, answers: usize, failed: bool) -> usize {
        let mut in_flight: std::collections::VecDeque<_> =
            std::iter::from_fn(|| overload.enter(Path::Hold).ok()).collect();
        for _ in 0..answers {
            in_flight.pop_front().unwrap().finish(failed);
            while let Ok(permit) = overload.enter(Path::Hold) {
                in_flight.push_back(permit);
            }
        }
        overload.limit(Path::Hold)
    }

    #[test]
    fn no_limit_lets_everything_through() {
        let overload = Overload::new(None);
        let permits: Vec<_> = (0..10_000)
            .map(|_| overload.enter(Path::Hold).expect("no limit"))
            .collect();
        assert_eq!(permits.len(), 10_000);
        assert_eq!(overload.shed_total(Path::Hold), 0);
        assert!(!overload.is_on());
    }

    /// Holds beside checkouts that each find a place at once, on two threads: no checkout
    /// waits, so no hold is refused (a checkout used to count as waiting while it took
    /// its free place, and a hold at that moment was refused).
    #[test]
    fn a_checkout_with_a_place_at_once_never_turns_a_hold_away() {
        let overload = Overload::new(Some(settings(16, 16)));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        let start = Arc::new(std::sync::Barrier::new(2));
        let checkouts = {
            let (overload, start) = (overload.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                runtime.block_on(async {
                    for _ in 0..50_000 {
                        let permit = overload.admit(Path::Checkout).await.expect("a place");
                        permit.finish(false);
                    }
                })
            })
        };
        start.wait();
        let refused = (0..200_000)
            .filter(|_| match overload.enter(Path::Hold) {
                Ok(permit) => {
                    permit.finish(false);
                    false
                }
                Err(_) => true,
            })
            .count();
        checkouts.join().unwrap();
        assert_eq!(
            refused, 0,
            "holds refused beside checkouts that never waited"
        );
    }

    #[test]
    fn each_path_stops_at_its_own_limit() {
        let overload = Overload::new(Some(settings(8, 100)));
        let holds: Vec<_> = (0..8).map(|_| overload.enter(Path::Hold)).collect();
        assert!(holds.iter().all(Result::is_ok));
        assert!(overload.enter(Path::Hold).is_err());
        let checkouts: Vec<_> = (0..8).map(|_| overload.enter(Path::Checkout)).collect();
        assert!(
            checkouts.iter().all(Result::is_ok),
            "holds take no checkout's place"
        );
        assert!(overload.enter(Path::Checkout).is_err());
        assert_eq!(
            (
                overload.shed_total(Path::Hold),
                overload.shed_total(Path::Checkout)
            ),
            (1, 1)
        );
        assert_eq!(overload.in_flight(Path::Hold), 8);
        drop(holds);
        drop(checkouts);
        assert_eq!(overload.in_flight(Path::Hold), 0);
        assert_eq!(overload.in_flight(Path::Checkout), 0);
    }

    #[test]
    fn quick_rounds_under_load_double_the_limit_until_a_slow_one_then_add_one() {
        let overload = Overload::new(Some(settings(10, 1000)));
        for limit in [20, 40, 80] {
            round(&overload, 0);
            assert_eq!(overload.limit(Path::Hold), limit);
        }
        round(&overload, 8);
        assert_eq!(
            overload.limit(Path::Hold),
            160,
            "8 slow of 80 is quick enough"
        );
        round(&overload, 17);
        assert_eq!(overload.limit(Path::Hold), 144, "17 slow of 160 cut it");
        round(&overload, 0);
        round(&overload, 0);
        assert_eq!(overload.limit(Path::Hold), 146, "one a round after a cut");
        assert_eq!(
            overload.limit(Path::Checkout),
            10,
            "the other path's is its own"
        );
    }

    #[test]
    fn the_ceiling_holds() {
        let overload = Overload::new(Some(settings(10, 100)));
        assert_eq!(busy_for(&overload, 100_000, false), 100);
    }

    #[test]
    fn quick_answers_with_the_limit_unused_leave_it_alone() {
        let overload = Overload::new(Some(settings(10, 100)));
        for _ in 0..1000 {
            overload.enter(Path::Hold).unwrap().finish(false);
        }
        assert_eq!(overload.limit(Path::Hold), 10);
    }

    /// One round of holds: as many as the limit, all in flight at once, then answered, the
    /// first `slow` of them slower than the target.
    fn round(overload: &Arc<Overload>, slow: usize) {
        let n = overload.limit(Path::Hold);
        let permits: Vec<_> = (0..n)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        for (i, permit) in permits.into_iter().enumerate() {
            permit.finish(i < slow);
        }
    }

    #[test]
    fn slow_rounds_cut_the_limit_by_a_tenth_never_below_the_floor() {
        let overload = Overload::new(Some(settings(10, 1000)));
        // A slow first round ends the slow start: one a round from then on.
        round(&overload, 9);
        assert_eq!(overload.limit(Path::Hold), 10);
        while overload.limit(Path::Hold) < 100 {
            round(&overload, 0);
        }
        round(&overload, 11);
        assert_eq!(overload.limit(Path::Hold), 90, "11 slow answers of 100");
        round(&overload, 9);
        assert_eq!(overload.limit(Path::Hold), 91, "9 of 90 is quick enough");
        for _ in 0..100 {
            round(&overload, usize::MAX);
        }
        assert_eq!(overload.limit(Path::Hold), 10, "the floor holds");
    }

    #[test]
    fn a_round_the_store_failed_whole_starts_the_slow_start_again() {
        let overload = Overload::new(Some(settings(10, 1000)));
        round(&overload, 9);
        while overload.limit(Path::Hold) < 40 {
            round(&overload, 0);
        }
        assert_eq!(overload.limit(Path::Hold), 40, "one a round");
        // The store goes away: every answer of a round fails, until the floor.
        while overload.limit(Path::Hold) > 10 {
            round(&overload, usize::MAX);
        }
        round(&overload, usize::MAX);
        // Back: quick rounds double the limit again, until the first slow one.
        for limit in [20, 40, 80] {
            round(&overload, 0);
            assert_eq!(overload.limit(Path::Hold), limit);
        }
        round(&overload, 9);
        assert_eq!(overload.limit(Path::Hold), 72, "9 slow of 80 cut it");
        round(&overload, 0);
        assert_eq!(
            overload.limit(Path::Hold),
            73,
            "a round with some failed answers ends the slow start"
        );
    }

    /// A checkout that waits for a place, with all its patience, in a task of its own.
    fn checkout_waiting(overload: &Arc<Overload>) -> tokio::task::JoinHandle<Result<Permit, Shed>> {
        let overload = overload.clone();
        tokio::spawn(async move {
            overload
                .enter_within(Path::Checkout, CHECKOUT_PATIENCE)
                .await
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_checkout_past_the_limit_waits_for_a_place_then_gives_up() {
        let overload = Overload::new(Some(settings(1, 1)));
        let first = overload.enter(Path::Checkout).unwrap();
        let waiting = checkout_waiting(&overload);
        tokio::time::sleep(CHECKOUT_PATIENCE / 2).await;
        first.finish(false);
        let second = waiting.await.unwrap().expect("the freed place");
        assert_eq!(overload.shed_total(Path::Checkout), 0);
        let started = tokio::time::Instant::now();
        let refused = overload
            .enter_within(Path::Checkout, CHECKOUT_PATIENCE)
            .await;
        assert_eq!(refused.unwrap_err().retry_after, CHECKOUT_RETRY);
        assert_eq!(started.elapsed(), CHECKOUT_PATIENCE);
        assert_eq!(overload.shed_total(Path::Checkout), 1);
        drop(second);
    }

    #[test]
    fn a_dropped_request_gives_its_place_back() {
        let overload = Overload::new(Some(settings(1, 1)));
        let permit = overload.enter(Path::Hold).unwrap();
        assert!(overload.enter(Path::Hold).is_err());
        drop(permit);
        assert!(overload.enter(Path::Hold).is_ok());
    }

    fn window(limit: usize, latency: f64) -> Window {
        Window {
            limit,
            in_flight: limit,
            slow_start: false,
            latency,
            next_turn: None,
            waiting: 0,
            answered: 0,
            slow: 0,
            failed: 0,
            busy: 0,
        }
    }

    #[test]
    fn refusals_together_get_turns_one_answer_apart() {
        // 10 in flight answering in 100 ms each: one answer every 10 ms.
        let mut w = window(10, 0.1);
        let now = Instant::now();
        let ms = |d: Duration| d.as_millis();
        let turns: Vec<_> = (0..5).map(|_| ms(w.turn(now))).collect();
        assert_eq!(turns, [10, 20, 30, 40, 50]);
        // Later refusals queue behind the turns already given.
        assert_eq!(ms(w.turn(now + Duration::from_millis(45))), 15);
        // Once the turns given are past, a refusal comes back soon.
        assert_eq!(ms(w.turn(now + Duration::from_secs(1))), 10);
        // Quicker answers, closer turns; never closer than the least.
        let mut quick = window(100, 0.05);
        assert_eq!(ms(quick.turn(now)), ms(MIN_TURN));
        assert_eq!(quick.turn(now) - MIN_TURN, Duration::from_micros(500));
    }

    #[test]
    fn no_turn_is_set_past_the_furthest_ahead() {
        // One answer every 800 ms: the third turn would be 2.4 s away, past the furthest
        // ahead, so the slots start over from the front.
        let mut w = window(1, 0.8);
        let now = Instant::now();
        let turns: Vec<_> = (0..5).map(|_| w.turn(now).as_millis()).collect();
        assert_eq!(turns, [800, 1600, 800, 1600, 800]);
        assert!(MAX_TURN >= Duration::from_millis(1600) && MAX_TURN < Duration::from_millis(2400));
    }

    #[test]
    fn a_refused_crowd_is_spread_over_the_time_it_takes_to_serve() {
        let overload = Overload::new(Some(settings(10, 100)));
        let held: Vec<_> = (0..10)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        // When each refused request is to come back, as an instant: measured before the
        // call for the first and after it for the last, so the span is never overstated.
        let first = Instant::now() + overload.enter(Path::Hold).unwrap_err().retry_after;
        for _ in 0..98 {
            overload.enter(Path::Hold).unwrap_err();
        }
        let last_turn = overload.enter(Path::Hold).unwrap_err().retry_after;
        let last = Instant::now() + last_turn;
        // Answers are taken to take a quarter of the 50 ms target until they tell: 10 in
        // flight answer one every 1.25 ms, so 100 turns span at least 99 of those.
        assert!(last - first >= Duration::from_micros(99 * 1250));
        assert!(last_turn <= MIN_TURN + Duration::from_micros(99 * 1250));
        assert_eq!(overload.shed_total(Path::Hold), 100);
        drop(held);
    }

    /// A hold let in by `admit` in a task of its own, answered at once.
    fn hold_admitted(overload: &Arc<Overload>) -> tokio::task::JoinHandle<Result<(), Shed>> {
        let overload = overload.clone();
        tokio::spawn(async move { overload.admit(Path::Hold).await.map(|p| p.finish(false)) })
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_limit_a_hold_waits_only_while_a_place_is_due_within_its_patience() {
        // Eight places; answers taken to need a quarter of the 50 ms target until they
        // tell, so a place comes every 1.5625 ms, and three holds can expect one within
        // the patience (5 ms).
        let overload = Overload::new(Some(settings(8, 8)));
        let held: Vec<_> = (0..8)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        let waiting: Vec<_> = (0..3).map(|_| hold_admitted(&overload)).collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(overload.waiting(Path::Hold), 3);
        // A fourth is refused at once, with its turn.
        let started = tokio::time::Instant::now();
        let refused = overload.admit(Path::Hold).await.unwrap_err();
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert!(refused.retry_after >= MIN_TURN);
        assert_eq!(overload.shed_total(Path::Hold), 1);
        // Places freed within the patience: every one waiting gets one.
        tokio::time::sleep(Duration::from_millis(3)).await;
        drop(held);
        for hold in waiting {
            hold.await.unwrap().expect("a place");
        }
        assert_eq!(overload.waiting(Path::Hold), 0);
        assert_eq!(overload.shed_total(Path::Hold), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hold_let_wait_is_refused_when_its_patience_ends() {
        // Eight places full, a place every 1.6 ms: a hold waits for one, which never comes.
        let overload = Overload::new(Some(settings(8, 8)));
        let held: Vec<_> = (0..8)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        let started = tokio::time::Instant::now();
        let refused = overload.admit(Path::Hold).await.unwrap_err();
        assert_eq!(started.elapsed(), HOLD_PATIENCE);
        assert!(HOLD_PATIENCE < MIN_TURN);
        assert!(refused.retry_after >= MIN_TURN);
        assert_eq!(
            (
                overload.shed_total(Path::Hold),
                overload.waiting(Path::Hold)
            ),
            (1, 0)
        );
        drop(held);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hold_let_wait_while_answers_come_goes_in_over_the_limit() {
        let overload = Overload::new(Some(settings(8, 8)));
        let mut held: Vec<_> = (0..8)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        let waiting = hold_admitted(&overload);
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(overload.waiting(Path::Hold), 1);
        // A place frees and a newcomer takes it before the waiting hold runs.
        held.pop().unwrap().finish(false);
        held.push(overload.enter(Path::Hold).expect("the freed place"));
        waiting.await.unwrap().expect("let in over the limit");
        assert_eq!(overload.shed_total(Path::Hold), 0);
        drop(held);
        assert_eq!(overload.in_flight(Path::Hold), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn no_more_holds_wait_than_the_limit_lets_in() {
        // Answers quick enough that a crowd of 20 could expect places within the patience,
        // but only four places: four wait, the rest are refused at once.
        let overload = Overload::new(Some(OverloadSettings {
            target: Duration::from_millis(1),
            ..settings(4, 4)
        }));
        let held: Vec<_> = (0..4)
            .map(|_| overload.enter(Path::Hold).unwrap())
            .collect();
        let crowd: Vec<_> = (0..20).map(|_| hold_admitted(&overload)).collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(
            (
                overload.waiting(Path::Hold),
                overload.shed_total(Path::Hold)
            ),
            (4, 16)
        );
        // Places free: the four waiting take them.
        drop(held);
        let granted = futures::future::join_all(crowd)
            .await
            .into_iter()
            .filter(|answer| matches!(answer, Ok(Ok(()))))
            .count();
        assert_eq!((granted, overload.shed_total(Path::Hold)), (4, 16));
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_limit_admit_lets_everything_through() {
        let overload = Overload::new(None);
        for _ in 0..1000 {
            std::mem::forget(overload.admit(Path::Hold).await.expect("no limit"));
        }
        assert_eq!(overload.shed_total(Path::Hold), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn holds_are_refused_while_a_checkout_waits_for_a_place() {
        let overload = Overload::new(Some(settings(1, 1)));
        let first = overload.enter(Path::Checkout).unwrap();
        let waiting = checkout_waiting(&overload);
        tokio::time::sleep(CHECKOUT_PATIENCE / 4).await;
        assert!(overload.enter(Path::Hold).is_err(), "a checkout waits");
        first.finish(false);
        let second = waiting.await.unwrap().expect("the freed place");
        let hold = overload.enter(Path::Hold).expect("nobody waits now");
        assert_eq!(overload.shed_total(Path::Hold), 1);
        drop((second, hold));
    }
}
