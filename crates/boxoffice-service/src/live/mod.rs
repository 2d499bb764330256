//! Live updates: what changed in an event, delivered to every stream subscribed to it on
//! every server instance. (Just over 500 lines: the changes and how each becomes a bus
//! message sit beside the publisher that sends them; the bus's listener is `bus.rs`, the
//! view of seats known taken `taken.rs`.)
//!
//! A change is published where it happens (the service that made it, once its store has
//! committed it) onto a bus every instance listens to: Postgres `NOTIFY` on one channel,
//! whichever hold store is in use ([`bus`]). Each instance has one listener, and one
//! broadcast channel per event with subscribers (the [`Hub`]): a change costs one message
//! per instance and one queue slot per event, never a task or a query per subscriber.
//!
//! A change goes round the bus even to the instance that made it, so every instance
//! delivers the changes of all instances in one order, the order Postgres received them.
//! [`Live::publish`] waits (briefly) until its change is on the bus before the service
//! answers: a buyer who acts on an answer (releases the seats just held, say) can then
//! never have their second change overtake the first on its way to other pages.
//!
//! When a listener may have missed messages (its connection dropped) or the event's
//! allocations changed, subscribers are sent a fresh snapshot instead of a delta. A
//! subscriber that falls too far behind starts again from a snapshot.
//!
//! Snapshots are shared: the hub keeps, per event, the latest snapshot composed on this
//! instance and the frames sent since ([`RECENT`] at most). A stream that opens (or starts
//! again) takes that snapshot and those frames rather than composing one of its own, so a
//! thousand streams opening on a large event cost one snapshot in memory and one read of
//! the stores, not a thousand. (Replaying the frames since is exact: each frame carries the
//! seats' states, not a difference, and they come in bus order.)

mod bus;
mod taken;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use boxoffice_api::{GaChanged, SeatChange};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::availability::SeatsSnapshot;

pub use bus::run;
pub use taken::{answered, Answer, Ask, Asking, Epoch, Taken};

/// Frames queued per event before a slow subscriber is told to take a fresh snapshot.
const FRAMES_PER_EVENT: usize = 1024;
/// Frames kept per event to bring a shared snapshot up to date; past them, a stream that
/// opens composes a snapshot (shared from then on).
const RECENT: usize = FRAMES_PER_EVENT;
/// Changes waiting for the bus before new ones are dropped (and counted).
const PUBLISH_QUEUE: usize = 65_536;
/// How long a service waits for its change to reach the bus before answering anyway.
const PUBLISH_WAIT: Duration = Duration::from_millis(250);
/// Longest NOTIFY payload sent; Postgres refuses more than 8000 bytes.
const MAX_PAYLOAD: usize = 7_500;

/// What a subscriber of an event receives.
#[derive(Clone)]
pub enum Frame {
    /// Seats whose status changed: the `SeatsChanged` JSON, rendered once for every
    /// subscriber.
    Seats(Arc<str>),
    /// Seats allocated to sales channels whose status changed (the `SeatsChanged` JSON):
    /// for the streams of those channels' buyers, each keeping its own channel's; every
    /// other stream skips it (to them those seats are not on sale, whatever happens).
    Channel(Arc<str>),
    /// Places left in a general-admission area: the `GaChanged` JSON, rendered once.
    Ga(Arc<str>),
    /// The event's seats now (its allocations changed), in whichever form each subscriber
    /// asked for, each form rendered once.
    Snapshot(Arc<SeatsSnapshot>),
    /// The subscriber may have missed changes: it takes a fresh snapshot.
    Resync,
}

/// A change to publish.
#[derive(Clone, Debug)]
pub enum Change {
    /// Seats whose status changed.
    Seats(Vec<SeatChange>),
    /// Places left in a general-admission area.
    Ga(GaChanged),
    /// The event's allocations changed: every subscriber takes a fresh snapshot.
    Layout,
    /// The event's waiting-room settings changed: every instance reads them again.
    Queue,
    /// A buyer gave up this waiting-room ticket: every instance refuses it from now on.
    GaveUp(uuid::Uuid),
}

