//! Why a service could not do what it was asked.

use std::time::Duration;

use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::StoreError;

use crate::SeatRef;

/// Why a service could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No such event.
    #[error("no such event")]
    EventNotFound,
    /// The event has no such general-admission area.
    #[error("the event has no such area")]
    AreaNotFound,
    /// No such season.
    #[error("no such season")]
    SeasonNotFound,
    /// The season has no such partial season.
    #[error("the season has no such partial")]
    PartialNotFound,
    /// No live hold with this token.
    #[error("no live hold with this token")]
    HoldNotFound,
    /// The live hold has no such seat.
    #[error("this hold has no such seat")]
    SeatNotInHold,
    /// No such order.
    #[error("no such order")]
    OrderNotFound,
    /// No such organization (or one the caller may not see).
    #[error("no such organization")]
    OrganizationNotFound,
    /// No such key in the organization.
    #[error("no such key")]
    KeyNotFound,
    /// The organization has no webhook.
    #[error("the organization has no webhook")]
    WebhookNotFound,
    /// Another organization has this slug.
    #[error("another organization has this slug")]
    SlugTaken,
    /// No such venue.
    #[error("no such venue")]
    VenueNotFound,
    /// An event or a season uses the venue: its seats cannot change.
    #[error("an event or a season uses this venue")]
    VenueInUse,
    /// The order lists no such seat for resale.
    #[error("this order lists no such seat for resale")]
    NotListed,
    /// No such booking.
    #[error("no such booking")]
    BookingNotFound,
    /// No such waiting-list entry in the event.
    #[error("no such waiting-list entry")]
    EntryNotFound,
    /// The event has no such sales channel.
    #[error("the event has no such channel")]
    ChannelNotFound,
    /// The event has no open waiting room.
    #[error("this event has no waiting room open")]
    QueueNotFound,
    /// No such waiting-room ticket of this buyer (given up, lapsed, ended, or another
    /// buyer's): join again.
    #[error("no such ticket in the waiting room")]
    TicketNotFound,
    /// No such entry ticket.
    #[error("no such ticket")]
    TicketUnknown,
    /// Not a ticket of the event's organization: the secret is malformed, or its signature
    /// does not verify with the organization's entry keys.
    #[error("not a ticket: the secret is malformed or its signature does not verify")]
    NotATicket,
    /// A real ticket, of another event.
    #[error("a ticket of another event")]
    WrongEvent(boxoffice_core::ids::EventId),
    /// Cancelled, moved or resold.
    #[error("this ticket was revoked (cancelled, moved or resold)")]
    TicketRevoked,
    /// An exit of a ticket that is not inside.
    #[error("not inside")]
    NotInside,
    /// Inside already.
    #[error("inside already")]
    AlreadyRedeemed {
        /// When it went in.
        at: chrono::DateTime<chrono::Utc>,
        /// Through which gate.
        gate: Option<String>,
    },
    /// Not a waiting-room ticket this line signed: altered, truncated or forged.
    #[error("the ticket is not valid: join the waiting room again")]
    TicketInvalid,
    /// The event's waiting room is on, and the buyer shows no valid pass of theirs.
    #[error("{0}")]
    QueueRequired(&'static str),
    /// A season hold covers events whose waiting room is on, and no valid pass of the
    /// buyer's was shown for these.
    #[error(
        "these events' waiting rooms are on: show a pass of each (Boxoffice-Pass, comma-separated)"
    )]
    PassesRequired(Vec<boxoffice_core::ids::EventId>),
    /// A season hold was asked under passes that have ended, in these events.
    #[error(
        "the passes of these events ended (a checkout, a release of every hold, or the ticket given up): join their waiting rooms again"
    )]
    PassesEnded(Vec<boxoffice_core::ids::EventId>),
    /// The caller may not act on this (another user's hold, order or booking).
    #[error("{0}")]
    Forbidden(&'static str),
    /// The request breaks a rule; every field that does is listed.
    #[error("{0}")]
    Invalid(ValidationErrors),
    /// The event has started.
    #[error("the event has started")]
    EventStarted,
    /// These seats are held by someone else, sold or not on sale; nothing was held.
    #[error("seats unavailable")]
    SeatsUnavailable(Vec<SeatRef>),
    /// The user's live held seats plus these would exceed the event's limit.
    #[error("at most {0} seats may be held at once in this event")]
    HoldLimitExceeded(u32),
    /// The buyer's bookings of a general-admission area would pass its `max_per_user`
    /// (the cap, and what they have booked already).
    #[error("at most {0} places per buyer in this area, and {1} are booked already")]
    AreaLimitExceeded(u32, u32),
    /// The token does not, or no longer, own its seats.
    #[error("this hold has expired, was released or was already used")]
    HoldNotLive,
    /// The order was paid before, with another reference.
    #[error("this order was paid before, with another reference")]
    AlreadyPaid,
    /// The season order's seats were released for this event before (or the order was
    /// cancelled).
    #[error("this season order's seats were released for this event before")]
    AlreadyReleased,
    /// The order's seats cannot change now: why (it is not paid; the night was not
    /// released).
    #[error("{0}")]
    NotChangeable(&'static str),
    /// The order can no longer be paid: why (its window closed, or it was cancelled).
    #[error("{0}")]
    PaymentWindowClosed(&'static str),
    /// Fewer general-admission places left than asked.
    #[error("only {0} places left")]
    SoldOut(u32),
    /// The caller asks faster than its limit; the next ask is allowed after this long.
    #[error("too many requests")]
    RateLimited(Duration),
    /// A store cannot serve now; retrying later may succeed.
    #[error("{reason}")]
    Unavailable {
        /// For the logs.
        reason: String,
        /// How long to wait before retrying.
        retry_after: Duration,
    },
    /// The server's adaptive limit refused the request; it may be asked again after this
    /// long (its turn).
    #[error("the server is busy")]
    Overloaded(Duration),
    /// A store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Error {
    /// A request with one invalid field.
    pub fn invalid(field: &str, message: &str) -> Self {
        let mut errors = ValidationErrors::default();
        errors.add(field, message);
        Error::Invalid(errors)
    }
}

impl Error {
    /// Whether this says a store (or the server) could not serve now, rather than a
    /// refusal: answered 503.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Error::Unavailable { .. }
                | Error::Overloaded(_)
                | Error::Store(StoreError::Unavailable { .. } | StoreError::Contention)
        )
    }
}

impl From<ValidationErrors> for Error {
    fn from(e: ValidationErrors) -> Self {
        Error::Invalid(e)
    }
}
