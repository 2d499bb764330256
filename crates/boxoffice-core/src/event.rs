//! Events: the specification a client sends, ticket types, general-admission areas, sales
//! channels and the allocation rules that decide which seat is on sale at which ticket
//! type (a long file: the specification's types and its checks, read together).
//!
//! Seats belong to the venue; availability belongs to the event. A seat is on sale only if
//! an allocation gives it a ticket type. Allocation entries apply in order and a later
//! entry overrides an earlier one for the same seat, so "all of the stalls standard, rows
//! A and B premium" is two entries. Seats no entry names are held back (`not_for_sale`).

use std::collections::HashSet;

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::VenueId;
use crate::validation::ValidationErrors;
use crate::venue::{VenueIndex, VenueLayout};

mod allocations;
pub use allocations::resolve_allocations;

/// Default lifetime of a hold, in seconds.
pub const DEFAULT_HOLD_TTL_SECONDS: u32 = 120;
/// Default cap on a hold's total lifetime including extensions, in seconds.
pub const DEFAULT_MAX_HOLD_SECONDS: u32 = 900;
/// Default number of live held seats one user may have in one event.
pub const DEFAULT_MAX_SEATS_PER_USER: u32 = 8;
/// Default cap on the places of one general-admission booking.
pub const DEFAULT_MAX_PER_BOOKING: u32 = 10;
/// Longest allowed `max_hold_seconds`: a day.
pub const MAX_HOLD_SECONDS_LIMIT: u32 = 86_400;
/// Largest general-admission capacity.
pub const MAX_GA_CAPACITY: u32 = 1_000_000;
/// Largest price in minor units.
pub const MAX_PRICE_CENTS: i64 = 100_000_000_000;

/// `POST /v1/events`: an event as a client describes it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// The organization it belongs to: for a platform key, the `default` one when absent;
    /// a key of an organization creates in its own (naming another answers 404).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<crate::ids::OrganizationId>,
    /// The venue whose seat map this event sells.
    pub venue_id: VenueId,
    /// Display name, 1–200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// When the event starts; holds and bookings are refused from then on.
    pub starts_at: DateTime<Utc>,
    /// How long a hold lives after it is made or extended (1–3600, default 120).
    #[serde(default = "default_hold_ttl")]
    #[schema(minimum = 1, maximum = 3600)]
    pub hold_ttl_seconds: u32,
    /// A hold can never be extended past its creation plus this (default 900).
    #[serde(default = "default_max_hold")]
    pub max_hold_seconds: u32,
    /// Live held seats one user may have in this event at once (1–100, default 8).
    #[serde(default = "default_max_seats")]
    #[schema(minimum = 1, maximum = 100)]
    pub max_seats_per_user: u32,
    /// How long a buyer has to pay after checkout, in seconds (0–86400, default 0: the
    /// sale completes at checkout). With a window, checkout makes a `pending_payment` order
    /// whose seats are the buyer's until its `pay_by`.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 86400)]
    pub payment_window_seconds: u32,
    /// Its IANA time zone, when it is not its venue's (`Europe/Berlin`). `starts_at` stays
    /// UTC; the zone says how pages, PDFs and the console show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// How long a buyer offered seats from the waiting list has to buy them, in seconds
    /// (60–86400, default 900); then the offer passes to the next buyer in line.
    #[serde(default = "default_offer_seconds")]
    #[schema(minimum = 60, maximum = 86400)]
    pub waitlist_offer_seconds: u32,
    /// Section ids ranked best first for best-available; unlisted sections follow in venue order.
    #[serde(default)]
    pub section_order: Option<Vec<String>>,
    /// Ticket types that allocations refer to.
    #[serde(default)]
    pub ticket_types: Vec<TicketType>,
    /// Sales channels: partners through whom some seats are sold, and only through them
    /// until the organizer releases them (an allocation entry names its channel).
    #[serde(default)]
    pub channels: Vec<Channel>,
    /// Which seats are on sale at which ticket type (and in which channel); later entries
    /// override earlier ones.
    #[serde(default)]
    pub allocations: Vec<AllocationEntry>,
    /// General-admission areas sold by quantity.
    #[serde(default)]
    pub ga_areas: Vec<GaAreaSpec>,
    /// A waiting room in front of the event's holds and bookings.
    #[serde(default, deserialize_with = "objects::nullable")]
    pub queue: Option<QueueSettings>,
    /// How tickets are let in at the door (default: each once).
    #[serde(
        default,
        deserialize_with = "objects::required",
        skip_serializing_if = "is_default"
    )]
    pub entry: EntrySettings,
    /// Who may change sold seats, and until when (default: staff alone).
    #[serde(
        default,
        deserialize_with = "objects::required",
        skip_serializing_if = "is_default"
    )]
    pub changes: ChangeSettings,
}

