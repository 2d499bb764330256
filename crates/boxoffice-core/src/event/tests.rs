//! Unit tests of [`super`].

use super::*;
use crate::venue::VenueSpec;
use proptest::prelude::*;
use serde_json::json;
use std::collections::HashMap;

fn venue() -> VenueLayout {
    serde_json::from_value::<VenueSpec>(json!({"name": "Hall", "sections": [
        {"id": "stalls", "name": "Stalls", "rows": [
            {"label": "A", "seats": 3}, {"label": "B", "seats": 3}, {"label": "H", "seats": 2}]},
        {"id": "circle", "name": "Circle", "rows": [{"label": "A", "seats": 2}]}]}))
    .unwrap()
    .into_layout()
    .unwrap()
}

fn now() -> DateTime<Utc> {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

#[test]
fn an_event_starts_in_the_future_in_a_year_rfc_3339_can_spell() {
    for (starts_at, ok) in [
        ("2025-12-31T23:59:59Z", false),
        ("2026-01-01T00:00:00Z", false),
        ("2026-01-01T00:00:01Z", true),
        ("9999-12-31T23:59:59Z", true),
        ("+10000-01-01T00:00:00Z", false),
        ("+99999-01-01T00:00:00Z", false),
    ] {
        let result = event(json!({"starts_at": starts_at})).validate(&venue(), now());
        match result {
            Ok(_) => assert!(ok, "{starts_at} was accepted"),
            Err(e) => {
                assert!(!ok, "{starts_at} was refused: {e}");
                assert_eq!(e.0[0].field, "starts_at");
            }
        }
    }
}

fn event(extra: serde_json::Value) -> EventSpec {
    let mut base = json!({"venue_id": VenueId::new(), "name": "Gala", "starts_at": "2027-03-01T19:30:00Z",
        "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                         {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}]});
    base.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(base).unwrap()
}

#[test]
fn later_allocation_entries_override_earlier_ones() {
    let e = event(json!({"allocations": [
        {"ticket_type": "standard", "section": "stalls"},
        {"ticket_type": "premium", "section": "stalls", "rows": ["A"]},
        {"ticket_type": "standard", "seats": ["stalls-A-2"]}]}))
    .validate(&venue(), now())
    .unwrap();
    let got: Vec<_> = e
        .allocations
        .iter()
        .map(|a| (a.seat.as_str(), a.ticket_type.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("stalls-A-1", "premium"),
            ("stalls-A-2", "standard"),
            ("stalls-A-3", "premium"),
            ("stalls-B-1", "standard"),
            ("stalls-B-2", "standard"),
            ("stalls-B-3", "standard"),
            ("stalls-H-1", "standard"),
            ("stalls-H-2", "standard"),
        ]
    );
    assert_eq!(e.section_order, vec!["stalls", "circle"]);
    assert_eq!(e.hold_ttl_seconds, 120);
    assert_eq!(e.max_seats_per_user, 8);
}

#[test]
fn unknown_names_and_bad_settings_are_reported_per_field() {
    let err = event(json!({"hold_ttl_seconds": 0, "max_seats_per_user": 101,
        "section_order": ["circle", "nowhere", "circle"],
        "allocations": [{"ticket_type": "vip", "section": "stalls", "rows": ["Z"]},
                        {"ticket_type": "standard", "seats": ["stalls-Z-9"]},
                        {"ticket_type": "standard", "section": "stalls", "seats": ["stalls-A-1"]},
                        {"ticket_type": "standard"}],
        "ga_areas": [{"code": "floor", "name": "Floor", "capacity": 5, "price_cents": 100,
                      "currency": "USD", "max_per_booking": 6}]}))
    .validate(&venue(), now())
    .unwrap_err();
    let fields: Vec<_> = err.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "hold_ttl_seconds",
            "max_seats_per_user",
            "section_order[1]",
            "section_order[2]",
            "ga_areas[0].currency",
            "ga_areas[0].max_per_booking",
            "allocations[0].ticket_type",
            "allocations[0].rows",
            "allocations[1].seats[0]",
            "allocations[2]",
            "allocations[3]",
        ]
    );
}

#[test]
fn withdraw_resolves_sections_rows_and_seats() {
    let v = venue();
    let index = v.index();
    let rows: WithdrawSpec =
        serde_json::from_value(json!({"section": "stalls", "rows": ["H"]})).unwrap();
    assert_eq!(
        rows.resolve(&index).unwrap(),
        vec!["stalls-H-1", "stalls-H-2"]
    );
    let seats: WithdrawSpec =
        serde_json::from_value(json!({"seats": ["circle-A-2", "stalls-A-1", "circle-A-2"]}))
            .unwrap();
    assert_eq!(
        seats.resolve(&index).unwrap(),
        vec!["stalls-A-1", "circle-A-2"]
    );
    let bad: WithdrawSpec = serde_json::from_value(json!({"seats": ["x"]})).unwrap();
    assert_eq!(bad.resolve(&index).unwrap_err().0[0].field, "seats[0]");
    let empty: WithdrawSpec = serde_json::from_value(json!({})).unwrap();
    assert_eq!(empty.resolve(&index).unwrap_err().0[0].field, "seats");
}

/// A selector the property test can build entries from.
#[derive(Clone, Debug)]
enum Pick {
    Section(usize),
    Rows(usize, Vec<usize>),
    Seats(Vec<usize>),
}

fn pick() -> impl Strategy<Value = (bool, Pick)> {
    let p = prop_oneof![
        (0usize..2).prop_map(Pick::Section),
        (0usize..1, proptest::collection::vec(0usize..3, 1..3)).prop_map(|(s, r)| Pick::Rows(s, r)),
        proptest::collection::vec(0usize..10, 1..5).prop_map(Pick::Seats),
    ];
    (any::<bool>(), p)
}

proptest! {
    #[test]
    fn the_last_entry_naming_a_seat_decides_its_ticket_type(picks in proptest::collection::vec(pick(), 0..8)) {
        let v = venue();
        let index = v.index();
        let sections = ["stalls", "circle"];
        let rows = ["A", "B", "H"];
        let entries: Vec<AllocationEntry> = picks.iter().map(|(premium, p)| {
            let ticket_type = if *premium { "premium" } else { "standard" }.to_owned();
            match p {
                Pick::Section(s) => AllocationEntry { ticket_type, section: Some(sections[*s].into()), rows: None, seats: None, category: None, channel: None },
                Pick::Rows(s, r) => AllocationEntry { ticket_type, section: Some(sections[*s].into()),
                    rows: Some(r.iter().map(|i| rows[*i].to_owned()).collect()), seats: None, category: None, channel: None },
                Pick::Seats(ps) => AllocationEntry { ticket_type, section: None, rows: None,
                    seats: Some(ps.iter().map(|p| index.ids[*p].to_owned()).collect()), category: None, channel: None },
            }
        }).collect();

        // Model: walk the entries in order, writing each named seat's type into a map.
        let mut model: HashMap<String, String> = HashMap::new();
        for e in &entries {
            let named: Vec<String> = match (&e.section, &e.rows, &e.seats) {
                (Some(s), None, None) => v.seats().filter(|(sec, _, _)| &sec.id == s).map(|(_, _, x)| x.id.clone()).collect(),
                (Some(s), Some(rs), None) => v.seats()
                    .filter(|(sec, row, _)| &sec.id == s && rs.contains(&row.label)).map(|(_, _, x)| x.id.clone()).collect(),
                (None, None, Some(ids)) => ids.clone(),
                _ => unreachable!(),
            };
            for id in named { model.insert(id, e.ticket_type.clone()); }
        }

        let codes: HashSet<&str> = ["standard", "premium"].into();
        let mut errors = ValidationErrors::default();
        let got = resolve_allocations(&entries, &index, &codes, &HashSet::new(), &mut errors);
        prop_assert!(errors.is_empty());
        prop_assert_eq!(got.len(), model.len());
        let mut last = None;
        for a in &got {
            prop_assert_eq!(model.get(&a.seat), Some(&a.ticket_type));
            let pos = index.position(&a.seat);
            prop_assert!(pos > last, "allocations come back in venue order");
            last = pos;
        }
    }
}
