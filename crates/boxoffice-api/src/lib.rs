//! The wire types of the Boxoffice HTTP API (docs/api.md, and `/openapi.json`): request
//! bodies and answers (a long file: one, so every type the contract names is found in one
//! place),
//! defined once and used by the server (which serializes them and documents them in its
//! OpenAPI document) and by `boxoffice-client` (which deserializes them).
//!
//! # Layout
//!
//! One section per resource, in docs/api.md's order: venues, events, availability (with the
//! live stream's events), holds,
//! orders, general admission, sessions, operations, organizations and keys, seasons,
//! tickets and entry, and [`Problem`], the body of every
//! error answer.

use boxoffice_core::access::Role;
use boxoffice_core::availability::{EventSeat, SeatCounts, SeatState, SeatStatus};
use boxoffice_core::event::{
    objects, AllocationEntry, ChangeSettings, Channel, EntrySettings, GaArea, QueueSettings,
    TicketType,
};
use boxoffice_core::hold::{OrderStatus, PricedSeat};
use boxoffice_core::ids::{EventId, KeyId, OrganizationId, SeasonId, VenueId};
use boxoffice_core::season::Season;
use boxoffice_core::statuses;
use boxoffice_core::validation::FieldError;
use boxoffice_core::venue::{Shape, VenueLayout};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// What an answer of a server from before organizations belongs to.
fn default_organization() -> OrganizationId {
    OrganizationId::DEFAULT
}

// Venues.

/// Answer to `POST /v1/venues`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenueCreated {
    /// The new venue's id.
    pub id: VenueId,
    /// How many seats it has.
    pub seat_count: usize,
}

/// A venue with its whole seat map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenueView {
    /// Venue id.
    pub id: VenueId,
    /// Number of seats.
    pub seat_count: usize,
    /// Name and sections with rows and seats.
    #[serde(flatten)]
    pub layout: VenueLayout,
}

/// `POST /v1/venues/import?dry_run=true`: the venue an import would create, not saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenuePreview {
    /// Number of seats.
    pub seat_count: usize,
    /// Name and sections with rows and seats.
    #[serde(flatten)]
    pub layout: VenueLayout,
}

/// One venue in a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenueListItem {
    /// Venue id.
    pub id: VenueId,
    /// Display name.
    pub name: String,
    /// Number of seats.
    pub seat_count: usize,
}

/// Answer to `GET /v1/venues`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VenueList {
    /// Every venue, newest first.
    pub venues: Vec<VenueListItem>,
}

// Events.

/// Answer to `POST /v1/events`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventCreated {
    /// The new event's id.
    pub id: EventId,
}

/// One event in a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventListItem {
    /// Event id.
    pub id: EventId,
    /// Display name.
    pub name: String,
    /// Venue id.
    pub venue_id: VenueId,
    /// Start time.
    pub starts_at: DateTime<Utc>,
    /// The organization it belongs to (`default` from a server that has none).
    #[serde(default = "default_organization")]
    pub organization_id: OrganizationId,
    /// Its IANA time zone (its own, or else its venue's).
    #[serde(default = "utc")]
    pub time_zone: String,
}

/// Answer to `GET /v1/events`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventList {
    /// Every event, soonest first.
    pub events: Vec<EventListItem>,
}

/// A general-admission area with the places left.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GaAreaView {
    /// The area.
    #[serde(flatten)]
    pub area: GaArea,
    /// Places not yet booked.
    pub left: u32,
}

/// Answer to `GET /v1/events/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Event id.
    pub id: EventId,
    /// The organization it belongs to (`default` from a server that has none).
    #[serde(default = "default_organization")]
    pub organization_id: OrganizationId,
    /// Venue id.
    pub venue_id: VenueId,
    /// Display name.
    pub name: String,
    /// Start time.
    pub starts_at: DateTime<Utc>,
    /// Hold lifetime in seconds.
    pub hold_ttl_seconds: u32,
    /// Cap on a hold's lifetime with extensions, in seconds.
    pub max_hold_seconds: u32,
    /// Live held seats one user may have at once.
    pub max_seats_per_user: u32,
    /// How long a buyer has to pay after checkout, in seconds (0: the sale completes at
    /// checkout).
    pub payment_window_seconds: u32,
    /// How long a waiting-list offer stands, in seconds.
    #[serde(default = "default_offer_seconds")]
    pub waitlist_offer_seconds: u32,
    /// Its IANA time zone (its own, or else its venue's): every page, PDF and console
    /// screen shows its times in it. `starts_at` stays UTC.
    #[serde(default = "utc")]
    pub time_zone: String,
    /// Every section, best first.
    pub section_order: Vec<String>,
    /// Ticket types.
    pub ticket_types: Vec<TicketType>,
    /// General-admission areas.
    pub ga_areas: Vec<GaAreaView>,
    /// Seats per status right now, as buyers in no sales channel see them (a channel's
    /// seats count as `not_for_sale`).
    pub counts: SeatCounts,
    /// Sales channels, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<Channel>,
    /// The waiting room in front of holds and bookings, if the event has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSettings>,
    /// How its tickets are let in.
    #[serde(default)]
    pub entry: EntrySettings,
    /// Who may change its sold seats.
    #[serde(default)]
    pub changes: ChangeSettings,
}

/// Body of `PATCH /v1/events/{id}` (admin): the settings to change. Only the waiting room,
/// how tickets are let in and who may change sold seats can change after creation; `"queue": null` removes the
/// waiting room.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventPatch {
    /// The waiting room: new settings, or `null` for none.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<QueueSettings>)]
    pub queue: Option<Option<QueueSettings>>,
    /// How tickets are let in.
    #[serde(
        default,
        deserialize_with = "objects::nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub entry: Option<EntrySettings>,
    /// Who may change sold seats.
    #[serde(
        default,
        deserialize_with = "objects::nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub changes: Option<ChangeSettings>,
}

