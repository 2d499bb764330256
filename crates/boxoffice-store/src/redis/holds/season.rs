//! Season holds on the redis store ([`SeasonHolds`]). (A long file: the claim's two rounds
//! over the season's events and their undoing when a round fails read best in one place,
//! with every other season-hold call beside them, since all of them walk the events in the
//! same order for the same reason.)
//!
//! Each event's keys live in a slot of their own (the event id is the hash tag), so on a
//! Redis Cluster no one script reaches every event of a season. The claim stays all or
//! nothing another way, in two rounds over the events, always in event-id order:
//!
//! 1. **Mark.** In each event `hold_acquire.lua` checks the basket as it checks any hold
//!    (the loaded state, the start, the buyer's limit, every seat on sale to the season and
//!    neither sold nor held) and then only marks the seats: each seat's key holds `p:` and
//!    the claim's token in that event, for [`MARK_TTL`]. A marked seat is neither free nor
//!    taken: any other claim of it, an event's hold or another season's, answers `busy`
//!    and asks again a few milliseconds later, until the mark becomes a hold or goes.
//! 2. **Hold.** Once every event is marked, the same script holds the seats in each event
//!    (in all of them at once: every seat is the claim's by then), the claim's own marks
//!    counting as free, and records with each event's hold how many events the claim holds
//!    seats in.
//!
//! A refusal in either round takes back what the claim did (its holds released and its
//! marks deleted, each compare-and-delete on its own token), and the claim answers the
//! refusal; so does an error, and what Redis did not answer is undone in the background
//! or lapses (a mark within [`MARK_TTL`]).
//!
//! Why it is safe. No seat is ever held twice in an event: each round in each event is one
//! script on the event's keys, with every check of an event's hold. A single-event buyer
//! never loses to a season claim that then fails: where a season has marked the seat they
//! wait for its outcome, so each event's seat ends with exactly one owner, as under the
//! postgres store's one-statement claim. Two season claims never wait on each other in a
//! circle: both mark events in the same order, so the one that marks an event first has
//! every earlier event of it marked already and waits only on claims further along. A
//! season hold is only answered once it is held in every event; a checkout takes it only
//! when every event it was held in still has it (each event's hold knows how many there
//! are), so a night that lapsed alone is never sold short. Postgres still decides every
//! sale under its unique index of live order seats.

use std::collections::HashMap;

use async_trait::async_trait;
use boxoffice_core::hold::{AcquireOutcome, ClaimedSeat, ExtendOutcome, Hold, ReleaseOutcome};
use boxoffice_core::ids::{EventId, UserId};
use redis::Value;
use sqlx::PgPool;
use uuid::Uuid;

use super::codec::{decode_seats, millis, nth, StoredHold};
use super::{keys, Claimed, Mode, RedisHoldStore, CHECKOUT_PROTECTION};
use crate::error::stored_user_id;
use crate::hold_store::{HoldRequest, HoldStore};
use crate::redis::link::redis_error;
use crate::sales::SaleSeats;
use crate::season_holds::{
    SeasonAcquire, SeasonEventHold, SeasonExtend, SeasonHoldRequest, SeasonHolds, SeasonRelease,
    SeasonSeatHeld, SeasonTaken,
};
use crate::StoreError;

/// How long a season claim's marks keep a seat, should the claim never finish (its server
/// gone between the rounds). A claim finishes within milliseconds; buyers waiting on a mark
/// give up after [`super::WAIT_FOR_EVENT`].
const MARK_TTL_SECONDS: u32 = 5;
/// How often an event's claim is made again when its allocations changed meanwhile (the
/// season's quotes do not depend on them, only the version the script checks).
const VERSION_ATTEMPTS: usize = 3;

/// One event of a season claim.
struct EventClaim<'a> {
    hold: &'a SeasonEventHold,
    mark: String,
    layout_version: i64,
}

