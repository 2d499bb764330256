//! Season holds on the postgres store: a season's claim (`boxoffice_claim_season`,
//! `sql/claim.sql`) writes the seats as `reservation` rows of every event it covers in one
//! statement; reading and releasing go by each event's token.

use async_trait::async_trait;
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::PgHoldStore;
use crate::claim_word::ClaimWord;
use crate::error::retry_contention;
use crate::season_holds::{
    SeasonAcquire, SeasonExtend, SeasonHoldRequest, SeasonHolds, SeasonRelease, SeasonSeatHeld,
    SeasonTaken,
};
use crate::StoreError;

/// One row of `boxoffice_claim_season`'s answer.
#[derive(sqlx::FromRow)]
struct SeasonClaimRow {
    event_id: Option<Uuid>,
    outcome: String,
    seat_id: Option<String>,
    ticket_type: Option<String>,
    price_cents: Option<i64>,
    created_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
}

/// How often a claim that could blame nothing (a competing hold gone meanwhile) is made
/// again before it is answered as not to be had.
const RETRIES: usize = 2;

#[async_trait]
impl SeasonHolds for PgHoldStore {
    async fn acquire_season(&self, r: &SeasonHoldRequest<'_>) -> Result<SeasonAcquire, StoreError> {
        let events: Vec<Uuid> = r.events.iter().map(|e| e.event.0).collect();
        let tokens: Vec<Uuid> = r.events.iter().map(|e| e.token).collect();
        let maxes: Vec<i64> = r
            .events
            .iter()
            .map(|e| i64::from(e.max_seats_per_user))
            .collect();
        let passes: Vec<Option<Uuid>> = r.events.iter().map(|e| e.pass.map(|p| p.ticket)).collect();
        for _ in 0..RETRIES {
            let rows: Vec<SeasonClaimRow> = sqlx::query_as(
                "select * from boxoffice_claim_season($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(r.season.0)
            .bind(&events)
            .bind(&tokens)
            .bind(r.user.as_str())
            .bind(f64::from(r.ttl_seconds))
            .bind(&maxes)
            .bind(r.seats)
            .bind(r.partial)
            .bind(&passes)
            .fetch_all(&self.pool)
            .await?;
            if let Some(outcome) = season_outcome(rows)? {
                return Ok(outcome);
            }
        }
        Ok(SeasonAcquire::Unavailable(Vec::new()))
    }

    async fn season_hold(
        &self,
        events: &[(EventId, Uuid)],
    ) -> Result<Vec<(UserId, SeasonSeatHeld)>, StoreError> {
        let (ids, tokens) = unzip(events);
        let rows: Vec<HeldRow> = sqlx::query_as(
            "select r.user_id, r.event_id, r.seat_id, r.ticket_type, r.price_cents,
                    r.created_at, r.expires_at, r.pass_ticket
               from reservation r
               join unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
                 on r.event_id = w.event_id and r.hold_token = w.token
              where boxoffice_live_hold(r.status, r.expires_at)
              order by r.event_id, r.seat_id",
        )
        .bind(&ids)
        .bind(&tokens)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                let user = UserId::parse(&row.0)
                    .ok_or_else(|| StoreError::Other("a hold of no valid user".into()))?;
                Ok((user, held_seat(row)))
            })
            .collect()
    }

    async fn release_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonRelease, StoreError> {
        let (ids, tokens) = unzip(events);
        let (ids, tokens) = (&ids, &tokens);
        // Compare-and-delete in every event at once, under the buyer's lock of each.
        retry_contention(|| async move {
            let mut tx = self.begin_locked_in(ids, user).await?;
            let freed: Vec<(Uuid, String, Option<Uuid>)> = sqlx::query_as(
                "delete from reservation r
                  using unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
                  where r.event_id = w.event_id and r.hold_token = w.token and r.user_id = $3
                    and boxoffice_live_hold(r.status, r.expires_at)
              returning r.event_id, r.seat_id, r.pass_ticket",
            )
            .bind(ids)
            .bind(tokens)
            .bind(user.as_str())
            .fetch_all(&mut *tx)
            .await?;
            // As an event's release: a pass ends with the buyer's last hold of its event.
            let mut passes: Vec<(Uuid, Uuid)> = freed
                .iter()
                .filter_map(|(event, _, pass)| Some((*event, (*pass)?)))
                .collect();
            passes.dedup();
            for (event, ticket) in passes {
                super::end_pass_unless_holding(&mut tx, EventId(event), user, ticket).await?;
            }
            let freed: Vec<(Uuid, String)> = freed
                .into_iter()
                .map(|(event, seat, _)| (event, seat))
                .collect();
            let outcome = if freed.is_empty() {
                if held_by_other(&mut tx, ids, tokens, user).await? {
                    SeasonRelease::Forbidden
                } else {
                    SeasonRelease::NotLive
                }
            } else {
                SeasonRelease::Released(by_event(freed))
            };
            tx.commit().await?;
            Ok(outcome)
        })
        .await
    }

    async fn extend_season(
        &self,
        events: &[(EventId, Uuid)],
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<SeasonExtend, StoreError> {
        let (ids, tokens) = unzip(events);
        let (ids, tokens) = (&ids, &tokens);
        // As an event's extension, in every event at once, under the buyer's lock of each.
        retry_contention(|| async move {
            let mut tx = self.begin_locked_in(ids, user).await?;
            let extended: Vec<(Uuid, String, DateTime<Utc>)> = sqlx::query_as(
                "update reservation r
                    set expires_at = greatest(r.expires_at,
                                              least(now() + make_interval(secs => $4),
                                                    r.created_at + make_interval(secs => $5)))
                   from unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
                  where r.event_id = w.event_id and r.hold_token = w.token and r.user_id = $3
                    and boxoffice_live_hold(r.status, r.expires_at)
                 returning r.event_id, r.seat_id, r.expires_at",
            )
            .bind(ids)
            .bind(tokens)
            .bind(user.as_str())
            .bind(f64::from(ttl_seconds))
            .bind(f64::from(max_hold_seconds))
            .fetch_all(&mut *tx)
            .await?;
            let outcome = match extended.iter().map(|(.., at)| *at).min() {
                Some(expires_at) => SeasonExtend::Extended {
                    expires_at,
                    seats: by_event(extended.into_iter().map(|(e, seat, _)| (e, seat))),
                },
                None if held_by_other(&mut tx, ids, tokens, user).await? => SeasonExtend::Forbidden,
                None => SeasonExtend::NotLive,
            };
            tx.commit().await?;
            Ok(outcome)
        })
        .await
    }

    async fn take_for_season_order(
        &self,
        pool: &sqlx::PgPool,
        events: &[(EventId, Uuid)],
        user: &UserId,
    ) -> Result<SeasonTaken, StoreError> {
        // As an event's checkout takes its hold (`sale.rs`): every precondition in the
        // WHERE, the rows reserved for the sale in the order's own transaction.
        let (ids, tokens) = unzip(events);
        let mut tx = pool.begin().await?;
        let rows: Vec<HeldRow> = sqlx::query_as(
            "update reservation r set status = 'R'
               from unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
              where r.event_id = w.event_id and r.hold_token = w.token and r.user_id = $3
                and r.status = 'H' and r.expires_at > statement_timestamp()
             returning r.user_id, r.event_id, r.seat_id, r.ticket_type, r.price_cents,
                       r.created_at, r.expires_at, r.pass_ticket",
        )
        .bind(&ids)
        .bind(&tokens)
        .bind(user.as_str())
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            return Ok(if held_by_other(&mut tx, &ids, &tokens, user).await? {
                SeasonTaken::Forbidden
            } else {
                SeasonTaken::NotLive
            });
        }
        // All of the hold or nothing: no row of it left a hold, and the same seats in
        // every event it holds.
        let left: i64 = sqlx::query_scalar(
            "select count(*) from reservation r
               join unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
                 on r.event_id = w.event_id and r.hold_token = w.token
              where r.status = 'H'",
        )
        .bind(&ids)
        .bind(&tokens)
        .fetch_one(&mut *tx)
        .await?;
        let mut passes: Vec<(EventId, Uuid)> = rows
            .iter()
            .filter_map(|row| Some((EventId(row.1), row.7?)))
            .collect();
        passes.sort_by_key(|(event, _)| event.0);
        passes.dedup();
        let mut seats: Vec<SeasonSeatHeld> = rows.into_iter().map(held_seat).collect();
        seats.sort_by(|a, b| (a.event.0, &a.seat_id).cmp(&(b.event.0, &b.seat_id)));
        let first = seats[0].event;
        let per_event = seats.iter().filter(|s| s.event == first).count();
        let nights = seats.len() / per_event;
        if left > 0 || nights * per_event != seats.len() {
            return Ok(SeasonTaken::NotLive);
        }
        Ok(SeasonTaken::Seats { seats, passes, tx })
    }
}