/// Whether `value` is its type's default: a client leaves such settings out of what it
/// sends, so that a server older than them takes the request too.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Settings objects taken from a JSON object only, for `deserialize_with`: serde's derive
/// also takes a struct from an array (`[]` as every field's default), which docs/api.md's
/// schema does not allow.
pub mod objects {
    use serde::de::{DeserializeOwned, Error};
    use serde::{Deserialize, Deserializer};
    use serde_json::{Map, Value};

    /// An object.
    pub fn required<'de, D, T>(d: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned,
    {
        let map = Map::<String, Value>::deserialize(d)?;
        T::deserialize(Value::Object(map)).map_err(D::Error::custom)
    }

    /// An object, or `null` (`None`).
    pub fn nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned,
    {
        match Option::<Map<String, Value>>::deserialize(d)? {
            Some(map) => T::deserialize(Value::Object(map))
                .map(Some)
                .map_err(D::Error::custom),
            None => Ok(None),
        }
    }
}

/// Who may move sold seats of an event (`changes` on create and on `PATCH
/// /v1/events/{id}`): staff always; a buyer their own order's, until `buyer_moves_until`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeSettings {
    /// Until when buyers may move the seats of their own orders (null: never).
    #[serde(default)]
    pub buyer_moves_until: Option<DateTime<Utc>>,
}

/// How an event's tickets are let in (`entry` on create and on `PATCH /v1/events/{id}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EntrySettings {
    /// Whether a ticket scanned out at an exit may enter again (default false: a ticket
    /// enters once).
    #[serde(default)]
    pub reentry: bool,
}

/// Default length of an admission from the waiting room, in seconds.
pub const DEFAULT_QUEUE_SESSION_SECONDS: u32 = 600;

/// An event's waiting room (`queue` on create and on `PATCH /v1/events/{id}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueSettings {
    /// While true, holds and bookings need a pass from the waiting room.
    pub enabled: bool,
    /// When admission begins; buyers who join before it are put in a random order.
    pub opens_at: DateTime<Utc>,
    /// Buyers admitted per minute (1–1,000,000).
    pub admit_per_minute: u32,
    /// How long an admission lasts, in seconds (60–86400, default 600).
    #[serde(default = "default_queue_session")]
    pub session_seconds: u32,
    /// Put everyone who joined before `opens_at` in a random order (default true); if
    /// false, they keep the order they joined in.
    #[serde(default = "default_true")]
    pub shuffle_at_open: bool,
}

/// Default time a waiting-list offer stands, in seconds.
pub const DEFAULT_WAITLIST_OFFER_SECONDS: u32 = 900;

fn default_offer_seconds() -> u32 {
    DEFAULT_WAITLIST_OFFER_SECONDS
}

fn default_queue_session() -> u32 {
    DEFAULT_QUEUE_SESSION_SECONDS
}
fn default_true() -> bool {
    true
}

impl QueueSettings {
    /// Checks the settings, reporting problems under `at` (e.g. `queue`).
    pub fn check(&self, at: &str, errors: &mut ValidationErrors) {
        errors.check(
            (1..=9999).contains(&self.opens_at.year()),
            format!("{at}.opens_at"),
            "must be in a year from 1 to 9999",
        );
        errors.check(
            (1..=1_000_000).contains(&self.admit_per_minute),
            format!("{at}.admit_per_minute"),
            "must be between 1 and 1000000",
        );
        errors.check(
            (60..=86_400).contains(&self.session_seconds),
            format!("{at}.session_seconds"),
            "must be between 60 and 86400",
        );
    }
}

fn default_hold_ttl() -> u32 {
    DEFAULT_HOLD_TTL_SECONDS
}
fn default_max_hold() -> u32 {
    DEFAULT_MAX_HOLD_SECONDS
}
fn default_max_seats() -> u32 {
    DEFAULT_MAX_SEATS_PER_USER
}