/// An object field that is present, even as `null` (`Some(None)`), apart from one left out
/// (`None`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    objects::nullable(d).map(Some)
}

/// Body of `PUT /v1/events/{id}/allocations`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationsRequest {
    /// Entries applied in order; later ones override earlier ones for the same seat.
    #[schema(min_items = 1)]
    pub allocations: Vec<AllocationEntry>,
}

/// A seat an allocation change left alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkippedSeat {
    /// Seat id.
    pub id: String,
    /// Seat label.
    pub label: String,
    /// Why it was left alone: `held` or `sold`.
    pub status: SeatStatus,
}

/// Answer to an allocation change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AllocationsChanged {
    /// Seats put on sale, re-priced or withdrawn.
    pub changed: u64,
    /// Seats not changed because they are held or sold.
    pub skipped: Vec<SkippedSeat>,
}

fn default_offer_seconds() -> u32 {
    boxoffice_core::event::DEFAULT_WAITLIST_OFFER_SECONDS
}

/// Answer of `POST /v1/events/{id}/channels/{code}/release`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChannelReleased {
    /// The channel's seats put on general sale (those neither held nor sold).
    pub released: u64,
}

// Availability.

/// One seat of `GET /v1/events/{id}/seats`. The server renders this shape from
/// pre-rendered fragments; this type documents it and reads it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeatView {
    /// The seat with its ticket type and price.
    #[serde(flatten)]
    pub seat: EventSeat,
    /// What a buyer can do with it now.
    pub status: SeatStatus,
    /// When the hold lapses; held seats only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_until: Option<DateTime<Utc>>,
}

/// Answer to `GET /v1/events/{id}/seats`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeatsView {
    /// The event.
    pub event_id: EventId,
    /// Every seat of the venue in venue order, with its status.
    pub seats: Vec<SeatView>,
    /// The shapes drawn behind the seats (stage, labels, areas).
    #[serde(default)]
    pub shapes: Vec<Shape>,
}

/// Answer to `GET /v1/events/{id}/layout`: every seat without its status. It changes only
/// when the event's allocations do (and `version` with it), so a client keeps it and
/// revalidates it with its `ETag`; statuses come from the stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LayoutView {
    /// The event.
    pub event_id: EventId,
    /// The allocation version this layout reflects.
    pub version: i64,
    /// Every seat of the venue in venue order.
    pub seats: Vec<EventSeat>,
    /// The shapes drawn behind the seats (stage, labels, areas).
    #[serde(default)]
    pub shapes: Vec<Shape>,
}

/// Places left in one general-admission area.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GaAvailability {
    /// Area code.
    pub code: String,
    /// Places in all.
    pub capacity: u32,
    /// Places not yet booked.
    pub left: u32,
}

/// Answer to `GET /v1/events/{id}/availability`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AvailabilityView {
    /// Seats per status.
    #[serde(flatten)]
    pub counts: SeatCounts,
    /// General-admission areas.
    pub ga: Vec<GaAvailability>,
}

// Live updates (`GET /v1/events/{id}/stream`).

/// One seat's new status, in a `seats` event of the stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatChange {
    /// Seat id.
    pub id: String,
    /// Its status now.
    pub status: SeatStatus,
    /// When the hold lapses; held seats only. Nothing is sent when it does: clients turn
    /// the seat available at this time themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_until: Option<DateTime<Utc>>,
}

/// Data of a `seats` event of the stream: seats whose status changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatsChanged {
    /// The seats, each with its new status.
    pub seats: Vec<SeatChange>,
}

/// Data of a `statuses` event, the snapshot of a stream opened with `?snapshot=statuses`:
/// every seat's status in the order of the layout at `version`, compactly
/// ([`boxoffice_core::statuses`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatStatuses {
    /// The event.
    pub event_id: EventId,
    /// The allocation version whose layout the statuses follow.
    pub version: i64,
    /// Runs of statuses in layout order: `a` available, `h` held, `s` sold, `n` not for
    /// sale, each followed by how many seats in a row have it when more than one
    /// (`a120h2sa7`).
    pub statuses: String,
    /// The earliest expiry of a held seat, in seconds since the epoch (0 when none is).
    pub held_until_base: i64,
    /// Each held seat's expiry in layout order, in whole seconds after `held_until_base`
    /// (rounded up).
    pub held_until_offsets: Vec<u32>,
}

impl SeatStatuses {
    /// The statuses of `states` (one per seat of the layout at `version`, in order).
    pub fn of(event_id: EventId, version: i64, states: &[SeatState]) -> Self {
        let compact = statuses::encode(states);
        Self {
            event_id,
            version,
            statuses: compact.runs,
            held_until_base: compact.held_until_base,
            held_until_offsets: compact.held_until_offsets,
        }
    }

    /// One state per seat of the layout, in order (holds' expiries to the second).
    pub fn states(&self) -> Result<Vec<SeatState>, statuses::DecodeError> {
        statuses::decode(&statuses::Compact {
            runs: self.statuses.clone(),
            held_until_base: self.held_until_base,
            held_until_offsets: self.held_until_offsets.clone(),
        })
    }
}

/// Data of a `ga` event of the stream: places left in one general-admission area.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GaChanged {
    /// Area code.
    pub code: String,
    /// Places not yet booked.
    pub left: u32,
}

// Waiting room.

