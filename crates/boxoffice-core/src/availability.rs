//! Seat status composed at read time: the event layout says what is on sale, Postgres says
//! what is sold and the hold store says what is held.
//!
//! Precedence is sold, then held, then on sale (`available`) or not (`not_for_sale`). The
//! hold store only ever reports live holds, judged by its own clock, so an expired hold
//! reads as available here without any reaper job.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A seat as one event sells it: the venue seat, plus its ticket type and price when it is
/// allocated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventSeat {
    /// Seat id, e.g. `stalls-C-12`.
    pub id: String,
    /// Human-readable label, e.g. `Stalls, Row C, Seat 12`.
    pub label: String,
    /// Section id.
    pub section: String,
    /// Row label.
    pub row: String,
    /// Seat number in its row.
    pub number: String,
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
    /// Ticket type code; `None` when the seat is held back.
    pub ticket_type: Option<String>,
    /// Price in minor units; `None` when the seat is held back.
    pub price_cents: Option<i64>,
    /// Category, wheelchair space, companion seat, restricted view, where set.
    #[serde(flatten)]
    pub attributes: crate::venue::SeatAttributes,
    /// The id an imported plan gave the seat (a pretix `seat_guid`), if it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

/// What a buyer can do with a seat right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatStatus {
    /// On sale and free.
    Available,
    /// Someone's live hold covers it.
    Held,
    /// Part of an order.
    Sold,
    /// Part of an order whose buyer offers it again: any buyer may hold and buy it.
    Resale,
    /// Not allocated to any ticket type for this event.
    NotForSale,
}

impl SeatStatus {
    /// The status as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            SeatStatus::Available => "available",
            SeatStatus::Held => "held",
            SeatStatus::Sold => "sold",
            SeatStatus::Resale => "resale",
            SeatStatus::NotForSale => "not_for_sale",
        }
    }
}

/// A live hold on one seat, as a hold store reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldSeat {
    /// The held seat.
    pub seat_id: String,
    /// When the hold lapses unless extended.
    pub held_until: DateTime<Utc>,
}

/// One seat's composed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatState {
    /// Status.
    pub status: SeatStatus,
    /// Expiry of the hold, for held seats.
    pub held_until: Option<DateTime<Utc>>,
}

/// How many seats of an event are in each status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatCounts {
    /// Seats on sale and free.
    pub available: u32,
    /// Seats under a live hold.
    pub held: u32,
    /// Seats sold.
    pub sold: u32,
    /// Seats held back.
    pub not_for_sale: u32,
    /// Seats sold and offered again by their buyers, free to hold. (Always sent; a
    /// client reads its absence, from a server older than resale, as none.)
    #[serde(default)]
    #[schema(required = true)]
    pub resale: u32,
}

impl SeatCounts {
    /// Counts the given states.
    pub fn of(states: &[SeatState]) -> Self {
        let mut counts = Self::default();
        for s in states {
            *match s.status {
                SeatStatus::Available => &mut counts.available,
                SeatStatus::Held => &mut counts.held,
                SeatStatus::Sold => &mut counts.sold,
                SeatStatus::NotForSale => &mut counts.not_for_sale,
                SeatStatus::Resale => &mut counts.resale,
            } += 1;
        }
        counts
    }
}

/// An event's seats in venue order, with a lookup by id.
#[derive(Clone, Debug, Default)]
pub struct SeatMap {
    seats: Vec<EventSeat>,
    by_id: HashMap<String, usize>,
}

impl SeatMap {
    /// Builds the map; `seats` must be in venue order.
    pub fn new(seats: Vec<EventSeat>) -> Self {
        let by_id = seats
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        Self { seats, by_id }
    }

    /// The seats in venue order.
    pub fn seats(&self) -> &[EventSeat] {
        &self.seats
    }

    /// The seat with this id.
    pub fn get(&self, seat_id: &str) -> Option<&EventSeat> {
        self.by_id.get(seat_id).map(|&i| &self.seats[i])
    }

    /// Where the seat with this id is in venue order.
    pub fn index_of(&self, seat_id: &str) -> Option<usize> {
        self.by_id.get(seat_id).copied()
    }

    /// Each seat's state, in venue order. Ids the map does not know are ignored.
    pub fn compose<'a>(
        &self,
        sold: impl IntoIterator<Item = &'a str>,
        listed: impl IntoIterator<Item = &'a str>,
        held: impl IntoIterator<Item = &'a HeldSeat>,
    ) -> Vec<SeatState> {
        let mut states: Vec<SeatState> = self
            .seats
            .iter()
            .map(|s| SeatState {
                status: if s.ticket_type.is_some() {
                    SeatStatus::Available
                } else {
                    SeatStatus::NotForSale
                },
                held_until: None,
            })
            .collect();
        // A seat listed for resale is free to hold: a hold on it reads held.
        for id in listed {
            if let Some(&i) = self.by_id.get(id) {
                states[i].status = SeatStatus::Resale;
            }
        }
        for h in held {
            if let Some(&i) = self.by_id.get(h.seat_id.as_str()) {
                states[i] = SeatState {
                    status: SeatStatus::Held,
                    held_until: Some(h.held_until),
                };
            }
        }
        // Sold wins over held: a seat in an order is sold whatever the hold store says.
        for id in sold {
            if let Some(&i) = self.by_id.get(id) {
                states[i] = SeatState {
                    status: SeatStatus::Sold,
                    held_until: None,
                };
            }
        }
        states
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(id: &str, allocated: bool) -> EventSeat {
        EventSeat {
            id: id.into(),
            label: id.into(),
            section: "s".into(),
            row: "A".into(),
            number: "1".into(),
            x: 0.0,
            y: 0.0,
            ticket_type: allocated.then(|| "standard".into()),
            price_cents: allocated.then_some(100),
            attributes: Default::default(),
            external_id: None,
        }
    }

    #[test]
    fn sold_beats_held_beats_allocation() {
        let map = SeatMap::new(vec![
            seat("a", true),
            seat("b", true),
            seat("c", true),
            seat("d", false),
        ]);
        let until = DateTime::from_timestamp(2_000_000_000, 0).unwrap();
        let held = [
            HeldSeat {
                seat_id: "b".into(),
                held_until: until,
            },
            HeldSeat {
                seat_id: "c".into(),
                held_until: until,
            },
            HeldSeat {
                seat_id: "zz".into(),
                held_until: until,
            },
        ];
        let states = map.compose(["c", "unknown"], [], &held);
        let statuses: Vec<_> = states.iter().map(|s| s.status).collect();
        assert_eq!(
            statuses,
            [
                SeatStatus::Available,
                SeatStatus::Held,
                SeatStatus::Sold,
                SeatStatus::NotForSale
            ]
        );
        assert_eq!(states[1].held_until, Some(until));
        assert_eq!(states[2].held_until, None);
        assert_eq!(
            SeatCounts::of(&states),
            SeatCounts {
                available: 1,
                held: 1,
                sold: 1,
                not_for_sale: 1,
                resale: 0,
            }
        );
    }
}
