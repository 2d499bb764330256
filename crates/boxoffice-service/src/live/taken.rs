//! Seats this instance knows to be taken, so that a hot seat's refusals need no store.
//! (A long file: a third of it the unit tests of each rule below, which read best beside
//! the rules.)
//!
//! Two things must agree before a seat is refused here, without asking the hold store:
//!
//! - **the store said lately, on this instance, that it is taken** (within `trusted_for`,
//!   `BOXOFFICE_KNOWN_TAKEN_MS`, 2 s by default): it refused the seat, or it just held it
//!   here, and
//! - **the change feed says it is taken now**: sold, or held until a time still more than
//!   [`CLOCK_MARGIN`] away, with no change since that freed it.
//!
//! The feed is what keeps the view current: every hold, extension, order, release and
//! cancellation of any instance arrives through it, and this instance's own are applied
//! the moment they are published, before the buyer is answered. A hold that lapses sends
//! nothing, and needs nothing: its `held_until` is in the view. The store's word is what
//! bounds a mistake: had a change freeing the seat been lost on its way, a buyer could be
//! refused a free seat for `trusted_for` after the store last said it was taken, never
//! longer, since refusals made here do not renew it.
//!
//! The store's word is remembered only if nothing in the event was freed while the store
//! was being asked ([`Taken::epoch`]): an answer the store gave before a release must not
//! outlive the release it did not see.
//!
//! When many buyers ask for one seat at once, the first ask goes to the store and the
//! others wait for its answer ([`Taken::ask`]), once: if it settles the seat, they are
//! refused here; if not, they go to the store together, as they would have. The store's
//! answer settles it by itself ([`Taken::settled`]), without waiting for the feed to
//! agree: on several instances the seat is often taken through another, whose change has
//! not arrived yet when this instance's store refuses it, and the waiters would otherwise
//! all reach the store, and the adaptive limit, at once. Those waiters asked while the
//! first ask was on its way, so the store's answer is the one they would have had, unless
//! a seat of the event was freed since the first asked (its epoch), in which case they ask.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use boxoffice_api::SeatChange;
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};

/// A hold is taken as lapsed this long before its `held_until`, so that a clock behind
/// the store's never refuses a seat the store would give.
const CLOCK_MARGIN: chrono::TimeDelta = chrono::TimeDelta::milliseconds(250);
/// Most seats remembered across all events (about 100 bytes each). Past it, lapsed holds
/// are forgotten first, then whatever the store has not confirmed lately, then, should
/// that not be enough, everything: the view is a shortcut, never the answer.
const MAX_SEATS: usize = 200_000;

/// What the feed last said of a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Held until then.
    HeldUntil(DateTime<Utc>),
    /// In an order.
    Sold,
}

#[derive(Debug, Default)]
struct Seat {
    /// What the feed said, if it said anything since the seat was last freed.
    status: Option<Status>,
    /// When the store last said, on this instance, that it is taken.
    confirmed_at: Option<Instant>,
}

#[derive(Debug, Default)]
struct Event {
    seats: HashMap<String, Seat>,
    /// Seats the store is being asked for on this instance, and how to wait for the
    /// answer (the sender is dropped once it has been taken in).
    asking: HashMap<String, watch::Receiver<Option<Answer>>>,
    /// Stamp of the last change that freed a seat of this event.
    freed: u64,
}

#[derive(Debug, Default)]
struct Inner {
    events: HashMap<EventId, Event>,
    seats: usize,
    /// Source of [`Event::freed`] stamps and of [`Epoch`]s: raised by every free.
    stamp: u64,
    /// Raised whenever the whole view is forgotten.
    generation: u64,
}

impl Event {
    /// The seat's entry, made (and counted in `count`) if it had none.
    fn seat(&mut self, id: &str, count: &mut usize) -> &mut Seat {
        if !self.seats.contains_key(id) {
            *count += 1;
            self.seats.insert(id.to_owned(), Seat::default());
        }
        self.seats
            .get_mut(id)
            .expect("the seat's entry was just made")
    }
}

/// Where an event stood when a store was asked; see [`Taken::confirmed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Epoch {
    generation: u64,
    freed: u64,
}