/// Answer to `POST /v1/events/{id}/queue`: the buyer's ticket and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueJoined {
    /// The ticket to poll with: opaque, URL-safe, signed by the server; it carries the
    /// event, the buyer, the place and when it joined.
    pub ticket: String,
    /// Place in the line (1 is next; 0 once admitted); `null` before the waiting room
    /// opens, when the order of everyone who joined by then is not drawn yet.
    pub position: Option<u64>,
    /// Seconds until admission at the current rate; `null` before opening.
    pub estimated_wait_seconds: Option<u64>,
}

/// Answer to `GET /v1/events/{id}/queue/{ticket}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueStatus {
    /// Whether the ticket's turn has come.
    pub admitted: bool,
    /// The ticket re-issued with its place, when the one polled was issued before the
    /// opening (the old one keeps working).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    /// Place in the line while waiting; `null` before opening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    /// Seconds until admission at the current rate, while waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_wait_seconds: Option<u64>,
    /// Once admitted: the pass to send as `Boxoffice-Pass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    /// Once admitted: when the pass stops being valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_expires_at: Option<DateTime<Utc>>,
}

/// Answer to `GET /v1/events/{id}/queue/status`: the line's public figures, the same
/// bytes for everyone until one changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueLine {
    /// `before_open`, `admitting`, `slowed` (below the setting while the hold path is
    /// saturated), `paused` (the hold store is unavailable) or `closed` (the event has
    /// started).
    #[schema(pattern = "^(before_open|admitting|slowed|paused|closed)$")]
    pub state: String,
    /// Every place up to this one is admitted.
    pub admitted_up_to: u64,
    /// The event's admission rate.
    pub admit_per_minute: u32,
    /// The rate in force.
    pub admitting_per_minute: u32,
    /// Why the rate in force is below the setting: `overload` or `hold_latency`.
    pub slowed_because: Option<String>,
    /// Places waiting.
    pub waiting: u64,
    /// When a figure last changed.
    pub updated_at: DateTime<Utc>,
}

// Holds.

/// Body of `POST /v1/events/{id}/holds`: either seats by id, or best available.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1)]
pub struct HoldBody {
    /// Seat ids to hold, all or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<Vec<String>>,
    /// Let the server pick adjacent seats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_available: Option<BestAvailable>,
}

/// Body of `POST /v1/events/{id}/holds/{token}/seats`: the seats to add to the hold.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddSeatsBody {
    /// Seat ids to add, all or none.
    #[schema(min_items = 1)]
    pub seats: Vec<String>,
}

/// A best-available request.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BestAvailable {
    /// How many seats, 1 to the event's `max_seats_per_user` (a whole number; `2.0` is 2).
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1)]
    pub quantity: u32,
    /// Only seats of this ticket type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket_type: Option<String>,
    /// A wheelchair space, with companion or adjacent seats beside it for the rest. Without
    /// it no wheelchair space or companion seat is chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accessible: bool,
}

/// A live hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HoldView {
    /// Proof of ownership: extend, release and check out with it.
    pub hold_token: Uuid,
    /// The event.
    pub event_id: EventId,
    /// The held seats with the prices quoted.
    pub seats: Vec<PricedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// When the hold lapses unless extended.
    pub expires_at: DateTime<Utc>,
    /// For a best-available hold: whether its seats are side by side in one row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjacent: Option<bool>,
}

/// Answer to an extension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Extended {
    /// The new expiry.
    pub expires_at: DateTime<Utc>,
}

// Waiting list.

/// Body of `POST /v1/events/{id}/waitlist`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitlistJoin {
    /// How many seats the buyer waits for (1 to the event's `max_seats_per_user`).
    #[schema(minimum = 1, maximum = 100)]
    pub quantity: u32,
    /// Only seats of this ticket type.
    #[serde(default)]
    pub ticket_type: Option<String>,
}

/// Seats offered to a waiting buyer: a hold of theirs, to check out before `expires_at`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WaitlistOffer {
    /// The hold's token: check it out (`POST /v1/events/{id}/orders`) to buy the seats.
    pub hold_token: Uuid,
    /// The seats with their prices.
    pub seats: Vec<PricedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// Until when the offer stands; then it passes to the next buyer in line.
    pub expires_at: DateTime<Utc>,
}

/// A buyer's entry in an event's waiting list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WaitlistEntryView {
    /// The entry's id.
    pub entry_id: Uuid,
    /// `waiting`, `offered`, `bought`, `left` or `lapsed` (an offer not bought in time).
    pub status: String,
    /// Place in line (1: the next to be served) while waiting; `null` otherwise.
    pub position: Option<u32>,
    /// How many seats.
    pub quantity: u32,
    /// Of this ticket type only, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket_type: Option<String>,
    /// The seats offered, while the offer stands; `null` otherwise.
    pub offer: Option<WaitlistOffer>,
}

// Orders.

/// Body of `POST /v1/events/{id}/orders`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutBody {
    /// The token of a live hold of the caller's.
    pub hold_token: Uuid,
}

/// An order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OrderView {
    /// Order id.
    pub order_id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// The buyer.
    pub user_id: String,
    /// The seats sold, with the prices charged.
    pub seats: Vec<PricedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// `paid` (at once, in an event without a payment window), `pending_payment` until it
    /// is paid, `expired` when `pay_by` passed unpaid, `cancelled` once cancelled.
    pub status: OrderStatus,
    /// When the order was committed.
    pub created_at: DateTime<Utc>,
    /// In an event with a payment window: the order expires unpaid at this moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_by: Option<DateTime<Utc>>,
    /// When its payment was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid_at: Option<DateTime<Utc>>,
    /// The payment provider's reference of its payment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_reference: Option<String>,
}

/// Body of `POST /v1/orders/{id}/moves`: seats of the order, each moved to another seat,
/// all or none.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MovesBody {
    /// 1 to 100 moves, each `from` a seat of the order and `to` a free seat, all distinct.
    pub moves: Vec<SeatMove>,
}