impl Change {
    /// These seats now held until `until`.
    pub fn held<'a>(seats: impl IntoIterator<Item = &'a str>, until: DateTime<Utc>) -> Self {
        Self::seats(seats, SeatStatus::Held, Some(until))
    }

    /// These seats now in `status` (never held).
    pub fn now<'a>(seats: impl IntoIterator<Item = &'a str>, status: SeatStatus) -> Self {
        Self::seats(seats, status, None)
    }

    fn seats<'a>(
        seats: impl IntoIterator<Item = &'a str>,
        status: SeatStatus,
        held_until: Option<DateTime<Utc>>,
    ) -> Self {
        Change::Seats(
            seats
                .into_iter()
                .map(|id| SeatChange {
                    id: id.to_owned(),
                    status,
                    held_until,
                })
                .collect(),
        )
    }

    /// The bus messages for this change, `<event> <kind> <data>`, each short enough for
    /// `NOTIFY` (seats are split across messages as needed).
    fn messages(&self, event: EventId) -> Vec<String> {
        let head = |kind: &str| format!("{event} {kind} ");
        match self {
            Change::Seats(seats) => {
                // Each seat rendered once; chunks are joined into `{"seats":[...]}`.
                let rendered = seats
                    .iter()
                    .map(|seat| serde_json::to_string(seat).expect("a seat change serializes"));
                let mut messages = Vec::new();
                let mut chunk: Vec<String> = Vec::new();
                let mut size = 0;
                for seat in rendered {
                    if size + seat.len() + 1 > MAX_PAYLOAD && !chunk.is_empty() {
                        messages.push(seats_message(&head("seats"), &chunk));
                        chunk.clear();
                        size = 0;
                    }
                    size += seat.len() + 1;
                    chunk.push(seat);
                }
                if !chunk.is_empty() {
                    messages.push(seats_message(&head("seats"), &chunk));
                }
                messages
            }
            Change::Ga(ga) => vec![head("ga") + &serde_json::to_string(ga).unwrap_or_default()],
            Change::Layout => vec![head("layout") + "{}"],
            Change::Queue => vec![head("queue") + "{}"],
            Change::GaveUp(ticket) => {
                vec![head("gaveup") + &format!("{{\"ticket\":\"{ticket}\"}}")]
            }
        }
    }
}

fn seats_message(head: &str, seats: &[String]) -> String {
    format!("{head}{{\"seats\":[{}]}}", seats.join(","))
}

/// A message on its way to the bus, and who waits for it to get there.
struct Outgoing {
    payload: String,
    sent: Option<oneshot::Sender<()>>,
}

/// How often a quiet stream sends a comment line, unless told otherwise, in milliseconds.
pub const DEFAULT_HEARTBEAT_MS: u64 = 15_000;
/// How long this instance refuses a seat the hold store called taken, unless told
/// otherwise, in milliseconds ([`Taken`]).
pub const DEFAULT_KNOWN_TAKEN_MS: u64 = 2_000;

/// This instance's side of live updates: the subscribers per event and the way out to
/// the bus. Cheap to share (it lives in the [`crate::Services`]).
pub struct Live {
    hub: Arc<Hub>,
    /// Seats known taken, kept by the changes published here and those on the bus.
    taken: Taken,
    outgoing: mpsc::Sender<Outgoing>,
    /// Taken by [`run`], which owns the receiving end.
    queue: Mutex<Option<mpsc::Receiver<Outgoing>>>,
    closing: watch::Sender<bool>,
    /// True while this instance's listener is listening (and its subscribers are in step).
    listening: watch::Sender<bool>,
    /// Changes that never reached the bus.
    dropped: AtomicU64,
    /// How often a quiet stream sends a comment line.
    heartbeat: Duration,
}

impl Live {
    /// Live updates for one instance, whose streams send a comment line when quiet for
    /// `heartbeat`, and whose view of the seats taken trusts the store's word for
    /// `known_taken`; nothing moves until [`run`] starts its tasks.
    pub fn new(heartbeat: Duration, known_taken: Duration) -> Self {
        let (outgoing, queue) = mpsc::channel(PUBLISH_QUEUE);
        Self {
            hub: Arc::new(Hub::default()),
            taken: Taken::new(known_taken),
            outgoing,
            queue: Mutex::new(Some(queue)),
            closing: watch::channel(false).0,
            listening: watch::channel(false).0,
            dropped: AtomicU64::new(0),
            heartbeat,
        }
    }

    /// Publishes `change` of `event` to every instance, and waits until it is on the bus
    /// (at most a quarter of a second: the change itself has been made either way).
    /// The change counts in this instance's [`Taken`] view at once, before it is even on
    /// the bus, so that a buyer answered after it is never refused by an older view.
    pub async fn publish(&self, event: EventId, change: Change) {
        self.apply_here(event, &change);
        let mut waits = Vec::new();
        for payload in change.messages(event) {
            let (sent, done) = oneshot::channel();
            let outgoing = Outgoing {
                payload,
                sent: Some(sent),
            };
            if self.outgoing.try_send(outgoing).is_ok() {
                waits.push(done);
            } else {
                self.dropped(1);
                tracing::warn!(%event, "live update queue full: change dropped");
            }
        }
        let _ = tokio::time::timeout(PUBLISH_WAIT, futures::future::join_all(waits)).await;
    }

