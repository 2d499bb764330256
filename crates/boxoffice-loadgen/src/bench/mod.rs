//! `boxoffice bench <scenario>`: drives a running server over HTTP through the typed
//! client, the way buyers would, and reports throughput, latency and status codes, then
//! checks the product's invariants through the API.
//!
//! - [`hot_seat`]: N buyers released together on one seat; exactly one wins.
//! - [`best`]: N buyers released together asking for the best Q seats, round after round.
//! - [`holds`]: one-seat holds on random seats by random buyers, closed-loop (N workers
//!   back to back) or open-loop (a target rate).
//! - [`flash_sale`]: buyers wanting 1–4 seats together ask for the best available, hold,
//!   think, check out, and try again on a conflict, until the house is sold or time is up.
//! - [`ga_rush`]: buyers released together on a general-admission area.
//! - [`browse`]: live-update subscribers with availability reads and holds: the server's
//!   resident memory and how long a change takes to reach every subscriber.
//! - [`seat_map`]: buyers loading the seat map back to back: latency and bytes per load.
//! - [`queue`]: buyers joining an event's waiting room, then polling it while it admits.
//! - [`door`]: every ticket of an event scanned by many scanners at once, and the
//!   revocation list; availability reads and check-ins while tickets' PDFs are drawn.
//! - [`floor`]: `GET /healthz`, the HTTP floor.
//! - [`plot`]: throughput and p99 against concurrency from saved reports, to SVG.
//!
//! Buyers' tokens are minted with the server's JWT secret, so no session endpoint is in the
//! way. Latencies go into HDR histograms (microseconds, three significant digits); an
//! open-loop request's latency counts from when it was due, not from when it was sent, so
//! a server that falls behind is not flattered (no coordinated omission).

pub mod best;
pub mod browse;
pub mod checks;
pub mod door;
pub mod flash_sale;
pub mod floor;
pub mod ga_rush;
pub mod holds;
pub mod hot_seat;
pub mod line;
pub mod plot;
pub mod queue;
mod report;
pub mod seasons;
pub mod seat_map;
mod stats;
pub mod waitlist;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use boxoffice_client::Client;
use boxoffice_core::ids::EventId;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

pub use report::{Check, Latency, OperationReport, Report};
pub use stats::{Samples, Stats};

/// The server under test.
#[derive(Clone)]
pub struct Target {
    /// The typed client, making admin calls with the admin token.
    pub api: Client,
    jwt_secret: String,
    progress: bool,
    marks: Option<PathBuf>,
}

impl Target {
    /// The server at `base`, with its admin token and JWT secret. One connection pool
    /// serves every simulated buyer: connections are reused, never one per request.
    pub fn new(base: &str, admin_token: &str, jwt_secret: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(usize::MAX)
            .tcp_nodelay(true)
            .timeout(Duration::from_secs(60))
            .build()?;
        Ok(Self {
            api: Client::with_http(base, http).admin(admin_token),
            jwt_secret: jwt_secret.to_owned(),
            progress: true,
            marks: None,
        })
    }

    /// Marks the measured part of a run with two empty files in `dir`: `start` once the
    /// event is set up and the load begins, `end` once the load stops (before the checks).
    /// A script reading CPU counters before and after (`bench/cost.sh`) measures the load
    /// alone, not the setup or the checks.
    pub fn marks(mut self, dir: PathBuf) -> Self {
        self.marks = Some(dir);
        self
    }

    /// Writes the mark `name` (`start`, `end`) when marks were asked for.
    pub fn mark(&self, name: &str) {
        if let Some(dir) = &self.marks {
            if let Err(e) = std::fs::write(dir.join(name), b"") {
                eprintln!("cannot write the mark {}: {e}", dir.join(name).display());
            }
        }
    }

    /// Without progress bars (for `--json`, and when run by tests).
    pub fn quiet(mut self) -> Self {
        self.progress = false;
        self
    }

    /// Puts a waiting room with `queue` in front of `event`.
    pub async fn set_queue(
        &self,
        event: EventId,
        queue: boxoffice_core::event::QueueSettings,
    ) -> anyhow::Result<()> {
        let patch = boxoffice_client::api::EventPatch {
            queue: Some(Some(queue)),
            ..Default::default()
        };
        self.api.patch_event(event, &patch).await?;
        Ok(())
    }

    /// A token for the buyer `name`, valid for a day.
    pub fn buyer(&self, name: &str) -> String {
        boxoffice_client::mint_user_token(
            &self.jwt_secret,
            name,
            chrono::Utc::now() + chrono::Duration::days(1),
        )
    }

    /// A token for the buyer `name` in the sales channel [`CHANNEL`], valid for a day.
    pub fn channel_buyer(&self, name: &str) -> String {
        boxoffice_client::mint_channel_token(
            &self.jwt_secret,
            name,
            Some(CHANNEL),
            chrono::Utc::now() + chrono::Duration::days(1),
        )
    }

