//! pretix seating plans (the `seating-plan.schema.json`, version 0.0.1, that pretix ships in
//! its package): a plan read into a venue, and a venue written as a plan.
//!
//! The types mirror the schema: every property it names, required where it requires them,
//! and nothing else (it says `additionalProperties: false` throughout), so a plan serde reads
//! is one the schema accepts, and one it refuses is refused at the path of the first field
//! at fault (`zones[0].rows[3].seats[2].position`). What the schema cannot say (a
//! `seat_guid` used twice, a seat number twice in a row) and what a venue needs (row and
//! seat numbers that make seat ids) is checked after, and reported all at once.
//!
//! A seat's position is its zone's plus its row's plus its own, as pretix computes it.
//! pretix has no wheelchair flag: a wheelchair space is a seat of its own category there. So
//! a category may end in marks, `Stalls [accessible]`, `[companion]`, `[restricted view]`,
//! which become the seat's attributes; an export writes them the same way, and a seat
//! without a category gets the category `""`.

use std::collections::{HashMap, HashSet};

use super::import::{listed_row, relocate, section_id, SpecPath};
use super::{
    Point, RowSeats, RowSpec, SeatAttributes, SeatSpec, SectionSpec, VenueLayout, VenueSpec,
    MAX_SHAPES,
};
use crate::validation::ValidationErrors;

mod areas;
mod schema;
pub use schema::*;

/// Longest `seat_guid` kept (pretix stores it in 190 characters).
pub const MAX_SEAT_GUID_LEN: usize = 190;

/// The attribute marks a category name may end in.
const MARKS: [(&str, Mark); 3] = [
    ("[accessible]", Mark::Accessible),
    ("[companion]", Mark::Companion),
    ("[restricted view]", Mark::RestrictedView),
];

#[derive(Clone, Copy)]
enum Mark {
    Accessible,
    Companion,
    RestrictedView,
}

/// A pretix category read as a seat's category and attributes.
fn read_category(raw: &str) -> (Option<String>, SeatAttributes) {
    let mut attributes = SeatAttributes::default();
    let mut rest = raw;
    'marks: loop {
        for (mark, which) in MARKS {
            if let Some(before) = rest.strip_suffix(mark) {
                match which {
                    Mark::Accessible => attributes.accessible = true,
                    Mark::Companion => attributes.companion = true,
                    Mark::RestrictedView => attributes.restricted_view = true,
                }
                rest = before.strip_suffix(' ').unwrap_or(before);
                continue 'marks;
            }
        }
        break;
    }
    let category = (!rest.is_empty()).then(|| rest.to_owned());
    (category, attributes)
}

/// A seat's category and attributes written as a pretix category.
fn write_category(attributes: &SeatAttributes) -> String {
    let mut name = attributes.category.clone().unwrap_or_default();
    for (mark, which) in MARKS {
        let set = match which {
            Mark::Accessible => attributes.accessible,
            Mark::Companion => attributes.companion,
            Mark::RestrictedView => attributes.restricted_view,
        };
        if set {
            if !name.is_empty() {
                name.push(' ');
            }
            name.push_str(mark);
        }
    }
    name
}