    /// Counts `change` in this instance's [`Taken`] view now, ahead of [`Live::publish`]
    /// (which counts it again, to no further effect): for a flow that made several changes
    /// and publishes them one after another, so that no buyer answered after the changes
    /// were made is refused by the view while an earlier one waits for the bus.
    pub fn apply_here(&self, event: EventId, change: &Change) {
        match change {
            Change::Seats(seats) => self.taken.apply(event, seats),
            Change::Layout => self.taken.forget(event),
            _ => {}
        }
    }

    /// Seats this instance knows to be taken.
    pub fn taken(&self) -> &Taken {
        &self.taken
    }

    /// Subscribes to `event`'s changes from now on; with the event's latest snapshot on
    /// this instance and the frames sent since, if they can be had.
    pub fn subscribe(&self, event: EventId) -> (Subscription, Option<Shared>) {
        let (frames, from, shared) = self.hub.subscribe(event);
        let subscription = Subscription {
            frames,
            closing: self.closing.subscribe(),
            from,
            event,
            hub: self.hub.clone(),
        };
        (subscription, shared)
    }

    /// Offers `snapshot`, composed after `subscription` began, to the streams that open
    /// after it.
    pub fn share(&self, subscription: &Subscription, snapshot: &Arc<SeatsSnapshot>) {
        if !snapshot.holds_unknown() {
            self.hub
                .share(subscription.event, subscription.from, snapshot);
        }
    }

    /// Waits until this instance listens to the bus: changes published from then on reach
    /// its subscribers. (Subscribers from before are sent a snapshot once it does.)
    pub async fn listening(&self) {
        let mut listening = self.listening.subscribe();
        let _ = listening.wait_for(|l| *l).await;
    }

    /// Ends every stream (the server is shutting down).
    pub fn close(&self) {
        let _ = self.closing.send(true);
    }

    /// Counts changes that never reached the bus.
    fn dropped(&self, n: usize) {
        self.dropped.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Changes that never reached the bus (queue full, or Postgres refused them).
    pub fn dropped_total(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// How often a quiet stream sends a comment line.
    pub fn heartbeat(&self) -> Duration {
        self.heartbeat
    }

    /// Streams open now, across all events.
    pub fn subscribers(&self) -> usize {
        self.hub.subscribers()
    }
}

/// A snapshot composed earlier on this instance, and the frames sent since: together,
/// the event's seats as of the subscription.
pub struct Shared {
    /// The snapshot.
    pub snapshot: Arc<SeatsSnapshot>,
    /// The frames sent after it, oldest first.
    pub since: Vec<Frame>,
}

/// One stream's subscription; dropping it unsubscribes.
pub struct Subscription {
    /// Frames for this event, in bus order.
    pub frames: broadcast::Receiver<Frame>,
    /// Turns true when the server shuts down.
    pub closing: watch::Receiver<bool>,
    /// Frames sent to the event's subscribers before this one began.
    from: u64,
    event: EventId,
    hub: Arc<Hub>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.unsubscribed(self.event);
    }
}

/// One broadcast channel per event with subscribers on this instance.
#[derive(Default)]
struct Hub {
    events: Mutex<HashMap<EventId, Channel>>,
}

/// One event's subscribers, and what a new one can start from.
struct Channel {
    sender: broadcast::Sender<Frame>,
    /// Frames sent so far.
    sent: u64,
    /// The latest frames ([`RECENT`] at most), oldest first, by number (1-based).
    recent: VecDeque<(u64, Frame)>,
    /// The latest snapshot composed here, and the frames sent before its composer
    /// subscribed (it may or may not show the frames after; replaying them is exact).
    snapshot: Option<(u64, Arc<SeatsSnapshot>)>,
    /// No snapshot from a subscription older than this frame is shared (a `Resync` said
    /// frames may have been missed before it).
    trusted_from: u64,
}

impl Channel {
    fn new() -> Self {
        Self {
            sender: broadcast::channel(FRAMES_PER_EVENT).0,
            sent: 0,
            recent: VecDeque::new(),
            snapshot: None,
            trusted_from: 0,
        }
    }

