//! Venues: the specification a client sends, and the seat-map generator that turns it into
//! seats with ids, labels and coordinates. (A long file: the specification's types and
//! the one pass that checks them and generates the seats, read together.)
//!
//! A row is either a seat count (seats numbered from `first_number`, laid out on a straight
//! line from the section origin, one `row_spacing` below the previous row, or along an
//! [`RowArc`]) or an explicit list of seats with coordinates. Seat ids are `<section id>-<row label>-<number>` and
//! labels `<Section name>, Row <row>, Seat <number>`; both are derived here and nowhere
//! else, so the store and the server can never disagree about them.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::validation::{is_word, ValidationErrors};

mod arc;
mod attributes;
mod import;
mod index;
pub mod pretix;
mod shapes;
pub mod spreadsheet;
pub use arc::RowArc;
pub use attributes::{SeatAttributes, MAX_CATEGORY_LEN};
pub use index::VenueIndex;
pub use shapes::{Circle, Rect, Shape, ShapeKind, MAX_POLYGON_POINTS, MAX_SHAPES};

use attributes::Given;

/// Most seats one venue may have.
pub const MAX_SEATS_PER_VENUE: usize = 200_000;
/// Longest section id (`[A-Za-z0-9_]`).
pub const MAX_SECTION_ID_LEN: usize = 32;
/// Longest row label or seat number (`[A-Za-z0-9_]`).
pub const MAX_LABEL_LEN: usize = 16;
/// Longest venue, section or event name.
pub use crate::validation::MAX_NAME_LEN;
/// Largest coordinate, spacing or numbering value accepted, to keep maps sane.
const MAX_COORDINATE: f64 = 1e6;

/// A point on the seat map, in the venue's own units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position; rows further from the stage have larger values.
    pub y: f64,
}

/// `POST /v1/venues`: a venue as a client describes it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VenueSpec {
    /// The organization it belongs to: for a platform key, the `default` one when absent;
    /// a key of an organization creates in its own (naming another answers 404).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<crate::ids::OrganizationId>,
    /// Display name, 1–200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// Sections in the venue's order (best first unless an event ranks them otherwise).
    #[schema(min_items = 1)]
    pub sections: Vec<SectionSpec>,
    /// Shapes drawn behind the seats (at most 1,000).
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub shapes: Vec<Shape>,
    /// The point the seats look at (the stage's centre): among equal choices, best
    /// available prefers the seats nearest it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focal_point: Option<Point>,
    /// Its IANA time zone (`Europe/Berlin`; default `UTC`): how pages, PDFs and the console
    /// show its events' times, unless an event names its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

/// One section of a [`VenueSpec`].
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// `[A-Za-z0-9_]{1,32}`, unique in the venue; the first part of every seat id.
    #[schema(pattern = "^[A-Za-z0-9_]{1,32}$")]
    pub id: String,
    /// Display name, used in seat labels.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// Where the first seat of the first generated row sits.
    #[serde(default)]
    pub origin: Point,
    /// Distance between neighbouring generated seats in a row (default 1).
    #[serde(default = "one")]
    pub seat_spacing: f64,
    /// Distance between generated rows (default 1).
    #[serde(default = "one")]
    pub row_spacing: f64,
    /// Rows, front first.
    #[schema(min_items = 1)]
    pub rows: Vec<RowSpec>,
}

fn one() -> f64 {
    1.0
}

/// One row of a [`SectionSpec`].
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RowSpec {
    /// `[A-Za-z0-9_]{1,16}`, unique in the section.
    #[schema(pattern = "^[A-Za-z0-9_]{1,16}$")]
    pub label: String,
    /// A seat count, or an explicit list of seats with coordinates.
    pub seats: RowSeats,
    /// Number of the first generated seat (default 1); only with a seat count.
    pub first_number: Option<u32>,
    /// An arc to spread the counted seats along, instead of the straight line; only with
    /// a seat count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arc: Option<RowArc>,
    /// Attributes of every seat of the row (a listed seat's own win).
    /// The venue's price zone, 1–64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64)]
    pub category: Option<String>,
    /// A wheelchair space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible: Option<bool>,
    /// A companion seat beside a wheelchair space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub companion: Option<bool>,
    /// The view of the stage is partly blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted_view: Option<bool>,
}

