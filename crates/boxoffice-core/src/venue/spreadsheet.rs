//! Venues from a spreadsheet: CSV whose header line names the columns `section`, `row`,
//! `number`, `x`, `y` and, if wanted, `category`, `accessible`, `companion`,
//! `restricted_view`, in any order. One line per seat; a section is named by its name (its
//! id is made from it), rows and sections come in the order they first appear. Errors name
//! their line (`line 17`; the header is line 1).

use std::collections::HashMap;

use super::import::{listed_row, relocate, section_id, SpecPath};
use super::{Point, RowSeats, SeatSpec, SectionSpec, VenueLayout, VenueSpec};
use crate::validation::ValidationErrors;

/// Most errors reported for one file; reading stops there.
pub const MAX_REPORTED_ERRORS: usize = 1_000;

/// The columns a file may have, the first five of which it must.
const COLUMNS: [&str; 9] = [
    "section",
    "row",
    "number",
    "x",
    "y",
    "category",
    "accessible",
    "companion",
    "restricted_view",
];
const REQUIRED: usize = 5;

/// Where the seats of one section came from: the line of each seat of each row.
type Lines = Vec<Vec<u64>>;

/// The venue named `name` that the CSV text read from `input` describes; every problem
/// found (up to [`MAX_REPORTED_ERRORS`]), by line. The text is read as it comes, a buffer
/// at a time, and never held whole: a header that will not do is reported before the rest
/// is read. An error reading `input` ends the reading, reported at its line.
pub fn read_csv(input: impl std::io::Read, name: &str) -> Result<VenueLayout, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(input);
    let columns = match reader.headers() {
        Ok(header) => header_columns(header, &mut errors),
        Err(e) => {
            errors.add("line 1", format!("cannot read the header line: {e}"));
            None
        }
    };
    let Some(columns) = columns else {
        return Err(errors);
    };
    let mut sections: Vec<SectionSpec> = Vec::new();
    let mut lines: Vec<Lines> = Vec::new();
    let mut section_index: HashMap<String, usize> = HashMap::new();
    let mut row_index: HashMap<(usize, String), usize> = HashMap::new();
    let mut taken = std::collections::HashSet::new();
    let mut record = csv::StringRecord::new();
    let mut last_line = 1;
    loop {
        if errors.0.len() >= MAX_REPORTED_ERRORS {
            errors.add(
                format!("line {last_line}"),
                format!("stopped reading after {MAX_REPORTED_ERRORS} errors"),
            );
            return Err(errors);
        }
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(last_line + 1, |p| p.line());
                errors.add(format!("line {line}"), csv_problem(&e));
                if e.is_io_error() || e.position().is_none() {
                    return Err(errors);
                }
                last_line = line;
                continue;
            }
        }
        let line = record.position().map_or(last_line + 1, |p| p.line());
        last_line = line;
        let at = format!("line {line}");
        let field = |column: usize| columns[column].map_or("", |i| &record[i]);
        let Some(seat) = seat(&at, &field, &mut errors) else {
            continue;
        };
        let (section_name, row_label) = (field(0), field(1));
        let s = *section_index
            .entry(section_name.to_owned())
            .or_insert_with(|| {
                sections.push(SectionSpec {
                    id: section_id(section_name, &mut taken),
                    name: section_name.to_owned(),
                    origin: Point::default(),
                    seat_spacing: 1.0,
                    row_spacing: 1.0,
                    rows: Vec::new(),
                });
                lines.push(Vec::new());
                sections.len() - 1
            });
        let r = *row_index
            .entry((s, row_label.to_owned()))
            .or_insert_with(|| {
                sections[s].rows.push(listed_row(row_label));
                lines[s].push(Vec::new());
                sections[s].rows.len() - 1
            });
        if let RowSeats::List(list) = &mut sections[s].rows[r].seats {
            list.push(seat);
        }
        lines[s][r].push(line);
    }
    if sections.is_empty() && errors.is_empty() {
        errors.add("line 2", "the file has no seats below its header line");
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let spec = VenueSpec {
        organization_id: None,
        name: name.to_owned(),
        sections,
        shapes: Vec::new(),
        focal_point: None,
        time_zone: None,
    };
    spec.into_layout()
        .map_err(|found| relocate(found, |path| line_of(&lines, path)))
}