/// A ticket type of an event: what an allocated seat costs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketType {
    /// `[A-Za-z0-9_]{1,32}`, unique in the event.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Price in minor units of `currency`.
    pub price_cents: i64,
    /// ISO 4217 code, e.g. `EUR`; one currency per event.
    pub currency: String,
}

/// A general-admission area as a client describes it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GaAreaSpec {
    /// `[A-Za-z0-9_]{1,32}`, unique among the event's areas.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Places in the area (1–1,000,000).
    pub capacity: u32,
    /// Price of one place in minor units.
    pub price_cents: i64,
    /// ISO 4217 code; the event's one currency.
    pub currency: String,
    /// Most places one booking may take (default 10, at most `capacity`).
    pub max_per_booking: Option<u32>,
    /// Most places one buyer's bookings of the area may add up to (default
    /// `max_per_booking`, at most `capacity`).
    pub max_per_user: Option<u32>,
}

/// A validated general-admission area.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GaArea {
    /// Area code.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Places in the area.
    pub capacity: u32,
    /// Price of one place in minor units.
    pub price_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Most places one booking may take.
    pub max_per_booking: u32,
    /// Most places one buyer's confirmed bookings of the area may add up to.
    pub max_per_user: u32,
}

/// A sales channel of an event: a partner (a fan club, a hotel package) whose buyers, and
/// only they, may buy the seats allocated to it. A buyer is in a channel when their user
/// token carries the claim `channel` with its code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Channel {
    /// `[A-Za-z0-9_-]{1,32}`, unique in the event.
    pub code: String,
    /// Display name.
    pub name: String,
}

/// True for a channel code: 1–32 ASCII letters, digits, underscores and hyphens.
pub fn is_channel_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 32
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A seat on sale: its ticket type, and the channel it is sold in (`None`: on general sale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Seat id.
    pub seat: String,
    /// Ticket type code.
    pub ticket_type: String,
    /// The channel whose buyers alone may buy it.
    pub channel: Option<String>,
}

/// One allocation entry: a ticket type and the seats it applies to, named by section (whole,
/// or some of its rows), by seat id, or by the venue's seat category.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationEntry {
    /// Code of one of the event's ticket types.
    pub ticket_type: String,
    /// A section id; with `rows`, only those rows of it.
    pub section: Option<String>,
    /// Row labels of `section`.
    pub rows: Option<Vec<String>>,
    /// Seat ids; not together with `section`.
    pub seats: Option<Vec<String>>,
    /// Every seat of this category (the venue's price zone, such as "Front stalls"); not
    /// together with `section` or `seats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Code of one of the event's channels: the seats are sold in that channel only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

/// `POST /v1/events/{id}/allocations/withdraw`: the seats to take off sale.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1)]
pub struct WithdrawSpec {
    /// A section id; with `rows`, only those rows of it.
    pub section: Option<String>,
    /// Row labels of `section`.
    pub rows: Option<Vec<String>>,
    /// Seat ids; not together with `section`.
    pub seats: Option<Vec<String>>,
}

/// A validated event, ready to be stored.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
    /// The venue.
    pub venue_id: VenueId,
    /// Display name.
    pub name: String,
    /// Start time.
    pub starts_at: DateTime<Utc>,
    /// Hold lifetime.
    pub hold_ttl_seconds: u32,
    /// Cap on a hold's lifetime with extensions.
    pub max_hold_seconds: u32,
    /// Per-user limit of live held seats.
    pub max_seats_per_user: u32,
    /// How long a buyer has to pay after checkout (0: the sale completes at checkout).
    pub payment_window_seconds: u32,
    /// How long a waiting-list offer stands.
    pub waitlist_offer_seconds: u32,
    /// Its own time zone (canonical IANA name), if not its venue's.
    pub time_zone: Option<String>,
    /// Every section of the venue, best first.
    pub section_order: Vec<String>,
    /// Ticket types.
    pub ticket_types: Vec<TicketType>,
    /// General-admission areas.
    pub ga_areas: Vec<GaArea>,
    /// Sales channels.
    pub channels: Vec<Channel>,
    /// Every seat on sale, in venue order.
    pub allocations: Vec<Allocation>,
    /// The waiting room, if any.
    pub queue: Option<QueueSettings>,
    /// How tickets are let in.
    pub entry: EntrySettings,
    /// Who may change sold seats.
    pub changes: ChangeSettings,
}