/// Seats by event, in the order the events first come.
fn by_event(seats: impl IntoIterator<Item = (Uuid, String)>) -> Vec<(EventId, Vec<String>)> {
    let mut by_event: Vec<(EventId, Vec<String>)> = Vec::new();
    for (event, seat) in seats {
        match by_event.iter_mut().find(|(e, _)| e.0 == event) {
            Some((_, seats)) => seats.push(seat),
            None => by_event.push((event.into(), vec![seat])),
        }
    }
    by_event
}

impl PgHoldStore {
    /// A transaction holding the buyer's lock of each of `events` (the key recipe of
    /// `tx::begin_locked`, taken in key order as a season's claim takes them).
    async fn begin_locked_in(
        &self,
        events: &[Uuid],
        user: &UserId,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        let mut tx = self
            .pool
            .begin_with("begin isolation level read committed; set local synchronous_commit = off")
            .await?;
        sqlx::query(
            "select pg_advisory_xact_lock(k.key)
               from (select boxoffice_buyer_lock(e, $2) as key from unnest($1::uuid[]) as e) k
              order by k.key",
        )
        .bind(events)
        .bind(user.as_str())
        .execute(&mut *tx)
        .await?;
        Ok(tx)
    }
}

/// Whether another buyer than `user` holds live seats under these (event, token) pairs.
async fn held_by_other(
    tx: &mut sqlx::PgConnection,
    ids: &[Uuid],
    tokens: &[Uuid],
    user: &UserId,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar(
        "select exists (select 1 from reservation r
                          join unnest($1::uuid[], $2::uuid[]) as w (event_id, token)
                            on r.event_id = w.event_id and r.hold_token = w.token
                         where r.user_id <> $3 and boxoffice_live_hold(r.status, r.expires_at))",
    )
    .bind(ids)
    .bind(tokens)
    .bind(user.as_str())
    .fetch_one(&mut *tx)
    .await?)
}

