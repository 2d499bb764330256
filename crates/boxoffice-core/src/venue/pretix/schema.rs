//! The types of a pretix seating plan, property by property as the schema has them, read
//! so that serde refuses what the schema refuses.

use serde::de::Visitor;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::venue::Point;

/// A seating plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixPlan)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The plan's name.
    pub name: String,
    /// Zones: the main floor, a balcony…
    #[serde(deserialize_with = "objects")]
    pub zones: Vec<Zone>,
    /// Seat categories, which a pretix shop maps to products.
    #[serde(deserialize_with = "objects")]
    pub categories: Vec<Category>,
    /// Size of the whole plan, in pixels.
    #[serde(deserialize_with = "object")]
    pub size: Size,
}

/// Size of a [`Plan`]; the schema wants integers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixSize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// A zone: the seats' rows and the areas drawn with them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixZone)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// Name, shown in seat names.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub name: Option<String>,
    /// Internal id.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub zone_id: Option<String>,
    /// A UUID.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub uuid: Option<String>,
    /// Where the zone is; rows and seats are placed from here.
    #[serde(deserialize_with = "object")]
    pub position: Point,
    /// Rows of seats.
    #[serde(deserialize_with = "objects")]
    pub rows: Vec<Row>,
    /// Areas: the stage, a bar, texts.
    #[serde(
        default,
        deserialize_with = "present_objects",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub areas: Option<Vec<Area>>,
}

/// A row of seats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixRow)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Its number or name, e.g. `12` or `A`.
    pub row_number: String,
    /// A text for the row (`%s` for its number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_label: Option<String>,
    /// A text for its seats (`%s` for their numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat_label: Option<String>,
    /// A UUID.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub uuid: Option<String>,
    /// Its seats.
    #[serde(deserialize_with = "objects")]
    pub seats: Vec<PlanSeat>,
    /// Where the row number is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_number_position: Option<RowNumberPosition>,
    /// Where the row is, from its zone.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub position: Option<Point>,
}

/// Where a row's number is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixRowNumberPosition)]
#[serde(rename_all = "lowercase")]
pub enum RowNumberPosition {
    /// Before its first seat.
    Start,
    /// After its last seat.
    End,
    /// At both ends.
    Both,
}

/// A seat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixSeat)]
#[serde(deny_unknown_fields)]
pub struct PlanSeat {
    /// Its id, unique in the plan.
    pub seat_guid: String,
    /// Its number, shown to buyers.
    pub seat_number: String,
    /// A UUID.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub uuid: Option<String>,
    /// `<`, `>` or `<>`: where ordered booking starts in its row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_direction: Option<String>,
    /// Its radius (10 when not given).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub radius: Option<f64>,
    /// Where it is, from its row.
    #[serde(deserialize_with = "object")]
    pub position: Point,
    /// The name of its category.
    pub category: String,
}

/// A seat category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixCategory)]
#[serde(deny_unknown_fields)]
pub struct Category {
    /// Its name.
    pub name: String,
    /// The colour its seats are drawn in.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub color: Option<String>,
}

/// An area: anything drawn that is not a seat.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixArea)]
#[serde(deny_unknown_fields)]
pub struct Area {
    /// Fill colour.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub color: Option<String>,
    /// Border colour.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub border_color: Option<String>,
    /// Degrees clockwise around `position`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub rotation: Option<f64>,
    /// Where it is, from its zone: a rectangle's corner, a circle's or ellipse's centre.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub position: Option<Point>,
    /// A UUID.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub uuid: Option<String>,
    /// Which of the shapes below it is.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub shape: Option<AreaShape>,
    /// Points from `position`.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub polygon: Option<Polygon>,
    /// Width and height.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub rectangle: Option<Rectangle>,
    /// Radii.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub ellipse: Option<Ellipse>,
    /// Radius.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub circle: Option<CircleRadius>,
    /// A text, placed from `position`.
    #[serde(
        default,
        deserialize_with = "present_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub text: Option<AreaText>,
}

/// The shapes an [`Area`] can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixAreaShape)]
#[serde(rename_all = "lowercase")]
pub enum AreaShape {
    /// [`Area::polygon`].
    Polygon,
    /// [`Area::rectangle`].
    Rectangle,
    /// [`Area::ellipse`].
    Ellipse,
    /// [`Area::circle`].
    Circle,
    /// Only [`Area::text`].
    Text,
}

/// A polygon's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixPolygon)]
#[serde(deny_unknown_fields)]
pub struct Polygon {
    /// Its corners.
    #[serde(deserialize_with = "objects")]
    pub points: Vec<Point>,
}

/// A rectangle's size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixRectangle)]
#[serde(deny_unknown_fields)]
pub struct Rectangle {
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// An ellipse's radii.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixEllipse)]
#[serde(deny_unknown_fields)]
pub struct Ellipse {
    /// Horizontal and vertical radius.
    #[serde(deserialize_with = "object")]
    pub radius: Point,
}

/// A circle's radius.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixCircle)]
#[serde(deny_unknown_fields)]
pub struct CircleRadius {
    /// Radius.
    pub radius: f64,
}

/// An area's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PretixText)]
#[serde(deny_unknown_fields)]
pub struct AreaText {
    /// What it says.
    pub text: String,
    /// Its colour.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub color: Option<String>,
    /// Font size (16 when not given).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(nullable = false)]
    pub size: Option<f64>,
    /// Where it is, from its area's position.
    #[serde(deserialize_with = "object")]
    pub position: Point,
}

/// An optional property that, when given, must not be `null` (the schema types these as
/// plain strings, numbers or objects).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A `T` read only from a JSON object. serde reads a struct from an array too (its fields in
/// order), which the schema does not allow; so every struct of a plan is read through this.
#[derive(Clone, Debug, PartialEq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(ObjectOnly(d)).map(Object)
    }
}

/// A deserializer that reads a struct only from a map.
struct ObjectOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Object::deserialize(d).map(|o| o.0)
}

fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Vec::<Object<T>>::deserialize(d).map(|v| v.into_iter().map(|o| o.0).collect())
}

fn present_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    object(d).map(Some)
}

fn present_objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    objects(d).map(Some)
}
