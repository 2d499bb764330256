//! Unit tests of [`super`].

use super::*;

fn fields(errors: &ValidationErrors) -> Vec<(&str, &str)> {
    errors
        .0
        .iter()
        .map(|e| (e.field.as_str(), e.message.as_str()))
        .collect()
}

#[test]
fn columns_come_in_any_order_and_seats_group_by_section_and_row() {
    let text = "\u{feff}y,x,Number,row,section,category,accessible\n\
                0,0,1,A,Front stalls,Front,\n\
                0,1.5,2,A,Front stalls,Front,yes\n\
                2,0,1,B,Front stalls,,\n\
                9,0,1,A,Balcony,Balcony,false\n\
                0,3,3,A,Front stalls,Front,0\n";
    let layout = read_csv(text.as_bytes(), "From a sheet").unwrap();
    assert_eq!(layout.name, "From a sheet");
    let sections: Vec<_> = layout
        .sections
        .iter()
        .map(|s| (s.id.as_str(), s.name.as_str(), s.rows.len()))
        .collect();
    assert_eq!(
        sections,
        [
            ("Front_stalls", "Front stalls", 2),
            ("Balcony", "Balcony", 1)
        ]
    );
    let seats: Vec<_> = layout
        .seats()
        .map(|(_, _, s)| (s.id.as_str(), s.x, s.y, s.attributes.accessible))
        .collect();
    assert_eq!(
        seats,
        [
            ("Front_stalls-A-1", 0.0, 0.0, false),
            ("Front_stalls-A-2", 1.5, 0.0, true),
            ("Front_stalls-A-3", 3.0, 0.0, false),
            ("Front_stalls-B-1", 0.0, 2.0, false),
            ("Balcony-A-1", 0.0, 9.0, false),
        ]
    );
    let b1 = &layout.sections[0].rows[1].seats[0];
    assert_eq!(b1.attributes.category, None);
    assert_eq!(b1.label, "Front stalls, Row B, Seat 1");
}

#[test]
fn a_header_without_the_needed_columns_is_refused_at_line_1() {
    let errors = read_csv(&b"section,row,number,x,colour,x\n"[..], "Hall").unwrap_err();
    assert_eq!(
        fields(&errors),
        [
            (
                "line 1",
                "unknown column \"colour\"; the columns are section, row, number, x, y, \
                 category, accessible, companion, restricted_view"
            ),
            ("line 1", "column \"x\" is named twice"),
            ("line 1", "the header line has no column \"y\""),
        ]
    );
}

#[test]
fn every_bad_line_is_named() {
    let text = "section,row,number,x,y,accessible\n\
                Stalls,A,1,0,0,\n\
                Stalls,A,2,zero,0,\n\
                Stalls,A,1,2,0,\n\
                Stalls,A,4,3\n\
                Stalls,A,5,4,0,maybe\n\
                Stalls,A b,6,5,0,\n\
                ,A,7,6,0,\n";
    let errors = read_csv(text.as_bytes(), "Hall").unwrap_err();
    assert_eq!(
        fields(&errors),
        [
            ("line 3", "x: \"zero\" is not a number"),
            ("line 5", "has 4 fields where the header line has 6"),
            ("line 6", "accessible: \"maybe\" is not true or false"),
            ("line 8", "section is empty"),
        ]
    );
    // Once each line reads, what the venue checks is named by line too.
    let text = "section,row,number,x,y\n\
                Stalls,A,1,0,0\n\
                Stalls,A,1,2,0\n\
                Stalls,A b,6,5,0\n\
                Stalls,B,7-1,6,0\n";
    let errors = read_csv(text.as_bytes(), "Hall").unwrap_err();
    let lines: Vec<_> = fields(&errors).into_iter().map(|(f, _)| f).collect();
    assert_eq!(lines, ["line 3", "line 4", "line 5"], "{errors}");
}

#[test]
fn an_empty_file_and_a_bad_name_are_refused() {
    let errors = read_csv(&b"section,row,number,x,y\n"[..], "Hall").unwrap_err();
    assert_eq!(
        fields(&errors),
        [("line 2", "the file has no seats below its header line")]
    );
    let errors = read_csv(&b"section,row,number,x,y\nS,A,1,0,0\n"[..], " ").unwrap_err();
    assert_eq!(fields(&errors)[0].0, "name");
    let errors = read_csv(&b""[..], "Hall").unwrap_err();
    assert_eq!(fields(&errors)[0].0, "line 1");
}

#[test]
fn reading_stops_after_a_thousand_errors() {
    let mut text = String::from("section,row,number,x,y\n");
    for _ in 0..5_000 {
        text.push_str("S,A,1,x,0\n");
    }
    let errors = read_csv(text.as_bytes(), "Hall").unwrap_err();
    assert_eq!(errors.0.len(), MAX_REPORTED_ERRORS + 1);
    assert_eq!(
        errors.0.last().unwrap().message,
        "stopped reading after 1000 errors"
    );
}
