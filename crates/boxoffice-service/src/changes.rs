//! Changing sold seats: moves of an order's seats, swaps between two orders, and a season
//! night released earlier taken back. The seats an order gains are held first, for the
//! order's buyer, as any buyer's are (the hold store decides whether they are free), and
//! then taken by the order in one transaction ([`sales::changes`]).

use boxoffice_api::{ChangedOrder, SeasonOrderView, SeatMove, SwapSide, Swapped};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::hold::{AcquireOutcome, ClaimedSeat, Order};
use boxoffice_core::ids::EventId;
use boxoffice_store::journal::audit::By;
use boxoffice_store::sales::{self, changes::Refused};
use chrono::Utc;
use uuid::Uuid;

use crate::asking::{self, For, Reply};
use crate::layouts::{buyer_layout, quotes, seat_refs};
use crate::live::Change;
use crate::orders::{labelled, put_back};
use crate::seat_map::RenderedSeatMap;
use crate::{Error, Services};

/// Most moves in one request.
pub const MAX_MOVES: usize = 100;

/// Moves seats of the paid order `id`, all or none: by staff, or by its buyer while the
/// event's `buyer_moves_until` has not passed. Each `to` must be free to the order's
/// channel; the seats left are offered to the waiting list, then go on sale. Answers the
/// order now and the difference in price.
pub async fn move_seats(
    state: &Services,
    id: Option<Uuid>,
    moves: &[SeatMove],
    by: By<'_>,
) -> Result<ChangedOrder, Error> {
    let id = id.ok_or(Error::OrderNotFound)?;
    let order = sales::orders::load_order(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if let Some(user) = by.buyer() {
        if user != &order.user_id {
            return Err(Error::Forbidden("this order belongs to another user"));
        }
        let until = boxoffice_store::pg::events::changes(&state.pool, order.event_id)
            .await?
            .ok_or(Error::EventNotFound)?
            .buyer_moves_until;
        if until.is_none_or(|until| until <= Utc::now()) {
            return Err(Error::Forbidden(
                "buyers may not move their seats in this event now: ask the organizer",
            ));
        }
    }
    check_moves(&order, moves)?;
    if order.status != boxoffice_core::hold::OrderStatus::Paid {
        return Err(Error::NotChangeable("only a paid order's seats move"));
    }
    let to: Vec<String> = moves.iter().map(|m| m.to.clone()).collect();
    let (map, token) = hold_for(state, &order, &to).await?;
    let moves: Vec<sales::changes::Move> = moves
        .iter()
        .map(|m| sales::changes::Move {
            from: m.from.clone(),
            to: m.to.clone(),
        })
        .collect();
    let moved =
        sales::changes::move_seats(&state.pool, &*state.holds, &order, token, &moves, by).await;
    let done = settled(state, &order, token, &map, moved).await??;
    let event = order.event_id;
    state
        .live
        .publish(
            event,
            Change::now(to.iter().map(String::as_str), SeatStatus::Sold),
        )
        .await;
    put_back(
        state,
        event,
        done.freed.iter().map(String::as_str),
        &done.offers,
    )
    .await?;
    let (after, before) = done.orders.into_iter().next().ok_or(Error::OrderNotFound)?;
    changed(state, after, &before).await
}

/// Swaps seat `a.seat` of order `a` with seat `b.seat` of order `b`, both paid orders of
/// `event` (staff alone).
pub async fn swap(
    state: &Services,
    event: EventId,
    a: &SwapSide,
    b: &SwapSide,
    by: By<'_>,
) -> Result<Swapped, Error> {
    if a.order_id == b.order_id {
        return Err(Error::invalid(
            "b.order_id",
            "must be another order than a's",
        ));
    }
    let swapped = sales::changes::swap(
        &state.pool,
        &*state.holds,
        event,
        (a.order_id, &a.seat),
        (b.order_id, &b.seat),
        by,
    )
    .await?;
    let done = swapped.map_err(|refused| refusal(refused, None))?;
    let mut orders = done.orders.into_iter();
    let (Some((after_a, before_a)), Some((after_b, before_b))) = (orders.next(), orders.next())
    else {
        return Err(Error::OrderNotFound);
    };
    Ok(Swapped {
        a: changed(state, after_a, &before_a).await?,
        b: changed(state, after_b, &before_b).await?,
    })
}

/// Takes back the night of `event` of the season order `id` (its owner, or staff), released
/// before, while its seats are still free that night (not held, sold, listed or offered to
/// the waiting list): the season order covers the night again. Answers the season order.
pub async fn reclaim_night(
    state: &Services,
    id: Option<Uuid>,
    event: Option<EventId>,
    by: By<'_>,
) -> Result<SeasonOrderView, Error> {
    let (Some(id), Some(event)) = (id, event) else {
        return Err(Error::OrderNotFound);
    };
    let season = sales::seasons::load(&state.pool, id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if by.buyer().is_some_and(|u| u != &season.user_id) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    let night = season
        .nights
        .iter()
        .find(|n| n.event_id == event)
        .ok_or(Error::OrderNotFound)?;
    if !night.released {
        return Err(Error::NotChangeable(
            "this night was not released: the season order covers it",
        ));
    }
    let night = sales::orders::load_order(&state.pool, night.order_id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    let seats: Vec<String> = night.seats.iter().map(|s| s.seat_id.clone()).collect();
    let (map, token) = hold_for(state, &night, &seats).await?;
    let taken = sales::changes::reclaim(
        &state.pool,
        &*state.holds,
        &night,
        season.order_id,
        token,
        by,
    )
    .await;
    settled(state, &night, token, &map, taken).await??;
    state
        .live
        .publish(
            event,
            Change::now(seats.iter().map(String::as_str), SeatStatus::Sold),
        )
        .await;
    crate::seasons::find_order(state, season.order_id, None)
        .await?
        .ok_or(Error::OrderNotFound)
}

/// Refuses moves that could never happen, before any seat is held: none or too many, a
/// seat moved twice or to twice, a `from` not in the order, a `to` in it already.
fn check_moves(order: &Order, moves: &[SeatMove]) -> Result<(), Error> {
    if moves.is_empty() || moves.len() > MAX_MOVES {
        return Err(Error::invalid(
            "moves",
            &format!("must list 1 to {MAX_MOVES} moves"),
        ));
    }
    let mut from: Vec<&str> = moves.iter().map(|m| m.from.as_str()).collect();
    let mut to: Vec<&str> = moves.iter().map(|m| m.to.as_str()).collect();
    from.sort_unstable();
    to.sort_unstable();
    if from.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid("moves", "a seat is moved twice"));
    }
    if to.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid("moves", "two seats move to one seat"));
    }
    let ours = |seat: &str| order.seats.iter().any(|s| s.seat_id == seat);
    let missing: Vec<&str> = from.iter().copied().filter(|s| !ours(s)).collect();
    if !missing.is_empty() {
        return Err(Error::invalid(
            "moves",
            &format!("not seats of this order: {}", missing.join(", ")),
        ));
    }
    let already: Vec<&str> = to.iter().copied().filter(|s| ours(s)).collect();
    if !already.is_empty() {
        return Err(Error::invalid(
            "moves",
            &format!("seats of this order already: {}", already.join(", ")),
        ));
    }
    Ok(())
}

