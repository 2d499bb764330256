//! The waiting list: buyers join an event's line for a quantity of seats, and seats that
//! come back (an order cancelled, a channel released, seats put on sale, an offer not
//! bought in time) are offered to the first entries they can serve, as holds of theirs
//! (see [`boxoffice_store::sales::waitlist`]). An offer is bought by checking its hold out
//! before its deadline.

use boxoffice_api::{WaitlistEntryView, WaitlistOffer};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::hold::{Offer, PricedSeat};
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::sales::lapsing;
use boxoffice_store::sales::waitlist::{self, Entry, EntryStatus};
use chrono::Utc;
use std::time::Duration;
use uuid::Uuid;

use crate::layouts::{event_layout, event_policy};
use crate::live::Change;
use crate::seat_map::RenderedSeatMap;
use crate::{Error, Services};

/// Puts `user` in the event's line for `quantity` seats (of `ticket_type`, if given); a
/// buyer in line already gets their entry back. Answers it, and whether it is new.
pub async fn join(
    state: &Services,
    event: EventId,
    user: &UserId,
    quantity: u32,
    ticket_type: Option<&str>,
) -> Result<(WaitlistEntryView, bool), Error> {
    let policy = event_policy(state, event).await?;
    if policy.starts_at <= Utc::now() {
        return Err(Error::EventStarted);
    }
    let mut errors = ValidationErrors::default();
    errors.check_seats_by_number("", "wait for", (quantity, ticket_type), &policy.by_number());
    errors.into_result(()).map_err(Error::Invalid)?;
    let (entry, new) = waitlist::join(&state.pool, event, user, quantity, ticket_type).await?;
    Ok((view(state, event, entry).await?, new))
}

/// The entry `entry` of the event, as its owner `user` sees it.
pub async fn get(
    state: &Services,
    event: EventId,
    entry: Uuid,
    user: &UserId,
) -> Result<WaitlistEntryView, Error> {
    let entry = owned(state, event, entry, user).await?;
    view(state, event, entry).await
}

/// Takes `user`'s entry out of line; an offer it has passes on to the next in line.
pub async fn leave(
    state: &Services,
    event: EventId,
    entry: Uuid,
    user: &UserId,
) -> Result<(), Error> {
    let found = owned(state, event, entry, user).await?;
    if waitlist::leave(&state.pool, event, found.entry_id).await? {
        if found.status == EntryStatus::Offered {
            pass_on_lapsed(state).await?;
        }
        Ok(())
    } else {
        Err(Error::EntryNotFound)
    }
}

/// Tells every page of the event that these offers' seats are held.
pub async fn publish(state: &Services, event: EventId, offers: &[Offer]) {
    for offer in offers {
        let seats = offer.hold.seats.iter().map(|s| s.seat_id.as_str());
        let change = Change::held(seats, offer.hold.expires_at);
        state.live.publish(event, change).await;
    }
}

/// Passes on the seats of every offer, and of every order kept for the waiting list (see
/// [`keep_lapsing`]), whose deadline has passed; answers how many offers and orders ended.
/// Every instance runs it now and then; each skips the offers and orders another is ending.
pub async fn pass_on_lapsed(state: &Services) -> Result<usize, Error> {
    let mut passed = lapsing::pass_on_lapsed(&state.pool, state.holds.as_ref()).await?;
    passed.extend(lapsing::pass_on_lapsed_orders(&state.pool, state.holds.as_ref()).await?);
    // Every change counts on this instance at once; each then waits its turn for the bus.
    let changes: Vec<(EventId, Change)> = passed
        .iter()
        .flat_map(|p| {
            let offers = p.offers.iter().map(|offer| {
                let seats = offer.hold.seats.iter().map(|s| s.seat_id.as_str());
                (p.event, Change::held(seats, offer.hold.expires_at))
            });
            let freed = (!p.freed.is_empty()).then(|| {
                let seats = p.freed.iter().map(String::as_str);
                (p.event, Change::now(seats, SeatStatus::Available))
            });
            offers.chain(freed).collect::<Vec<_>>()
        })
        .collect();
    for (event, change) in &changes {
        state.live.apply_here(*event, change);
    }
    for (event, change) in changes {
        state.live.publish(event, change).await;
    }
    Ok(passed.len())
}

/// Keeps the seats of pending orders whose payment deadline falls within `within`, in
/// events where anyone waits, held past that deadline, so that [`pass_on_lapsed`] can hand
/// them to the waiting list before anyone else could hold them; answers how many orders.
/// `within` must exceed the time between two calls.
pub async fn keep_lapsing(state: &Services, within: Duration) -> Result<usize, Error> {
    let kept = lapsing::keep_lapsing_orders(&state.pool, state.holds.as_ref(), within).await?;
    for k in &kept {
        publish_kept(state, k).await;
    }
    Ok(kept.len())
}

/// Tells every page of the event that a kept order's seats stay held past its deadline.
async fn publish_kept(state: &Services, kept: &lapsing::Kept) {
    let change = Change::held(kept.seats.iter().map(String::as_str), kept.until);
    state.live.publish(kept.event, change).await;
}

/// Keeps a new pending order's seats past its deadline when anyone waits in its event's
/// line, so that they go to the list when it lapses however short the window (the expiry
/// rounds' look-ahead keeps those of orders whose buyers came before the line did).
pub async fn keep_if_waiting(state: &Services, event: EventId, order: Uuid) {
    match lapsing::keep_if_waiting(&state.pool, state.holds.as_ref(), event, order).await {
        Ok(Some(kept)) => publish_kept(state, &kept).await,
        Ok(None) => {}
        Err(error) => {
            tracing::warn!(%event, %error, "could not keep a pending order's seats for the waiting list; the expiry rounds will")
        }
    }
}

/// The entry if it is `user`'s.
async fn owned(
    state: &Services,
    event: EventId,
    entry: Uuid,
    user: &UserId,
) -> Result<Entry, Error> {
    let found = waitlist::get(&state.pool, event, entry)
        .await?
        .ok_or(Error::EntryNotFound)?;
    if found.user_id != user.as_str() {
        return Err(Error::Forbidden("this entry belongs to another user"));
    }
    Ok(found)
}

async fn view(state: &Services, event: EventId, entry: Entry) -> Result<WaitlistEntryView, Error> {
    let offer = match entry.offer {
        Some(offer) if entry.status == EntryStatus::Offered => {
            let map = event_layout(state, event).await?;
            let seats = priced(&map, &offer.seats);
            Some(WaitlistOffer {
                hold_token: offer.hold_token,
                total_cents: seats.iter().map(|s| s.price_cents).sum(),
                seats,
                expires_at: offer.expires_at,
            })
        }
        _ => None,
    };
    Ok(WaitlistEntryView {
        entry_id: entry.entry_id,
        status: entry.status.as_str().to_owned(),
        position: entry.position,
        quantity: entry.quantity,
        ticket_type: entry.ticket_type,
        offer,
    })
}

/// The seats with their labels, ticket types and prices on general sale.
fn priced(map: &RenderedSeatMap, seats: &[String]) -> Vec<PricedSeat> {
    seats
        .iter()
        .filter_map(|id| {
            let seat = map.map.get(id)?;
            Some(PricedSeat {
                id: id.clone(),
                label: seat.label.clone(),
                ticket_type: seat.ticket_type.clone().unwrap_or_default(),
                price_cents: seat.price_cents.unwrap_or_default(),
            })
        })
        .collect()
}