/// The column index of each of [`COLUMNS`] in the header, or `None` after recording why the
/// header will not do.
fn header_columns(
    header: &csv::StringRecord,
    errors: &mut ValidationErrors,
) -> Option<[Option<usize>; COLUMNS.len()]> {
    let mut columns = [None; COLUMNS.len()];
    for (i, name) in header.iter().enumerate() {
        let name = name.trim_start_matches('\u{feff}').to_ascii_lowercase();
        match COLUMNS.iter().position(|c| *c == name) {
            Some(c) if columns[c].is_none() => columns[c] = Some(i),
            Some(_) => errors.add("line 1", format!("column {name:?} is named twice")),
            None => errors.add(
                "line 1",
                format!(
                    "unknown column {name:?}; the columns are {}",
                    COLUMNS.join(", ")
                ),
            ),
        }
    }
    for (c, column) in COLUMNS.iter().enumerate().take(REQUIRED) {
        if columns[c].is_none() {
            errors.add(
                "line 1",
                format!("the header line has no column {column:?}"),
            );
        }
    }
    errors.is_empty().then_some(columns)
}

/// The seat one line describes, or `None` after recording what is wrong with it.
fn seat<'a>(
    at: &str,
    field: &impl Fn(usize) -> &'a str,
    errors: &mut ValidationErrors,
) -> Option<SeatSpec> {
    let before = errors.0.len();
    for (column, what) in [(0, "section"), (1, "row"), (2, "number")] {
        errors.check(!field(column).is_empty(), at, format!("{what} is empty"));
    }
    let mut number = |column: usize| {
        let text = field(column);
        let value = text.parse::<f64>().ok().filter(|v| v.is_finite());
        if value.is_none() {
            errors.add(at, format!("{}: {text:?} is not a number", COLUMNS[column]));
        }
        value.unwrap_or_default()
    };
    let (x, y) = (number(3), number(4));
    let mut flag = |column: usize| match field(column).to_ascii_lowercase().as_str() {
        "" | "false" | "no" | "0" => None,
        "true" | "yes" | "1" => Some(true),
        other => {
            errors.add(
                at,
                format!("{}: {other:?} is not true or false", COLUMNS[column]),
            );
            None
        }
    };
    let (accessible, companion, restricted_view) = (flag(6), flag(7), flag(8));
    let category = Some(field(5)).filter(|c| !c.is_empty()).map(str::to_owned);
    (errors.0.len() == before).then(|| SeatSpec {
        number: field(2).to_owned(),
        x,
        y,
        category,
        accessible,
        companion,
        restricted_view,
        external_id: None,
    })
}

/// What the CSV reader could not read, in words.
fn csv_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("has {len} fields where the header line has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "is not UTF-8 text".to_owned(),
        _ => format!("cannot be read: {e}"),
    }
}

/// The line an error found in the venue built from the file is about: its seat's, or the
/// first line of its row or section.
fn line_of(lines: &[Lines], path: &SpecPath<'_>) -> String {
    let section = path.section.and_then(|s| lines.get(s));
    let row = section.zip(path.row).and_then(|(rows, r)| rows.get(r));
    let line = match (section, row, path.seat) {
        (_, Some(seats), Some(i)) => seats.get(i).copied(),
        (_, Some(seats), None) => seats.first().copied(),
        (Some(rows), None, _) => rows.first().and_then(|r| r.first()).copied(),
        (None, ..) => None,
    };
    match line {
        Some(line) => format!("line {line}"),
        None if path.rest == "name" => "name".to_owned(),
        None => "line 1".to_owned(),
    }
}

#[cfg(test)]
mod tests;
