//! Event seat maps, cached per server and rendered to JSON fast enough for a 100,000-seat
//! venue.
//!
//! A seat's id, label, position, ticket type and price change only when the event's
//! allocations change, and every such change bumps the event's `layout_version` in the same
//! transaction. So each server keeps the static part of every seat pre-rendered as a JSON
//! fragment, checks the version on every read (it comes back with the sold seats in one
//! statement), and only appends each seat's status per request. A change made through any
//! server instance is seen by all of them on their next read.

pub use boxoffice_api::SeatView;
use std::collections::HashMap;
use std::io::Write;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use boxoffice_api::SeatStatuses;
use bytes::Bytes;

use boxoffice_core::availability::{EventSeat, HeldSeat, SeatMap, SeatState, SeatStatus};
use boxoffice_core::ids::EventId;
use boxoffice_core::venue::Shape;
use boxoffice_store::pg::events;
use boxoffice_store::pg::events::HoldPolicy;
use boxoffice_store::StoreError;
use lru::LruCache;
use sqlx::PgPool;

/// An event's seat map as the buyers of one sales channel (or of none) see it, with each
/// seat's static JSON pre-rendered, and the event's hold settings (which never change, so
/// they are cached with it). A seat allocated to another channel reads as not on sale.
pub struct RenderedSeatMap {
    /// The allocation version this map reflects.
    pub version: i64,
    /// The channel whose view this is (`None`: buyers in no channel).
    pub channel: Option<Box<str>>,
    /// Where the seats allocated to other channels are in the map, ascending.
    elsewhere: Box<[usize]>,
    /// The event's hold settings.
    pub policy: HoldPolicy,
    /// The seats.
    pub map: SeatMap,
    /// For each seat, its JSON object without the closing brace.
    fragments: Vec<Box<str>>,
    /// The venue's shapes as a JSON array.
    shapes: Box<str>,
    /// The venue's focal point: among equal choices, best available takes the seats
    /// nearest it.
    pub focal: Option<boxoffice_core::venue::Point>,
}

impl RenderedSeatMap {
    /// Renders the static part of every seat, and the venue's shapes: the view of buyers
    /// in no channel, with no seat in a channel.
    pub fn new(version: i64, seats: Vec<EventSeat>, shapes: &[Shape], policy: HoldPolicy) -> Self {
        Self::of_channel(None, version, seats, Vec::new(), shapes, policy)
    }

    /// [`RenderedSeatMap::new`] for the view of `channel`, in which the seats at
    /// `elsewhere` (ascending) are allocated to other channels.
    pub fn of_channel(
        channel: Option<&str>,
        version: i64,
        seats: Vec<EventSeat>,
        elsewhere: Vec<usize>,
        shapes: &[Shape],
        policy: HoldPolicy,
    ) -> Self {
        let fragments = seats
            .iter()
            .map(|seat| {
                let mut json = serde_json::to_string(seat).expect("a seat always serializes");
                json.pop(); // the closing brace: a status may follow
                json.into_boxed_str()
            })
            .collect();
        Self {
            version,
            channel: channel.map(Box::from),
            elsewhere: elsewhere.into_boxed_slice(),
            policy,
            map: SeatMap::new(seats),
            fragments,
            shapes: serde_json::to_string(shapes)
                .expect("shapes always serialize")
                .into_boxed_str(),
            focal: None,
        }
    }

    /// Whether the seat is allocated to a channel other than this view's (it reads as not
    /// on sale here, and changes to it are not this view's to see).
    pub fn is_elsewhere(&self, seat: &str) -> bool {
        !self.elsewhere.is_empty()
            && self
                .map
                .index_of(seat)
                .is_some_and(|i| self.elsewhere.binary_search(&i).is_ok())
    }

