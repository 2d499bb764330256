//! Seasons: events of one venue sold together, the same seat for every event of a series,
//! bought once. A season has its own ticket types (each price is per seat for the whole
//! series) and its own allocations, which decide which seats the season sells and change
//! nothing in its events; and named partial seasons, each over some of its events, whose
//! prices replace the season's for that partial.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::event::{
    check_ticket_types, resolve_allocations, Allocation, AllocationEntry, Prices, TicketType,
    MAX_PRICE_CENTS,
};
use crate::ids::{EventId, SeasonId, VenueId};
use crate::validation::ValidationErrors;
use crate::venue::VenueLayout;

/// Most events in one season.
pub const MAX_SEASON_EVENTS: usize = 100;

/// Most partial seasons in one season.
pub const MAX_PARTIALS: usize = 50;

/// `POST /v1/seasons`: a season as a client describes it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeasonSpec {
    /// The organization it belongs to: for a platform key, the `default` one when absent;
    /// a key of an organization creates in its own (naming another answers 404).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<crate::ids::OrganizationId>,
    /// Display name, 1–200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// The events sold together, all of one venue, each in no other season (1–100).
    pub event_ids: Vec<EventId>,
    /// Ticket types the allocations refer to; each price is per seat for the whole series.
    #[serde(default)]
    pub ticket_types: Vec<TicketType>,
    /// Which seats the season sells at which ticket type, as an event's allocations (no
    /// channels); later entries override earlier ones.
    #[serde(default)]
    pub allocations: Vec<AllocationEntry>,
    /// Partial seasons: some of the events, at their own prices.
    #[serde(default)]
    pub partials: Vec<PartialSeason>,
}

/// A partial season: a named subset of the season's events, sold at its own prices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PartialSeason {
    /// `[A-Za-z0-9_]{1,32}`, unique in the season.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Some of the season's events (at least one).
    pub event_ids: Vec<EventId>,
    /// Per ticket type code, the price of a seat for this partial (minor units); a type not
    /// named here costs its season price.
    #[serde(default)]
    pub prices: BTreeMap<String, i64>,
}

/// A season as stored and as read: `GET /v1/seasons/{id}`, and each of `GET /v1/seasons`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Season {
    /// Season id.
    pub id: SeasonId,
    /// Display name.
    pub name: String,
    /// The venue of its events.
    pub venue_id: VenueId,
    /// Its events, in the order given.
    pub event_ids: Vec<EventId>,
    /// Its ticket types, in the order given; each price is per seat for the whole series.
    pub ticket_types: Vec<TicketType>,
    /// Its partial seasons, in the order given.
    pub partials: Vec<PartialSeason>,
}

/// What the server knows of an event a season names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeasonEvent {
    /// The event's venue.
    pub venue_id: VenueId,
    /// The season the event is in already, if any.
    pub season: Option<SeasonId>,
}

/// A validated season, ready to be stored.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSeason {
    /// Display name.
    pub name: String,
    /// The venue of all its events.
    pub venue_id: VenueId,
    /// Its events, in the order given.
    pub event_ids: Vec<EventId>,
    /// Its ticket types.
    pub ticket_types: Vec<TicketType>,
    /// Every seat the season sells, in venue order.
    pub allocations: Vec<Allocation>,
    /// Its partial seasons.
    pub partials: Vec<PartialSeason>,
}

