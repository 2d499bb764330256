//! What the importers share: section ids made from outside names, and errors found in the
//! venue an importer built, told in the words of the file it read.

use std::collections::HashSet;

use super::{RowSeats, RowSpec, MAX_SECTION_ID_LEN};
use crate::validation::{FieldError, ValidationErrors};

/// A valid section id made from `raw` (a pretix `zone_id`, a zone or section name): every
/// run of characters outside `[A-Za-z0-9_]` becomes one `_`, cut to 32 characters, and
/// made unique among `taken` with a `_2`, `_3`… suffix; `zone` when nothing is left.
pub(super) fn section_id(raw: &str, taken: &mut HashSet<String>) -> String {
    let mut id = String::new();
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            id.push(c);
        } else if !id.ends_with('_') {
            id.push('_');
        }
    }
    let id = id.trim_matches('_');
    let base: String = if id.is_empty() { "zone" } else { id }
        .chars()
        .take(MAX_SECTION_ID_LEN)
        .collect();
    let mut candidate = base.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        let suffix = format!("_{n}");
        let keep = MAX_SECTION_ID_LEN - suffix.len();
        candidate = format!("{}{suffix}", &base[..base.len().min(keep)]);
        n += 1;
    }
    candidate
}

/// A row labelled `label` whose seats the importer lists.
pub(super) fn listed_row(label: &str) -> RowSpec {
    RowSpec {
        label: label.to_owned(),
        seats: RowSeats::List(Vec::new()),
        first_number: None,
        arc: None,
        category: None,
        accessible: None,
        companion: None,
        restricted_view: None,
    }
}

/// Where in a [`VenueSpec`](super::VenueSpec) an error was found:
/// `sections[s].rows[r].seats[i]<rest>`, as far as the path goes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct SpecPath<'a> {
    pub section: Option<usize>,
    pub row: Option<usize>,
    pub seat: Option<usize>,
    /// What follows, e.g. `.number`, `.category`, or nothing.
    pub rest: &'a str,
}

impl<'a> SpecPath<'a> {
    /// Reads a field path the venue checks produce.
    pub fn parse(field: &'a str) -> Self {
        let mut path = SpecPath {
            rest: field,
            ..SpecPath::default()
        };
        for (prefix, slot) in [
            ("sections[", &mut path.section),
            (".rows[", &mut path.row),
            (".seats[", &mut path.seat),
        ] {
            let Some(after) = path.rest.strip_prefix(prefix) else {
                break;
            };
            let Some((index, rest)) = after.split_once(']') else {
                break;
            };
            let Ok(index) = index.parse() else { break };
            *slot = Some(index);
            path.rest = rest;
        }
        path
    }
}

/// The same errors, each field renamed by `place` from where it was found in the venue the
/// importer built to where it came from in the imported file.
pub(super) fn relocate(
    errors: ValidationErrors,
    place: impl Fn(&SpecPath<'_>) -> String,
) -> ValidationErrors {
    ValidationErrors(
        errors
            .0
            .into_iter()
            .map(|e| FieldError {
                field: place(&SpecPath::parse(&e.field)),
                message: e.message,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_ids_are_words_and_unique() {
        let mut taken = HashSet::new();
        let ids: Vec<_> = [
            "Front stalls",
            "front-stalls!",
            "Front stalls",
            "",
            "  ",
            "é",
        ]
        .into_iter()
        .map(|raw| section_id(raw, &mut taken))
        .collect();
        assert_eq!(
            ids,
            [
                "Front_stalls",
                "front_stalls",
                "Front_stalls_2",
                "zone",
                "zone_2",
                "zone_3"
            ]
        );
        let long = "x".repeat(40);
        let first = section_id(&long, &mut taken);
        let second = section_id(&long, &mut taken);
        assert_eq!(first.len(), 32);
        assert_eq!(second, format!("{}_2", "x".repeat(30)));
    }

    #[test]
    fn spec_paths_are_read_as_far_as_they_go() {
        assert_eq!(
            SpecPath::parse("sections[2].rows[10].seats[3].number"),
            SpecPath {
                section: Some(2),
                row: Some(10),
                seat: Some(3),
                rest: ".number"
            }
        );
        assert_eq!(
            SpecPath::parse("sections[1].id"),
            SpecPath {
                section: Some(1),
                rest: ".id",
                ..SpecPath::default()
            }
        );
        assert_eq!(
            SpecPath::parse("name"),
            SpecPath {
                rest: "name",
                ..SpecPath::default()
            }
        );
    }
}