/// Seats known taken, per event; see the module documentation.
#[derive(Debug)]
pub struct Taken {
    inner: Mutex<Inner>,
    /// How long after the store said a seat is taken the view may refuse it.
    trusted_for: Duration,
    /// Holds refused here without asking the store.
    answered: AtomicU64,
}

impl Taken {
    /// A view that refuses a seat for `trusted_for` after the store said it is taken, as
    /// long as the feed agrees (zero: never).
    pub fn new(trusted_for: Duration) -> Self {
        Self {
            inner: Mutex::default(),
            trusted_for,
            answered: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every update leaves the maps consistent: a panicking holder breaks nothing.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this view ever refuses a seat (`trusted_for` is not zero).
    pub fn refuses(&self) -> bool {
        !self.trusted_for.is_zero()
    }

    /// Counts a hold refused by this view, without asking the store.
    pub fn answered_here(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
    }

    /// Holds refused by this view so far (`boxoffice_holds_refused_unasked_total`).
    pub fn answered_total(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Where `event` stands now: read it before asking the store, and hand it to
    /// [`Taken::refused`] with the store's refusal.
    pub fn epoch(&self, event: EventId) -> Epoch {
        let inner = self.lock();
        Epoch {
            generation: inner.generation,
            freed: inner.events.get(&event).map_or(0, |e| e.freed),
        }
    }

    /// The store said `seats` of `event` are taken (it refused them, or just held them
    /// here), asked at `epoch`: remembered unless some seat of the event was freed since.
    pub fn confirmed(&self, event: EventId, seats: &[String], epoch: Epoch) {
        let mut inner = self.lock();
        if inner.generation != epoch.generation {
            return;
        }
        let now = Instant::now();
        let Inner {
            events,
            seats: count,
            ..
        } = &mut *inner;
        let Some(known) = events.get_mut(&event) else {
            // Nothing was ever fed for this event, so nothing could be refused here yet.
            return;
        };
        if known.freed != epoch.freed {
            return;
        }
        for id in seats {
            known.seat(id, count).confirmed_at = Some(now);
        }
    }

    /// Asks to send a request for `basket` of `event` to the store: [`Ask::Go`] while
    /// no other request for any of its seats is on its way there from this instance;
    /// otherwise [`Ask::Wait`] for that one's answer to be taken in.
    pub fn ask(&self, event: EventId, basket: &[String]) -> Ask<'_> {
        let mut inner = self.lock();
        let known = inner.events.entry(event).or_default();
        if let Some(busy) = basket.iter().find_map(|id| known.asking.get(id.as_str())) {
            return Ask::Wait(busy.clone());
        }
        let (done, waiting) = watch::channel(None);
        for id in basket {
            known.asking.insert(id.clone(), waiting.clone());
        }
        Ask::Go(Asking {
            taken: self,
            event,
            seats: basket.to_vec(),
            done,
        })
    }

    /// Applies what the feed says changed in `event`.
    pub fn apply(&self, event: EventId, changes: &[SeatChange]) {
        let mut inner = self.lock();
        if inner.seats + changes.len() > MAX_SEATS {
            let keep = MAX_SEATS.saturating_sub(changes.len()) * 3 / 4;
            inner.prune(keep, self.trusted_for);
        }
        let (known, count, stamp) = inner.changing(event);
        for change in changes {
            let status = match (change.status, change.held_until) {
                (SeatStatus::Held, Some(until)) => Status::HeldUntil(until),
                (SeatStatus::Sold, _) => Status::Sold,
                // Freed, taken off sale (allocations also resync the event), or a hold
                // with no expiry said: whatever was known no longer stands.
                _ => {
                    if known.seats.remove(change.id.as_str()).is_some() {
                        *count -= 1;
                    }
                    known.freed = stamp;
                    continue;
                }
            };
            known.seat(&change.id, count).status = Some(status);
        }
    }

    /// The seats of `basket` that `answer`, the store's answer to the ask a request
    /// waited for, says are taken: empty if that answer said none of them, or if a seat
    /// of `event` was freed (or the view forgotten) since that ask began, so that the
    /// store must be asked again.
    pub fn settled(&self, event: EventId, answer: &Answer, basket: &[String]) -> Vec<String> {
        if self.epoch(event) != answer.epoch {
            return Vec::new();
        }
        basket
            .iter()
            .filter(|id| answer.taken.contains(id))
            .cloned()
            .collect()
    }

    /// Forgets `event` (its allocations changed).
    pub fn forget(&self, event: EventId) {
        let mut inner = self.lock();
        let (known, count, stamp) = inner.changing(event);
        *count -= known.seats.len();
        known.seats.clear();
        known.freed = stamp;
    }

    /// Forgets everything (changes may have been missed).
    pub fn forget_all(&self) {
        self.lock().forget_all();
    }

    /// The seats of `basket` to refuse without asking the store: each refused by the
    /// store on this instance within `trusted_for`, and sold or held past now by what
    /// the feed says. Empty if the store must be asked.
    pub fn known_taken(&self, event: EventId, basket: &[String]) -> Vec<String> {
        let inner = self.lock();
        let Some(known) = inner.events.get(&event) else {
            return Vec::new();
        };
        let now = Utc::now();
        basket
            .iter()
            .filter(|id| {
                known.seats.get(id.as_str()).is_some_and(|seat| {
                    let lately = seat
                        .confirmed_at
                        .is_some_and(|at| at.elapsed() < self.trusted_for);
                    let taken = match seat.status {
                        Some(Status::Sold) => true,
                        Some(Status::HeldUntil(until)) => until - now > CLOCK_MARGIN,
                        None => false,
                    };
                    lately && taken
                })
            })
            .cloned()
            .collect()
    }
}

/// Whether a request may go to the store now.
pub enum Ask<'a> {
    /// It may; others for its seats wait until this is dropped.
    Go(Asking<'a>),
    /// Another request for some of its seats is there: this is closed once that one's
    /// answer is taken in, and holds the answer if the store gave one.
    Wait(watch::Receiver<Option<Answer>>),
}

/// What the store answered the first of several asks for the same seats.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The seats it said are taken (refused, or held by that ask).
    taken: std::sync::Arc<[String]>,
    /// Where the event stood when that ask began.
    epoch: Epoch,
}

/// A request on its way to the store; dropping it lets those waiting for it look again.
pub struct Asking<'a> {
    taken: &'a Taken,
    event: EventId,
    seats: Vec<String>,
    done: watch::Sender<Option<Answer>>,
}