/// One seat moved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatMove {
    /// The order's seat.
    pub from: String,
    /// The seat it moves to.
    pub to: String,
}

/// An order after its seats changed, and what the change did to its total.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChangedOrder {
    /// The order now.
    #[serde(flatten)]
    pub order: OrderView,
    /// The new total less the old: what the buyer owes (positive) or is owed (negative).
    pub price_difference_cents: i64,
}

/// Body of `POST /v1/events/{id}/swaps`: a seat of one order for a seat of another.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapBody {
    /// One order's seat.
    pub a: SwapSide,
    /// The other order's seat.
    pub b: SwapSide,
}

/// One side of a swap.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapSide {
    /// The order, paid, of the event.
    pub order_id: Uuid,
    /// A seat of that order.
    pub seat: String,
}

/// The two orders of a swap, after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Swapped {
    /// The order of `a`, with `b`'s seat now.
    pub a: ChangedOrder,
    /// The order of `b`, with `a`'s seat now.
    pub b: ChangedOrder,
}

/// Body of `POST /v1/orders/{id}/resale`: seats of the order to offer again.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResaleBody {
    /// 1 to 100 distinct seats of the order.
    pub seats: Vec<String>,
}

/// The seats an order lists for resale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Listed {
    /// Seat ids, sorted.
    pub listed: Vec<String>,
}

/// Body of `POST /v1/orders/{id}/payment`: a payment the platform's provider confirmed.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PaymentBody {
    /// The provider's reference, 1–200 characters: a repeat with the same reference
    /// answers the same order.
    #[schema(min_length = 1, max_length = 200)]
    pub reference: String,
    /// What was paid, in minor units: the order's total.
    pub amount_cents: i64,
}

// The organizer console.

/// `GET /v1/events/{id}/orders`: a page of an event's orders, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OrderList {
    /// At most `limit` orders, each with its seats.
    pub orders: Vec<OrderView>,
    /// Send as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// `GET /v1/events/{id}/report`: where an event's sale stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventReport {
    /// Seats in live orders.
    pub sold: u32,
    /// Seats held now.
    pub held: u32,
    /// Seats on sale and free.
    pub available: u32,
    /// Seats not on sale (held back).
    pub not_for_sale: u32,
    /// What confirmed orders and bookings brought in, in minor units.
    pub revenue_cents: i64,
    /// The event's currency (ISO 4217).
    pub currency: String,
    /// The same by section, in venue order.
    pub by_section: Vec<SectionReport>,
    /// Seats sold and revenue by ticket type, in the event's order.
    pub by_ticket_type: Vec<TicketTypeReport>,
    /// General-admission areas.
    pub ga: Vec<GaReport>,
    /// Seats sold in each of the last 60 minutes, oldest first (minutes without a sale
    /// included).
    pub sales_per_minute: Vec<MinuteSales>,
    /// The waiting room's line, when the event's is on (and Redis answers).
    pub queue: Option<QueueReport>,
    /// Each sales channel's seats and what became of them, in the event's order. (The
    /// counts above are general sale's: a channel's seats count there as not for sale.)
    #[serde(default)]
    pub channels: Vec<ChannelReport>,
    /// The waiting list.
    #[serde(default)]
    pub waitlist: WaitlistReport,
}

/// One sales channel in an [`EventReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChannelReport {
    /// The channel's code.
    pub code: String,
    /// Its display name.
    pub name: String,
    /// Seats allocated to it.
    pub seats: u32,
    /// Of them, in live orders.
    pub sold: u32,
    /// Held now.
    pub held: u32,
    /// On sale to its buyers and free.
    pub available: u32,
}

/// An event's waiting list in an [`EventReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WaitlistReport {
    /// Buyers waiting in line.
    pub waiting: u64,
    /// Buyers offered seats now, not yet bought.
    pub offered: u64,
}

/// An event's waiting room in an [`EventReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QueueReport {
    /// Buyers waiting in line.
    pub waiting: u64,
    /// Buyers let through so far.
    pub admitted: u64,
    /// Admissions a minute in force (below the event's setting while the hold path is
    /// saturated).
    pub admitting_per_minute: u32,
    /// Why the rate in force is below the setting: `overload` or `hold_latency`.
    pub slowed_because: Option<String>,
}

/// One section in an [`EventReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SectionReport {
    /// Section id.
    pub section: String,
    /// Seats in live orders.
    pub sold: u32,
    /// Seats held now.
    pub held: u32,
    /// Seats on sale and free.
    pub available: u32,
    /// What its sold seats brought in.
    pub revenue_cents: i64,
}

/// One ticket type in an [`EventReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TicketTypeReport {
    /// Ticket type code.
    pub ticket_type: String,
    /// Seats sold at it.
    pub sold: u32,
    /// What they brought in.
    pub revenue_cents: i64,
}

/// One general-admission area in an [`EventReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GaReport {
    /// Area code.
    pub code: String,
    /// Places in all.
    pub capacity: u32,
    /// Places not booked.
    pub left: u32,
    /// What its confirmed bookings brought in.
    pub revenue_cents: i64,
}

/// Seats sold in one minute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MinuteSales {
    /// The minute's start.
    pub minute: DateTime<Utc>,
    /// Seats sold in it (in orders still confirmed).
    pub seats: u32,
}

// General admission.

/// Body of `POST /v1/events/{id}/bookings`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BookingBody {
    /// Area code.
    pub area: String,
    /// Places wanted, 1 to the area's `max_per_booking` (a whole number; `2.0` is 2).
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1)]
    pub quantity: u32,
}