impl EventClaim<'_> {
    /// The hold asked in this event; `counted`: whether the ask counts against the buyer's
    /// hold rate (marking counts once per season hold, holding and taking back do not).
    fn request<'r>(
        &self,
        r: &'r SeasonHoldRequest<'_>,
        quotes: &'r [Option<ClaimedSeat>],
        ttl_seconds: u32,
        counted: bool,
    ) -> HoldRequest<'r> {
        HoldRequest {
            event: self.hold.event,
            user: r.user,
            seats: r.seats,
            quotes,
            layout_version: self.layout_version,
            ttl_seconds,
            max_seats_per_user: self.hold.max_seats_per_user,
            holds_per_minute: if counted { r.holds_per_minute } else { 0 },
            pass: self.hold.pass,
            channel: None,
        }
    }
}

impl RedisHoldStore {
    /// The season's ticket type and price (the partial's where it sets one) of each seat,
    /// in the order of `r.seats`; `None` for a seat the season does not sell.
    async fn season_quotes(
        &self,
        r: &SeasonHoldRequest<'_>,
    ) -> Result<Vec<Option<ClaimedSeat>>, StoreError> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "select a.seat_id, a.ticket_type, coalesce(pp.price_cents, t.price_cents)
               from season_allocation a
               join season_ticket_type t on t.season_id = a.season_id and t.code = a.ticket_type
               left join season_partial_price pp
                      on pp.season_id = a.season_id and pp.code = $3
                     and pp.ticket_type = a.ticket_type
              where a.season_id = $1 and a.seat_id = any($2)",
        )
        .bind(r.season.0)
        .bind(r.seats)
        .bind(r.partial)
        .fetch_all(&self.pool)
        .await?;
        let mut quotes: HashMap<String, ClaimedSeat> = rows
            .into_iter()
            .map(|(seat_id, ticket_type, price_cents)| {
                let quote = ClaimedSeat {
                    seat_id: seat_id.clone(),
                    ticket_type,
                    price_cents,
                };
                (seat_id, quote)
            })
            .collect();
        Ok(r.seats.iter().map(|seat| quotes.remove(seat)).collect())
    }

    /// Runs one round of the claim in one event, asking again when the event's allocations
    /// changed since its version was read.
    async fn claim_event(
        &self,
        r: &SeasonHoldRequest<'_>,
        quotes: &[Option<ClaimedSeat>],
        claim: &mut EventClaim<'_>,
        mode: Mode<'_>,
    ) -> Result<Claimed, StoreError> {
        let (ttl, counted) = match mode {
            Mode::Prepare { .. } => (MARK_TTL_SECONDS, true),
            _ => (r.ttl_seconds, false),
        };
        for _ in 0..VERSION_ATTEMPTS {
            let request = claim.request(r, quotes, ttl, counted);
            match self.claim(&request, claim.hold.token, mode).await? {
                Claimed::Refused(AcquireOutcome::LayoutChanged(version)) => {
                    claim.layout_version = version;
                }
                claimed => return Ok(claimed),
            }
        }
        Err(StoreError::unavailable(
            "the event's allocations keep changing",
        ))
    }

    /// Takes back a claim that did not finish: releases its holds (`held`) and deletes its
    /// marks in the other events (`marked`), each only where it is still the claim's.
    async fn take_back(
        &self,
        r: &SeasonHoldRequest<'_>,
        quotes: &[Option<ClaimedSeat>],
        held: &[&EventClaim<'_>],
        marked: &[&EventClaim<'_>],
    ) {
        for claim in held {
            let (event, token) = (claim.hold.event, claim.hold.token);
            if self.release(event, token, r.user).await.is_err() {
                self.undo_later(&claim.request(r, quotes, r.ttl_seconds, false), token);
            }
        }
        for claim in marked {
            let event = claim.hold.event;
            let unmarked = async {
                let mut conn = self.conn().await?;
                let mut call = self.scripts.compare_and_delete.prepare_invoke();
                for seat in r.seats {
                    call.key(keys::seat(event, seat));
                }
                call.arg(&claim.mark)
                    .invoke_async::<i64>(&mut conn)
                    .await
                    .map_err(redis_error)
            };
            if let Err(error) = unmarked.await {
                tracing::warn!(%event, %error, "could not take back a season claim's marks; they lapse by themselves");
            }
        }
    }

    /// The live holds among `events`, each with its event and token (read in every event
    /// at once).
    async fn live_holds(
        &self,
        events: &[(EventId, Uuid)],
    ) -> Result<Vec<(EventId, Uuid, StoredHold)>, StoreError> {
        let conn = self.conn().await?;
        let reads = events.iter().map(|&(event, token)| {
            let mut conn = conn.clone();
            async move {
                let hold = self.stored(&mut conn, event, token).await?;
                Ok::<_, StoreError>(hold.map(|hold| (event, token, hold)))
            }
        });
        let mut live = Vec::new();
        for read in futures::future::join_all(reads).await {
            if let Some((event, token, hold)) = read? {
                if !hold.checking_out || hold.expires_ms > hold.now_ms {
                    live.push((event, token, hold));
                }
            }
        }
        Ok(live)
    }
}

/// A season claim's refusal in `event`.
fn refused_in(event: EventId, why: AcquireOutcome) -> Result<SeasonAcquire, StoreError> {
    Ok(match why {
        AcquireOutcome::Unavailable(seats) => {
            SeasonAcquire::Unavailable(seats.into_iter().map(|seat| (event, seat)).collect())
        }
        AcquireOutcome::LimitExceeded => SeasonAcquire::LimitExceeded(vec![event]),
        AcquireOutcome::EventStarted => SeasonAcquire::Started(vec![event]),
        AcquireOutcome::PassEnded => SeasonAcquire::PassEnded(vec![event]),
        AcquireOutcome::RateLimited(wait) => SeasonAcquire::RateLimited(wait),
        other => {
            return Err(StoreError::Other(
                format!("a season claim was refused as no season is: {other:?}").into(),
            ))
        }
    })
}

/// Each seat of `hold` held in `event`.
fn seats_of(event: EventId, hold: &Hold) -> impl Iterator<Item = SeasonSeatHeld> + '_ {
    hold.seats.iter().map(move |seat| SeasonSeatHeld {
        event,
        seat_id: seat.seat_id.clone(),
        ticket_type: seat.ticket_type.clone(),
        price_cents: seat.price_cents,
        created_at: hold.created_at,
        expires_at: hold.expires_at,
    })
}

