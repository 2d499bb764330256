//! Seat selectors resolved against a venue: which seats an allocation entry or a
//! withdrawal names.

use std::collections::HashSet;

use super::{Allocation, AllocationEntry, WithdrawSpec};
use crate::validation::ValidationErrors;
use crate::venue::VenueIndex;

/// Resolves one seat selector (a section with optional rows, or seat ids) to positions in
/// the venue, reporting what does not exist under `at`.
fn select_seats(
    index: &VenueIndex<'_>,
    section: Option<&str>,
    rows: Option<&[String]>,
    seats: Option<&[String]>,
    at: &str,
    errors: &mut ValidationErrors,
) -> Vec<usize> {
    match (section, seats) {
        (Some(_), Some(_)) => {
            errors.add(
                at,
                "give either section (with optional rows) or seats, not both",
            );
            Vec::new()
        }
        (None, None) => {
            errors.add(at, "give a section (with optional rows) or a list of seats");
            Vec::new()
        }
        (None, Some(seats)) => {
            errors.check(rows.is_none(), format!("{at}.rows"), "rows need a section");
            errors.check(
                !seats.is_empty(),
                format!("{at}.seats"),
                "must name at least one seat",
            );
            let mut positions = Vec::with_capacity(seats.len());
            for (i, id) in seats.iter().enumerate() {
                match index.position(id) {
                    Some(p) => positions.push(p),
                    None => errors.add(
                        format!("{at}.seats[{i}]"),
                        format!("the venue has no seat {id:?}"),
                    ),
                }
            }
            positions
        }
        (Some(section), None) => {
            if let Some(rows) = rows {
                errors.check(
                    !rows.is_empty(),
                    format!("{at}.rows"),
                    "must name at least one row",
                );
            }
            match index.select_rows(section, rows) {
                None => {
                    errors.add(
                        format!("{at}.section"),
                        format!("the venue has no section {section:?}"),
                    );
                    Vec::new()
                }
                Some(Err(row)) => {
                    errors.add(
                        format!("{at}.rows"),
                        format!("section {section:?} has no row {row:?}"),
                    );
                    Vec::new()
                }
                Some(Ok(positions)) => positions,
            }
        }
    }
}

/// Applies allocation entries in order, later entries overriding earlier ones, and returns
/// the allocation of every seat named, in venue order. `channels` are the event's channel
/// codes, which an entry's `channel` must be one of.
pub fn resolve_allocations(
    entries: &[AllocationEntry],
    index: &VenueIndex<'_>,
    ticket_types: &HashSet<&str>,
    channels: &HashSet<&str>,
    errors: &mut ValidationErrors,
) -> Vec<Allocation> {
    let mut slots: Vec<Option<usize>> = vec![None; index.ids.len()];
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("allocations[{i}]");
        errors.check(
            ticket_types.contains(entry.ticket_type.as_str()),
            format!("{at}.ticket_type"),
            format!("the event has no ticket type {:?}", entry.ticket_type),
        );
        if let Some(channel) = &entry.channel {
            errors.check(
                channels.contains(channel.as_str()),
                format!("{at}.channel"),
                format!("the event has no channel {channel:?}"),
            );
        }
        let positions = match &entry.category {
            Some(category) => {
                let alone =
                    entry.section.is_none() && entry.rows.is_none() && entry.seats.is_none();
                errors.check(
                    alone,
                    at.clone(),
                    "give a category alone, without section, rows or seats",
                );
                match index.category(category) {
                    Some(positions) if alone => positions.to_vec(),
                    Some(_) => Vec::new(),
                    None => {
                        errors.add(
                            format!("{at}.category"),
                            format!("no seat of the venue has category {category:?}"),
                        );
                        Vec::new()
                    }
                }
            }
            None => select_seats(
                index,
                entry.section.as_deref(),
                entry.rows.as_deref(),
                entry.seats.as_deref(),
                &at,
                errors,
            ),
        };
        for p in positions {
            slots[p] = Some(i);
        }
    }
    slots
        .into_iter()
        .enumerate()
        .filter_map(|(p, entry)| {
            entry.map(|e| Allocation {
                seat: index.ids[p].to_owned(),
                ticket_type: entries[e].ticket_type.clone(),
                channel: entries[e].channel.clone(),
            })
        })
        .collect()
}

impl WithdrawSpec {
    /// The ids of the seats to withdraw, in venue order.
    pub fn resolve(&self, index: &VenueIndex<'_>) -> Result<Vec<String>, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let mut positions = select_seats(
            index,
            self.section.as_deref(),
            self.rows.as_deref(),
            self.seats.as_deref(),
            "",
            &mut errors,
        );
        // The selector reports paths relative to the body itself.
        for e in &mut errors.0 {
            e.field = e.field.trim_start_matches('.').to_owned();
            if e.field.is_empty() {
                e.field = "seats".to_owned();
            }
        }
        positions.sort_unstable();
        positions.dedup();
        errors.into_result(
            positions
                .into_iter()
                .map(|p| index.ids[p].to_owned())
                .collect(),
        )
    }
}