/// A count given as a JSON number with no fraction, however written: JSON does not tell
/// `2` from `2.0`, and neither does JSON Schema's `integer`.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    struct Whole;
    impl serde::de::Visitor<'_> for Whole {
        type Value = u32;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a whole number from 0 to 4294967295")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u32, E> {
            u32::try_from(v).map_err(|_| E::custom("the number is too large"))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u32, E> {
            u32::try_from(v).map_err(|_| E::custom("the number is out of range"))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<u32, E> {
            if v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v) {
                Ok(v as u32)
            } else {
                Err(E::custom("expected a whole number"))
            }
        }
    }
    d.deserialize_any(Whole)
}

fn utc() -> String {
    boxoffice_core::local_time::DEFAULT_ZONE.to_owned()
}

/// A general-admission booking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BookingView {
    /// Booking id.
    pub booking_id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// Area code.
    pub area: String,
    /// Places booked.
    pub quantity: u32,
    /// Price of all the places.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// `paid` (at once, in an event without a payment window), `pending_payment` until it
    /// is paid, `expired` when `pay_by` passed unpaid, `cancelled` once cancelled. (Earlier
    /// versions said `confirmed` for `paid`.)
    pub status: OrderStatus,
    /// In an event with a payment window: when it must be paid by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_by: Option<DateTime<Utc>>,
    /// When it was paid, under a payment window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid_at: Option<DateTime<Utc>>,
    /// The payment provider's reference, under a payment window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_reference: Option<String>,
}

/// Answer to `GET /v1/me/orders`: the buyer's own orders and bookings, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MyOrdersView {
    /// Orders of seats and bookings of standing places, newest first.
    pub orders: Vec<MyOrder>,
}

/// What one of the buyer's orders is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MyOrderKind {
    /// Seats, checked out from a hold.
    Order,
    /// Standing places of a general-admission area.
    Booking,
}

/// One of the buyer's orders or bookings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MyOrder {
    /// An order of seats or a booking of standing places.
    pub kind: MyOrderKind,
    /// The order's or booking's id.
    pub id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// `pending_payment`, `paid`, `expired` or `cancelled`.
    pub status: OrderStatus,
    /// While it is pending: when it must be paid by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_by: Option<DateTime<Utc>>,
    /// An order's seats with their labels and prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<Vec<PricedSeat>>,
    /// A booking's area code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<String>,
    /// A booking's places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u32>,
    /// What it costs in all.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// How many valid tickets it has now (0 until it is paid).
    pub tickets: u32,
}

// Sessions.

/// Answer to `POST /v1/sessions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionCreated {
    /// The new anonymous user's id.
    pub user_id: String,
    /// Bearer token for buyer calls.
    pub token: String,
    /// When the token stops working.
    pub expires_at: DateTime<Utc>,
}

// Operations.

/// Answer to `GET /healthz` and `GET /readyz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok` or `ready`.
    pub status: String,
}

// Organizations and keys.

/// Body of `POST /v1/organizations`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrganizationBody {
    /// Its name, 1–200 characters.
    pub name: String,
    /// 1–40 of `a-z 0-9 -`, unique; made from the name when absent.
    #[serde(default)]
    pub slug: Option<String>,
}

/// An organization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OrganizationView {
    /// Its id.
    pub id: OrganizationId,
    /// Its name.
    pub name: String,
    /// Its slug.
    pub slug: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// Answer to `GET /v1/organizations`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OrganizationList {
    /// A platform key's: every organization; any other key's: its own.
    pub organizations: Vec<OrganizationView>,
}

/// Body of `POST /v1/organizations/{id}/keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyBody {
    /// A name to know it by, 1–100 characters.
    pub name: String,
    /// `platform` (only a platform key makes one), `admin`, `sales`, `checkin` or
    /// `reports`.
    pub role: String,
    /// When it stops working; in the future. Never, when absent.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// A `checkin` key only: the events it may check in at (its calls on any other event
    /// answer 404). Every event of the organization, when absent.
    #[serde(default)]
    pub events: Option<Vec<EventId>>,
}

/// Answer to `POST /v1/organizations/{id}/keys`: the key itself is in this answer and
/// nowhere else, ever.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyCreated {
    /// The key's id.
    pub id: KeyId,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The key: `bxk_` and 43 URL-safe base64 characters.
    pub key: String,
    /// The first 8 characters after `bxk_`.
    pub prefix: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// The events it is limited to, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventId>>,
}

/// Body of `POST /v1/events/{id}/scanner-pairings`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScannerPairingBody {
    /// The origin the phone opens the scanner at (the console's own,
    /// `https://box.example`).
    pub origin: String,
}

/// Answer to `POST /v1/events/{id}/scanner-pairings`: a `checkin` key for this event
/// alone, expiring a day after it starts, and the link that signs a phone's scanner in with
/// it. The key is in this answer and nowhere else, ever.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScannerPairing {
    /// The key's id (revoke it as any key).
    pub key_id: KeyId,
    /// The key: `bxk_` and 43 URL-safe base64 characters.
    pub key: String,
    /// When it stops working: a day after the event starts.
    pub expires_at: Option<DateTime<Utc>>,
    /// `<origin>/scan?event=<id>#key=<key>`.
    pub url: String,
    /// The link as a QR code, an SVG image.
    pub qr_svg: String,
}

/// A key as listed: never the key itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyView {
    /// The key's id.
    pub id: KeyId,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The first 8 characters after `bxk_`.
    pub prefix: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// The minute it was last used in, if ever.
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// The events it is limited to, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventId>>,
}

/// Answer to `GET /v1/organizations/{id}/keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyList {
    /// The organization's keys, oldest first, revoked ones too.
    pub keys: Vec<KeyView>,
}

