//! Holds and orders: what a hold store answers, and the rules a basket must meet before any
//! store is asked.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::availability::SeatMap;
use crate::ids::{EventId, UserId};
use crate::validation::ValidationErrors;

/// A waiting-room pass, as a hold keeps it: the hold is refused once the pass has ended,
/// and its checkout ends the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldPass {
    /// The waiting-room ticket the pass was issued for.
    pub ticket: Uuid,
    /// When the pass stops being valid anyway.
    pub expires_at: DateTime<Utc>,
}

/// A seat as a hold or an order carries it: what the buyer was quoted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PricedSeat {
    /// Seat id.
    pub id: String,
    /// Seat label.
    pub label: String,
    /// Ticket type code.
    pub ticket_type: String,
    /// Price in minor units.
    pub price_cents: i64,
}

/// A seat a hold store claimed or reserved, before labels are attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedSeat {
    /// Seat id.
    pub seat_id: String,
    /// Ticket type at the time of the hold.
    pub ticket_type: String,
    /// Price at the time of the hold.
    pub price_cents: i64,
}

/// A live hold: a token owning a basket of seats until `expires_at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// The hold token, the buyer's proof of ownership.
    pub token: Uuid,
    /// The event.
    pub event_id: EventId,
    /// The buyer.
    pub user_id: UserId,
    /// The seats, sorted by id.
    pub seats: Vec<ClaimedSeat>,
    /// When the hold was first granted (extensions are capped from here).
    pub created_at: DateTime<Utc>,
    /// When it lapses unless extended.
    pub expires_at: DateTime<Utc>,
}

/// Seats offered to a buyer waiting on the event's waiting list: a hold of theirs, to buy
/// before `deadline`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The waiting-list entry served.
    pub entry_id: Uuid,
    /// The hold: the buyer's, under a token of its own. It lives a little past the
    /// deadline, so that the seats pass on to the next entry before they could read
    /// available.
    pub hold: Hold,
    /// Until when the buyer may buy the seats.
    pub deadline: DateTime<Utc>,
}

/// What a hold store answers to a request for a basket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AcquireOutcome {
    /// Every seat is held under a new token.
    Held(Hold),
    /// These seats could not be had (held by someone else, sold, or not on sale); nothing
    /// is held.
    Unavailable(Vec<String>),
    /// The user's live held seats plus these would exceed the event's limit; nothing is held.
    LimitExceeded,
    /// The user asks for holds faster than the rate allows; the next ask is allowed after
    /// this long. Nothing is held.
    RateLimited(std::time::Duration),
    /// The event has started (by the store's clock); nothing is held.
    EventStarted,
    /// The waiting-room pass the hold was asked under has ended (its buyer checked out, or
    /// released every hold); nothing is held.
    PassEnded,
    /// The event's allocations changed since the seats were quoted (the store knows this
    /// layout version now): quote them again from the new seat map and retry. Nothing is
    /// held.
    LayoutChanged(i64),
}

/// What extending a hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtendOutcome {
    /// The hold now lapses at `expires_at`.
    Extended {
        /// The new expiry.
        expires_at: DateTime<Utc>,
        /// Ids of the seats the hold covers.
        seats: Vec<String>,
    },
    /// The token no longer owns live seats (expired, released, used or unknown).
    NotLive,
    /// The token is live but belongs to another user.
    Forbidden,
}

/// What adding seats to a live hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrowOutcome {
    /// The store's answer as to a new hold: `Held` with the whole hold as it now is (under
    /// its own token and expiry), or why nothing was added.
    Acquire(AcquireOutcome),
    /// The token no longer owns live seats (expired, released, being checked out, used or
    /// unknown); nothing changed.
    NotLive,
    /// The token is live but belongs to another user; nothing changed.
    Forbidden,
}

/// What taking one seat out of a live hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShrinkOutcome {
    /// The seat is free again; the hold keeps the others.
    Kept(Hold),
    /// It was the hold's last seat: the hold is gone, as if released.
    Emptied {
        /// The hold was made under a waiting-room pass, and was its buyer's last: the
        /// pass has ended.
        pass_ended: bool,
    },
    /// The hold is live and the caller's, but has no such seat; nothing changed.
    NotInHold,
    /// The token owns no live seats; nothing changed.
    NotLive,
    /// The token is live but belongs to another user; nothing changed.
    Forbidden,
}

/// What releasing a hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReleaseOutcome {
    /// The token's seats are free again.
    Released {
        /// Their ids.
        seats: Vec<String>,
        /// The hold was made under a waiting-room pass, and was its buyer's last: the
        /// pass has ended.
        pass_ended: bool,
    },
    /// The token owns no live seats; nothing changed.
    NotLive,
    /// The token is live but belongs to another user; nothing changed.
    Forbidden,
}

/// Status of an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Checked out in an event with a payment window and not paid yet: its seats are the
    /// buyer's until `pay_by`.
    PendingPayment,
    /// Paid for and valid: its seats are sold (at checkout, in an event without a payment
    /// window). Earlier versions called it `confirmed`, which is still read as this.
    #[serde(alias = "confirmed")]
    Paid,
    /// Not paid by `pay_by`: its seats went back on sale then.
    Expired,
    /// Cancelled; its seats are on sale again.
    Cancelled,
}