/// The seats of a row: generated from a count, or listed.
///
/// `Serialize` is derived for the untagged representation the OpenAPI schema describes;
/// deserializing is hand-written to give a useful message when a row is neither.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum RowSeats {
    /// This many seats, numbered consecutively on a straight line.
    Count(u32),
    /// Exactly these seats.
    List(Vec<SeatSpec>),
}

impl<'de> Deserialize<'de> for RowSeats {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RowSeats;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a seat count or a list of seats with number, x and y")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RowSeats, E> {
                u32::try_from(n).map(RowSeats::Count).map_err(|_| {
                    E::custom(format!("a row has at most {MAX_SEATS_PER_VENUE} seats"))
                })
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RowSeats, E> {
                match u64::try_from(n) {
                    Ok(n) => self.visit_u64(n),
                    Err(_) => Err(E::custom("a seat count cannot be negative")),
                }
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RowSeats, A::Error> {
                Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(RowSeats::List)
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

/// An explicitly placed seat. Its attributes repeat [`RowSpec`]'s field by field: serde
/// cannot flatten shared fields into a struct that refuses unknown ones.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatSpec {
    /// `[A-Za-z0-9_]{1,16}`, unique in the row.
    pub number: String,
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
    /// The venue's price zone, 1–64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64)]
    pub category: Option<String>,
    /// A wheelchair space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible: Option<bool>,
    /// A companion seat beside a wheelchair space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub companion: Option<bool>,
    /// The view of the stage is partly blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted_view: Option<bool>,
    /// The id an imported plan gives the seat; set by the importers, never read from JSON.
    #[serde(skip)]
    pub external_id: Option<String>,
}

/// The attributes a row or a listed seat gives.
macro_rules! given {
    ($spec:expr) => {
        Given {
            category: $spec.category.as_deref(),
            accessible: $spec.accessible,
            companion: $spec.companion,
            restricted_view: $spec.restricted_view,
        }
    };
}

/// A venue's seat map after validation: every seat with its id, label and position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenueLayout {
    /// Display name.
    pub name: String,
    /// Sections in venue order.
    pub sections: Vec<Section>,
    /// Shapes drawn behind the seats.
    #[serde(default)]
    pub shapes: Vec<Shape>,
    /// The point the seats look at, if the venue has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focal_point: Option<Point>,
    /// Its IANA time zone.
    #[serde(default = "default_zone")]
    pub time_zone: String,
}

fn default_zone() -> String {
    crate::local_time::DEFAULT_ZONE.to_owned()
}

/// A section of a [`VenueLayout`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Section {
    /// Section id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Origin of generated rows.
    pub origin: Point,
    /// Spacing of generated seats.
    pub seat_spacing: f64,
    /// Spacing of generated rows.
    pub row_spacing: f64,
    /// Rows, front first.
    pub rows: Vec<Row>,
}

/// A row of a [`Section`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Row {
    /// Row label.
    pub label: String,
    /// Seats in order along the row.
    pub seats: Vec<Seat>,
}

/// One seat of the venue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Seat {
    /// `<section id>-<row label>-<number>`, e.g. `stalls-C-12`.
    pub id: String,
    /// Seat number within its row.
    pub number: String,
    /// `<Section name>, Row <row>, Seat <number>`.
    pub label: String,
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
    /// Category, wheelchair space, companion seat, restricted view.
    #[serde(flatten)]
    pub attributes: SeatAttributes,
    /// The id an outside plan gave the seat (a pretix `seat_guid`), if it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

/// The id of seat `number` in row `row` of section `section`.
pub fn seat_id(section: &str, row: &str, number: &str) -> String {
    format!("{section}-{row}-{number}")
}

/// The label of seat `number` in row `row` of the section named `section_name`.
pub fn seat_label(section_name: &str, row: &str, number: &str) -> String {
    format!("{section_name}, Row {row}, Seat {number}")
}

pub(crate) fn finite(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_COORDINATE
}