/// Body of `POST /v1/organizations/{id}/signing-keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SigningKeyBody {
    /// `HS256` (a secret made here, shown once) or `EdDSA` (the platform's public key).
    pub algorithm: String,
    /// For `EdDSA`: the PEM (SubjectPublicKeyInfo) of the platform's Ed25519 public key.
    #[serde(default)]
    pub public_key: Option<String>,
}

/// Answer to `POST /v1/organizations/{id}/signing-keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SigningKeyCreated {
    /// The name a token's header gives it (`kid`).
    pub kid: String,
    /// `HS256` or `EdDSA`.
    pub algorithm: String,
    /// For `HS256`: the secret to sign buyers' tokens with (its bytes as given), in this
    /// answer and nowhere else, ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
}

/// A signing key as listed: never a secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SigningKeyView {
    /// The name a token's header gives it (`kid`).
    pub kid: String,
    /// `HS256` or `EdDSA`.
    pub algorithm: String,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// When it was retired, if it was.
    pub retired_at: Option<DateTime<Utc>>,
}

/// Answer to `GET /v1/organizations/{id}/signing-keys`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SigningKeyList {
    /// Oldest first, retired ones too.
    pub signing_keys: Vec<SigningKeyView>,
}

/// Answer to `GET /v1/me`: the key the call was made with, and what its role may do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MeView {
    /// The key's id; `null` for `BOXOFFICE_ADMIN_TOKEN`.
    pub key_id: Option<KeyId>,
    /// The key's name (`BOXOFFICE_ADMIN_TOKEN` for that token).
    pub name: String,
    /// The key's role.
    pub role: Role,
    /// The key's organization (`default` for `BOXOFFICE_ADMIN_TOKEN`).
    pub organization_id: OrganizationId,
    /// The rights the role has, by name (`manage_keys`, `write_catalog`, `read_orders`,
    /// `change_orders`, `check_in`, `read_audit`, …): what a console shows it.
    pub rights: Vec<String>,
}

/// Body of `PUT /v1/organizations/{id}/webhook`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookBody {
    /// Where the organization's events are delivered: an absolute `http` or `https` URL.
    pub url: String,
    /// The HMAC-SHA256 key deliveries are signed with (16–256 visible ASCII characters);
    /// one is made when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// Answer to `PUT /v1/organizations/{id}/webhook`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WebhookSet {
    /// Where the organization's events are delivered.
    pub url: String,
    /// The key deliveries are signed with, in this answer and nowhere else, ever.
    pub secret: String,
}

/// Answer to `GET /v1/organizations/{id}/webhook`: never the secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WebhookView {
    /// Where the organization's events are delivered.
    pub url: String,
    /// When it was first set.
    pub created_at: DateTime<Utc>,
    /// When it was last set.
    pub updated_at: DateTime<Utc>,
}

/// Who made a change recorded in the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditActor {
    /// The key's id; `null` for `BOXOFFICE_ADMIN_TOKEN`.
    pub key_id: Option<KeyId>,
    /// The key's name (`BOXOFFICE_ADMIN_TOKEN` for that token).
    pub key_name: String,
    /// The key's role.
    pub role: String,
}

/// What a change recorded in the audit log changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditTarget {
    /// `organization`, `key`, `venue`, `event`, `season`, `order` or `booking`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Its id.
    pub id: String,
}

/// One entry of the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// The entry's id.
    pub id: Uuid,
    /// When the change was made.
    pub at: DateTime<Utc>,
    /// The organization whose log it is in.
    pub organization_id: OrganizationId,
    /// Who made it.
    pub actor: AuditActor,
    /// `<type>.<verb>`: `event.created`, `key.revoked`, …
    pub action: String,
    /// What it changed.
    pub target: AuditTarget,
    /// For an update, each changed field as `[before, after]`; for a creation, the fields
    /// set. Never a secret.
    #[schema(value_type = Object)]
    pub changes: serde_json::Value,
    /// The request it was made in (`X-Request-Id`).
    pub request_id: Option<String>,
}

/// Answer to `GET /v1/organizations/{id}/audit`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditList {
    /// Newest first.
    pub entries: Vec<AuditEntry>,
    /// The `cursor` of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

// Seasons.

/// Answer to `POST /v1/seasons`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonCreated {
    /// The new season's id.
    pub id: SeasonId,
}

/// Answer to `GET /v1/seasons`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonList {
    /// Every season, newest first.
    pub seasons: Vec<Season>,
}

/// `POST /v1/seasons/{id}/holds`: the seats to hold in every event of the season (or of
/// one partial of it).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeasonHoldBody {
    /// Seat ids (1 to the smallest `max_seats_per_user` of the events covered), all or
    /// none; or `best_available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1)]
    pub seats: Option<Vec<String>>,
    /// Let the server pick seats free in every event covered, by an event's rules
    /// (`quantity` up to the smallest `max_seats_per_user`; `ticket_type` one of the
    /// season's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_available: Option<BestAvailable>,
    /// A partial season's code: its events, at its prices.
    #[serde(default)]
    pub partial: Option<String>,
}

/// A season hold: the seats held in every event covered, under one token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonHoldView {
    /// The hold's token: read, extend, release and buy it with this.
    pub hold_token: Uuid,
    /// The season.
    pub season_id: SeasonId,
    /// The partial held, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// The events the seats are held in.
    pub event_ids: Vec<EventId>,
    /// The seats, each at its price for the whole series (or the partial).
    pub seats: Vec<PricedSeat>,
    /// The seats' prices together.
    pub total_cents: i64,
    /// The season's currency.
    pub currency: String,
    /// When the hold lapses unless extended.
    pub expires_at: DateTime<Utc>,
    /// For a best-available hold: whether the seats are all in one row, side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjacent: Option<bool>,
}