impl Asking<'_> {
    /// The store said `seats` are taken, asked at `epoch`: remembered as
    /// [`Taken::confirmed`] does, and handed to the requests waiting for this one.
    pub fn confirmed(&self, seats: &[String], epoch: Epoch) {
        self.taken.confirmed(self.event, seats, epoch);
        self.done.send_replace(Some(Answer {
            taken: seats.into(),
            epoch,
        }));
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        let mine = self.done.subscribe();
        let mut inner = self.taken.lock();
        if let Some(known) = inner.events.get_mut(&self.event) {
            for id in &self.seats {
                if known
                    .asking
                    .get(id.as_str())
                    .is_some_and(|w| w.same_channel(&mine))
                {
                    known.asking.remove(id.as_str());
                }
            }
        }
    }
}

/// Waits until the request `waiting` was for has been answered and taken in; the store's
/// answer, if it gave one that names taken seats.
pub async fn answered(mut waiting: watch::Receiver<Option<Answer>>) -> Option<Answer> {
    // The sender's drop is the signal; an answer may be sent before it.
    while waiting.changed().await.is_ok() {}
    let answer = waiting.borrow().clone();
    answer
}

impl Inner {
    /// A change of `event` begins: its entry (made if need be), the count of seats, and
    /// a new stamp for whatever it frees.
    fn changing(&mut self, event: EventId) -> (&mut Event, &mut usize, u64) {
        self.stamp += 1;
        let known = self.events.entry(event).or_default();
        (known, &mut self.seats, self.stamp)
    }

