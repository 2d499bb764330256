//! Looking seats up by position (venue order), id, section, row and category.

use std::collections::HashMap;
use std::ops::Range;

use super::VenueLayout;

/// Seats of a venue addressable by position (venue order), id, section, row and category.
#[derive(Debug)]
pub struct VenueIndex<'a> {
    /// Seat ids in venue order; a seat's position is its index here.
    pub ids: Vec<&'a str>,
    by_id: HashMap<&'a str, usize>,
    sections: HashMap<&'a str, SectionIndex<'a>>,
    /// Positions of each category's seats, in venue order.
    categories: HashMap<&'a str, Vec<usize>>,
}

/// A section's seat positions, and each of its rows'.
type SectionIndex<'a> = (Range<usize>, HashMap<&'a str, Range<usize>>);

impl<'a> VenueIndex<'a> {
    pub(super) fn new(layout: &'a VenueLayout) -> Self {
        let mut ids = Vec::with_capacity(layout.seat_count());
        let mut sections = HashMap::new();
        for section in &layout.sections {
            let start = ids.len();
            let mut rows = HashMap::new();
            for row in &section.rows {
                let row_start = ids.len();
                ids.extend(row.seats.iter().map(|s| s.id.as_str()));
                rows.insert(row.label.as_str(), row_start..ids.len());
            }
            sections.insert(section.id.as_str(), (start..ids.len(), rows));
        }
        let by_id = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let mut categories: HashMap<&str, Vec<usize>> = HashMap::new();
        for (position, (_, _, seat)) in layout.seats().enumerate() {
            if let Some(category) = &seat.attributes.category {
                categories.entry(category).or_default().push(position);
            }
        }
        Self {
            ids,
            by_id,
            sections,
            categories,
        }
    }

    /// Position of the seat with this id.
    pub fn position(&self, seat_id: &str) -> Option<usize> {
        self.by_id.get(seat_id).copied()
    }

    /// Positions of the seats of this category, in venue order; `None` if no seat has it.
    pub fn category(&self, category: &str) -> Option<&[usize]> {
        self.categories.get(category).map(Vec::as_slice)
    }

    /// True when the venue has a section with this id.
    pub fn has_section(&self, section: &str) -> bool {
        self.sections.contains_key(section)
    }

    /// Positions of a whole section, or of some of its rows; `Err(label)` names a row the
    /// section does not have.
    pub fn select_rows<'r>(
        &self,
        section: &str,
        rows: Option<&'r [String]>,
    ) -> Option<Result<Vec<usize>, &'r str>> {
        let (all, by_label) = self.sections.get(section)?;
        Some(match rows {
            None => Ok(all.clone().collect()),
            Some(labels) => labels
                .iter()
                .map(|l| by_label.get(l.as_str()).cloned().ok_or(l.as_str()))
                .collect::<Result<Vec<_>, _>>()
                .map(|ranges| ranges.into_iter().flatten().collect()),
        })
    }
}