/// Checks the channels' codes and names; answers their codes, for the allocations to name.
pub fn check_channels<'a>(
    channels: &'a [Channel],
    errors: &mut ValidationErrors,
) -> HashSet<&'a str> {
    let mut codes = HashSet::new();
    for (i, c) in channels.iter().enumerate() {
        let at = format!("channels[{i}]");
        if errors.check(
            is_channel_code(&c.code),
            format!("{at}.code"),
            "must match [A-Za-z0-9_-]{1,32}",
        ) {
            errors.check(
                codes.insert(c.code.as_str()),
                format!("{at}.code"),
                format!("channel {:?} is defined twice", c.code),
            );
        }
        errors.check_name(format!("{at}.name"), &c.name);
    }
    errors.check(channels.len() <= 100, "channels", "at most 100 channels");
    codes
}

fn is_currency(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// An event starts in the future, in a year RFC 3339 can spell (1–9999).
fn check_starts_at(starts_at: DateTime<Utc>, now: DateTime<Utc>, errors: &mut ValidationErrors) {
    let year = starts_at.year();
    if errors.check(
        (1..=9999).contains(&year),
        "starts_at",
        "must be in a year from 1 to 9999",
    ) {
        errors.check(starts_at > now, "starts_at", "must be in the future");
    }
}

/// The prices of one event (or season): each a non-negative amount, all in one currency
/// (the first valid one seen).
#[derive(Default)]
pub(crate) struct Prices {
    pub(crate) currency: Option<String>,
}

impl Prices {
    /// Checks the price at `at` (`<at>.price_cents`, `<at>.currency`).
    pub(crate) fn check(
        &mut self,
        errors: &mut ValidationErrors,
        at: &str,
        price: i64,
        code: &str,
    ) {
        errors.check(
            (0..=MAX_PRICE_CENTS).contains(&price),
            format!("{at}.price_cents"),
            "must be a non-negative amount in minor units",
        );
        let field = format!("{at}.currency");
        if !errors.check(
            is_currency(code),
            field.clone(),
            "must be an ISO 4217 code such as EUR",
        ) {
            return;
        }
        match &self.currency {
            None => self.currency = Some(code.to_owned()),
            Some(c) => {
                errors.check(
                    c == code,
                    field,
                    format!("every price of an event must be in one currency ({c})"),
                );
            }
        }
    }
}

impl EventSpec {
    /// Checks the specification against the venue's layout and resolves its allocations;
    /// `now` is the time the event is created at (it must start later). Every problem is
    /// reported at once.
    pub fn validate(
        self,
        venue: &VenueLayout,
        now: DateTime<Utc>,
    ) -> Result<NewEvent, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        self.check_settings(now, &mut errors);
        let index = venue.index();
        let section_order =
            resolve_section_order(venue, &index, self.section_order.as_deref(), &mut errors);
        let mut prices = Prices::default();
        let codes = check_ticket_types(&self.ticket_types, &mut prices, &mut errors);
        let ga_areas = self.check_ga_areas(&mut prices, &mut errors);
        let channels = check_channels(&self.channels, &mut errors);
        let allocations =
            resolve_allocations(&self.allocations, &index, &codes, &channels, &mut errors);
        if let Some(queue) = &self.queue {
            queue.check("queue", &mut errors);
        }
        let time_zone =
            crate::local_time::check(self.time_zone.as_deref(), "time_zone", &mut errors);
        errors.into_result(NewEvent {
            venue_id: self.venue_id,
            name: self.name,
            starts_at: self.starts_at,
            hold_ttl_seconds: self.hold_ttl_seconds,
            max_hold_seconds: self.max_hold_seconds,
            max_seats_per_user: self.max_seats_per_user,
            payment_window_seconds: self.payment_window_seconds,
            waitlist_offer_seconds: self.waitlist_offer_seconds,
            time_zone,
            section_order,
            ticket_types: self.ticket_types,
            ga_areas,
            channels: self.channels,
            allocations,
            queue: self.queue,
            entry: self.entry,
            changes: self.changes,
        })
    }

    /// The name, the start and the hold settings.
    fn check_settings(&self, now: DateTime<Utc>, errors: &mut ValidationErrors) {
        errors.check_name("name", &self.name);
        check_starts_at(self.starts_at, now, errors);
        errors.check(
            (1..=3600).contains(&self.hold_ttl_seconds),
            "hold_ttl_seconds",
            "must be between 1 and 3600",
        );
        errors.check(
            (self.hold_ttl_seconds..=MAX_HOLD_SECONDS_LIMIT).contains(&self.max_hold_seconds),
            "max_hold_seconds",
            "must be at least hold_ttl_seconds and at most 86400",
        );
        errors.check(
            (1..=100).contains(&self.max_seats_per_user),
            "max_seats_per_user",
            "must be between 1 and 100",
        );
        errors.check(
            self.payment_window_seconds <= 86_400,
            "payment_window_seconds",
            "must be between 0 and 86400",
        );
        errors.check(
            (60..=86_400).contains(&self.waitlist_offer_seconds),
            "waitlist_offer_seconds",
            "must be between 60 and 86400",
        );
    }

    /// The general-admission areas, with their `max_per_booking` and `max_per_user`
    /// resolved.
    fn check_ga_areas(&self, prices: &mut Prices, errors: &mut ValidationErrors) -> Vec<GaArea> {
        let mut codes = HashSet::new();
        let mut areas = Vec::with_capacity(self.ga_areas.len());
        for (i, a) in self.ga_areas.iter().enumerate() {
            let at = format!("ga_areas[{i}]");
            errors.check_identifier(format!("{at}.code"), &a.code, 32, &mut codes, || {
                format!("area {:?} is defined twice", a.code)
            });
            errors.check_name(format!("{at}.name"), &a.name);
            errors.check(
                (1..=MAX_GA_CAPACITY).contains(&a.capacity),
                format!("{at}.capacity"),
                "must be between 1 and 1000000",
            );
            prices.check(errors, &at, a.price_cents, &a.currency);
            let max_per_booking = a
                .max_per_booking
                .unwrap_or(DEFAULT_MAX_PER_BOOKING.min(a.capacity.max(1)));
            errors.check(
                (1..=a.capacity.max(1)).contains(&max_per_booking),
                format!("{at}.max_per_booking"),
                "must be between 1 and the area's capacity",
            );
            // Unset, it is the (checked) max_per_booking.
            let max_per_user = a.max_per_user.unwrap_or(max_per_booking);
            errors.check(
                a.max_per_user.is_none() || (1..=a.capacity.max(1)).contains(&max_per_user),
                format!("{at}.max_per_user"),
                "must be between 1 and the area's capacity",
            );
            areas.push(GaArea {
                code: a.code.clone(),
                name: a.name.clone(),
                capacity: a.capacity,
                price_cents: a.price_cents,
                currency: a.currency.clone(),
                max_per_booking,
                max_per_user,
            });
        }
        areas
    }
}