/// A season order: a season hold bought, its seats sold in every event it covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonOrderView {
    /// The season order's id.
    pub order_id: Uuid,
    /// The season.
    pub season_id: SeasonId,
    /// The partial bought, if not the whole season.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// The events covered, in the season's order (released ones too).
    pub event_ids: Vec<EventId>,
    /// The buyer.
    pub user_id: String,
    /// The seats, each at its price for the whole series (or the partial).
    pub seats: Vec<PricedSeat>,
    /// The seats' prices together.
    pub total_cents: i64,
    /// The season's currency.
    pub currency: String,
    /// `paid` (season orders are paid at once), or `cancelled`.
    pub status: OrderStatus,
    /// When it was bought.
    pub created_at: DateTime<Utc>,
    /// The events the seats were released for, each on sale again there alone.
    pub released: Vec<ReleasedNight>,
}

/// `GET /v1/seasons/{id}/orders` (admin): the season's orders, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonOrderList {
    /// The orders.
    pub orders: Vec<SeasonOrderView>,
}

/// `GET /v1/seasons/{id}/sales` (admin): the season's sales, orders not cancelled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonSales {
    /// The season's currency.
    pub currency: String,
    /// Orders, seats and revenue of the whole season and every partial together.
    pub orders: i64,
    /// Seats sold (each once, however many events it covers).
    pub seats: i64,
    /// Revenue, minor units.
    pub revenue_cents: i64,
    /// The whole season (`partial` absent) and each partial, in the season's order.
    pub lines: Vec<SeasonSalesLine>,
}

/// One line of a season's sales.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonSalesLine {
    /// The partial's code; absent for the whole season.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// The partial's name, or the season's.
    pub name: String,
    /// Orders not cancelled.
    pub orders: i64,
    /// Their seats.
    pub seats: i64,
    /// Their totals together, minor units.
    pub revenue_cents: i64,
}

/// A season order's seats released for one event (`POST
/// /v1/orders/{id}/events/{event_id}/release`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReleasedNight {
    /// The event.
    pub event_id: EventId,
    /// The seats, on sale again in that event.
    pub seats: Vec<SeatRef>,
}

/// `GET /v1/orders/{id}` and its cancellation: an event's order, or a season's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AnyOrder {
    /// A season order (it has `season_id`).
    Season(SeasonOrderView),
    /// An event's order (it has `event_id`).
    Event(OrderView),
}

/// One seat of `GET /v1/seasons/{id}/seats`: the venue seat with the season's ticket type
/// and price (the partial's, when one is asked for), and its status across the events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonSeatView {
    /// The seat, with the season's ticket type and price (none where the season does not
    /// sell it).
    #[serde(flatten)]
    pub seat: EventSeat,
    /// `available` where the season sells the seat and no event covered has it sold or
    /// held; else `sold` if it is sold in any of them, `held` if held in any, else
    /// `not_for_sale`.
    pub status: SeatStatus,
}

/// Answer to `GET /v1/seasons/{id}/seats`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeasonSeats {
    /// The season.
    pub season_id: SeasonId,
    /// The partial asked for, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// The events covered: the season's, or the partial's.
    pub event_ids: Vec<EventId>,
    /// Every seat of the venue in venue order.
    pub seats: Vec<SeasonSeatView>,
}

// Tickets and entry.

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    /// Sold, not let in yet.
    Valid,
    /// Let in at least once.
    Redeemed,
    /// Cancelled, moved or resold: it lets nobody in.
    Revoked,
}

/// A ticket: one seat, or one place of a GA booking, of a paid order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TicketView {
    /// Ticket id.
    pub id: Uuid,
    /// The order it belongs to (a season order's id for a season's nights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<Uuid>,
    /// The GA booking it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_id: Option<Uuid>,
    /// The event it lets into.
    pub event_id: EventId,
    /// The seat, for a seated ticket.
    pub seat_id: Option<String>,
    /// The GA area's code, for a place.
    pub area: Option<String>,
    /// "Stalls, Row C, Seat 12", or "Standing floor, place 2 of 3".
    pub label: String,
    /// The ticket type's code (a place: its area's).
    pub ticket_type: String,
    /// The buyer's user id.
    pub holder: String,
    /// What the QR code carries, checked with the entry keys: `BX2:` and 162 characters
    /// of the QR alphanumeric set (docs/api.md, "Compact secrets").
    #[schema(max_length = 170)]
    pub secret: String,
    /// The code to type when the QR code cannot be read: 10 characters of Crockford's
    /// base32, printed `7KQF-2M9X-PD` (dashes and case ignored at the door).
    #[schema(min_length = 10, max_length = 10)]
    pub code: String,
    /// What it was sold at: its seat's price, or its booking's total over its places.
    pub price_cents: i64,
    /// The currency of its order or booking.
    pub currency: String,
    /// Valid, redeemed or revoked.
    pub status: TicketStatus,
}

/// Answer to `GET /v1/orders/{id}/tickets` and `GET /v1/bookings/{id}/tickets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TicketList {
    /// The tickets, in event then seat order; none for an order not paid.
    pub tickets: Vec<TicketView>,
}

/// An entry key's public half.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct EntryKeyView {
    /// Its name, as a ticket's payload gives it.
    pub kid: String,
    /// The raw 32-byte Ed25519 public key, base64url without padding.
    pub public_key: String,
    /// When it began to sign.
    pub created_at: DateTime<Utc>,
    /// When it stopped signing (its tickets stay valid).
    pub retired_at: Option<DateTime<Utc>>,
}

/// Answer to `GET /v1/events/{id}/entry/keys`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct EntryKeys {
    /// Every key that may have signed a ticket of the event, the signing one last.
    pub keys: Vec<EntryKeyView>,
}

