//! Unit tests of [`super`].

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn spec(value: serde_json::Value) -> VenueSpec {
    serde_json::from_value(value).expect("spec parses")
}

#[test]
fn generated_rows_get_ids_labels_and_coordinates_from_the_origin() {
    let layout = spec(json!({"name": "Riverside Hall", "sections": [
        {"id": "stalls", "name": "Stalls", "origin": {"x": 10, "y": 5},
         "seat_spacing": 2.0, "row_spacing": 3.0,
         "rows": [{"label": "A", "seats": 3}, {"label": "B", "seats": 2, "first_number": 7}]}]}))
    .into_layout()
    .unwrap();
    let seats: Vec<_> = layout
        .seats()
        .map(|(_, _, s)| (s.id.as_str(), s.label.as_str(), s.x, s.y))
        .collect();
    assert_eq!(
        seats,
        vec![
            ("stalls-A-1", "Stalls, Row A, Seat 1", 10.0, 5.0),
            ("stalls-A-2", "Stalls, Row A, Seat 2", 12.0, 5.0),
            ("stalls-A-3", "Stalls, Row A, Seat 3", 14.0, 5.0),
            ("stalls-B-7", "Stalls, Row B, Seat 7", 10.0, 8.0),
            ("stalls-B-8", "Stalls, Row B, Seat 8", 12.0, 8.0),
        ]
    );
}

#[test]
fn explicit_seats_keep_their_coordinates() {
    let layout = spec(
        json!({"name": "Hall", "sections": [{"id": "box", "name": "Box",
        "rows": [{"label": "C", "seats": [{"number": "1", "x": 0.5, "y": 2.4}]}]}]}),
    )
    .into_layout()
    .unwrap();
    let seat = &layout.sections[0].rows[0].seats[0];
    assert_eq!((seat.id.as_str(), seat.x, seat.y), ("box-C-1", 0.5, 2.4));
    assert_eq!(seat.label, "Box, Row C, Seat 1");
}

#[test]
fn every_problem_is_reported_with_its_field() {
    let err = spec(json!({"name": " ", "sections": [
        {"id": "bad id", "name": "S", "seat_spacing": 0, "rows": [{"label": "A", "seats": 0}]},
        {"id": "s", "name": "S", "rows": [{"label": "A", "seats": 1}, {"label": "A", "seats": 1}]},
        {"id": "t", "name": "T", "rows": [{"label": "B", "seats": [{"number": "1", "x": 0, "y": 0},
                                                                {"number": "1", "x": 1, "y": 0}]}]}]}))
    .into_layout()
    .unwrap_err();
    let fields: Vec<_> = err.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "name",
            "sections[0].id",
            "sections[0].seat_spacing",
            "sections[0].rows[0].seats",
            "sections[1].rows[1].label",
            "sections[2].rows[0].seats[1]",
        ]
    );
}

#[test]
fn a_venue_is_capped_at_200000_seats() {
    let rows: Vec<_> = (0..21)
        .map(|i| json!({"label": format!("R{i}"), "seats": 10_000}))
        .collect();
    let err = spec(json!({"name": "Huge", "sections": [{"id": "s", "name": "S", "rows": rows}]}))
        .into_layout()
        .unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].field, "sections[0].rows[20].seats");
}

#[test]
fn a_row_is_a_count_or_a_list_and_says_so_when_it_is_neither() {
    let parse = |seats: serde_json::Value| {
        serde_json::from_value::<RowSpec>(json!({"label": "A", "seats": seats}))
            .map_err(|e| e.to_string())
    };
    assert!(matches!(parse(json!(3)).unwrap().seats, RowSeats::Count(3)));
    assert!(matches!(
        parse(json!([{"number": "1", "x": 0, "y": 0}])).unwrap().seats,
        RowSeats::List(l) if l.len() == 1
    ));
    assert!(parse(json!(-1)).unwrap_err().contains("cannot be negative"));
    assert!(parse(json!("many"))
        .unwrap_err()
        .contains("a seat count or a list"));
    assert!(parse(json!([{"number": "1"}]))
        .unwrap_err()
        .contains("missing field `x`"));
}

#[test]
fn colliding_generated_ids_are_refused() {
    // Row "A" seat "11" and row "A1" seat "1" would both be "s-A-11" without the
    // separator; with it they differ, so this venue is valid.
    assert!(
        spec(json!({"name": "V", "sections": [{"id": "s", "name": "S",
        "rows": [{"label": "A", "seats": 11}, {"label": "A1", "seats": 1}]}]}))
        .into_layout()
        .is_ok()
    );
}

#[test]
fn index_selects_sections_and_rows_in_venue_order() {
    let layout = spec(json!({"name": "V", "sections": [
        {"id": "a", "name": "A", "rows": [{"label": "1", "seats": 2}, {"label": "2", "seats": 2}]},
        {"id": "b", "name": "B", "rows": [{"label": "1", "seats": 1}]}]}))
    .into_layout()
    .unwrap();
    let index = layout.index();
    assert_eq!(index.select_rows("b", None), Some(Ok(vec![4])));
    assert_eq!(
        index.select_rows("a", Some(&["2".into()])),
        Some(Ok(vec![2, 3]))
    );
    assert_eq!(index.select_rows("a", Some(&["9".into()])), Some(Err("9")));
    assert_eq!(index.select_rows("zz", None), None);
    assert_eq!(index.position("a-2-1"), Some(2));
}

fn row_strategy() -> impl Strategy<Value = (u32, Option<u32>)> {
    (1u32..40, proptest::option::of(0u32..500))
}

proptest! {
    #[test]
    fn generated_seats_are_unique_consecutive_and_evenly_spaced(
        rows in proptest::collection::vec(row_strategy(), 1..12),
        spacing in 0.1f64..5.0,
        row_spacing in 0.1f64..5.0,
    ) {
        let rows_json: Vec<_> = rows.iter().enumerate().map(|(i, (n, first))| {
            let mut r = json!({"label": format!("R{i}"), "seats": n});
            if let Some(f) = first { r["first_number"] = json!(f); }
            r
        }).collect();
        let layout = spec(json!({"name": "V", "sections": [{"id": "s", "name": "S",
            "seat_spacing": spacing, "row_spacing": row_spacing, "rows": rows_json}]}))
            .into_layout().unwrap();
        let expected: usize = rows.iter().map(|(n, _)| *n as usize).sum();
        prop_assert_eq!(layout.seat_count(), expected);
        let ids: HashSet<_> = layout.seats().map(|(_, _, s)| s.id.clone()).collect();
        prop_assert_eq!(ids.len(), expected);
        for (ri, row) in layout.sections[0].rows.iter().enumerate() {
            let first = rows[ri].1.unwrap_or(1);
            for (i, seat) in row.seats.iter().enumerate() {
                prop_assert_eq!(&seat.number, &(first + i as u32).to_string());
                prop_assert_eq!(&seat.id, &format!("s-R{ri}-{}", first + i as u32));
                prop_assert!((seat.x - i as f64 * spacing).abs() < 1e-9);
                prop_assert!((seat.y - ri as f64 * row_spacing).abs() < 1e-9);
            }
        }
    }
}