fn held_seat(row: HeldRow) -> SeasonSeatHeld {
    SeasonSeatHeld {
        event: row.1.into(),
        seat_id: row.2,
        ticket_type: row.3,
        price_cents: row.4,
        created_at: row.5,
        expires_at: row.6,
    }
}

/// A held row of a season hold: user, event, seat, ticket type, price, made, lapses, and
/// the waiting-room pass it was held under.
type HeldRow = (
    String,
    Uuid,
    String,
    String,
    i64,
    DateTime<Utc>,
    DateTime<Utc>,
    Option<Uuid>,
);

fn unzip(events: &[(EventId, Uuid)]) -> (Vec<Uuid>, Vec<Uuid>) {
    events
        .iter()
        .map(|(event, token)| (event.0, *token))
        .unzip()
}

/// What the claim's rows say; `None` for a claim to make again.
fn season_outcome(rows: Vec<SeasonClaimRow>) -> Result<Option<SeasonAcquire>, StoreError> {
    let Some(first) = rows.first() else {
        return Err(StoreError::Other(
            "the season claim answered nothing".into(),
        ));
    };
    let events = |rows: Vec<SeasonClaimRow>| -> Vec<EventId> {
        rows.into_iter()
            .filter_map(|r| r.event_id.map(EventId))
            .collect()
    };
    Ok(Some(
        match ClaimWord::read(&first.outcome, "the season claim")? {
            ClaimWord::Held => SeasonAcquire::Held(
                rows.into_iter()
                    .map(|row| {
                        Some(SeasonSeatHeld {
                            event: EventId(row.event_id?),
                            seat_id: row.seat_id?,
                            ticket_type: row.ticket_type?,
                            price_cents: row.price_cents?,
                            created_at: row.created_at?,
                            expires_at: row.expires_at?,
                        })
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| StoreError::Other("a held seat came back blank".into()))?,
            ),
            ClaimWord::Started => SeasonAcquire::Started(events(rows)),
            ClaimWord::Limit => SeasonAcquire::LimitExceeded(events(rows)),
            ClaimWord::PassEnded => SeasonAcquire::PassEnded(events(rows)),
            ClaimWord::Unavailable => SeasonAcquire::Unavailable(
                rows.into_iter()
                    .filter_map(|r| Some((EventId(r.event_id?), r.seat_id?)))
                    .collect(),
            ),
            ClaimWord::Retry => return Ok(None),
            word => return Err(word.unexpected("the season claim")),
        },
    ))
}