impl OrderStatus {
    /// Its name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::PendingPayment => "pending_payment",
            OrderStatus::Paid => "paid",
            OrderStatus::Expired => "expired",
            OrderStatus::Cancelled => "cancelled",
        }
    }
}

/// An order: seats sold to one user in one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    /// Order id.
    pub order_id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// The buyer.
    pub user_id: UserId,
    /// The hold token it was checked out from.
    pub hold_token: Uuid,
    /// The seats, sorted by id.
    pub seats: Vec<ClaimedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Pending payment, paid, expired or cancelled.
    pub status: OrderStatus,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// How it is paid for, in an event with a payment window.
    pub payment: Option<Payment>,
}

/// An order's payment, in an event with a payment window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    /// The order expires unpaid at this moment (by Postgres' clock).
    pub pay_by: DateTime<Utc>,
    /// When the payment was recorded.
    pub paid_at: Option<DateTime<Utc>>,
    /// The payment provider's reference.
    pub reference: Option<String>,
}

/// What recording an order's payment did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PayOutcome {
    /// The order is paid now: its seats are sold.
    Paid(Order),
    /// The order was paid before with this reference: the same order.
    Repeated(Order),
    /// The order was paid before with another reference.
    AlreadyPaid(Order),
    /// The window closed before the payment (the order expired), or the order was
    /// cancelled; nothing changed.
    Closed(Order),
    /// No such order.
    NotFound,
}

/// What checking out a hold did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckoutOutcome {
    /// A new order was committed.
    Created(Order),
    /// This token was checked out before (perhaps concurrently): the one order there is.
    Existing(Order),
    /// The token did not own all its seats when the checkout began.
    NotLive,
    /// The token belongs to another user.
    Forbidden,
}

/// What cancelling an order did.
#[derive(Clone, Debug, PartialEq, Eq)]
// Answered once per cancellation and never kept: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum CancelOutcome {
    /// The order is cancelled (now, or before) and its seats are on sale, but for those
    /// offered to the event's waiting list (now: none when it was cancelled before).
    Cancelled(Order, Vec<Offer>),
    /// No such order.
    NotFound,
    /// The order belongs to another user.
    Forbidden,
}

/// Checks a requested basket against the event's seat map and limit; returns the seat ids
/// sorted, the one order every store claims seats in, so overlapping baskets never wait on
/// each other in a cycle.
pub fn validate_basket(
    seats: &[String],
    map: &SeatMap,
    max_seats_per_user: u32,
) -> Result<Vec<String>, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    if seats.is_empty() {
        errors.add("seats", "must name at least one seat");
    }
    if seats.len() > max_seats_per_user as usize {
        // Refused before a single seat is looked up: the answer (and the work) stays small
        // however many ids were sent.
        errors.add(
            "seats",
            format!("at most {max_seats_per_user} seats may be held at once in this event"),
        );
        return Err(errors);
    }
    let mut seen = HashSet::with_capacity(seats.len());
    for (i, id) in seats.iter().enumerate() {
        if map.get(id).is_none() {
            errors.add(
                format!("seats[{i}]"),
                format!("the venue has no seat {id:?}"),
            );
        } else if !seen.insert(id.as_str()) {
            errors.add(
                format!("seats[{i}]"),
                format!("seat {id:?} is asked for twice"),
            );
        }
    }
    let mut sorted = seats.to_vec();
    sorted.sort_unstable();
    errors.into_result(sorted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::availability::EventSeat;

    fn map() -> SeatMap {
        SeatMap::new(
            ["s-A-1", "s-A-2", "s-A-3"]
                .iter()
                .map(|id| EventSeat {
                    id: (*id).into(),
                    label: (*id).into(),
                    section: "s".into(),
                    row: "A".into(),
                    number: "1".into(),
                    x: 0.0,
                    y: 0.0,
                    ticket_type: Some("standard".into()),
                    price_cents: Some(100),
                    attributes: Default::default(),
                    external_id: None,
                })
                .collect(),
        )
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_valid_basket_comes_back_sorted() {
        assert_eq!(
            validate_basket(&ids(&["s-A-3", "s-A-1"]), &map(), 8).unwrap(),
            ids(&["s-A-1", "s-A-3"])
        );
    }

    #[test]
    fn empty_repeated_unknown_and_oversized_baskets_are_refused() {
        let fields = |seats: &[&str], max| {
            validate_basket(&ids(seats), &map(), max)
                .unwrap_err()
                .0
                .into_iter()
                .map(|e| e.field)
                .collect::<Vec<_>>()
        };
        assert_eq!(fields(&[], 8), ["seats"]);
        assert_eq!(fields(&["s-A-1", "s-A-1"], 8), ["seats[1]"]);
        assert_eq!(fields(&["s-A-1", "s-Z-9"], 8), ["seats[1]"]);
        assert_eq!(fields(&["s-A-1", "s-A-2", "s-A-3"], 2), ["seats"]);
    }
}