impl SeasonSpec {
    /// Checks the specification against what is known of its events (`events`: those that
    /// exist) and the layout of `venue`, the venue of its first known event. Every problem
    /// is reported at once.
    pub fn validate(
        self,
        events: &HashMap<EventId, SeasonEvent>,
        venue: Option<(VenueId, &VenueLayout)>,
    ) -> Result<NewSeason, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        errors.check_name("name", &self.name);
        errors.check(
            (1..=MAX_SEASON_EVENTS).contains(&self.event_ids.len()),
            "event_ids",
            format!("a season has 1 to {MAX_SEASON_EVENTS} events"),
        );
        let mut seen = HashSet::new();
        for (i, id) in self.event_ids.iter().enumerate() {
            let at = format!("event_ids[{i}]");
            if !errors.check(seen.insert(*id), &at, "the event is named twice") {
                continue;
            }
            match events.get(id) {
                None => errors.add(at, "no such event"),
                Some(event) => {
                    if let Some((venue_id, _)) = venue {
                        errors.check(
                            event.venue_id == venue_id,
                            &at,
                            "the events of a season must be of one venue",
                        );
                    }
                    if let Some(season) = event.season {
                        errors.add(at, format!("the event is in season {season} already"));
                    }
                }
            }
        }
        let mut prices = Prices::default();
        let codes = check_ticket_types(&self.ticket_types, &mut prices, &mut errors);
        let allocations = match venue {
            Some((_, layout)) => resolve_allocations(
                &self.allocations,
                &layout.index(),
                &codes,
                &HashSet::new(),
                &mut errors,
            ),
            None => Vec::new(),
        };
        self.check_partials(&codes, &mut errors);
        let venue_id = venue.map(|(id, _)| id).unwrap_or_default();
        errors.into_result(NewSeason {
            name: self.name,
            venue_id,
            event_ids: self.event_ids,
            ticket_types: self.ticket_types,
            allocations,
            partials: self.partials,
        })
    }

    /// The partials: codes unique, events the season's own, prices for its ticket types.
    fn check_partials(&self, types: &HashSet<&str>, errors: &mut ValidationErrors) {
        errors.check(
            self.partials.len() <= MAX_PARTIALS,
            "partials",
            format!("at most {MAX_PARTIALS} partial seasons"),
        );
        let season: HashSet<&EventId> = self.event_ids.iter().collect();
        let mut codes = HashSet::new();
        for (i, partial) in self.partials.iter().enumerate() {
            let at = format!("partials[{i}]");
            errors.check_identifier(format!("{at}.code"), &partial.code, 32, &mut codes, || {
                format!("partial {:?} is defined twice", partial.code)
            });
            errors.check_name(format!("{at}.name"), &partial.name);
            errors.check(
                !partial.event_ids.is_empty(),
                format!("{at}.event_ids"),
                "a partial season has at least one event",
            );
            let mut seen = HashSet::new();
            for (j, id) in partial.event_ids.iter().enumerate() {
                let field = format!("{at}.event_ids[{j}]");
                if errors.check(seen.insert(id), &field, "the event is named twice") {
                    errors.check(
                        season.contains(id),
                        field,
                        "the event is not one of the season's",
                    );
                }
            }
            for (code, price) in &partial.prices {
                let field = format!("{at}.prices.{code}");
                errors.check(
                    types.contains(code.as_str()),
                    &field,
                    format!("the season has no ticket type {code:?}"),
                );
                errors.check(
                    (0..=MAX_PRICE_CENTS).contains(price),
                    field,
                    "must be a non-negative amount in minor units",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::venue::VenueSpec;

    fn venue() -> VenueLayout {
        let spec: VenueSpec = serde_json::from_value(serde_json::json!({
            "name": "Hall",
            "sections": [{"id": "stalls", "name": "Stalls",
                          "rows": [{"label": "A", "seats": 4}, {"label": "B", "seats": 4}]}]
        }))
        .unwrap();
        spec.into_layout().unwrap()
    }

    fn spec(events: &[EventId]) -> SeasonSpec {
        serde_json::from_value(serde_json::json!({
            "name": "2027 Season",
            "event_ids": events,
            "ticket_types": [{"code": "season", "name": "Season seat", "price_cents": 36000,
                              "currency": "EUR"}],
            "allocations": [{"ticket_type": "season", "section": "stalls", "rows": ["A"]}],
            "partials": [{"code": "autumn", "name": "Autumn half", "event_ids": [events[0]],
                          "prices": {"season": 20000}}]
        }))
        .unwrap()
    }

    fn fields(errors: ValidationErrors) -> Vec<String> {
        errors.0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn a_season_of_one_venue_is_resolved_to_its_seats() {
        let (a, b, hall) = (EventId::new(), EventId::new(), VenueId::new());
        let events = HashMap::from([
            (
                a,
                SeasonEvent {
                    venue_id: hall,
                    season: None,
                },
            ),
            (
                b,
                SeasonEvent {
                    venue_id: hall,
                    season: None,
                },
            ),
        ]);
        let layout = venue();
        let season = spec(&[a, b])
            .validate(&events, Some((hall, &layout)))
            .unwrap();
        assert_eq!(season.venue_id, hall);
        let seats: Vec<_> = season.allocations.iter().map(|a| a.seat.as_str()).collect();
        assert_eq!(
            seats,
            ["stalls-A-1", "stalls-A-2", "stalls-A-3", "stalls-A-4"]
        );
        assert_eq!(season.partials[0].prices["season"], 20000);
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let (a, b, c, hall) = (
            EventId::new(),
            EventId::new(),
            EventId::new(),
            VenueId::new(),
        );
        let events = HashMap::from([
            (
                a,
                SeasonEvent {
                    venue_id: hall,
                    season: None,
                },
            ),
            (
                b,
                SeasonEvent {
                    venue_id: VenueId::new(),
                    season: None,
                },
            ),
            (
                c,
                SeasonEvent {
                    venue_id: hall,
                    season: Some(SeasonId::new()),
                },
            ),
        ]);
        let layout = venue();
        let mut spec = spec(&[a, b, c, a, EventId::new()]);
        spec.partials[0].event_ids.push(EventId::new());
        spec.partials[0].prices.insert("gold".into(), 5);
        spec.partials.push(spec.partials[0].clone());
        spec.ticket_types.push(spec.ticket_types[0].clone());
        let errors = fields(spec.validate(&events, Some((hall, &layout))).unwrap_err());
        for field in [
            "event_ids[1]",
            "event_ids[2]",
            "event_ids[3]",
            "event_ids[4]",
            "ticket_types[1].code",
            "partials[0].event_ids[1]",
            "partials[0].prices.gold",
            "partials[1].code",
        ] {
            assert!(errors.iter().any(|f| f == field), "{field} in {errors:?}");
        }
    }

    #[test]
    fn a_season_needs_an_event() {
        let errors = SeasonSpec {
            organization_id: None,
            name: "Empty".into(),
            event_ids: Vec::new(),
            ticket_types: Vec::new(),
            allocations: Vec::new(),
            partials: Vec::new(),
        }
        .validate(&HashMap::new(), None)
        .unwrap_err();
        assert_eq!(fields(errors), ["event_ids"]);
    }
}

/// A season hold bought: its seats sold in every event it covered, each event's share an
/// ordinary order of that event ([`SeasonNight`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeasonOrder {
    /// The season order's id.
    pub order_id: uuid::Uuid,
    /// The season.
    pub season_id: SeasonId,
    /// The partial season bought, if not the whole.
    pub partial: Option<String>,
    /// The buyer.
    pub user_id: crate::ids::UserId,
    /// The season hold's token it was bought with.
    pub hold_token: uuid::Uuid,
    /// The seats at their season prices, sorted by id.
    pub seats: Vec<crate::hold::ClaimedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// `Paid`, or `Cancelled` (every night not released before was put on sale again).
    pub status: crate::hold::OrderStatus,
    /// When it was bought.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Each event covered, in the season's order.
    pub nights: Vec<SeasonNight>,
}

/// One event of a season order: the event's own order of the seats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeasonNight {
    /// The event.
    pub event_id: EventId,
    /// The event's order of the season's seats.
    pub order_id: uuid::Uuid,
    /// Whether the seats were released for this event alone (on sale again in it).
    pub released: bool,
}

impl SeasonOrder {
    /// The events covered, in the season's order.
    pub fn event_ids(&self) -> Vec<EventId> {
        self.nights.iter().map(|n| n.event_id).collect()
    }
}

/// A season seat's price split over the `nights` events it is sold in: the parts differ
/// by a cent at most, the first ones larger, and sum to the price.
pub fn split_price(price_cents: i64, nights: usize) -> Vec<i64> {
    let n = nights.max(1) as i64;
    let (base, rest) = (price_cents / n, price_cents % n);
    (0..n).map(|i| base + i64::from(i < rest)).collect()
}

#[cfg(test)]
mod split_tests {
    use super::split_price;

    #[test]
    fn parts_sum_to_the_price_and_differ_by_a_cent_at_most() {
        for (price, nights) in [(36000, 20), (100, 3), (1, 4), (0, 5), (99_999, 7)] {
            let parts = split_price(price, nights);
            assert_eq!(parts.len(), nights);
            assert_eq!(parts.iter().sum::<i64>(), price);
            let (lo, hi) = (parts.iter().min().unwrap(), parts.iter().max().unwrap());
            assert!(hi - lo <= 1, "{parts:?}");
        }
        assert_eq!(split_price(100, 3), vec![34, 33, 33]);
    }
}