impl VenueSpec {
    /// Checks the specification and generates every seat; all problems are reported at once.
    pub fn into_layout(self) -> Result<VenueLayout, ValidationErrors> {
        let mut builder = LayoutBuilder::default();
        let errors = &mut builder.errors;
        errors.check_name("name", &self.name);
        errors.check(
            !self.sections.is_empty(),
            "sections",
            "a venue needs at least one section",
        );
        builder.errors.check(
            self.shapes.len() <= MAX_SHAPES,
            "shapes",
            format!("a venue has at most {MAX_SHAPES} shapes"),
        );
        for (i, shape) in self.shapes.iter().enumerate() {
            shape.check(&format!("shapes[{i}]"), &mut builder.errors);
        }
        let sections = self
            .sections
            .into_iter()
            .enumerate()
            .map(|(si, spec)| builder.section(&format!("sections[{si}]"), spec))
            .collect();
        if let Some(p) = self.focal_point {
            builder.errors.check(
                p.x.is_finite() && p.y.is_finite(),
                "focal_point",
                "a focal point's x and y are finite numbers",
            );
        }
        let time_zone =
            crate::local_time::check(self.time_zone.as_deref(), "time_zone", &mut builder.errors);
        builder.errors.into_result(VenueLayout {
            name: self.name,
            sections,
            shapes: self.shapes,
            focal_point: self.focal_point,
            time_zone: time_zone.unwrap_or_else(default_zone),
        })
    }
}

/// What generating a venue's seats keeps track of across its sections.
#[derive(Default)]
struct LayoutBuilder {
    errors: ValidationErrors,
    section_ids: HashSet<String>,
    seat_ids: HashSet<String>,
    /// Seats generated so far, against [`MAX_SEATS_PER_VENUE`].
    total: usize,
}

impl LayoutBuilder {
    /// Checks a section (at `at`) and generates its rows.
    fn section(&mut self, at: &str, spec: SectionSpec) -> Section {
        let errors = &mut self.errors;
        // A section whose id is wrong would only repeat that problem in its seat ids.
        let id_ok = errors.check(
            is_word(&spec.id, MAX_SECTION_ID_LEN),
            format!("{at}.id"),
            "must match [A-Za-z0-9_]{1,32}",
        ) && errors.check(
            self.section_ids.insert(spec.id.clone()),
            format!("{at}.id"),
            format!("section id {:?} is used twice", spec.id),
        );
        errors.check_name(format!("{at}.name"), &spec.name);
        errors.check(
            finite(spec.origin.x) && finite(spec.origin.y),
            format!("{at}.origin"),
            "coordinates must be finite numbers",
        );
        for (field, v) in [
            ("seat_spacing", spec.seat_spacing),
            ("row_spacing", spec.row_spacing),
        ] {
            errors.check(
                finite(v) && v > 0.0,
                format!("{at}.{field}"),
                "must be a positive number",
            );
        }
        errors.check(
            !spec.rows.is_empty(),
            format!("{at}.rows"),
            "a section needs at least one row",
        );
        let mut labels = HashSet::new();
        let rows = spec
            .rows
            .iter()
            .enumerate()
            .filter_map(|(ri, row)| {
                self.row(
                    &format!("{at}.rows[{ri}]"),
                    &spec,
                    ri,
                    row,
                    id_ok,
                    &mut labels,
                )
            })
            .collect();
        Section {
            id: spec.id,
            name: spec.name,
            origin: spec.origin,
            seat_spacing: spec.seat_spacing,
            row_spacing: spec.row_spacing,
            rows,
        }
    }

    /// Checks the `ri`th row of `section` (at `at`) and generates its seats; `None` when
    /// its label is wrong (its seats' ids would only repeat that problem) or its seats are.
    fn row(
        &mut self,
        at: &str,
        section: &SectionSpec,
        ri: usize,
        row: &RowSpec,
        section_ok: bool,
        labels: &mut HashSet<String>,
    ) -> Option<Row> {
        let label_ok = self.errors.check(
            is_word(&row.label, MAX_LABEL_LEN),
            format!("{at}.label"),
            "must match [A-Za-z0-9_]{1,16}",
        ) && self.errors.check(
            labels.insert(row.label.clone()),
            format!("{at}.label"),
            format!("row {:?} is used twice in this section", row.label),
        );
        if !label_ok {
            return None;
        }
        let y = section.origin.y + ri as f64 * section.row_spacing;
        let row_given = given!(row);
        row_given.check(at, &mut self.errors);
        let numbered = self.numbered_seats(at, section, row, y)?;
        self.total += numbered.len();
        let mut seats = Vec::with_capacity(numbered.len());
        for (i, (number, x, y)) in numbered.into_iter().enumerate() {
            let id = seat_id(&section.id, &row.label, &number);
            if section_ok && !self.seat_ids.insert(id.clone()) {
                self.errors.add(
                    format!("{at}.seats[{i}]"),
                    format!("seat id {id:?} is used twice in the venue"),
                );
            }
            let label = seat_label(&section.name, &row.label, &number);
            let (own, external_id) = match &row.seats {
                RowSeats::List(list) => {
                    let own = given!(list[i]);
                    own.check(&format!("{at}.seats[{i}]"), &mut self.errors);
                    (own, list[i].external_id.clone())
                }
                RowSeats::Count(_) => (Given::default(), None),
            };
            seats.push(Seat {
                id,
                number,
                label,
                x,
                y,
                attributes: own.over(&row_given),
                external_id,
            });
        }
        Some(Row {
            label: row.label.clone(),
            seats,
        })
    }