    /// The shared snapshot and every frame after it, if the frames kept reach back to it.
    fn shared(&self) -> Option<Shared> {
        let (from, snapshot) = self.snapshot.as_ref()?;
        let first_missing = from + 1;
        if *from < self.sent && self.recent.front().is_none_or(|(n, _)| *n > first_missing) {
            return None;
        }
        Some(Shared {
            snapshot: snapshot.clone(),
            since: self
                .recent
                .iter()
                .filter(|(n, _)| *n > *from)
                .map(|(_, frame)| frame.clone())
                .collect(),
        })
    }
}

impl Hub {
    fn subscribe(&self, event: EventId) -> (broadcast::Receiver<Frame>, u64, Option<Shared>) {
        let mut events = self.events.lock().expect("hub lock");
        let channel = events.entry(event).or_insert_with(Channel::new);
        (channel.sender.subscribe(), channel.sent, channel.shared())
    }

    /// Keeps `snapshot`, composed after `from` frames were sent, for streams that open
    /// later, unless a later one is kept already.
    fn share(&self, event: EventId, from: u64, snapshot: &Arc<SeatsSnapshot>) {
        let mut events = self.events.lock().expect("hub lock");
        let Some(channel) = events.get_mut(&event) else {
            return;
        };
        if from >= channel.trusted_from && channel.snapshot.as_ref().is_none_or(|(f, _)| *f < from)
        {
            channel.snapshot = Some((from, snapshot.clone()));
        }
    }

    /// Forgets an event's channel once its last subscriber has gone.
    fn unsubscribed(&self, event: EventId) {
        let mut events = self.events.lock().expect("hub lock");
        // The dropping receiver still counts while its `Drop` runs.
        if events
            .get(&event)
            .is_some_and(|c| c.sender.receiver_count() <= 1)
        {
            events.remove(&event);
        }
    }

    /// Sends `frame` to `event`'s subscribers on this instance, if it has any.
    fn send(&self, event: EventId, frame: Frame) {
        let mut events = self.events.lock().expect("hub lock");
        let Some(channel) = events.get_mut(&event) else {
            return;
        };
        channel.sent += 1;
        let n = channel.sent;
        match &frame {
            // Everything before is replaced: the snapshot is the one to share.
            Frame::Snapshot(snapshot) => {
                channel.recent.clear();
                channel.snapshot = Some((n, snapshot.clone()));
            }
            // Frames may have been missed: nothing kept can be trusted.
            Frame::Resync => {
                channel.recent.clear();
                channel.snapshot = None;
                channel.trusted_from = n;
            }
            _ => {
                if channel.recent.len() == RECENT {
                    channel.recent.pop_front();
                }
                channel.recent.push_back((n, frame.clone()));
            }
        }
        let _ = channel.sender.send(frame);
    }

    /// Whether `event` has subscribers on this instance.
    fn has(&self, event: EventId) -> bool {
        self.events.lock().expect("hub lock").contains_key(&event)
    }

    /// Events with subscribers on this instance.
    fn events(&self) -> Vec<EventId> {
        self.events
            .lock()
            .expect("hub lock")
            .keys()
            .copied()
            .collect()
    }

    fn subscribers(&self) -> usize {
        self.events
            .lock()
            .expect("hub lock")
            .values()
            .map(|c| c.sender.receiver_count())
            .sum()
    }
}

/// Of a change to seats (a `seats` frame's data), those a reader in a sales channel sees:
/// the ones `view`, that channel's view of the seat map, does not place elsewhere (in
/// another channel). As a `seats` event's data; `None` if none is left.
pub fn seen_by_channel(view: &crate::seat_map::RenderedSeatMap, data: &str) -> Option<String> {
    let changed: boxoffice_api::SeatsChanged = serde_json::from_str(data).ok()?;
    let seats: Vec<_> = changed
        .seats
        .into_iter()
        .filter(|seat| !view.is_elsewhere(&seat.id))
        .collect();
    (!seats.is_empty()).then(|| {
        serde_json::to_string(&boxoffice_api::SeatsChanged { seats }).expect("seats serialize")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use boxoffice_api::SeatsChanged;

    #[test]
    fn a_large_change_is_split_into_messages_notify_accepts() {
        let event = EventId::new();
        let seats: Vec<SeatChange> = (0..500)
            .map(|i| SeatChange {
                id: format!("stalls-{i:0>16}-{i:0>16}"),
                status: SeatStatus::Held,
                held_until: Some(chrono::Utc::now()),
            })
            .collect();
        let messages = Change::Seats(seats.clone()).messages(event);
        assert!(messages.len() > 1);
        let mut back = Vec::new();
        for m in &messages {
            assert!(m.len() < 8000, "{} bytes", m.len());
            let (e, rest) = m.split_once(' ').unwrap();
            let (kind, data) = rest.split_once(' ').unwrap();
            assert_eq!((e, kind), (event.to_string().as_str(), "seats"));
            back.extend(serde_json::from_str::<SeatsChanged>(data).unwrap().seats);
        }
        assert_eq!(back, seats);
    }
}
