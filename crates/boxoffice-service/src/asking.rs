//! One way to ask the hold store for seats, for every flow that makes or grows a hold: a
//! buyer's hold, a hold grown a seat at a time, best available, and the seats an order
//! gains in a move, a swap or a season night taken back. (A season's hold asks for a seat
//! in every event it covers at once, through a claim of its own: [`crate::seasons`].)
//!
//! A store request is built only here, and only for someone ([`For`]): a buyer admitted to
//! the event ([`Admitted`], which only the waiting room's check makes, so no buyer's flow
//! reaches a hold store without it: skipping the check does not compile), or an order
//! whose seats change ([`For::OrderChange`], an explicit change by staff or the order's
//! buyer, counted against no buyer's limits). The seats are quoted by the map this server
//! has; should the store say the event's allocations changed since, they are quoted again
//! from the newer map, at most [`LAYOUT_RELOADS`] times ([`quoted`]).

use std::future::Future;
use std::sync::Arc;

use boxoffice_core::hold::{validate_basket, AcquireOutcome, ClaimedSeat, GrowOutcome};
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::hold_store::HoldRequest;
use uuid::Uuid;

use crate::layouts::quotes;
use crate::queue::Admitted;
use crate::seat_map::RenderedSeatMap;
use crate::{Error, Services};

/// How often an ask quotes its seats again from a newer seat map before giving up.
pub(crate) const LAYOUT_RELOADS: usize = 3;

/// Who seats are asked for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum For {
    /// A buyer admitted to the event: their seat limit and hold rate count, and their
    /// waiting-room pass is checked in the claim.
    Buyer(Admitted),
    /// The buyer of an order whose seats change: the order's seats count against no
    /// buyer's limit, and no pass is asked for.
    OrderChange,
}

impl For {
    /// The basket `seats` make on `map`: a buyer's checked against the map and their limit
    /// (unknown, repeated or too many seats refused before any store is asked); an order
    /// change's as asked, in order, each seat then answered by its quote and the claim.
    pub(crate) fn basket(
        self,
        map: &RenderedSeatMap,
        seats: &[String],
    ) -> Result<Vec<String>, Error> {
        match self {
            For::Buyer(_) => Ok(validate_basket(
                seats,
                &map.map,
                map.policy.max_seats_per_user,
            )?),
            For::OrderChange => {
                let mut basket = seats.to_vec();
                basket.sort_unstable();
                Ok(basket)
            }
        }
    }

    /// What the hold store is asked for `basket` of `user`, quoted by `map`.
    fn request<'a>(
        self,
        state: &Services,
        (event, user): (EventId, &'a UserId),
        map: &'a RenderedSeatMap,
        basket: &'a [String],
        quotes: &'a [Option<ClaimedSeat>],
    ) -> HoldRequest<'a> {
        let (max_seats_per_user, holds_per_minute, pass) = match self {
            For::Buyer(admitted) => (
                map.policy.max_seats_per_user,
                state.rate_limits.holds.per_minute(),
                admitted.pass(),
            ),
            For::OrderChange => (u32::MAX, 0, None),
        };
        HoldRequest {
            event,
            user,
            seats: basket,
            quotes,
            layout_version: map.version,
            ttl_seconds: map.policy.hold_ttl_seconds,
            max_seats_per_user,
            holds_per_minute,
            pass,
            channel: map.channel.as_deref(),
        }
    }
}

/// Asks the hold store for a new hold of `basket` for `user`, priced as `map` quotes it.
pub(crate) async fn acquire(
    state: &Services,
    (event, user, who): (EventId, &UserId, For),
    map: &RenderedSeatMap,
    basket: &[String],
) -> Result<AcquireOutcome, Error> {
    let began = std::time::Instant::now();
    let quotes = quotes(map, basket);
    let request = who.request(state, (event, user), map, basket, &quotes);
    let outcome = state.holds.acquire(&request).await;
    let label = match &outcome {
        Ok(AcquireOutcome::Held(_)) => "granted",
        Ok(AcquireOutcome::LayoutChanged(_)) => "retried",
        Ok(_) => "refused",
        Err(_) => "error",
    };
    state.metrics.store_call(
        "boxoffice_hold_duration_seconds",
        state.holds.kind(),
        label,
        began.elapsed(),
    );
    Ok(outcome?)
}

/// Asks the hold store to add `basket` to `user`'s live hold `token`, all or nothing,
/// priced as `map` quotes it.
pub(crate) async fn grow(
    state: &Services,
    (event, user, who): (EventId, &UserId, For),
    token: Uuid,
    map: &RenderedSeatMap,
    basket: &[String],
) -> Result<GrowOutcome, Error> {
    let quotes = quotes(map, basket);
    let request = who.request(state, (event, user), map, basket, &quotes);
    Ok(state.holds.grow(token, &request).await?)
}

/// One ask's answer: what the store decided, or that the event's allocations changed
/// since `map` (to the layout version given), so the seats are quoted again.
pub(crate) enum Reply<T> {
    /// Decided.
    Done(T),
    /// Quote again from this layout version.
    LayoutChanged(i64),
}

/// What [`quoted`] ended with: the map and basket last asked with, and the store's answer,
/// or `None` when the allocations kept changing ([`kept_changing`]).
pub(crate) struct Quoted<T> {
    pub map: Arc<RenderedSeatMap>,
    pub basket: Arc<[String]>,
    pub answer: Option<T>,
}

/// Asks (`ask(map, basket)`) with `basket` quoted by `map`, and while the store says the
/// allocations changed, again with `seats` quoted by the newer map (in `map`'s channel's
/// view), up to [`LAYOUT_RELOADS`] times.
pub(crate) async fn quoted<T, Asked>(
    state: &Services,
    (event, who): (EventId, For),
    seats: &[String],
    (mut map, basket): (Arc<RenderedSeatMap>, Vec<String>),
    mut ask: impl FnMut(Arc<RenderedSeatMap>, Arc<[String]>) -> Asked,
) -> Result<Quoted<T>, Error>
where
    Asked: Future<Output = Result<Reply<T>, Error>>,
{
    let mut basket: Arc<[String]> = basket.into();
    for reload in 0..=LAYOUT_RELOADS {
        match ask(Arc::clone(&map), Arc::clone(&basket)).await? {
            Reply::Done(answer) => {
                return Ok(Quoted {
                    map,
                    basket,
                    answer: Some(answer),
                })
            }
            Reply::LayoutChanged(_) if reload == LAYOUT_RELOADS => break,
            Reply::LayoutChanged(version) => {
                map = state
                    .seat_maps
                    .get_in(&state.pool, event, map.channel.as_deref(), version)
                    .await?
                    .ok_or(Error::EventNotFound)?;
                basket = who.basket(&map, seats)?.into();
            }
        }
    }
    Ok(Quoted {
        map,
        basket,
        answer: None,
    })
}

/// The answer when the allocations changed under every quote: busy, try again shortly.
pub(crate) fn kept_changing() -> Error {
    Error::Unavailable {
        reason: "the event's allocations keep changing".into(),
        retry_after: std::time::Duration::from_secs(1),
    }
}
