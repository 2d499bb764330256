//! A hold that grows and shrinks a seat at a time, as a page that holds each seat as it is
//! clicked builds one basket: seats added under the hold's token and expiry, all or
//! nothing, by every rule of a new hold (the per-user limit counts the whole hold), and
//! seats taken out one by one, the last one ending the hold.

use boxoffice_core::hold::{AcquireOutcome, GrowOutcome, ShrinkOutcome};
use boxoffice_core::ids::{EventId, UserId};
use uuid::Uuid;

use crate::asking::{self, For, Reply};
use crate::holds::{count_hold, labelled, settle, LabelledHold};
use crate::layouts::{buyer_layout, event_layout, taken_in};
use crate::overload::{limited, Path};
use crate::{Error, Services};

/// Adds `seats` to the live hold `token` of `user`, all or nothing: the hold as it now is.
/// Counts against the buyer's hold rate as a new hold does; seats the hold has already
/// are left as they are. A buyer in a sales channel (`channel`) may add that channel's
/// seats.
pub async fn add_seats(
    state: &Services,
    event: EventId,
    token: Option<Uuid>,
    user: &UserId,
    channel: Option<&str>,
    pass: Option<&str>,
    seats: &[String],
) -> Result<LabelledHold, Error> {
    let admitted = crate::queue::admit(state, event, user, pass).await?;
    count_hold(state, event, user).await?;
    let token = token.ok_or(Error::HoldNotLive)?;
    let who = For::Buyer(admitted);
    let map = buyer_layout(state, event, channel).await?;
    let basket = who.basket(&map, seats)?;
    let taken = state.live.taken();
    let asked = taken.epoch(event);
    let quoted = limited(
        &state.overload,
        Path::Hold,
        asking::quoted(
            state,
            (event, who),
            seats,
            (map, basket),
            |map, basket| async move {
                match asking::grow(state, (event, user, who), token, &map, &basket).await? {
                    GrowOutcome::Acquire(AcquireOutcome::LayoutChanged(version)) => {
                        Ok(Reply::LayoutChanged(version))
                    }
                    GrowOutcome::Acquire(outcome) => Ok(Reply::Done(outcome)),
                    GrowOutcome::NotLive => Err(Error::HoldNotLive),
                    GrowOutcome::Forbidden => {
                        Err(Error::Forbidden("this hold belongs to another user"))
                    }
                }
            },
        ),
    )
    .await?;
    let (map, outcome) = (quoted.map, quoted.answer.ok_or_else(asking::kept_changing)?);
    match &outcome {
        AcquireOutcome::Unavailable(seats) => taken.confirmed(event, &taken_in(&map, seats), asked),
        AcquireOutcome::Held(_) => taken.confirmed(event, &quoted.basket, asked),
        _ => {}
    }
    settle(state, event, &map, outcome).await
}

/// Takes `seat` out of the live hold `token` of `user`: the hold without it, or `None`
/// when it was the last seat and the hold is gone (which, as a release, may end the
/// buyer's waiting-room pass).
pub async fn drop_seat(
    state: &Services,
    event: EventId,
    token: Option<Uuid>,
    user: &UserId,
    seat: &str,
) -> Result<Option<LabelledHold>, Error> {
    let map = event_layout(state, event).await?;
    let token = token.ok_or(Error::HoldNotFound)?;
    let outcome = state.holds.shrink(event, token, user, seat).await?;
    if let ShrinkOutcome::Kept(_) | ShrinkOutcome::Emptied { .. } = outcome {
        let change = crate::freed::change(state, event, [seat]).await;
        state.live.publish(event, change).await;
    }
    match outcome {
        ShrinkOutcome::Kept(hold) => Ok(Some(labelled(&map, hold))),
        ShrinkOutcome::Emptied { pass_ended } => {
            if pass_ended {
                crate::queue::done(state, event, user).await;
            }
            Ok(None)
        }
        ShrinkOutcome::NotInHold => Err(Error::SeatNotInHold),
        ShrinkOutcome::NotLive => Err(Error::HoldNotFound),
        ShrinkOutcome::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}
