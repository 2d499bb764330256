//! Local time: a venue's or an event's time zone, named as the IANA tz database names it
//! (the copy `chrono-tz` carries), and the one way printed surfaces (the PDF, the payment
//! page) write an event's times in it: "Wed 6 Jan 2027, 20:30 CET". The browsers' pages
//! write the same with `Intl` (`web/core/format.js`, `eventTime`).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::validation::ValidationErrors;

/// The zone of a venue that names none.
pub const DEFAULT_ZONE: &str = "UTC";

/// The zone `name` names, if the tz database has it (`Europe/Berlin`, `UTC`).
pub fn zone(name: &str) -> Option<Tz> {
    name.parse().ok()
}

/// Checks an optional zone name given at `field`; answers its canonical spelling.
pub fn check(name: Option<&str>, field: &str, errors: &mut ValidationErrors) -> Option<String> {
    let name = name?;
    let found = zone(name);
    errors.check(
        found.is_some(),
        field,
        "must be an IANA time zone name such as Europe/Berlin or UTC",
    );
    found.map(|tz| tz.name().to_owned())
}

/// `at` in `zone` (UTC if the name is unknown), day and minute with the zone's
/// abbreviation: "Wed 6 Jan 2027, 20:30 CET".
pub fn date_time(at: DateTime<Utc>, zone_name: &str) -> String {
    let tz = zone(zone_name).unwrap_or(Tz::UTC);
    at.with_timezone(&tz)
        .format("%a %-d %b %Y, %H:%M %Z")
        .to_string()
}

/// `at` in `zone`, to the minute with the zone's abbreviation: "20:45 CET".
pub fn clock(at: DateTime<Utc>, zone_name: &str) -> String {
    let tz = zone(zone_name).unwrap_or(Tz::UTC);
    at.with_timezone(&tz).format("%H:%M %Z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn an_event_time_reads_in_its_zone_with_the_abbreviation_of_that_day() {
        let winter = at("2027-01-06T19:30:00Z");
        assert_eq!(
            date_time(winter, "Europe/Berlin"),
            "Wed 6 Jan 2027, 20:30 CET"
        );
        let summer = at("2027-07-06T18:30:00Z");
        assert_eq!(
            date_time(summer, "Europe/Berlin"),
            "Tue 6 Jul 2027, 20:30 CEST"
        );
        assert_eq!(
            date_time(winter, "America/New_York"),
            "Wed 6 Jan 2027, 14:30 EST"
        );
        assert_eq!(date_time(winter, "UTC"), "Wed 6 Jan 2027, 19:30 UTC");
        assert_eq!(clock(winter, "Europe/London"), "19:30 GMT");
        assert_eq!(clock(summer, "Europe/Lisbon"), "19:30 WEST");
    }

    #[test]
    fn only_names_of_the_tz_database_are_zones() {
        let mut errors = ValidationErrors::default();
        assert_eq!(
            check(Some("Europe/Berlin"), "time_zone", &mut errors).as_deref(),
            Some("Europe/Berlin")
        );
        assert_eq!(check(None, "time_zone", &mut errors), None);
        assert!(errors.into_result(()).is_ok());
        for bad in ["Mars/Olympus", "CET+1", "", "europe berlin"] {
            let mut errors = ValidationErrors::default();
            assert_eq!(check(Some(bad), "time_zone", &mut errors), None, "{bad}");
            assert!(errors.into_result(()).is_err(), "{bad}");
        }
    }
}