/// Whether a `seat_guid` matches the schema's `^[^ ].*[^ ]$`: two characters at least, the
/// first and last not a space, none a line break.
fn guid_ok(guid: &str) -> bool {
    guid.chars().count() >= 2
        && !guid.starts_with(' ')
        && !guid.ends_with(' ')
        && !guid.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// Where the seats of one section of the imported venue came from in the plan.
struct Origin {
    zone: usize,
    /// For each row of the section: the plan row and seat of each of its seats, and the
    /// plan row it was first named in.
    rows: Vec<(usize, Vec<(usize, usize)>)>,
}

impl Plan {
    /// The venue the plan describes, named `name` or else as the plan is; every problem
    /// found, at its path in the plan.
    pub fn into_layout(self, name: Option<String>) -> Result<VenueLayout, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        for (field, v) in [
            ("size.width", self.size.width),
            ("size.height", self.size.height),
        ] {
            errors.check(
                v.is_finite() && v.fract() == 0.0,
                field,
                "must be an integer",
            );
        }
        let mut guids: HashMap<&str, String> = HashMap::new();
        let mut taken = HashSet::new();
        let mut sections = Vec::new();
        let mut origins = Vec::new();
        let mut shapes = Vec::new();
        for (zi, zone) in self.zones.iter().enumerate() {
            let at = format!("zones[{zi}]");
            shapes.extend(
                zone.areas
                    .iter()
                    .flatten()
                    .filter_map(|area| area.to_shape(zone.position)),
            );
            let mut rows: Vec<RowSpec> = Vec::new();
            let mut row_origins: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
            let mut by_number: HashMap<&str, usize> = HashMap::new();
            for (ri, row) in zone.rows.iter().enumerate() {
                if row.seats.is_empty() {
                    continue;
                }
                let offset = row.position.unwrap_or_default();
                let (x0, y0) = (zone.position.x + offset.x, zone.position.y + offset.y);
                let slot = *by_number.entry(&row.row_number).or_insert_with(|| {
                    rows.push(listed_row(&row.row_number));
                    row_origins.push((ri, Vec::new()));
                    rows.len() - 1
                });
                let RowSeats::List(list) = &mut rows[slot].seats else {
                    unreachable!("imported rows list their seats")
                };
                for (si, seat) in row.seats.iter().enumerate() {
                    let guid_at = format!("{at}.rows[{ri}].seats[{si}].seat_guid");
                    if !guid_ok(&seat.seat_guid) {
                        errors.add(
                            guid_at,
                            "must match ^[^ ].*[^ ]$: two characters at least, not starting \
                             or ending with a space",
                        );
                    } else if seat.seat_guid.chars().count() > MAX_SEAT_GUID_LEN {
                        errors.add(guid_at, "must be at most 190 characters");
                    } else if let Some(first) = guids.get(seat.seat_guid.as_str()) {
                        errors.add(
                            guid_at,
                            format!(
                                "seat_guid {:?} is used twice (first at {first})",
                                seat.seat_guid
                            ),
                        );
                    } else {
                        guids.insert(&seat.seat_guid, guid_at);
                    }
                    let (category, attributes) = read_category(&seat.category);
                    let (x, y) = (x0 + seat.position.x, y0 + seat.position.y);
                    // Checked here to be named as the position; the venue's own check
                    // names the seat, which for a plan means its number is repeated.
                    let placed = errors.check(
                        super::finite(x) && super::finite(y),
                        format!("{at}.rows[{ri}].seats[{si}].position"),
                        "coordinates must be finite numbers, at most 1000000 from 0",
                    );
                    list.push(SeatSpec {
                        number: seat.seat_number.clone(),
                        x: if placed { x } else { 0.0 },
                        y: if placed { y } else { 0.0 },
                        category,
                        accessible: attributes.accessible.then_some(true),
                        companion: attributes.companion.then_some(true),
                        restricted_view: attributes.restricted_view.then_some(true),
                        external_id: Some(seat.seat_guid.clone()),
                    });
                    row_origins[slot].1.push((ri, si));
                }
            }
            if rows.is_empty() {
                // A zone without seats (a stage, a bar) brings only its areas.
                continue;
            }
            let named = |s: &Option<String>| s.clone().filter(|s| !s.trim().is_empty());
            let id = section_id(
                named(&zone.zone_id)
                    .or(named(&zone.name))
                    .as_deref()
                    .unwrap_or(""),
                &mut taken,
            );
            sections.push(SectionSpec {
                id,
                name: named(&zone.name)
                    .or(named(&zone.zone_id))
                    .unwrap_or_else(|| format!("Zone {}", zi + 1)),
                origin: Point::default(),
                seat_spacing: 1.0,
                row_spacing: 1.0,
                rows,
            });
            origins.push(Origin {
                zone: zi,
                rows: row_origins,
            });
        }
        errors.check(
            shapes.len() <= MAX_SHAPES,
            "zones",
            format!("a venue has at most {MAX_SHAPES} shapes: the plan's areas are more"),
        );
        let spec = VenueSpec {
            organization_id: None,
            name: name.unwrap_or(self.name),
            sections,
            shapes,
            focal_point: None,
            time_zone: None,
        };
        let layout = spec
            .into_layout()
            .map_err(|found| relocate(found, |path| plan_path(&origins, path)));
        match (errors.is_empty(), layout) {
            (true, layout) => layout,
            (false, Ok(_)) => Err(errors),
            (false, Err(more)) => {
                errors.0.extend(more.0);
                Err(errors)
            }
        }
    }

    /// The plan of a venue: one zone per section (its `zone_id` the section's id), one
    /// category per seat category, each seat's `seat_guid` its external id when it has one,
    /// else its id; the venue's shapes as areas of the first zone.
    pub fn from_layout(layout: &VenueLayout) -> Plan {
        let mut categories: Vec<String> = Vec::new();
        let mut known = HashSet::new();
        let (mut width, mut height) = (0.0f64, 0.0f64);
        let mut zones: Vec<Zone> = layout
            .sections
            .iter()
            .map(|section| Zone {
                name: Some(section.name.clone()),
                zone_id: Some(section.id.clone()),
                uuid: None,
                position: Point::default(),
                areas: None,
                rows: section
                    .rows
                    .iter()
                    .map(|row| Row {
                        row_number: row.label.clone(),
                        row_label: None,
                        seat_label: None,
                        uuid: None,
                        row_number_position: None,
                        position: None,
                        seats: row
                            .seats
                            .iter()
                            .map(|seat| {
                                let category = write_category(&seat.attributes);
                                if known.insert(category.clone()) {
                                    categories.push(category.clone());
                                }
                                (width, height) = (width.max(seat.x), height.max(seat.y));
                                PlanSeat {
                                    seat_guid: seat
                                        .external_id
                                        .clone()
                                        .unwrap_or_else(|| seat.id.clone()),
                                    seat_number: seat.number.clone(),
                                    uuid: None,
                                    start_direction: None,
                                    radius: None,
                                    position: Point {
                                        x: seat.x,
                                        y: seat.y,
                                    },
                                    category,
                                }
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        let areas: Vec<Area> = layout.shapes.iter().map(Area::from_shape).collect();
        for shape in &layout.shapes {
            let (right, bottom) = shape.far_corner();
            (width, height) = (width.max(right), height.max(bottom));
        }
        if let (Some(first), false) = (zones.first_mut(), areas.is_empty()) {
            first.areas = Some(areas);
        }
        Plan {
            name: layout.name.clone(),
            zones,
            categories: categories
                .into_iter()
                .enumerate()
                .map(|(i, name)| Category {
                    name,
                    color: Some(PALETTE[i % PALETTE.len()].to_owned()),
                })
                .collect(),
            size: Size {
                // A margin of a seat's radius or so past the farthest seat or shape.
                width: (width + 20.0).ceil().max(1.0),
                height: (height + 20.0).ceil().max(1.0),
            },
        }
    }
}

/// Colours for exported categories, told apart by most eyes.
const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Where an error found in the venue built from the plan is in the plan itself.
fn plan_path(origins: &[Origin], path: &SpecPath<'_>) -> String {
    let Some(origin) = path.section.and_then(|s| origins.get(s)) else {
        return match path.rest {
            "sections" => "zones".to_owned(),
            other => other.to_owned(),
        };
    };
    let zone = format!("zones[{}]", origin.zone);
    let Some((first_row, seats)) = path.row.and_then(|r| origin.rows.get(r)) else {
        let rest = match path.rest {
            ".id" => ".zone_id",
            other => other,
        };
        return format!("{zone}{rest}");
    };
    let Some((row, seat)) = path.seat.and_then(|i| seats.get(i)) else {
        let rest = match path.rest {
            ".label" => ".row_number",
            other => other,
        };
        return format!("{zone}.rows[{first_row}]{rest}");
    };
    let rest = match path.rest {
        ".number" | "" => ".seat_number",
        other => other,
    };
    format!("{zone}.rows[{row}].seats[{seat}]{rest}")
}
#[cfg(test)]
mod tests;