    /// Forgets seats until at most `keep` are left: lapsed holds and seats the feed said
    /// nothing of first, then those the store has not confirmed lately, then all.
    fn prune(&mut self, keep: usize, trusted_for: Duration) {
        let now = Utc::now();
        let lately = |seat: &Seat| {
            seat.confirmed_at
                .is_some_and(|at| at.elapsed() < trusted_for)
        };
        let passes: [&dyn Fn(&Seat) -> bool; 2] = [
            &|seat| match seat.status {
                Some(Status::Sold) => true,
                Some(Status::HeldUntil(until)) => until > now,
                None => lately(seat),
            },
            &lately,
        ];
        for keeps in passes {
            for known in self.events.values_mut() {
                known.seats.retain(|_, seat| keeps(seat));
            }
            self.seats = self.events.values().map(|e| e.seats.len()).sum();
            if self.seats <= keep {
                return;
            }
        }
        self.forget_all();
    }

    fn forget_all(&mut self) {
        self.events.clear();
        self.seats = 0;
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(id: &str, for_secs: i64) -> SeatChange {
        SeatChange {
            id: id.into(),
            status: SeatStatus::Held,
            held_until: Some(Utc::now() + chrono::TimeDelta::seconds(for_secs)),
        }
    }

    fn now(id: &str, status: SeatStatus) -> SeatChange {
        SeatChange {
            id: id.into(),
            status,
            held_until: None,
        }
    }

    fn ids(seats: &[&str]) -> Vec<String> {
        seats.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_seat_is_refused_only_once_the_store_refused_it_and_the_feed_says_it_is_taken() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        let basket = ids(&["A-1", "A-2"]);
        taken.apply(event, &[held("A-1", 60)]);
        assert!(
            taken.known_taken(event, &basket).is_empty(),
            "never refused"
        );
        taken.confirmed(event, &ids(&["A-1"]), taken.epoch(event));
        assert_eq!(taken.known_taken(event, &basket), ["A-1"]);
        // Refused by the store, but the feed never said why: ask the store.
        taken.confirmed(event, &ids(&["A-2"]), taken.epoch(event));
        assert_eq!(taken.known_taken(event, &basket), ["A-1"]);
        taken.apply(event, &[now("A-2", SeatStatus::Sold)]);
        assert_eq!(taken.known_taken(event, &basket), ["A-1", "A-2"]);
        assert!(taken.known_taken(EventId::new(), &basket).is_empty());
    }

    #[test]
    fn a_freed_seat_or_a_lapsing_hold_is_never_refused() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        taken.apply(event, &[held("A-1", 60), held("A-2", 60), held("A-3", 60)]);
        taken.confirmed(event, &ids(&["A-1", "A-2", "A-3"]), taken.epoch(event));
        taken.apply(event, &[now("A-1", SeatStatus::Available)]);
        // Lapses within the clock margin.
        taken.apply(event, &[held("A-2", 0)]);
        assert_eq!(
            taken.known_taken(event, &ids(&["A-1", "A-2", "A-3"])),
            ["A-3"]
        );
        // Held again by someone: not refused until the store says so.
        taken.apply(event, &[held("A-1", 60)]);
        assert_eq!(
            taken.known_taken(event, &ids(&["A-1"])),
            Vec::<String>::new()
        );
        taken.forget(event);
        assert!(taken.known_taken(event, &ids(&["A-3"])).is_empty());
    }

