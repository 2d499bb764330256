//! General-admission bookings: the sale-day gate in front of Postgres, which decides.

use crate::live::Change;
use boxoffice_api::GaChanged;
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::journal::audit::{Actor, By};
use boxoffice_store::pg::bookings::{
    self, Booking, BookingCancel, BookingOutcome, BookingPayment, BookingRequest,
};
use boxoffice_store::redis::gate::GateTake;
use uuid::Uuid;

use crate::overload::{limited, Path};
use crate::Error;
use crate::Services;

/// A request for general-admission places.
#[derive(Clone, Copy, Debug)]
pub struct PlacesWanted<'a> {
    /// Area code.
    pub area: &'a str,
    /// How many places.
    pub quantity: u32,
    /// The client's idempotency key, if it sent one: a repeat gets the first answer.
    pub idempotency_key: Option<&'a str>,
    /// The waiting-room pass shown (`Boxoffice-Pass`), checked while the event's queue is
    /// on.
    pub pass: Option<&'a str>,
}

/// Books places for `user`. With the sale-day gate on, the places are first taken from the
/// gate's counter, which turns most requests away once the area is sold out; Postgres then
/// decides under the area's row lock, and places the gate let through that were not booked
/// go back to it. In an event with a payment window the booking is pending until its
/// `pay_by` ([`pay_booking`]).
pub async fn create_booking(
    state: &Services,
    event: EventId,
    user: &UserId,
    wanted: PlacesWanted<'_>,
) -> Result<Booking, Error> {
    let admitted = crate::queue::admit(state, event, user, wanted.pass).await?;
    if wanted.quantity < 1 {
        return Err(Error::invalid("quantity", "must be at least 1"));
    }
    let through_gate = match pass_gate(state, event, wanted.area, wanted.quantity).await? {
        Gate::Refused(left) => {
            state.metrics.increment("ga_gate_rejected_total");
            return Err(Error::SoldOut(left));
        }
        Gate::Passed => true,
        Gate::Off => false,
    };
    let request = BookingRequest {
        event,
        user,
        area: wanted.area,
        quantity: wanted.quantity,
        idempotency_key: wanted.idempotency_key,
        pass: admitted.pass().map(|p| p.ticket),
    };
    let outcome = limited(&state.overload, Path::Hold, async {
        state
            .metrics
            .increment("ga_bookings_reached_postgres_total");
        Ok(bookings::book(&state.pool, &request).await?)
    })
    .await;
    // Places the gate let through come back to it unless they were really booked now, and
    // so do the places of unpaid bookings that lapsed on the way.
    let returned = outcome.as_ref().map_or(0, |(_, returned)| *returned);
    let booked = matches!(outcome, Ok((BookingOutcome::Booked(_), _)));
    let back = returned
        + if through_gate && !booked {
            wanted.quantity
        } else {
            0
        };
    if back > 0 {
        give_back(state, event, wanted.area, back).await;
    }
    if returned > 0 && !booked {
        publish_left(state, event, wanted.area).await;
    }
    let outcome = outcome.map(|(outcome, _)| outcome);
    let booked = match outcome? {
        BookingOutcome::Replay(first) => return answer(*first),
        BookingOutcome::Booked(booking) => booking,
        other => return answer(other),
    };
    publish_left(state, event, wanted.area).await;
    Ok(booked)
}

/// Publishes the places left in `area` now, as Postgres counts them.
async fn publish_left(state: &Services, event: EventId, area: &str) {
    match bookings::area_left(&state.pool, event, area).await {
        Ok(Some(left)) => {
            let change = Change::Ga(GaChanged {
                code: area.to_owned(),
                left,
            });
            state.live.publish(event, change).await;
        }
        Ok(None) => {}
        Err(error) => tracing::warn!(%event, area, %error, "places left not published"),
    }
}

/// The answer a booking outcome comes to.
fn answer(outcome: BookingOutcome) -> Result<Booking, Error> {
    match outcome {
        BookingOutcome::Booked(booking) => Ok(booking),
        BookingOutcome::SoldOut { left } => Err(Error::SoldOut(left)),
        BookingOutcome::EventNotFound => Err(Error::EventNotFound),
        BookingOutcome::AreaNotFound => Err(Error::AreaNotFound),
        BookingOutcome::EventStarted => Err(Error::EventStarted),
        BookingOutcome::TooMany { max } => Err(Error::invalid(
            "quantity",
            &format!("at most {max} places per booking in this area"),
        )),
        BookingOutcome::UserLimit { max, booked } => Err(Error::AreaLimitExceeded(max, booked)),
        BookingOutcome::PassEnded => Err(crate::queue::pass_ended()),
        BookingOutcome::KeyReused => Err(Error::invalid(
            "Idempotency-Key",
            "this key was used before for a different request",
        )),
        BookingOutcome::Replay(_) => Err(Error::Store(boxoffice_store::StoreError::Other(
            "a remembered answer is never a replay".into(),
        ))),
    }
}

/// Cancels the booking `id` (its owner, or staff: `by`) and returns its places to the area.
/// A cancelled booking is answered as it is.
pub async fn cancel_booking(
    state: &Services,
    id: Option<Uuid>,
    by: By<'_>,
) -> Result<Booking, Error> {
    let id = id.ok_or(Error::BookingNotFound)?;
    let (cancel, returned) = bookings::cancel_booking(&state.pool, id, by).await?;
    if let (BookingCancel::Cancelled(b) | BookingCancel::AlreadyCancelled(b), true) =
        (&cancel, returned > 0)
    {
        give_back_lapsed(state, &[(b.event_id, b.area.clone(), returned)]).await;
    }
    match cancel {
        BookingCancel::Cancelled(booking) => {
            give_back(state, booking.event_id, &booking.area, booking.quantity).await;
            publish_left(state, booking.event_id, &booking.area).await;
            Ok(booking)
        }
        BookingCancel::AlreadyCancelled(booking) => Ok(booking),
        BookingCancel::NotFound => Err(Error::BookingNotFound),
        BookingCancel::Forbidden => Err(Error::Forbidden("this booking belongs to another user")),
    }
}

