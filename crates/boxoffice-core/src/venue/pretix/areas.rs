//! Areas of a plan as the shapes of a venue, and back.

use super::{Area, AreaShape, AreaText, CircleRadius, Polygon, Rectangle};
use crate::validation::{ValidationErrors, MAX_NAME_LEN};
use crate::venue::{Circle, Point, Rect, Shape, ShapeKind};

impl Area {
    /// The shape this area draws, placed from its zone's position; `None` for an area that
    /// draws nothing a venue can show (no geometry, no size, coordinates out of range).
    pub(super) fn to_shape(&self, zone: Point) -> Option<Shape> {
        let offset = self.position.unwrap_or_default();
        let origin = Point {
            x: zone.x + offset.x,
            y: zone.y + offset.y,
        };
        let turn = self.rotation.unwrap_or(0.0).to_radians();
        let place = |p: Point| {
            let (sin, cos) = turn.sin_cos();
            Point {
                x: origin.x + p.x * cos - p.y * sin,
                y: origin.y + p.x * sin + p.y * cos,
            }
        };
        let text = self.text.as_ref().and_then(|t| {
            let text = t.text.trim();
            (!text.is_empty()).then(|| text.chars().take(MAX_NAME_LEN).collect::<String>())
        });
        let drawn = self.shape.or(if self.polygon.is_some() {
            Some(AreaShape::Polygon)
        } else if self.rectangle.is_some() {
            Some(AreaShape::Rectangle)
        } else if self.ellipse.is_some() {
            Some(AreaShape::Ellipse)
        } else if self.circle.is_some() {
            Some(AreaShape::Circle)
        } else {
            self.text.as_ref().map(|_| AreaShape::Text)
        })?;
        let mut shape = Shape {
            kind: ShapeKind::Area,
            text: text.clone(),
            rect: None,
            polygon: None,
            circle: None,
        };
        match drawn {
            AreaShape::Rectangle => {
                let Rectangle { width, height } = self.rectangle?;
                if turn == 0.0 {
                    shape.rect = Some(Rect {
                        x: origin.x + width.min(0.0),
                        y: origin.y + height.min(0.0),
                        w: width.abs(),
                        h: height.abs(),
                    });
                } else {
                    let corners = [(0.0, 0.0), (width, 0.0), (width, height), (0.0, height)];
                    shape.polygon = Some(corners.map(|(x, y)| place(Point { x, y })).to_vec());
                }
            }
            AreaShape::Circle => {
                shape.circle = Some(Circle {
                    x: origin.x,
                    y: origin.y,
                    r: self.circle?.radius,
                });
            }
            AreaShape::Ellipse => {
                let radius = self.ellipse?.radius;
                const STEPS: usize = 48;
                shape.polygon = Some(
                    (0..STEPS)
                        .map(|i| {
                            let t = std::f64::consts::TAU * i as f64 / STEPS as f64;
                            place(Point {
                                x: radius.x * t.cos(),
                                y: radius.y * t.sin(),
                            })
                        })
                        .collect(),
                );
            }
            AreaShape::Polygon => {
                let points = &self.polygon.as_ref()?.points;
                shape.polygon = Some(points.iter().map(|p| place(*p)).collect());
            }
            AreaShape::Text => {
                let t = self.text.as_ref()?;
                let size = t.size.unwrap_or(16.0).abs().max(1.0);
                let at = place(t.position);
                let w = size * 0.6 * text.as_deref().map_or(1, |t| t.chars().count()) as f64;
                shape.kind = ShapeKind::Label;
                shape.rect = Some(Rect {
                    x: at.x - w / 2.0,
                    y: at.y - size / 2.0,
                    w,
                    h: size,
                });
            }
        }
        if text.as_deref().is_some_and(names_a_stage) {
            shape.kind = ShapeKind::Stage;
        }
        let mut problems = ValidationErrors::default();
        shape.check("", &mut problems);
        problems.is_empty().then_some(shape)
    }

    /// The area that draws `shape`.
    pub(super) fn from_shape(shape: &Shape) -> Area {
        let text = shape
            .text
            .clone()
            .or_else(|| (shape.kind == ShapeKind::Stage).then(|| "Stage".to_owned()));
        let mut area = Area {
            color: Some(
                match shape.kind {
                    ShapeKind::Stage => "#d1d5db",
                    _ => "#f3f4f6",
                }
                .to_owned(),
            ),
            border_color: Some("#6b7280".to_owned()),
            ..Area::default()
        };
        let (center, at) = if let (ShapeKind::Label, Some(_)) = (shape.kind, &text) {
            area.color = None;
            area.border_color = None;
            area.shape = Some(AreaShape::Text);
            (shape.center(), Point::default())
        } else if let Some(r) = shape.rect {
            area.shape = Some(AreaShape::Rectangle);
            area.rectangle = Some(Rectangle {
                width: r.w,
                height: r.h,
            });
            let corner = Point { x: r.x, y: r.y };
            (
                corner,
                Point {
                    x: r.w / 2.0,
                    y: r.h / 2.0,
                },
            )
        } else if let Some(c) = shape.circle {
            area.shape = Some(AreaShape::Circle);
            area.circle = Some(CircleRadius { radius: c.r });
            (Point { x: c.x, y: c.y }, Point::default())
        } else {
            area.shape = Some(AreaShape::Polygon);
            area.polygon = Some(Polygon {
                points: shape.polygon.clone().unwrap_or_default(),
            });
            (Point::default(), shape.center())
        };
        area.position = Some(center);
        area.text = text.map(|text| AreaText {
            text,
            color: Some("#111827".to_owned()),
            size: None,
            position: at,
        });
        area
    }
}

/// Whether an area's text says it is the stage.
fn names_a_stage(text: &str) -> bool {
    let text = text.to_lowercase();
    ["stage", "bühne", "scène", "scene", "podium"]
        .iter()
        .any(|word| text.contains(word))
}