/// Holds `seats` for the buyer of `order`, in the order's channel, as the order's new
/// seats: the hold store's claim decides whether they are free. Answers the map that
/// quoted them and the hold's token.
async fn hold_for(
    state: &Services,
    order: &Order,
    seats: &[String],
) -> Result<(std::sync::Arc<RenderedSeatMap>, Uuid), Error> {
    let event = order.event_id;
    let channel = sales::changes::order_channel(&state.pool, order).await?;
    let who = For::OrderChange;
    let map = buyer_layout(state, event, channel.as_deref()).await?;
    let basket = who.basket(&map, seats)?;
    // A listed seat is free to any buyer's hold, never to an order's change.
    let basket_ids: Vec<&str> = basket.iter().map(String::as_str).collect();
    let listed = sales::resale::listed_among(&state.pool, event, &basket_ids).await?;
    if !listed.is_empty() {
        return Err(Error::SeatsUnavailable(seat_refs(&map, listed)));
    }
    let quoted = asking::quoted(
        state,
        (event, who),
        seats,
        (map, basket),
        |map, basket| async move {
            let off_sale: Vec<String> = basket
                .iter()
                .zip(quotes(&map, &basket))
                .filter(|(_, q)| q.is_none())
                .map(|(s, _)| s.clone())
                .collect();
            if !off_sale.is_empty() {
                return Err(Error::SeatsUnavailable(seat_refs(&map, off_sale)));
            }
            match asking::acquire(state, (event, &order.user_id, who), &map, &basket).await? {
                AcquireOutcome::Held(hold) => Ok(Reply::Done(hold.token)),
                AcquireOutcome::Unavailable(ids) => {
                    Err(Error::SeatsUnavailable(seat_refs(&map, ids)))
                }
                AcquireOutcome::EventStarted => Err(Error::EventStarted),
                AcquireOutcome::LayoutChanged(version) => Ok(Reply::LayoutChanged(version)),
                AcquireOutcome::LimitExceeded
                | AcquireOutcome::RateLimited(_)
                | AcquireOutcome::PassEnded => Err(Error::Unavailable {
                    reason: "the hold store refused a hold without limits".into(),
                    retry_after: std::time::Duration::from_secs(1),
                }),
            }
        },
    )
    .await?;
    let token = quoted.answer.ok_or_else(asking::kept_changing)?;
    Ok((quoted.map, token))
}