/// A revoked ticket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RevokedTicket {
    /// Ticket id.
    pub ticket_id: Uuid,
    /// When it was revoked.
    pub revoked_at: DateTime<Utc>,
}

/// Answer to `GET /v1/events/{id}/entry/revoked`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RevokedList {
    /// Tickets revoked since the time asked, oldest first.
    pub revoked: Vec<RevokedTicket>,
    /// Ask again with `since` this: a little in the past, so an answer may repeat a
    /// revocation but never miss one.
    pub as_of: DateTime<Utc>,
}

/// In or out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Passage {
    /// In (the default).
    #[default]
    Entry,
    /// Out.
    Exit,
}

/// Body of `POST /v1/events/{id}/checkins`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckinBody {
    /// The ticket's secret, as its QR code carries it (or `code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 2000)]
    pub secret: Option<String>,
    /// The ticket's code as typed (online only; or `secret`): 10 characters of Crockford's
    /// base32, dashes, spaces and case ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 40)]
    pub code: Option<String>,
    /// The scanner's own id for this scan (1–64 characters): the same nonce again is
    /// answered the same, and recorded once.
    #[schema(min_length = 1, max_length = 64)]
    pub nonce: String,
    /// Entry (default) or exit.
    #[serde(default, rename = "type")]
    pub passage: Passage,
    /// The gate, at most 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 64)]
    pub gate: Option<String>,
    /// When the scanner saw it (an offline scanner's upload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanned_at: Option<DateTime<Utc>>,
    /// An offline scanner's upload of whom it let in: recorded even if the ticket was in
    /// already (`duplicate`).
    #[serde(default)]
    pub force: bool,
}

/// What a check-in came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckinResult {
    /// Let in (or out).
    Ok,
    /// An upload of a ticket that was in already: let in twice.
    Duplicate,
}

/// The ticket a check-in let in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CheckedTicket {
    /// Ticket id.
    pub id: Uuid,
    /// Seat or place.
    pub label: String,
    /// Ticket type.
    pub ticket_type: String,
    /// The buyer's user id.
    pub holder: String,
}

/// Answer to `POST /v1/events/{id}/checkins` (201).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CheckinView {
    /// `ok` or `duplicate`.
    pub result: CheckinResult,
    /// The check-in's id.
    pub checkin_id: Uuid,
    /// The ticket.
    pub ticket: CheckedTicket,
}

/// A ticket's entry, in `already_redeemed`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FirstEntry {
    /// When it went in.
    pub at: DateTime<Utc>,
    /// Through which gate.
    pub gate: Option<String>,
}

/// Tickets let in at one gate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateCount {
    /// The gate (`null`: scans that named none).
    pub gate: Option<String>,
    /// Tickets let in there.
    pub entered: u64,
}

/// Answer to `GET /v1/events/{id}/checkins/summary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CheckinSummary {
    /// Tickets that let someone in (valid and redeemed, not revoked).
    pub tickets: u64,
    /// Tickets let in at least once.
    pub entered: u64,
    /// In now: entered, not gone out.
    pub inside: u64,
    /// Offline uploads of tickets that were in already.
    pub duplicates: u64,
    /// Tickets let in at each gate.
    pub by_gate: Vec<GateCount>,
}

// Errors.

/// A seat named in an answer: its id and label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatRef {
    /// Seat id.
    pub id: String,
    /// Seat label.
    pub label: String,
    /// The event where the seat is taken, in a season hold's refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<EventId>,
}

/// The body of every error answer (`application/problem+json`, RFC 9457).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI reference naming the problem type, e.g. `/problems/seat-unavailable`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the problem type.
    pub title: String,
    /// HTTP status.
    pub status: u16,
    /// Stable machine-readable name (docs/api.md lists them).
    pub code: String,
    /// What happened in this case.
    pub detail: String,
    /// Per-field errors (`validation_failed` only), at most 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldError>>,
    /// How many more field errors there were than `errors` lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors_omitted: Option<usize>,
    /// The seats that could not be had (`seat_unavailable` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<Vec<SeatRef>>,
    /// Places left (`sold_out` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<u32>,
    /// The events still needing a waiting-room pass (`queue_required` for a season hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_ids: Option<Vec<EventId>>,
    /// The roles that may make the call (`forbidden` for a key whose role may not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_roles: Option<Vec<boxoffice_core::access::Role>>,
    /// With 429 and 503: how long to wait before asking again, in milliseconds. The
    /// `Retry-After` header says the same rounded up to whole seconds (at least one); a
    /// hold refused by the server's adaptive limit is given its turn here, often well
    /// under a second away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The event a real ticket of another event lets into (`wrong_event` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<EventId>,
    /// When and where the ticket went in (`already_redeemed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<FirstEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client of this version speaks to a server from before organizations: what it sends
    /// names no organization unless asked, and an event answered without one is `default`'s.
    #[test]
    fn bodies_and_answers_stay_readable_across_the_organizations_upgrade() {
        let venue: boxoffice_core::venue::VenueSpec = serde_json::from_value(serde_json::json!({
            "name": "Hall", "sections": [{"id": "a", "name": "A", "rows": [{"label": "1", "seats": 2}]}]
        }))
        .unwrap();
        assert!(!serde_json::to_value(&venue)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("organization_id"));
        let listed: EventListItem = serde_json::from_value(serde_json::json!({
            "id": EventId::new(), "name": "Gala", "venue_id": VenueId::new(),
            "starts_at": "2030-01-01T20:00:00Z"
        }))
        .unwrap();
        assert_eq!(listed.organization_id, OrganizationId::DEFAULT);
    }
}