    /// The row's seat numbers with their coordinates: counted from `first_number` along a
    /// line from the section's origin, or as listed; `None` if they are not valid.
    fn numbered_seats(
        &mut self,
        at: &str,
        section: &SectionSpec,
        row: &RowSpec,
        y: f64,
    ) -> Option<Vec<(String, f64, f64)>> {
        let errors = &mut self.errors;
        let fits = |n: usize| self.total + n <= MAX_SEATS_PER_VENUE;
        match &row.seats {
            RowSeats::Count(n) => {
                let (n, first) = (*n, row.first_number.unwrap_or(1));
                let ok = errors.check(
                    n >= 1,
                    format!("{at}.seats"),
                    "a row needs at least one seat",
                ) & errors.check(
                    fits(n as usize),
                    format!("{at}.seats"),
                    format!("a venue has at most {MAX_SEATS_PER_VENUE} seats"),
                ) & errors.check(
                    u64::from(first) + u64::from(n) <= MAX_COORDINATE as u64,
                    format!("{at}.first_number"),
                    "seat numbers must stay below 1000000",
                );
                let arc_ok = row.arc.as_ref().is_none_or(|arc| arc.check(at, errors));
                let numbers = (first..).map(|n| n.to_string());
                (ok && arc_ok).then(|| match &row.arc {
                    Some(arc) => numbers
                        .zip(arc.positions(n))
                        .map(|(number, (x, y))| (number, x, y))
                        .collect(),
                    None => numbers
                        .zip(0..n)
                        .map(|(number, i)| {
                            let x = section.origin.x + f64::from(i) * section.seat_spacing;
                            (number, x, y)
                        })
                        .collect(),
                })
            }
            RowSeats::List(list) => {
                for (field, given) in [
                    ("first_number", row.first_number.is_some()),
                    ("arc", row.arc.is_some()),
                ] {
                    errors.check(
                        !given,
                        format!("{at}.{field}"),
                        "only applies to a row given by a seat count",
                    );
                }
                let ok = errors.check(
                    !list.is_empty(),
                    format!("{at}.seats"),
                    "a row needs at least one seat",
                ) & errors.check(
                    fits(list.len()),
                    format!("{at}.seats"),
                    format!("a venue has at most {MAX_SEATS_PER_VENUE} seats"),
                );
                if !ok {
                    return None;
                }
                for (i, s) in list.iter().enumerate() {
                    errors.check(
                        is_word(&s.number, MAX_LABEL_LEN),
                        format!("{at}.seats[{i}].number"),
                        "must match [A-Za-z0-9_]{1,16}",
                    );
                    errors.check(
                        finite(s.x) && finite(s.y),
                        format!("{at}.seats[{i}]"),
                        "coordinates must be finite numbers",
                    );
                }
                Some(list.iter().map(|s| (s.number.clone(), s.x, s.y)).collect())
            }
        }
    }
}

impl VenueLayout {
    /// Number of seats in the venue.
    pub fn seat_count(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|s| &s.rows)
            .map(|r| r.seats.len())
            .sum()
    }

    /// Every seat with its section and row, in venue order.
    pub fn seats(&self) -> impl Iterator<Item = (&Section, &Row, &Seat)> {
        self.sections.iter().flat_map(|s| {
            s.rows
                .iter()
                .flat_map(move |r| r.seats.iter().map(move |seat| (s, r, seat)))
        })
    }

    /// An index for looking seats up by id, section or row.
    pub fn index(&self) -> VenueIndex<'_> {
        VenueIndex::new(self)
    }
}

#[cfg(test)]
mod tests;