/// Records the payment of the booking `id` (the platform's server, once its payment
/// provider confirmed), before its `pay_by`: it is paid and its tickets issued. At or past
/// `pay_by` it expired and its places went back: `payment_window_closed`.
pub async fn pay_booking(
    state: &Services,
    id: Option<Uuid>,
    reference: &str,
    amount_cents: i64,
    actor: Option<&Actor>,
) -> Result<Booking, Error> {
    let id = id.ok_or(Error::BookingNotFound)?;
    let reference = crate::orders::payment_reference(reference)?;
    let booking = bookings::get_booking(&state.pool, id)
        .await?
        .ok_or(Error::BookingNotFound)?;
    if amount_cents != booking.total_cents {
        return Err(Error::invalid(
            "amount_cents",
            &format!("must be the booking's total, {}", booking.total_cents),
        ));
    }
    let (paid, returned) = limited(&state.overload, Path::Checkout, async {
        Ok(bookings::pay_booking(&state.pool, id, reference, actor).await?)
    })
    .await?;
    if returned > 0 {
        let (event, area) = (booking.event_id, booking.area.clone());
        give_back_lapsed(state, &[(event, area, returned)]).await;
    }
    match paid {
        BookingPayment::Paid(booking) | BookingPayment::Repeated(booking) => Ok(booking),
        BookingPayment::AlreadyPaid(_) => Err(Error::AlreadyPaid),
        BookingPayment::Closed(booking) if booking.status == OrderStatus::Cancelled => {
            Err(Error::PaymentWindowClosed("this booking was cancelled"))
        }
        BookingPayment::Closed(_) => Err(Error::PaymentWindowClosed(
            "this booking's payment window closed: it expired, and its places went back on sale",
        )),
        BookingPayment::NotFound => Err(Error::BookingNotFound),
    }
}

/// The booking `id`, to its owner (`user`) or to staff (`None`).
pub async fn get_booking(
    state: &Services,
    id: Option<Uuid>,
    user: Option<&UserId>,
) -> Result<Booking, Error> {
    let id = id.ok_or(Error::BookingNotFound)?;
    let booking = bookings::get_booking(&state.pool, id)
        .await?
        .ok_or(Error::BookingNotFound)?;
    if user.is_some_and(|u| u.as_str() != booking.user_id) {
        return Err(Error::Forbidden("this booking belongs to another user"));
    }
    Ok(booking)
}

/// Records unpaid bookings past their deadline as expired (each with `booking.expired`),
/// their places back in their areas; answers how many places came back.
pub async fn expire_unpaid(state: &Services) -> Result<u32, Error> {
    let lapsed = bookings::expire_pending(&state.pool).await?;
    give_back_lapsed(state, &lapsed).await;
    Ok(lapsed.iter().map(|(_, _, places)| places).sum())
}

/// Gives the places of lapsed bookings back to the sale-day gate and publishes what each
/// area has left now.
async fn give_back_lapsed(state: &Services, lapsed: &[(EventId, String, u32)]) {
    for (event, area, places) in lapsed {
        if *places > 0 {
            give_back(state, *event, area, *places).await;
        }
        publish_left(state, *event, area).await;
    }
}

/// What the sale-day gate said.
enum Gate {
    /// No gate (off, or Redis unreachable): Postgres alone decides.
    Off,
    /// Places taken from the gate's counter; on to Postgres.
    Passed,
    /// Sold out as far as the gate knows.
    Refused(u32),
}

/// Takes the places from the gate's counter, building the counter from Postgres the first
/// time (or after Redis lost it). Redis being down never fails a booking: the gate is an
/// optimisation, so the booking goes on to Postgres as if there were no gate.
async fn pass_gate(
    state: &Services,
    event: EventId,
    area: &str,
    quantity: u32,
) -> Result<Gate, Error> {
    let Some(gate) = &state.gate else {
        return Ok(Gate::Off);
    };
    for _ in 0..2 {
        match gate.take(event, area, quantity).await {
            Ok(GateTake::Taken) => return Ok(Gate::Passed),
            Ok(GateTake::Refused { left }) => return Ok(Gate::Refused(left)),
            Ok(GateTake::Missing) => match bookings::area_left(&state.pool, event, area).await? {
                Some(left) => {
                    if let Err(error) = gate.init(event, area, left).await {
                        tracing::warn!(%error, "sale-day gate unavailable; booking without it");
                        return Ok(Gate::Off);
                    }
                }
                // No such event or area: let the booking path say which.
                None => return Ok(Gate::Off),
            },
            Err(error) => {
                tracing::warn!(%error, "sale-day gate unavailable; booking without it");
                return Ok(Gate::Off);
            }
        }
    }
    Ok(Gate::Off)
}

async fn give_back(state: &Services, event: EventId, area: &str, quantity: u32) {
    if let Some(gate) = &state.gate {
        if let Err(error) = gate.give_back(event, area, quantity).await {
            // The counter is then low until Redis rebuilds it; it refuses early, never oversells.
            tracing::warn!(%error, "could not return places to the sale-day gate");
        }
    }
}
