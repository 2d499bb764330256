//! Each instance's view of the lines its buyers use: the line's public figures, read from
//! Redis about once a second by one task per line ([`TICK`]), and what every waiting
//! ticket's poll and every status is answered from. The task also reports how this
//! instance's hold path fares ([`Pace`]), and, while it holds the line's lease, advances
//! the line's counter; it stops when nobody has asked about the line for [`IDLE`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::EventId;
use boxoffice_store::redis::queue::{LineState, Order, Report, Rules};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::overload::{Overload, Path};
use crate::{Error, Parts};

/// How often an instance reads (and, holding the lease, advances) a line.
pub const TICK: Duration = Duration::from_secs(1);
/// A line nobody asked about for this long is no longer followed by this instance.
pub const IDLE: Duration = Duration::from_secs(60);
/// `max-age` of a line's status: how long an HTTP cache may serve it.
pub const STATUS_MAX_AGE: u32 = 2;

/// The lines this instance follows.
pub struct Lines {
    /// This instance, as the lines know it.
    instance: String,
    lines: Mutex<HashMap<EventId, Arc<Line>>>,
    pace: Pace,
    started: Instant,
}

/// One line as this instance last read it.
pub struct Line {
    event: EventId,
    first_read: tokio::sync::OnceCell<()>,
    view: RwLock<Option<Arc<View>>>,
    /// Ticket ids given up while waiting.
    left: RwLock<HashSet<Uuid>>,
    left_read: AtomicU64,
    /// Milliseconds after [`Lines::started`] of the last request about the line.
    touched: AtomicU64,
}

/// A line's figures, as one tick read them.
#[derive(Debug)]
pub struct View {
    /// The settings it was read under.
    pub settings: QueueSettings,
    /// The line.
    pub state: LineState,
    /// When the event starts (the sale, and the line, end then).
    pub starts_at: DateTime<Utc>,
    /// The status last made from it.
    status: Mutex<Option<Arc<Status>>>,
}

/// A line's public status: the same bytes for everyone between changes.
#[derive(Debug)]
pub struct Status {
    /// The JSON body.
    pub body: Bytes,
    /// Its entity tag (quoted).
    pub etag: String,
    /// The counter it shows.
    admitted_up_to: u64,
    /// Whether it says the line is closed.
    closed: bool,
}

#[derive(Serialize)]
struct StatusBody<'a> {
    state: &'a str,
    admitted_up_to: u64,
    admit_per_minute: u32,
    admitting_per_minute: u32,
    slowed_because: Option<&'a str>,
    waiting: u64,
    updated_at: String,
}

impl View {
    fn new(settings: QueueSettings, state: LineState, starts_at: DateTime<Utc>) -> Self {
        Self {
            settings,
            state,
            starts_at,
            status: Mutex::new(None),
        }
    }

    /// The counter as shown now: every place up to it is admitted.
    pub fn admitted_up_to(&self) -> u64 {
        self.state.admitted_up_to_at(Utc::now())
    }

    /// The line's status now (made once for each value of the counter shown).
    pub fn status(&self) -> Arc<Status> {
        let now = Utc::now();
        let up = self.state.admitted_up_to_at(now);
        let closed = now >= self.starts_at;
        let mut kept = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(status) = kept
            .as_ref()
            .filter(|s| s.admitted_up_to == up && s.closed == closed)
        {
            return status.clone();
        }
        let status = Arc::new(self.make_status(now, up, closed));
        *kept = Some(status.clone());
        status
    }