    /// This target reading seats and availability as a buyer of [`CHANNEL`] (who sees
    /// every seat on sale).
    pub fn in_channel(&self) -> Self {
        let mut target = self.clone();
        target.api = target
            .api
            .clone()
            .reader(&self.channel_buyer("channel-reader"));
        target
    }

    /// A progress bar of `len` steps (hidden when quiet or not on a terminal).
    pub fn progress(&self, len: u64, what: &str) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len).with_message(what.to_owned());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>16} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec}",
            )
            .expect("a valid template"),
        );
        bar
    }

    /// Creates a venue of one section, `rows` rows of `per_row` seats (ids
    /// `floor-R<row>-<n>`), and an event selling all of it at one price (its first
    /// `channel_rows` rows in the sales channel [`CHANNEL`] alone).
    pub async fn seated_event(&self, layout: &Layout) -> anyhow::Result<EventId> {
        Ok(self.seated_events(layout, 1).await?[0])
    }

    /// As [`Target::seated_event`], `count` events (at least one) in the one venue.
    pub async fn seated_events(
        &self,
        layout: &Layout,
        count: usize,
    ) -> anyhow::Result<Vec<EventId>> {
        let rows: Vec<_> = (0..layout.rows)
            .map(|r| json!({"label": format!("R{r}"), "seats": layout.per_row}))
            .collect();
        let venue = self
            .api
            .create_venue(&serde_json::from_value(json!(
                {"name": "Bench arena", "sections": [{"id": "floor", "name": "Floor", "rows": rows}]}
            ))?)
            .await
            .with_context(|| format!("creating a venue at {}", self.api.base()))?;
        let mut allocations = vec![json!({"ticket_type": "standard", "section": "floor"})];
        let mut channels = Vec::new();
        if layout.channel_rows > 0 {
            let rows: Vec<String> = (0..layout.channel_rows).map(|r| format!("R{r}")).collect();
            allocations.push(json!({"ticket_type": "standard", "section": "floor",
                                    "rows": rows, "channel": CHANNEL}));
            channels.push(json!({"code": CHANNEL, "name": "Partner"}));
        }
        let mut events = Vec::with_capacity(count.max(1));
        for n in 0..count.max(1) {
            let event = self
                .api
                .create_event(&serde_json::from_value(json!({
                    "venue_id": venue.id, "name": format!("Bench {}", n + 1),
                    "starts_at": "2099-01-01T20:00:00Z",
                    "hold_ttl_seconds": layout.hold_ttl_seconds,
                    "max_hold_seconds": layout.hold_ttl_seconds.max(900),
                    "max_seats_per_user": layout.max_seats_per_user,
                    "payment_window_seconds": layout.payment_window_seconds,
                    "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
                    "channels": channels, "allocations": allocations}))?)
                .await?;
            events.push(event.id);
        }
        Ok(events)
    }
}

impl Target {
    /// Creates a venue of one seat and an event selling only a standing area `area` of
    /// `capacity` places, at most `max_per_booking` a booking.
    pub async fn standing_event(
        &self,
        area: &str,
        capacity: u32,
        max_per_booking: u32,
    ) -> anyhow::Result<EventId> {
        let venue = self
            .api
            .create_venue(&serde_json::from_value(
                json!({"name": "Bench field", "sections": [
                {"id": "stand", "name": "Stand", "rows": [{"label": "A", "seats": 1}]}]}),
            )?)
            .await?;
        Ok(self
            .api
            .create_event(&serde_json::from_value(json!({
                "venue_id": venue.id, "name": "Bench standing", "starts_at": "2099-01-01T20:00:00Z",
                "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
                "allocations": [],
                "ga_areas": [{"code": area, "name": "Standing", "capacity": capacity,
                              "price_cents": 1000, "currency": "EUR",
                              "max_per_booking": max_per_booking}]}))?)
            .await?
            .id)
    }
}

/// The seated event a scenario sells.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Rows.
    pub rows: usize,
    /// Seats per row.
    pub per_row: usize,
    /// The event's hold lifetime.
    pub hold_ttl_seconds: u32,
    /// The event's per-user limit.
    pub max_seats_per_user: u32,
    /// The event's payment window (0: none).
    pub payment_window_seconds: u32,
    /// Rows (the first ones) sold in the sales channel [`CHANNEL`] alone.
    pub channel_rows: usize,
}

/// The sales channel of a scenario's event that has one.
pub const CHANNEL: &str = "partner";

impl Layout {
    /// About `seats` seats in rows of up to 1,000.
    pub fn of(seats: usize, hold_ttl_seconds: u32) -> Self {
        let per_row = seats.clamp(1, 1000);
        Self {
            rows: seats.div_ceil(per_row).max(1),
            per_row,
            hold_ttl_seconds,
            max_seats_per_user: 8,
            payment_window_seconds: 0,
            channel_rows: 0,
        }
    }

    /// Seats in all.
    pub fn seats(&self) -> usize {
        self.rows * self.per_row
    }

    /// The id of seat `i` in venue order.
    pub fn seat_id(&self, i: usize) -> String {
        format!("floor-R{}-{}", i / self.per_row, i % self.per_row + 1)
    }
}