/// Each of `seats` of the stored `hold` held in `event`.
fn stored_seats(
    event: EventId,
    hold: &StoredHold,
    seats: &[ClaimedSeat],
) -> Result<Vec<SeasonSeatHeld>, StoreError> {
    let (created_at, expires_at) = (millis(hold.created_ms)?, millis(hold.expires_ms)?);
    Ok(seats
        .iter()
        .map(|seat| SeasonSeatHeld {
            event,
            seat_id: seat.seat_id.clone(),
            ticket_type: seat.ticket_type.clone(),
            price_cents: seat.price_cents,
            created_at,
            expires_at,
        })
        .collect())
}

/// The seats of `seats` held in `event`, as a hold keeps them.
fn claimed_in(event: EventId, seats: &[SeasonSeatHeld]) -> Vec<ClaimedSeat> {
    seats
        .iter()
        .filter(|s| s.event == event)
        .map(|s| ClaimedSeat {
            seat_id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect()
}

#[async_trait]
impl SeasonHolds for RedisHoldStore {
    async fn acquire_season(&self, r: &SeasonHoldRequest<'_>) -> Result<SeasonAcquire, StoreError> {
        let quotes = self.season_quotes(r).await?;
        let foreign: Vec<&String> = r
            .seats
            .iter()
            .zip(&quotes)
            .filter(|(_, quote)| quote.is_none())
            .map(|(seat, _)| seat)
            .collect();
        if !foreign.is_empty() {
            return Ok(SeasonAcquire::Unavailable(
                r.events
                    .iter()
                    .flat_map(|e| foreign.iter().map(|seat| (e.event, (*seat).clone())))
                    .collect(),
            ));
        }
        let ids: Vec<Uuid> = r.events.iter().map(|e| e.event.0).collect();
        let versions: HashMap<Uuid, i64> =
            sqlx::query_as("select event_id, layout_version from event where event_id = any($1)")
                .bind(&ids)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .collect();
        let mut claims: Vec<EventClaim<'_>> = r
            .events
            .iter()
            .map(|hold| EventClaim {
                hold,
                mark: format!("p:{}", hold.token),
                layout_version: versions.get(&hold.event.0).copied().unwrap_or_default(),
            })
            .collect();
        claims.sort_by_key(|c| c.hold.event.0);
        let count = claims.len();

        // 1. Mark the seats in every event, in event-id order.
        for i in 0..count {
            let mark = claims[i].mark.clone();
            let mode = Mode::Prepare { mark: &mark };
            let marked = self.claim_event(r, &quotes, &mut claims[i], mode).await;
            let done: Vec<&EventClaim<'_>> = claims[..i].iter().collect();
            match marked {
                Ok(Claimed::Prepared) => {}
                Ok(Claimed::Refused(why)) => {
                    self.take_back(r, &quotes, &[], &done).await;
                    return refused_in(claims[i].hold.event, why);
                }
                Ok(Claimed::Held(_)) => {
                    self.take_back(r, &quotes, &[], &done).await;
                    return Err(StoreError::Other("a season's mark answered held".into()));
                }
                Err(e) => {
                    self.take_back(r, &quotes, &[], &done).await;
                    return Err(e);
                }
            }
        }

        // 2. Hold them in every event at once, the claim's marks counting as free: every
        //    seat is the claim's by now, so the events no longer need an order.
        let quotes = &quotes;
        let claimed = futures::future::join_all(claims.iter_mut().map(|claim| async move {
            let mark = claim.mark.clone();
            let mode = Mode::Season {
                mark: &mark,
                events: count,
            };
            self.claim_event(r, quotes, claim, mode).await
        }))
        .await;
        let mut held = Vec::with_capacity(count * r.seats.len());
        let mut refusal = None;
        let (mut done, mut rest) = (Vec::new(), Vec::new());
        for (claim, claimed) in claims.iter().zip(claimed) {
            let why = match claimed {
                Ok(Claimed::Held(hold)) => {
                    held.extend(seats_of(claim.hold.event, &hold));
                    done.push(claim);
                    continue;
                }
                Ok(Claimed::Refused(why)) => refused_in(claim.hold.event, why),
                Ok(Claimed::Prepared) => {
                    Err(StoreError::Other("a season's hold answered marked".into()))
                }
                Err(e) => Err(e),
            };
            rest.push(claim);
            refusal.get_or_insert(why);
        }
        if let Some(refusal) = refusal {
            self.take_back(r, quotes, &done, &rest).await;
            return refusal;
        }
        held.sort_by(|a, b| (a.event.0, &a.seat_id).cmp(&(b.event.0, &b.seat_id)));
        Ok(SeasonAcquire::Held(held))
    }

    async fn season_hold(
        &self,
        events: &[(EventId, Uuid)],
    ) -> Result<Vec<(UserId, SeasonSeatHeld)>, StoreError> {
        let mut seats = Vec::new();
        for (event, _, hold) in self.live_holds(events).await? {
            let user = stored_user_id(&hold.user)?;
            for seat in stored_seats(event, &hold, &hold.seats)? {
                seats.push((user.clone(), seat));
            }
        }
        seats.sort_by(|(_, a), (_, b)| (a.event.0, &a.seat_id).cmp(&(b.event.0, &b.seat_id)));
        Ok(seats)
    }

    async fn release_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonRelease, StoreError> {
        let live = self.live_holds(events).await?;
        if live.iter().any(|(.., hold)| hold.user != user.as_str()) {
            return Ok(SeasonRelease::Forbidden);
        }
        // Compare-and-delete in each event, one after another: should Redis fail midway,
        // the seats not yet freed stay the buyer's until they lapse.
        let mut freed = Vec::new();
        for (event, token, _) in live {
            match self.release(event, token, user).await? {
                ReleaseOutcome::Released { seats, .. } => freed.push((event, seats)),
                ReleaseOutcome::Forbidden => return Ok(SeasonRelease::Forbidden),
                ReleaseOutcome::NotLive => {}
            }
        }
        Ok(if freed.is_empty() {
            SeasonRelease::NotLive
        } else {
            SeasonRelease::Released(freed)
        })
    }

    async fn extend_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<SeasonExtend, StoreError> {
        let live = self.live_holds(events).await?;
        if live.iter().any(|(.., hold)| hold.user != user.as_str()) {
            return Ok(SeasonExtend::Forbidden);
        }
        let mut extended = Vec::new();
        let mut until = None;
        for (event, token, _) in live {
            match self
                .extend(event, token, user, ttl_seconds, max_hold_seconds)
                .await?
            {
                ExtendOutcome::Extended { expires_at, seats } => {
                    until = Some(
                        until.map_or(expires_at, |u: chrono::DateTime<chrono::Utc>| {
                            u.min(expires_at)
                        }),
                    );
                    extended.push((event, seats));
                }
                ExtendOutcome::Forbidden => return Ok(SeasonExtend::Forbidden),
                ExtendOutcome::NotLive => {}
            }
        }
        Ok(match until {
            Some(expires_at) => SeasonExtend::Extended {
                expires_at,
                seats: extended,
            },
            None => SeasonExtend::NotLive,
        })
    }

    async fn take_for_season_order(
        &self,
        pool: &PgPool,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonTaken, StoreError> {
        let live = self.live_holds(events).await?;
        if live.is_empty() {
            return Ok(SeasonTaken::NotLive);
        }
        if live.iter().any(|(.., hold)| hold.user != user.as_str()) {
            return Ok(SeasonTaken::Forbidden);
        }
        // Every event the claim held seats in must have its hold still: one that lapsed
        // alone is not sold short.
        if live
            .iter()
            .any(|(.., hold)| hold.season_events != Some(live.len()))
        {
            return Ok(SeasonTaken::NotLive);
        }
        // Protect each event's seats for the commit, as an event's checkout does.
        let mut conn = self.conn().await?;
        let mut seats = Vec::new();
        let mut passes = Vec::new();
        let mut protected: Vec<(EventId, Uuid)> = Vec::new();
        for (event, token, hold) in &live {
            let args = [
                user.as_str().to_owned(),
                CHECKOUT_PROTECTION.as_millis().to_string(),
                hold.seats_json.clone(),
            ];
            let reply: Result<Vec<Value>, StoreError> = Self::hold_invocation(
                &self.scripts.checkout,
                *event,
                *token,
                &[keys::held(*event), keys::pass_ended(*event, hold.pass)],
                &args,
                &hold.seats,
            )
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error);
            let answer = match &reply {
                Ok(reply) => nth::<i64>(reply, 0),
                Err(_) => Ok(0),
            };
            if !matches!(answer, Ok(1)) {
                self.season_given_back(&protected, user, &seats, false)
                    .await;
                reply?;
                return Ok(match answer? {
                    -1 => SeasonTaken::Forbidden,
                    _ => SeasonTaken::NotLive,
                });
            }
            let reply = reply?;
            let taken = decode_seats(&nth::<String>(&reply, 2)?)?;
            seats.extend(stored_seats(*event, hold, &taken)?);
            passes.extend(hold.pass.map(|ticket| (*event, ticket)));
            protected.push((*event, *token));
        }
        seats.sort_by(|a, b| (a.event.0, &a.seat_id).cmp(&(b.event.0, &b.seat_id)));
        match pool.begin().await {
            Ok(tx) => Ok(SeasonTaken::Seats { seats, passes, tx }),
            Err(e) => {
                self.season_given_back(&protected, user, &seats, false)
                    .await;
                Err(e.into())
            }
        }
    }

    async fn season_sold(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        seats: &[SeasonSeatHeld],
    ) {
        for &(event, token) in events {
            let sold = claimed_in(event, seats);
            if !sold.is_empty() {
                self.mark_sold(event, token, user, &sold).await;
            }
        }
    }

    async fn season_given_back(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        seats: &[SeasonSeatHeld],
        sold: bool,
    ) {
        for &(event, token) in events {
            let held = claimed_in(event, seats);
            if !held.is_empty() {
                self.give_back(event, token, user, &held, sold).await;
            }
        }
    }
}