/// Checks ticket types (at `ticket_types[i]`); answers their codes, for the allocations to
/// name.
pub(crate) fn check_ticket_types<'t>(
    types: &'t [TicketType],
    prices: &mut Prices,
    errors: &mut ValidationErrors,
) -> HashSet<&'t str> {
    let mut codes = HashSet::new();
    for (i, t) in types.iter().enumerate() {
        let at = format!("ticket_types[{i}]");
        errors.check_identifier(format!("{at}.code"), &t.code, 32, &mut codes, || {
            format!("ticket type {:?} is defined twice", t.code)
        });
        errors.check_name(format!("{at}.name"), &t.name);
        prices.check(errors, &at, t.price_cents, &t.currency);
    }
    codes
}

fn resolve_section_order(
    venue: &VenueLayout,
    index: &VenueIndex<'_>,
    ranked: Option<&[String]>,
    errors: &mut ValidationErrors,
) -> Vec<String> {
    let mut order: Vec<String> = Vec::with_capacity(venue.sections.len());
    for (i, id) in ranked.unwrap_or_default().iter().enumerate() {
        let field = format!("section_order[{i}]");
        let known = errors.check(
            index.has_section(id),
            &field,
            format!("the venue has no section {id:?}"),
        );
        if known
            && errors.check(
                !order.contains(id),
                &field,
                format!("section {id:?} is ranked twice"),
            )
        {
            order.push(id.clone());
        }
    }
    for section in &venue.sections {
        if !order.contains(&section.id) {
            order.push(section.id.clone());
        }
    }
    order
}

#[cfg(test)]
mod tests;