    /// Each seat's state in this view, in venue order, from the seats sold, listed for
    /// resale and held: a seat
    /// allocated to another channel is `not_for_sale` whatever becomes of it (to this
    /// view's readers nothing about it shows).
    pub fn compose<'a>(
        &self,
        sold: impl IntoIterator<Item = &'a str>,
        listed: impl IntoIterator<Item = &'a str>,
        held: impl IntoIterator<Item = &'a HeldSeat>,
    ) -> Vec<SeatState> {
        let mut states = self.map.compose(sold, listed, held);
        for &i in self.elsewhere.iter() {
            states[i] = SeatState {
                status: SeatStatus::NotForSale,
                held_until: None,
            };
        }
        states
    }

    /// Whether some seat is allocated to a channel other than this view's.
    pub fn hides_seats(&self) -> bool {
        !self.elsewhere.is_empty()
    }

    /// The body of `GET /v1/events/{id}/layout`: every seat without its status. Rendered
    /// on each call (tens of milliseconds for 100,000 seats): clients that take it
    /// compressed are answered from the server's compressed copy, and keeping the
    /// rendered text too would double what a large venue costs the cache.
    pub fn layout(&self, event: EventId) -> Bytes {
        let static_len: usize = self.fragments.iter().map(|f| f.len() + 2).sum();
        let mut out = Vec::with_capacity(static_len + 96);
        write!(
            out,
            r#"{{"event_id":"{event}","version":{},"seats":["#,
            self.version
        )
        .expect("writing to memory cannot fail");
        for (i, fragment) in self.fragments.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(fragment.as_bytes());
            out.push(b'}');
        }
        self.close(&mut out);
        Bytes::from(out)
    }

    /// Every seat's status (one state per seat, in order) as the stream's `statuses` event
    /// carries it.
    pub fn render_statuses(&self, event: EventId, states: &[SeatState]) -> String {
        serde_json::to_string(&SeatStatuses::of(event, self.version, states))
            .expect("statuses always serialize")
    }

    /// The body of `GET /v1/events/{id}/seats` for these states (one per seat, in order).
    pub fn render_seats(&self, event: EventId, states: &[SeatState]) -> Vec<u8> {
        let static_len: usize = self.fragments.iter().map(|f| f.len()).sum();
        let mut out = Vec::with_capacity(static_len + states.len() * 60 + 64);
        out.extend_from_slice(br#"{"event_id":""#);
        out.extend_from_slice(event.to_string().as_bytes());
        out.extend_from_slice(br#"","seats":["#);
        for (i, (fragment, state)) in self.fragments.iter().zip(states).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(fragment.as_bytes());
            out.extend_from_slice(br#","status":""#);
            out.extend_from_slice(state.status.as_str().as_bytes());
            out.push(b'"');
            if let Some(until) = state.held_until {
                out.extend_from_slice(br#","held_until":"#);
                serde_json::to_writer(&mut out, &until).expect("a timestamp always serializes");
            }
            out.push(b'}');
        }
        self.close(&mut out);
        out
    }

    /// Ends a body's seat list, and adds the shapes beside it.
    fn close(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"],"shapes":"#);
        out.extend_from_slice(self.shapes.as_bytes());
        out.push(b'}');
    }
}

/// A seat map's place in the cache: the event, and the channel whose view it is.
pub type ViewKey = (EventId, Option<Box<str>>);

/// Rendered seat maps of recently read events (each channel's view apart), least recently
/// used evicted first.
pub struct SeatMapCache {
    maps: Mutex<LruCache<ViewKey, Arc<RenderedSeatMap>>>,
    /// One load at a time per view: when a sale opens, hundreds of requests miss the cache
    /// at once, and all but one should wait for that one load rather than repeat it.
    loading: Mutex<HashMap<ViewKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Hold settings read without a map, for events whose map is not cached.
    policies: Mutex<LruCache<EventId, HoldPolicy>>,
    /// One read of settings at a time, for the same reason as `loading`.
    reading_policy: tokio::sync::Mutex<()>,
}

impl SeatMapCache {
    /// A cache of at most `capacity` events.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            maps: Mutex::new(LruCache::new(capacity)),
            loading: Mutex::new(HashMap::new()),
            policies: Mutex::new(LruCache::new(capacity)),
            reading_policy: tokio::sync::Mutex::const_new(()),
        }
    }

    /// The event's seat map at `version` or newer, as buyers in no channel see it, loading
    /// and rendering it on a miss; `None` if there is no such event.
    pub async fn get(
        &self,
        pool: &PgPool,
        event: EventId,
        version: i64,
    ) -> Result<Option<Arc<RenderedSeatMap>>, StoreError> {
        self.get_in(pool, event, None, version).await
    }

    /// [`SeatMapCache::get`] as the buyers of `channel` see it. The caller names only a
    /// channel of the event (any other would be a view of its own that equals the public
    /// one).
    pub async fn get_in(
        &self,
        pool: &PgPool,
        event: EventId,
        channel: Option<&str>,
        version: i64,
    ) -> Result<Option<Arc<RenderedSeatMap>>, StoreError> {
        let key: ViewKey = (event, channel.map(Box::from));
        if let Some(map) = self.cached(&key, version) {
            return Ok(Some(map));
        }
        let gate = self
            .loading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let _turn = gate.lock().await;
        // Whoever held the gate before us may have loaded what we need.
        if let Some(map) = self.cached(&key, version) {
            return Ok(Some(map));
        }
        let (Some(read), Some(policy), Some((shapes, focal))) = tokio::try_join!(
            events::seat_map(pool, event, channel),
            events::hold_policy(pool, event),
            events::shapes(pool, event)
        )?
        else {
            return Ok(None);
        };
        let channel = key.1.clone();
        // Rendering a large venue takes tens of milliseconds: keep it off the async workers.
        let map = tokio::task::spawn_blocking(move || {
            let mut map = RenderedSeatMap::of_channel(
                channel.as_deref(),
                read.version,
                read.seats,
                read.elsewhere,
                &shapes,
                policy,
            );
            map.focal = focal;
            Arc::new(map)
        })
        .await
        .map_err(|e| StoreError::Other(Box::new(e)))?;
        let mut maps = self.lock();
        // Two readers may load concurrently; keep whichever is newer.
        if maps.peek(&key).is_none_or(|m| m.version <= map.version) {
            maps.put(key, map.clone());
        }
        Ok(Some(map))
    }

    /// The event's seat map at any version, for what never changes (ids, labels, places);
    /// loaded only if no version is cached.
    pub async fn get_any(
        &self,
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<Arc<RenderedSeatMap>>, StoreError> {
        self.get_any_in(pool, event, None).await
    }

    /// [`SeatMapCache::get_any`] as the buyers of `channel` see it.
    pub async fn get_any_in(
        &self,
        pool: &PgPool,
        event: EventId,
        channel: Option<&str>,
    ) -> Result<Option<Arc<RenderedSeatMap>>, StoreError> {
        let key: ViewKey = (event, channel.map(Box::from));
        if let Some(map) = self.lock().get(&key) {
            return Ok(Some(map.clone()));
        }
        self.get_in(pool, event, channel, 0).await
    }

    /// The public view of the event's seat map if one is cached, at whatever version.
    pub fn peek(&self, event: EventId) -> Option<Arc<RenderedSeatMap>> {
        self.lock().peek(&(event, None)).cloned()
    }

    /// The event's hold settings (which never change): from a cached seat map if there is
    /// one, else from the event's row alone, without rendering a map; `None` if there is
    /// no such event. Settings read alone are kept too, and read by one request at a time:
    /// when a sale opens, thousands of buyers ask at once before any map is cached, and
    /// each waiting for a connection of its own would hold up even those the server then
    /// refuses at once.
    pub async fn policy(
        &self,
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<HoldPolicy>, StoreError> {
        if let Some(policy) = self.known_policy(event) {
            return Ok(Some(policy));
        }
        let _turn = self.reading_policy.lock().await;
        if let Some(policy) = self.known_policy(event) {
            return Ok(Some(policy));
        }
        let policy = events::hold_policy(pool, event).await?;
        if let Some(policy) = &policy {
            self.lock_policies().put(event, policy.clone());
        }
        Ok(policy)
    }

    fn known_policy(&self, event: EventId) -> Option<HoldPolicy> {
        if let Some(map) = self.lock().get(&(event, None)) {
            return Some(map.policy.clone());
        }
        self.lock_policies().get(&event).cloned()
    }

    fn lock_policies(&self) -> std::sync::MutexGuard<'_, LruCache<EventId, HoldPolicy>> {
        // The cache holds no invariant a panicking holder could break.
        self.policies
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn cached(&self, key: &ViewKey, version: i64) -> Option<Arc<RenderedSeatMap>> {
        self.lock()
            .get(key)
            .filter(|m| m.version >= version)
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<ViewKey, Arc<RenderedSeatMap>>> {
        // The cache holds no invariant a panicking holder could break.
        self.maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn seat(id: &str, on_sale: bool) -> EventSeat {
        EventSeat {
            id: id.into(),
            label: format!("Stalls, Row \"A\", Seat {id}"),
            section: "stalls".into(),
            row: "A".into(),
            number: "1".into(),
            x: 1.5,
            y: -2.0,
            ticket_type: on_sale.then(|| "standard".into()),
            price_cents: on_sale.then_some(4500),
            attributes: Default::default(),
            external_id: None,
        }
    }

    #[test]
    fn seats_layout_and_statuses_match_the_documented_shapes() {
        let mut seats = vec![seat("a", true), seat("b", true), seat("c", false)];
        seats[0].attributes.category = Some("Front \"stalls\"".into());
        seats[1].attributes.accessible = true;
        let shapes: Vec<Shape> = serde_json::from_value(serde_json::json!([
            {"kind": "stage", "text": "STAGE", "rect": {"x": 0.0, "y": -3.0, "w": 4.0, "h": 1.0}}
        ]))
        .unwrap();
        let until = DateTime::from_timestamp(2_000_000_000, 123_000_000).unwrap();
        let policy = HoldPolicy {
            starts_at: until,
            hold_ttl_seconds: 120,
            max_hold_seconds: 900,
            max_seats_per_user: 8,
            payment_window_seconds: 0,
            currency: Some("EUR".into()),
            section_order: vec!["stalls".into()],
            ticket_types: vec!["standard".into()],
            channels: Vec::new(),
        };
        let rendered = RenderedSeatMap::new(3, seats.clone(), &shapes, policy);
        let states = [
            SeatState {
                status: SeatStatus::Available,
                held_until: None,
            },
            SeatState {
                status: SeatStatus::Held,
                held_until: Some(until),
            },
            SeatState {
                status: SeatStatus::NotForSale,
                held_until: None,
            },
        ];
        let event = EventId::new();
        let layout: boxoffice_api::LayoutView =
            serde_json::from_slice(&rendered.layout(event)).unwrap();
        assert_eq!((layout.event_id, layout.version), (event, 3));
        assert_eq!(layout.seats, seats);
        assert_eq!(layout.shapes, shapes);
        let statuses: SeatStatuses =
            serde_json::from_str(&rendered.render_statuses(event, &states)).unwrap();
        assert_eq!((statuses.event_id, statuses.version), (event, 3));
        let read = statuses.states().unwrap();
        let status_of = |s: &SeatState| s.status;
        assert!(read.iter().map(status_of).eq(states.iter().map(status_of)));
        assert_eq!(
            read[1].held_until,
            DateTime::from_timestamp(2_000_000_001, 0),
            "expiries to the second, rounded up"
        );
        let body: serde_json::Value =
            serde_json::from_slice(&rendered.render_seats(event, &states)).unwrap();
        let expected = serde_json::json!({
            "event_id": event,
            "seats": seats.into_iter().zip(states).map(|(seat, s)| SeatView {
                seat, status: s.status, held_until: s.held_until,
            }).collect::<Vec<_>>(),
            "shapes": shapes,
        });
        assert_eq!(body, expected);
    }
}
