//! Shapes drawn behind a venue's seats: the stage, labels, areas.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{finite, Point};
use crate::validation::{is_name, ValidationErrors, MAX_NAME_LEN};

/// Most shapes one venue may have.
pub const MAX_SHAPES: usize = 1_000;
/// Most points of one polygon.
pub const MAX_POLYGON_POINTS: usize = 200;

/// What a shape shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShapeKind {
    /// The stage.
    Stage,
    /// A text on the map.
    Label,
    /// Any other area: a mixing desk, an aisle, a standing floor.
    Area,
}

/// A shape: its kind, an optional text, and exactly one of `rect`, `polygon`, `circle`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    /// What it shows.
    pub kind: ShapeKind,
    /// Its text, 1–200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A rectangle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A polygon of 3–200 points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 3, max_items = 200)]
    pub polygon: Option<Vec<Point>>,
    /// A circle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
}

/// A rectangle from its top-left corner.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width (positive).
    pub w: f64,
    /// Height (positive).
    pub h: f64,
}

/// A circle.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Circle {
    /// Centre, horizontally.
    pub x: f64,
    /// Centre, vertically.
    pub y: f64,
    /// Radius (positive).
    pub r: f64,
}

impl Shape {
    /// Records what is wrong with the shape under `at`.
    pub(super) fn check(&self, at: &str, errors: &mut ValidationErrors) {
        if let Some(text) = &self.text {
            errors.check(
                is_name(text, MAX_NAME_LEN),
                format!("{at}.text"),
                "must be 1–200 characters",
            );
        }
        let given = [
            self.rect.is_some(),
            self.polygon.is_some(),
            self.circle.is_some(),
        ];
        if !errors.check(
            given.iter().filter(|g| **g).count() == 1,
            at.to_owned(),
            "a shape needs exactly one of rect, polygon or circle",
        ) {
            return;
        }
        let positive = |v: f64| finite(v) && v > 0.0;
        if let Some(r) = &self.rect {
            errors.check(
                finite(r.x) && finite(r.y) && positive(r.w) && positive(r.h),
                format!("{at}.rect"),
                "x and y must be finite numbers, w and h positive ones",
            );
        }
        if let Some(points) = &self.polygon {
            errors.check(
                (3..=MAX_POLYGON_POINTS).contains(&points.len()),
                format!("{at}.polygon"),
                "a polygon has 3 to 200 points",
            );
            for (i, p) in points.iter().enumerate() {
                errors.check(
                    finite(p.x) && finite(p.y),
                    format!("{at}.polygon[{i}]"),
                    "coordinates must be finite numbers",
                );
            }
        }
        if let Some(c) = &self.circle {
            errors.check(
                finite(c.x) && finite(c.y) && positive(c.r),
                format!("{at}.circle"),
                "x and y must be finite numbers, r a positive one",
            );
        }
    }
}

impl Shape {
    /// The middle of the shape: a rectangle's or a circle's centre, a polygon's mean point.
    pub fn center(&self) -> Point {
        if let Some(r) = self.rect {
            Point {
                x: r.x + r.w / 2.0,
                y: r.y + r.h / 2.0,
            }
        } else if let Some(c) = self.circle {
            Point { x: c.x, y: c.y }
        } else {
            let points = self.polygon.as_deref().unwrap_or_default();
            let n = points.len().max(1) as f64;
            Point {
                x: points.iter().map(|p| p.x).sum::<f64>() / n,
                y: points.iter().map(|p| p.y).sum::<f64>() / n,
            }
        }
    }

    /// The right and bottom edges of the box around the shape.
    pub fn far_corner(&self) -> (f64, f64) {
        if let Some(r) = self.rect {
            (r.x + r.w, r.y + r.h)
        } else if let Some(c) = self.circle {
            (c.x + c.r, c.y + c.r)
        } else {
            let points = self.polygon.as_deref().unwrap_or_default();
            points
                .iter()
                .fold((f64::MIN, f64::MIN), |(x, y), p| (x.max(p.x), y.max(p.y)))
        }
    }
}