    fn make_status(&self, now: DateTime<Utc>, up: u64, closed: bool) -> Status {
        let (settings, state) = (&self.settings, &self.state);
        let phase = if closed {
            "closed"
        } else if state.order == Order::BeforeOpening {
            "before_open"
        } else if state.admitting_per_minute == 0 {
            "paused"
        } else if state.admitting_per_minute < settings.admit_per_minute {
            "slowed"
        } else {
            "admitting"
        };
        let slowed_because =
            Some(state.why.as_str()).filter(|w| !w.is_empty() && phase == "slowed");
        // The line's own times: of the last change of a figure, of the counter's value
        // being shown, of the event's start once closed. Every instance computes the same.
        let mut updated_at = state.updated_at;
        if let Some(since) = state.shown_since(now) {
            updated_at = updated_at.max(since);
        }
        if closed {
            updated_at = updated_at.max(self.starts_at);
        }
        let body = serde_json::to_vec(&StatusBody {
            state: phase,
            admitted_up_to: up,
            admit_per_minute: settings.admit_per_minute,
            admitting_per_minute: state.admitting_per_minute,
            slowed_because,
            waiting: state.waiting_at(up),
            updated_at: updated_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        })
        .expect("a status serializes");
        let digest = Sha256::digest(&body);
        Status {
            etag: format!("\"{}\"", hex(&digest[..12])),
            body: Bytes::from(body),
            admitted_up_to: up,
            closed,
        }
    }

    /// The rules the line's calls are made under.
    pub fn rules(&self) -> Rules {
        rules(&self.settings)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The rules of a line under `settings`.
pub fn rules(settings: &QueueSettings) -> Rules {
    Rules {
        opens_at: settings.opens_at,
        admit_per_minute: settings.admit_per_minute,
        session: Duration::from_secs(u64::from(settings.session_seconds)),
    }
}

impl Default for Lines {
    fn default() -> Self {
        Self::new()
    }
}

impl Lines {
    /// No line followed yet.
    pub fn new() -> Self {
        Self {
            instance: Uuid::new_v4().to_string(),
            lines: Mutex::default(),
            pace: Pace::default(),
            started: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The line of `event` (whose waiting room is on, with `settings`), read from Redis
    /// once if this instance does not follow it yet.
    pub(crate) async fn line(
        parts: &Arc<Parts>,
        event: EventId,
        settings: &QueueSettings,
    ) -> Result<Arc<Line>, Error> {
        let lines = &parts.lines;
        let line = {
            let mut all = lines.lines.lock().unwrap_or_else(|p| p.into_inner());
            all.entry(event)
                .or_insert_with(|| {
                    Arc::new(Line {
                        event,
                        first_read: tokio::sync::OnceCell::new(),
                        view: RwLock::new(None),
                        left: RwLock::default(),
                        left_read: AtomicU64::new(0),
                        touched: AtomicU64::new(0),
                    })
                })
                .clone()
        };
        line.touched.store(lines.now_ms(), Ordering::Relaxed);
        line.first_read
            .get_or_try_init(|| async {
                line.read(parts, *settings).await?;
                tokio::spawn(follow(Arc::downgrade(parts), line.clone()));
                Ok::<_, Error>(())
            })
            .await?;
        Ok(line)
    }

    /// A buyer gave up the ticket `id` of `event`'s line, on some instance: refused here
    /// from now on, without waiting for the line's next read (a line not followed here
    /// yet reads every ticket given up when it is first read).
    pub fn gave_up(&self, event: EventId, id: Uuid) {
        let line = self
            .lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&event)
            .cloned();
        if let Some(line) = line {
            line.give_up(id);
        }
    }

    /// Forgets `event`'s line (its waiting room was switched off or changed): the next
    /// request reads it anew.
    pub fn forget(&self, event: EventId) {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&event);
    }
}

impl Line {
    /// The line's figures as last read.
    pub fn view(&self) -> Arc<View> {
        self.view
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .expect("a line is handed out once read")
    }

    /// Whether the ticket `id` was given up.
    pub fn given_up(&self, id: Uuid) -> bool {
        self.left
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&id)
    }

    /// Records at once that a buyer gave up the ticket `id` (here, or on another instance
    /// whose word came over the bus).
    pub fn give_up(&self, id: Uuid) {
        self.left
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id);
    }