/// The change's outcome; the hold `token` made for it is released unless the change took
/// its seats.
async fn settled<T>(
    state: &Services,
    order: &Order,
    token: Uuid,
    map: &RenderedSeatMap,
    outcome: Result<Result<T, Refused>, boxoffice_store::StoreError>,
) -> Result<Result<T, Error>, Error> {
    let answer = match outcome {
        Ok(Ok(done)) => return Ok(Ok(done)),
        Ok(Err(refused)) => Ok(Err(refusal(refused, Some(map)))),
        Err(e) => Err(Error::from(e)),
    };
    if let Err(error) = state
        .holds
        .release(order.event_id, token, &order.user_id)
        .await
    {
        tracing::warn!(%error, %token, "could not release a change's hold; it lapses by itself");
    }
    answer
}

/// The error a refusal is answered with.
pub(crate) fn refusal(refused: Refused, map: Option<&RenderedSeatMap>) -> Error {
    match refused {
        Refused::NotFound => Error::OrderNotFound,
        Refused::Forbidden => Error::Forbidden("this order belongs to another user"),
        Refused::NotPaid(_) => Error::NotChangeable("only a paid order's seats change"),
        Refused::NotInOrder(seats) => Error::invalid(
            "seat",
            &format!("not seats of the order: {}", seats.join(", ")),
        ),
        Refused::Unavailable(seats) => Error::SeatsUnavailable(match map {
            Some(map) => seat_refs(map, seats),
            None => seats
                .into_iter()
                .map(|id| boxoffice_api::SeatRef {
                    event_id: None,
                    label: String::new(),
                    id,
                })
                .collect(),
        }),
        Refused::NotSwappable(why) => Error::invalid("b", why),
        Refused::NotReleased => {
            Error::NotChangeable("this night was not released: the season order covers it")
        }
        Refused::Redeemed { at, gate } => Error::AlreadyRedeemed { at, gate },
        Refused::NotListed => Error::NotListed,
    }
}

/// The order as the API answers it after a change, with the difference in price.
async fn changed(
    state: &Services,
    after: Order,
    before: &[ClaimedSeat],
) -> Result<ChangedOrder, Error> {
    let before_total: i64 = before.iter().map(|s| s.price_cents).sum();
    let difference = after.total_cents - before_total;
    Ok(ChangedOrder {
        order: labelled(state, after).await?.into(),
        price_difference_cents: difference,
    })
}
