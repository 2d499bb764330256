//! Rows laid out on an arc: curved stalls, a balcony's sweep.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{finite, Point};
use crate::validation::ValidationErrors;

/// Widest sweep an arc may give, in degrees either way.
const MAX_DEGREES: f64 = 720.0;

/// An arc a counted row's seats are spread along, evenly from `from_deg` to `to_deg`:
/// seat `i` at `x = cx + r·cos θ`, `y = cy + r·sin θ` (θ in degrees, y growing down, so
/// 270° is straight up from the centre, towards a stage above it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RowArc {
    /// The circle's centre.
    pub center: Point,
    /// Its radius (positive).
    pub radius: f64,
    /// Where the first seat sits, in degrees.
    pub from_deg: f64,
    /// Where the last seat sits, in degrees.
    pub to_deg: f64,
}

impl RowArc {
    /// Records what is wrong with the arc under `at` (the row's path); whether it is good.
    pub(super) fn check(&self, at: &str, errors: &mut ValidationErrors) -> bool {
        errors.check(
            finite(self.center.x) && finite(self.center.y),
            format!("{at}.arc.center"),
            "coordinates must be finite numbers",
        ) & errors.check(
            finite(self.radius) && self.radius > 0.0,
            format!("{at}.arc.radius"),
            "must be a positive number",
        ) & errors.check(
            [self.from_deg, self.to_deg]
                .iter()
                .all(|d| d.is_finite() && d.abs() <= MAX_DEGREES),
            format!("{at}.arc"),
            "from_deg and to_deg must be numbers between -720 and 720",
        )
    }

    /// Where `n` seats sit along the arc, first to last; one seat sits midway.
    pub fn positions(&self, n: u32) -> impl Iterator<Item = (f64, f64)> + '_ {
        let step = if n > 1 {
            (self.to_deg - self.from_deg) / f64::from(n - 1)
        } else {
            0.0
        };
        let start = if n > 1 {
            self.from_deg
        } else {
            (self.from_deg + self.to_deg) / 2.0
        };
        (0..n).map(move |i| {
            let theta = (start + step * f64::from(i)).to_radians();
            (
                self.center.x + self.radius * theta.cos(),
                self.center.y + self.radius * theta.sin(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(from_deg: f64, to_deg: f64) -> RowArc {
        RowArc {
            center: Point { x: 10.0, y: 20.0 },
            radius: 5.0,
            from_deg,
            to_deg,
        }
    }

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
    }

    #[test]
    fn seats_spread_evenly_from_the_first_angle_to_the_last() {
        let seats: Vec<_> = arc(180.0, 360.0).positions(3).collect();
        assert_eq!(seats.len(), 3);
        assert!(close(seats[0], (5.0, 20.0)), "{seats:?}");
        assert!(
            close(seats[1], (10.0, 15.0)),
            "270° is above the centre: {seats:?}"
        );
        assert!(close(seats[2], (15.0, 20.0)), "{seats:?}");
    }

    #[test]
    fn one_seat_sits_midway() {
        let seats: Vec<_> = arc(180.0, 360.0).positions(1).collect();
        assert!(close(seats[0], (10.0, 15.0)), "{seats:?}");
    }

    #[test]
    fn a_bad_arc_names_each_of_its_faults() {
        let mut errors = ValidationErrors::default();
        let bad = RowArc {
            center: Point {
                x: f64::NAN,
                y: 0.0,
            },
            radius: 0.0,
            from_deg: 0.0,
            to_deg: 1000.0,
        };
        assert!(!bad.check("rows[0]", &mut errors));
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["rows[0].arc.center", "rows[0].arc.radius", "rows[0].arc"]
        );
        assert!(arc(200.0, 340.0).check("rows[0]", &mut ValidationErrors::default()));
    }
}