    #[test]
    fn past_its_size_the_view_forgets_lapsed_holds_first_then_what_was_not_confirmed() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        let lapsed = SeatChange {
            held_until: Some(Utc::now() - chrono::TimeDelta::seconds(1)),
            ..held("A-1", 0)
        };
        taken.apply(
            event,
            &[lapsed, held("A-2", 60), now("A-3", SeatStatus::Sold)],
        );
        taken.confirmed(event, &ids(&["A-4"]), taken.epoch(event));
        let left = |taken: &Taken| {
            let inner = taken.lock();
            let mut seats: Vec<String> = inner.events[&event].seats.keys().cloned().collect();
            seats.sort();
            assert_eq!(inner.seats, seats.len());
            seats
        };
        taken.lock().prune(3, Duration::from_secs(2));
        assert_eq!(left(&taken), ["A-2", "A-3", "A-4"]);
        taken.lock().prune(1, Duration::from_secs(2));
        assert_eq!(left(&taken), ["A-4"]);
        taken.lock().prune(0, Duration::from_secs(2));
        assert!(taken.lock().events.is_empty());
    }

    #[tokio::test]
    async fn asks_for_a_seat_already_being_asked_for_wait_for_that_answer() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        let Ask::Go(first) = taken.ask(event, &ids(&["A-1", "A-2"])) else {
            panic!("nothing was being asked");
        };
        let Ask::Wait(waiting) = taken.ask(event, &ids(&["A-2", "A-3"])) else {
            panic!("A-2 is being asked for");
        };
        assert!(matches!(taken.ask(event, &ids(&["A-3"])), Ask::Go(_)));
        assert!(matches!(
            taken.ask(EventId::new(), &ids(&["A-1"])),
            Ask::Go(_)
        ));
        let answer = tokio::spawn(answered(waiting));
        tokio::task::yield_now().await;
        assert!(!answer.is_finished());
        drop(first);
        answer.await.unwrap();
        assert!(matches!(
            taken.ask(event, &ids(&["A-1", "A-2"])),
            Ask::Go(_)
        ));
    }

    #[tokio::test]
    async fn those_waiting_are_settled_by_the_store_s_answer_before_the_feed_says_anything() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        let asked = taken.epoch(event);
        let Ask::Go(first) = taken.ask(event, &ids(&["A-1"])) else {
            panic!("nothing was being asked");
        };
        let Ask::Wait(waiting) = taken.ask(event, &ids(&["A-1", "A-2"])) else {
            panic!("A-1 is being asked for");
        };
        let Ask::Wait(later) = taken.ask(event, &ids(&["A-1"])) else {
            panic!("A-1 is being asked for");
        };
        // Taken through another instance, whose change has not arrived here.
        first.confirmed(&ids(&["A-1"]), asked);
        drop(first);
        let answer = answered(waiting).await.expect("the store answered");
        assert_eq!(
            taken.settled(event, &answer, &ids(&["A-1", "A-2"])),
            ["A-1"]
        );
        assert!(taken.settled(event, &answer, &ids(&["A-2"])).is_empty());
        // The feed alone never knew: a newcomer still asks the store.
        assert!(taken.known_taken(event, &ids(&["A-1"])).is_empty());
        // A seat freed since the first asked: the answer may be stale, so ask again.
        taken.apply(event, &[now("B-1", SeatStatus::Available)]);
        let answer = answered(later).await.expect("the store answered");
        assert!(taken.settled(event, &answer, &ids(&["A-1"])).is_empty());
        // An ask that ends without an answer (an error, a limit) settles nothing.
        let Ask::Go(failed) = taken.ask(event, &ids(&["C-1"])) else {
            panic!("nothing was being asked");
        };
        let Ask::Wait(waiting) = taken.ask(event, &ids(&["C-1"])) else {
            panic!("C-1 is being asked for");
        };
        drop(failed);
        assert!(answered(waiting).await.is_none());
    }

    #[test]
    fn a_refusal_read_before_a_free_is_not_remembered() {
        let (taken, event) = (Taken::new(Duration::from_secs(2)), EventId::new());
        taken.apply(event, &[held("A-1", 60), held("B-1", 60)]);
        let asked = taken.epoch(event);
        // While the store was being asked, another seat of the event came free.
        taken.apply(event, &[now("B-1", SeatStatus::Available)]);
        taken.confirmed(event, &ids(&["A-1"]), asked);
        assert!(taken.known_taken(event, &ids(&["A-1"])).is_empty());
        // Or the whole view was forgotten.
        let asked = taken.epoch(event);
        taken.forget_all();
        taken.apply(event, &[held("A-1", 60)]);
        taken.confirmed(event, &ids(&["A-1"]), asked);
        assert!(taken.known_taken(event, &ids(&["A-1"])).is_empty());
        // Asked afresh, it is.
        taken.confirmed(event, &ids(&["A-1"]), taken.epoch(event));
        assert_eq!(taken.known_taken(event, &ids(&["A-1"])), ["A-1"]);
    }
}