/// Runs `calls` requests on `workers` loops; each loop takes the next index.
pub(crate) async fn on_workers<F, Fut>(workers: usize, calls: usize, call: F) -> (Stats, Duration)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = u16> + Send + 'static,
{
    let (call, next) = (Arc::new(call), Arc::new(AtomicUsize::new(0)));
    let started = Instant::now();
    let loops: Vec<_> = (0..workers.max(1))
        .map(|_| {
            let (call, next) = (call.clone(), next.clone());
            tokio::spawn(async move {
                let mut stats = Stats::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= calls {
                        return stats;
                    }
                    let sent = Instant::now();
                    let status = call(i).await;
                    stats.record(status, sent.elapsed());
                }
            })
        })
        .collect();
    let mut stats = Stats::default();
    for done in futures::future::join_all(loops).await {
        stats.merge(&done.expect("a worker never panics"));
    }
    (stats, started.elapsed())
}

/// The HTTP status of a typed client's answer: its success status, the problem's status,
/// or 0 when no answer came.
pub fn status_of<T>(answer: &boxoffice_client::Result<T>, success: u16) -> u16 {
    match answer {
        Ok(_) => success,
        Err(boxoffice_client::Error::Problem(p)) => p.status,
        Err(boxoffice_client::Error::Unexpected { status, .. }) => status.as_u16(),
        Err(_) => 0,
    }
}

/// How requests are paced.
#[derive(Clone, Copy, Debug)]
pub enum Pace {
    /// `workers` loops, each sending its next request when its last is answered.
    Closed {
        /// Concurrent loops.
        workers: usize,
    },
    /// Requests started at `per_second`, whether or not earlier ones were answered.
    Open {
        /// The target rate.
        per_second: f64,
    },
}

impl std::fmt::Display for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pace::Closed { workers } => write!(f, "closed loop, {workers} workers"),
            Pace::Open { per_second } => write!(f, "open loop, {per_second} requests/s"),
        }
    }
}

/// Sends requests made by `request(i)` (answering its HTTP status) at `pace` for
/// `duration`; returns their statistics and the time taken.
pub async fn drive<F, Fut>(
    target: &Target,
    pace: Pace,
    duration: Duration,
    request: F,
) -> (Stats, Duration)
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = u16> + Send + 'static,
{
    let request = Arc::new(request);
    let next = Arc::new(AtomicU64::new(0));
    let bar = target.progress(duration.as_millis() as u64, "requests");
    target.mark("start");
    let started = Instant::now();
    let ticker = {
        let (bar, next) = (bar.clone(), next.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                bar.set_position(started.elapsed().as_millis() as u64);
                bar.set_message(format!("{} sent", next.load(Ordering::Relaxed)));
            }
        })
    };
    let stats = match pace {
        Pace::Closed { workers } => {
            let loops: Vec<_> = (0..workers)
                .map(|_| {
                    let (request, next) = (request.clone(), next.clone());
                    tokio::spawn(async move {
                        let mut stats = Stats::default();
                        while started.elapsed() < duration {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let sent = Instant::now();
                            let status = request(i).await;
                            stats.record(status, sent.elapsed());
                        }
                        stats
                    })
                })
                .collect();
            let mut stats = Stats::default();
            for done in futures::future::join_all(loops).await {
                stats.merge(&done.expect("a worker never panics"));
            }
            stats
        }
        Pace::Open { per_second } => {
            let shared = Arc::new(Mutex::new(Stats::default()));
            let interval = Duration::from_secs_f64(1.0 / per_second.max(0.001));
            let mut in_flight = Vec::new();
            let mut due = started;
            while due < started + duration {
                tokio::time::sleep_until(due.into()).await;
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (request, shared) = (request.clone(), shared.clone());
                let was_due = due;
                in_flight.push(tokio::spawn(async move {
                    let status = request(i).await;
                    let elapsed = was_due.elapsed();
                    shared
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .record(status, elapsed);
                }));
                due += interval;
                in_flight.retain(|t| !t.is_finished());
            }
            futures::future::join_all(in_flight).await;
            let stats = shared.lock().unwrap_or_else(|p| p.into_inner()).clone();
            stats
        }
    };
    let elapsed = started.elapsed();
    target.mark("end");
    ticker.abort();
    bar.finish_and_clear();
    (stats, elapsed)
}

/// Runs every call of `calls` at the same moment (once all are ready), with a progress bar
/// of their answers; returns each call's output and its latency, in order.
pub async fn release_together<Fut, T>(target: &Target, calls: Vec<Fut>) -> Vec<(T, Duration)>
where
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let bar = target.progress(calls.len() as u64, "answers");
    let timed = calls
        .into_iter()
        .map(|call| {
            let bar = bar.clone();
            async move {
                let sent = Instant::now();
                let out = call.await;
                bar.inc(1);
                (out, sent.elapsed())
            }
        })
        .collect();
    let answers = boxoffice_client::release::together(timed).await;
    bar.finish_and_clear();
    answers
}
