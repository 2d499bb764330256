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

use boxoffice_core::availability::{EventSeat, SeatMap, SeatState};
use boxoffice_core::ids::EventId;
use boxoffice_core::venue::Shape;
use boxoffice_store::pg::events;
use boxoffice_store::pg::events::HoldPolicy;
use boxoffice_store::StoreError;
use lru::LruCache;
use sqlx::PgPool;

/// An event's seat map with each seat's static JSON pre-rendered, and the event's hold
/// settings (which never change, so they are cached with it).
pub struct RenderedSeatMap {
    /// The allocation version this map reflects.
    pub version: i64,
    /// The event's hold settings.
    pub policy: HoldPolicy,
    /// The seats.
    pub map: SeatMap,
    /// For each seat, its JSON object without the closing brace.
    fragments: Vec<Box<str>>,
    /// The venue's shapes as a JSON array.
    shapes: Box<str>,
}

impl RenderedSeatMap {
    /// Renders the static part of every seat, and the venue's shapes.
    pub fn new(version: i64, seats: Vec<EventSeat>, shapes: &[Shape], policy: HoldPolicy) -> Self {
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
            policy,
            map: SeatMap::new(seats),
            fragments,
            shapes: serde_json::to_string(shapes)
                .expect("shapes always serialize")
                .into_boxed_str(),
        }
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

/// Rendered seat maps of recently read events, least recently used evicted first.
pub struct SeatMapCache {
    maps: Mutex<LruCache<EventId, Arc<RenderedSeatMap>>>,
    /// One load at a time per event: when a sale opens, hundreds of requests miss the cache
    /// at once, and all but one should wait for that one load rather than repeat it.
    loading: Mutex<HashMap<EventId, Arc<tokio::sync::Mutex<()>>>>,
}

impl SeatMapCache {
    /// A cache of at most `capacity` events.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            maps: Mutex::new(LruCache::new(capacity)),
            loading: Mutex::new(HashMap::new()),
        }
    }

    /// The event's seat map at `version` or newer, loading and rendering it on a miss;
    /// `None` if there is no such event.
    pub async fn get(
        &self,
        pool: &PgPool,
        event: EventId,
        version: i64,
    ) -> Result<Option<Arc<RenderedSeatMap>>, StoreError> {
        if let Some(map) = self.cached(event, version) {
            return Ok(Some(map));
        }
        let gate = self
            .loading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(event)
            .or_default()
            .clone();
        let _turn = gate.lock().await;
        // Whoever held the gate before us may have loaded what we need.
        if let Some(map) = self.cached(event, version) {
            return Ok(Some(map));
        }
        let (Some((loaded, seats)), Some(policy), Some(shapes)) = tokio::try_join!(
            events::seat_map(pool, event),
            events::hold_policy(pool, event),
            events::shapes(pool, event)
        )?
        else {
            return Ok(None);
        };
        // Rendering a large venue takes tens of milliseconds: keep it off the async workers.
        let map = tokio::task::spawn_blocking(move || {
            Arc::new(RenderedSeatMap::new(loaded, seats, &shapes, policy))
        })
        .await
        .map_err(|e| StoreError::Other(Box::new(e)))?;
        let mut maps = self.lock();
        // Two readers may load concurrently; keep whichever is newer.
        if maps.peek(&event).is_none_or(|m| m.version <= map.version) {
            maps.put(event, map.clone());
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
        if let Some(map) = self.lock().get(&event) {
            return Ok(Some(map.clone()));
        }
        self.get(pool, event, 0).await
    }

    /// The event's hold settings (which never change): from a cached seat map if there is
    /// one, else from the event's row alone, without rendering a map; `None` if there is
    /// no such event.
    pub async fn policy(
        &self,
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<HoldPolicy>, StoreError> {
        if let Some(map) = self.lock().get(&event) {
            return Ok(Some(map.policy.clone()));
        }
        events::hold_policy(pool, event).await
    }

    fn cached(&self, event: EventId, version: i64) -> Option<Arc<RenderedSeatMap>> {
        self.lock()
            .get(&event)
            .filter(|m| m.version >= version)
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<EventId, Arc<RenderedSeatMap>>> {
        // The cache holds no invariant a panicking holder could break.
        self.maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boxoffice_core::availability::SeatStatus;
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