    /// One tick: reports this instance's pace, advances the line if it holds the lease,
    /// and keeps what the line answered.
    async fn read(&self, parts: &Parts, settings: QueueSettings) -> Result<(), Error> {
        let (factor, why) = parts.lines.pace.now(&parts.overload);
        let known = self
            .view
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|view| view.starts_at);
        let starts_at = match known {
            Some(starts_at) => starts_at,
            None => {
                boxoffice_store::pg::events::hold_policy(&parts.pool, self.event)
                    .await?
                    .ok_or(Error::EventNotFound)?
                    .starts_at
            }
        };
        let report = Report {
            instance: &parts.lines.instance,
            factor: if parts.holds.failing_fast() {
                0.0
            } else {
                factor
            },
            why,
            left_read: self.left_read.load(Ordering::Relaxed),
        };
        let mut state = parts
            .waiting_room
            .tick(self.event, &rules(&settings), &report)
            .await?;
        if !state.left_ids.is_empty() {
            self.left_read
                .fetch_add(state.left_ids.len() as u64, Ordering::Relaxed);
            self.left
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .extend(state.left_ids.drain(..));
        }
        let view = Arc::new(View::new(settings, state, starts_at));
        *self.view.write().unwrap_or_else(|p| p.into_inner()) = Some(view);
        Ok(())
    }
}

/// Follows `line` once a [`TICK`] until nobody asks about it for [`IDLE`], its waiting
/// room is switched off, or the services are gone.
async fn follow(parts: Weak<Parts>, line: Arc<Line>) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(parts) = parts.upgrade() else {
            return;
        };
        let lines = &parts.lines;
        let idle = lines
            .now_ms()
            .saturating_sub(line.touched.load(Ordering::Relaxed));
        let followed = lines
            .lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&line.event)
            .is_some_and(|l| Arc::ptr_eq(l, &line));
        if !followed || idle > IDLE.as_millis() as u64 {
            lines.forget_if(&line);
            return;
        }
        match parts.admission.queue(&parts.pool, line.event).await {
            Ok(Some(settings)) => {
                if let Err(error) = line.read(&parts, settings).await {
                    tracing::debug!(%error, event = %line.event, "waiting room: a line could not be read");
                }
            }
            Ok(None) => {
                lines.forget_if(&line);
                return;
            }
            Err(error) => {
                tracing::debug!(%error, event = %line.event, "waiting room: settings could not be read");
            }
        }
    }
}

impl Lines {
    fn forget_if(&self, line: &Arc<Line>) {
        let mut all = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if all.get(&line.event).is_some_and(|l| Arc::ptr_eq(l, line)) {
            all.remove(&line.event);
        }
    }
}

/// How fast this instance's hold path asks the lines to admit, from the adaptive limit's
/// answers: each second with refusals at the limit (`overload`) or with more than one
/// answer in a hundred slower than the latency target (`hold_latency`, the p99 over it)
/// halves the factor, down to a tenth; each second without raises it by a quarter, back
/// to 1.
#[derive(Default)]
pub struct Pace {
    state: Mutex<PaceState>,
}

struct PaceState {
    at: Option<Instant>,
    shed: u64,
    answered: u64,
    slow: u64,
    factor: f64,
    why: &'static str,
}

impl Default for PaceState {
    fn default() -> Self {
        Self {
            at: None,
            shed: 0,
            answered: 0,
            slow: 0,
            factor: 1.0,
            why: "",
        }
    }
}

/// A factor never falls below this: the line keeps moving, slowly.
const SLOWEST: f64 = 0.1;

impl Pace {
    /// The factor in force and why it is below 1; measured anew at most once a
    /// [`TICK`], whichever line asks.
    pub fn now(&self, overload: &Overload) -> (f64, &'static str) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let shed = overload.shed_total(Path::Hold);
        let (answered, slow) = overload.answers(Path::Hold);
        let due = s.at.is_none_or(|at| at.elapsed() >= TICK.mul_f64(0.9));
        if due {
            let refused = shed.saturating_sub(s.shed) > 0 && s.at.is_some();
            let (answers, slower) = (
                answered.saturating_sub(s.answered),
                slow.saturating_sub(s.slow),
            );
            let late = s.at.is_some() && answers > 0 && slower * 100 > answers;
            if refused || late {
                s.factor = (s.factor / 2.0).max(SLOWEST);
                s.why = if refused { "overload" } else { "hold_latency" };
            } else {
                s.factor = (s.factor + 0.25).min(1.0);
                if s.factor >= 1.0 {
                    s.why = "";
                }
            }
            (s.at, s.shed, s.answered, s.slow) = (Some(Instant::now()), shed, answered, slow);
        }
        (s.factor, s.why)
    }
}
