//! Unit tests of [`super`], against pretix's own schema (vendored in `vendor/pretix`).

use super::*;
use crate::venue::{Rect, Seat, ShapeKind};
use serde_json::{json, Value};

const SCHEMA: &str = include_str!("../../../../../vendor/pretix/seating-plan.schema.json");

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// A small plan using most of what the schema has.
fn sample() -> Value {
    json!({
        "name": "Little Theatre",
        "size": {"width": 400, "height": 300},
        "categories": [{"name": "Stalls", "color": "#ff0000"}, {"name": "Stalls [accessible]"}],
        "zones": [
            {"name": "Stage", "position": {"x": 0, "y": 0}, "rows": [],
             "areas": [{"shape": "rectangle", "position": {"x": 100, "y": 10},
                        "rectangle": {"width": 200, "height": 40}, "color": "#ccc",
                        "text": {"text": "STAGE", "position": {"x": 100, "y": 20}, "size": 16}}]},
            {"name": "Main floor", "zone_id": "main", "uuid": "0b5c", "position": {"x": 50, "y": 100},
             "rows": [
                {"row_number": "1", "row_label": null, "seat_label": "Seat %s",
                 "row_number_position": "both", "position": {"x": 10, "y": 5},
                 "seats": [
                    {"seat_guid": "main-1-1", "seat_number": "1", "position": {"x": 0, "y": 0},
                     "category": "Stalls", "radius": 10, "start_direction": null},
                    {"seat_guid": "main-1-2", "seat_number": "2", "position": {"x": 25, "y": 0},
                     "category": "Stalls [accessible]", "uuid": "a1"}]},
                {"row_number": "2", "seats": [
                    {"seat_guid": "main-2-1", "seat_number": "1", "position": {"x": 0, "y": 30},
                     "category": "Stalls"}]},
                {"row_number": "1", "row_number_position": null, "seats": [
                    {"seat_guid": "main-1-3", "seat_number": "3", "position": {"x": 200, "y": 5},
                     "category": "Stalls"}]}],
             "areas": [{"shape": "circle", "position": {"x": 150, "y": 80}, "circle": {"radius": 5}},
                       {"shape": "ellipse", "position": {"x": 0, "y": 0}, "rotation": 30,
                        "ellipse": {"radius": {"x": 20, "y": 10}}},
                       {"shape": "text", "text": {"text": "Exit", "position": {"x": 5, "y": 5}}},
                       {"shape": "polygon", "polygon": {"points": [
                           {"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}]}},
                       {"shape": "rectangle", "rectangle": {"width": 0, "height": 10}}]}]
    })
}

fn plan(value: Value) -> Plan {
    serde_json::from_value(value).expect("the plan parses")
}

#[test]
fn the_sample_is_a_plan_under_pretix_schema() {
    assert!(validator().is_valid(&sample()));
}

#[test]
fn a_seat_is_where_its_zone_row_and_own_position_put_it() {
    let layout = plan(sample()).into_layout(None).unwrap();
    assert_eq!(layout.name, "Little Theatre");
    // The stage zone has no seats: it brings its area, not a section.
    assert_eq!(layout.sections.len(), 1);
    let main = &layout.sections[0];
    assert_eq!(
        (main.id.as_str(), main.name.as_str()),
        ("main", "Main floor")
    );
    // Two rows numbered 1 (either side of an aisle) are one row.
    let rows: Vec<_> = main
        .rows
        .iter()
        .map(|r| (r.label.as_str(), r.seats.len()))
        .collect();
    assert_eq!(rows, [("1", 3), ("2", 1)]);
    let seats: Vec<_> = layout
        .seats()
        .map(|(_, _, s)| (s.id.as_str(), s.label.as_str(), s.x, s.y))
        .collect();
    assert_eq!(
        seats,
        [
            ("main-1-1", "Main floor, Row 1, Seat 1", 60.0, 105.0),
            ("main-1-2", "Main floor, Row 1, Seat 2", 85.0, 105.0),
            ("main-1-3", "Main floor, Row 1, Seat 3", 250.0, 105.0),
            ("main-2-1", "Main floor, Row 2, Seat 1", 50.0, 130.0),
        ]
    );
    let seat = &main.rows[0].seats[1];
    assert_eq!(seat.external_id.as_deref(), Some("main-1-2"));
    assert_eq!(seat.attributes.category.as_deref(), Some("Stalls"));
    assert!(seat.attributes.accessible && !seat.attributes.companion);
    assert!(!main.rows[0].seats[0].attributes.accessible);
}

#[test]
fn areas_become_shapes_and_the_stage_is_known_by_its_text() {
    let layout = plan(sample()).into_layout(None).unwrap();
    let shapes = &layout.shapes;
    // The zero-width rectangle draws nothing and is left out.
    assert_eq!(shapes.len(), 5, "{shapes:?}");
    assert_eq!(shapes[0].kind, ShapeKind::Stage);
    assert_eq!(shapes[0].text.as_deref(), Some("STAGE"));
    assert_eq!(
        shapes[0].rect,
        Some(Rect {
            x: 100.0,
            y: 10.0,
            w: 200.0,
            h: 40.0
        })
    );
    // Areas are placed from their zone.
    let circle = shapes[1].circle.unwrap();
    assert_eq!((circle.x, circle.y, circle.r), (200.0, 180.0, 5.0));
    let ellipse = shapes[2].polygon.as_ref().unwrap();
    assert_eq!(ellipse.len(), 48);
    // The first point of an ellipse turned 30° clockwise: (20, 0) turned, from (50, 100).
    let (sin, cos) = 30f64.to_radians().sin_cos();
    assert!((ellipse[0].x - (50.0 + 20.0 * cos)).abs() < 1e-9);
    assert!((ellipse[0].y - (100.0 + 20.0 * sin)).abs() < 1e-9);
    assert_eq!(shapes[3].kind, ShapeKind::Label);
    assert_eq!(shapes[3].text.as_deref(), Some("Exit"));
    assert_eq!(shapes[3].center(), Point { x: 55.0, y: 105.0 });
    assert_eq!(
        shapes[4].polygon.as_ref().unwrap()[1],
        Point { x: 60.0, y: 100.0 }
    );
}

#[test]
fn a_zone_without_an_id_takes_its_name_made_valid_and_unique() {
    let mut value = sample();
    value["zones"][1].as_object_mut().unwrap().remove("zone_id");
    let mut twin = value["zones"][1].clone();
    for row in twin["rows"].as_array_mut().unwrap() {
        for seat in row["seats"].as_array_mut().unwrap() {
            let guid = format!("b-{}", seat["seat_guid"].as_str().unwrap());
            seat["seat_guid"] = json!(guid);
        }
    }
    value["zones"].as_array_mut().unwrap().push(twin);
    let layout = plan(value).into_layout(Some("Renamed".into())).unwrap();
    let ids: Vec<_> = layout.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["Main_floor", "Main_floor_2"]);
    assert_eq!(layout.name, "Renamed");
}

#[test]
fn what_the_schema_cannot_say_is_reported_at_its_path_all_at_once() {
    let mut value = sample();
    let rows = &mut value["zones"][1]["rows"];
    rows[1]["seats"][0]["seat_guid"] = json!("main-1-1");
    rows[2]["seats"][0]["seat_number"] = json!("1");
    rows[0]["seats"][1]["seat_guid"] = json!(" x");
    rows[1]["row_number"] = json!("row two");
    rows[0]["seats"][0]["position"] = json!({"x": 1e300, "y": 0});
    value["size"]["width"] = json!(400.5);
    value["zones"][1]["rows"][0]["seats"][0]["category"] = json!("x".repeat(65));
    let errors = plan(value).into_layout(None).unwrap_err();
    let mut fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "size.width",
            "zones[1].rows[0].seats[0].category",
            "zones[1].rows[0].seats[0].position",
            "zones[1].rows[0].seats[1].seat_guid",
            "zones[1].rows[1].row_number",
            "zones[1].rows[1].seats[0].seat_guid",
            "zones[1].rows[2].seats[0].seat_number",
        ],
        "{errors}"
    );
}

/// Every JSON value `value` can be turned into by one edit: each property removed, set to
/// `null`, to a value of each other type, and each object given an unknown property.
fn one_edit_away(value: &Value) -> Vec<Value> {
    fn walk(value: &Value, path: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
        out.push(path.clone());
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    path.push(PathStep::Key(k.clone()));
                    walk(v, path, out);
                    path.pop();
                }
            }
            // The first two items of a list stand for the rest.
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate().take(2) {
                    path.push(PathStep::Index(i));
                    walk(v, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut paths = Vec::new();
    walk(value, &mut Vec::new(), &mut paths);
    let replacements = [
        json!(null),
        json!("text"),
        json!(""),
        json!(7),
        json!(7.5),
        json!(true),
        json!([]),
        json!({}),
        json!("middle"),
    ];
    let mut edited = Vec::new();
    for path in paths.iter().filter(|p| !p.is_empty()) {
        for replacement in &replacements {
            let mut copy = value.clone();
            *at(&mut copy, path) = replacement.clone();
            edited.push(copy);
        }
        if let (Some(PathStep::Key(key)), parent) = (path.last(), &path[..path.len() - 1]) {
            let mut copy = value.clone();
            at(&mut copy, parent).as_object_mut().unwrap().remove(key);
            edited.push(copy);
        }
    }
    for path in &paths {
        let mut copy = value.clone();
        if let Some(object) = at(&mut copy, path).as_object_mut() {
            object.insert("extra".into(), json!(1));
            edited.push(copy);
        }
    }
    edited
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at<'v>(value: &'v mut Value, path: &[PathStep]) -> &'v mut Value {
    path.iter().fold(value, |v, step| match step {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// What the importer refuses for the schema's sake: the plan does not parse, or breaks one
/// of the two rules serde types cannot hold (integer sizes, the `seat_guid` pattern).
fn importer_refuses_for_the_schema(value: &Value) -> bool {
    let Ok(Object(plan)) = serde_json::from_value::<Object<Plan>>(value.clone()) else {
        return true;
    };
    let guids_ok = plan
        .zones
        .iter()
        .flat_map(|z| &z.rows)
        .flat_map(|r| &r.seats)
        .all(|s| guid_ok(&s.seat_guid));
    let sizes_ok = [plan.size.width, plan.size.height]
        .iter()
        .all(|v| v.fract() == 0.0);
    !(guids_ok && sizes_ok)
}

#[test]
fn the_importer_refuses_exactly_what_pretix_schema_refuses() {
    let schema = validator();
    let edited = one_edit_away(&sample());
    assert!(edited.len() > 500, "{} plans", edited.len());
    for value in &edited {
        assert_eq!(
            importer_refuses_for_the_schema(value),
            !schema.is_valid(value),
            "the schema and the importer disagree on {value}"
        );
    }
}

/// A venue with what a pretix plan cannot say directly: generated rows, an arc, attributes
/// on rows and seats, a seat without a category, shapes of every kind.
fn rich_venue() -> VenueLayout {
    serde_json::from_value::<VenueSpec>(json!({"name": "Round Hall", "sections": [
        {"id": "stalls", "name": "Stalls", "origin": {"x": 3, "y": 7}, "seat_spacing": 1.1,
         "rows": [{"label": "A", "seats": 5, "category": "Front stalls"},
                  {"label": "B", "seats": 9, "first_number": 3,
                   "arc": {"center": {"x": 4, "y": 40}, "radius": 30.3, "from_deg": 250, "to_deg": 290}}]},
        {"id": "box_1", "name": "Box 1", "rows": [{"label": "W", "category": "Box", "seats": [
            {"number": "1", "x": -2.25, "y": 0.1, "accessible": true},
            {"number": "2", "x": -1.1, "y": 0.1, "companion": true, "category": "Box, companion"},
            {"number": "3", "x": 0.05, "y": 0.1, "restricted_view": true, "accessible": true},
            {"number": "4", "x": 1.2, "y": 0.1}]}]}],
     "shapes": [{"kind": "stage", "rect": {"x": 0, "y": -5, "w": 20, "h": 3}},
                {"kind": "label", "text": "Exit", "circle": {"x": 30, "y": 3, "r": 1}},
                {"kind": "area", "text": "Bar", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 1, "y": 1}]}]}))
    .unwrap()
    .into_layout()
    .unwrap()
}

#[test]
fn an_export_is_valid_under_pretix_schema_and_imports_back_to_the_same_seats() {
    let venue = rich_venue();
    let exported = serde_json::to_value(Plan::from_layout(&venue)).unwrap();
    let schema = validator();
    let problems: Vec<_> = schema
        .iter_errors(&exported)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    // Through its text, as a client would send it back.
    let text = serde_json::to_string(&exported).unwrap();
    let back = serde_json::from_str::<Plan>(&text)
        .unwrap()
        .into_layout(None)
        .unwrap();
    assert_eq!(back.name, venue.name);
    let strip = |layout: &VenueLayout| -> Vec<Seat> {
        layout
            .seats()
            .map(|(_, _, s)| Seat {
                external_id: None,
                ..s.clone()
            })
            .collect()
    };
    assert_eq!(strip(&back), strip(&venue));
    // Seats the venue gave no external id are known by their ids.
    assert!(back
        .seats()
        .all(|(_, _, s)| s.external_id.as_ref() == Some(&s.id)));
    let kinds: Vec<_> = back.shapes.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [ShapeKind::Stage, ShapeKind::Label, ShapeKind::Area]);
    // Exported again, it is the same plan (but for its size, which a label's box changes):
    // external ids are kept.
    let (again, first) = (Plan::from_layout(&back), plan(exported));
    assert_eq!(again.zones, first.zones);
    assert_eq!(again.categories, first.categories);
}

#[test]
fn attribute_marks_read_back_as_written() {
    for attributes in [
        SeatAttributes::default(),
        SeatAttributes {
            category: Some("Stalls".into()),
            accessible: true,
            companion: true,
            restricted_view: true,
        },
        SeatAttributes {
            category: None,
            restricted_view: true,
            ..SeatAttributes::default()
        },
    ] {
        let written = write_category(&attributes);
        let (category, read) = read_category(&written);
        assert_eq!(
            SeatAttributes { category, ..read },
            attributes,
            "{written:?}"
        );
    }
    assert_eq!(
        write_category(&SeatAttributes {
            category: Some("Stalls".into()),
            accessible: true,
            ..SeatAttributes::default()
        }),
        "Stalls [accessible]"
    );
}
