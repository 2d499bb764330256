//! The waiting list (migration 0017; its offer in `sql/claim.sql`): buyers wait in line
//! for an event's seats, and seats that come back go to the first entries they can serve, as holds of theirs, in the same
//! transaction that returns them (or, on the redis store, written to Redis before it
//! commits), so they never read available to anyone else first.

use std::collections::BTreeMap;

use boxoffice_core::hold::{ClaimedSeat, Hold, Offer};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::stored_user_id;
use crate::journal::outbox::{self, Topic};
use crate::StoreError;

/// How long an offer's hold outlives the offer's deadline: the time the server's sweep has
/// to pass a lapsed offer's seats on before they could read available (it runs every few
/// seconds). A checkout of the offer after its deadline is refused by the service.
pub const OFFER_GRACE_SECONDS: f64 = 60.0;

/// Where an entry stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// In line.
    Waiting,
    /// Seats are offered, to buy before the offer's deadline.
    Offered,
    /// The offer was bought.
    Bought,
    /// The buyer left the list.
    Left,
    /// The offer was not bought in time.
    Lapsed,
}

impl EntryStatus {
    fn from_code(code: &str) -> Self {
        match code {
            "W" => Self::Waiting,
            "O" => Self::Offered,
            "B" => Self::Bought,
            "L" => Self::Left,
            _ => Self::Lapsed,
        }
    }

    /// The status as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Offered => "offered",
            Self::Bought => "bought",
            Self::Left => "left",
            Self::Lapsed => "lapsed",
        }
    }
}

/// An offer as its entry keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryOffer {
    /// The hold's token.
    pub hold_token: Uuid,
    /// The seats offered, by id.
    pub seats: Vec<String>,
    /// Until when the buyer may buy them.
    pub expires_at: DateTime<Utc>,
}

/// One buyer's entry in an event's waiting list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The entry's id.
    pub entry_id: Uuid,
    /// The buyer.
    pub user_id: String,
    /// How many seats they wait for.
    pub quantity: u32,
    /// Of this ticket type only, if given.
    pub ticket_type: Option<String>,
    /// Where it stands.
    pub status: EntryStatus,
    /// Its place in line (1: next to be served), while waiting.
    pub position: Option<u32>,
    /// The seats offered, once offered.
    pub offer: Option<EntryOffer>,
}

#[derive(sqlx::FromRow)]
struct EntryRow {
    entry_id: Uuid,
    user_id: String,
    quantity: i32,
    ticket_type: Option<String>,
    status: String,
    position: Option<i64>,
    offer_token: Option<Uuid>,
    offer_seats: Option<Vec<String>>,
    offer_expires_at: Option<DateTime<Utc>>,
}

impl From<EntryRow> for Entry {
    fn from(r: EntryRow) -> Self {
        let status = EntryStatus::from_code(&r.status);
        let offer = match (r.offer_token, r.offer_seats, r.offer_expires_at) {
            (Some(hold_token), Some(seats), Some(expires_at)) => Some(EntryOffer {
                hold_token,
                seats,
                expires_at,
            }),
            _ => None,
        };
        Self {
            entry_id: r.entry_id,
            user_id: r.user_id,
            quantity: r.quantity as u32,
            ticket_type: r.ticket_type,
            status,
            position: r
                .position
                .filter(|_| status == EntryStatus::Waiting)
                .map(|p| p as u32),
            offer,
        }
    }
}

/// The columns of an [`EntryRow`], the position counted among the entries waiting before.
const ENTRY_COLUMNS: &str = "w.entry_id, w.user_id, w.quantity, w.ticket_type, w.status,
    (select count(*) + 1 from waitlist_entry b
      where b.event_id = w.event_id and b.status = 'W' and b.seq < w.seq) as position,
    w.offer_token, w.offer_seats, w.offer_expires_at";

/// Puts `user` in the event's line for `quantity` seats (of `ticket_type`, if given), or
/// finds the entry they have there already (waiting or offered); answers it, and whether
/// it is new.
pub async fn join(
    pool: &PgPool,
    event: EventId,
    user: &UserId,
    quantity: u32,
    ticket_type: Option<&str>,
) -> Result<(Entry, bool), StoreError> {
    let inserted = sqlx::query(
        "insert into waitlist_entry (event_id, entry_id, user_id, quantity, ticket_type)
         values ($1, $2, $3, $4, $5)
         on conflict (event_id, user_id) where status in ('W', 'O') do nothing",
    )
    .bind(event.0)
    .bind(Uuid::new_v4())
    .bind(user.as_str())
    .bind(quantity as i32)
    .bind(ticket_type)
    .execute(pool)
    .await?
    .rows_affected()
        == 1;
    let row: Option<EntryRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ENTRY_COLUMNS} from waitlist_entry w
          where w.event_id = $1 and w.user_id = $2 and w.status in ('W', 'O')"
    )))
    .bind(event.0)
    .bind(user.as_str())
    .fetch_optional(pool)
    .await?;
    // Gone between the two statements (bought, left or lapsed at once): join again.
    match row {
        Some(row) => Ok((row.into(), inserted)),
        None => Box::pin(join(pool, event, user, quantity, ticket_type)).await,
    }
}

/// The entry, whoever's it is; `None` if the event has no such entry.
pub async fn get(pool: &PgPool, event: EventId, entry: Uuid) -> Result<Option<Entry>, StoreError> {
    let row: Option<EntryRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ENTRY_COLUMNS} from waitlist_entry w where w.event_id = $1 and w.entry_id = $2"
    )))
    .bind(event.0)
    .bind(entry)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(Entry::from))
}

/// Takes the entry out of line. An entry offered seats ends its offer now: the sweep passes
/// the seats on, as it does those of a lapsed offer. Answers whether the entry was live.
pub async fn leave(pool: &PgPool, event: EventId, entry: Uuid) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "update waitlist_entry
            set status = case status when 'W' then 'L' else status end,
                offer_expires_at = case status when 'O' then now() else offer_expires_at end,
                ended_at = now()
          where event_id = $1 and entry_id = $2 and status in ('W', 'O')",
    )
    .bind(event.0)
    .bind(entry)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// How many buyers wait in the event's line, and how many have an offer standing.
pub async fn counts(pool: &PgPool, event: EventId) -> Result<(u64, u64), StoreError> {
    let (waiting, offered): (i64, i64) = sqlx::query_as(
        "select count(*) filter (where status = 'W'), count(*) filter (where status = 'O')
           from waitlist_entry where event_id = $1 and status in ('W', 'O')",
    )
    .bind(event.0)
    .fetch_one(pool)
    .await?;
    Ok((waiting as u64, offered as u64))
}

/// One row of `boxoffice_waitlist_offer`.
#[derive(sqlx::FromRow)]
struct OfferRow {
    entry_id: Uuid,
    user_id: String,
    hold_token: Uuid,
    seat_id: String,
    ticket_type: String,
    price_cents: i64,
    created_at: DateTime<Utc>,
    offer_expires_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

/// Offers `seats`, free again in the caller's transaction, to the event's waiting list in
/// order (see `boxoffice_waitlist_offer` in `sql/claim.sql`), each offer with its outbox
/// row `waitlist.offered`; answers
/// the offers. With `hold`, their holds are written as reservation rows (the postgres hold
/// store); otherwise the caller's hold store writes them before the transaction commits
/// (each store's [`crate::sales::SaleSeats::offer`] calls this).
pub async fn offer_in_tx(
    tx: &mut PgConnection,
    event: EventId,
    seats: &[String],
    hold: bool,
) -> Result<Vec<Offer>, StoreError> {
    if seats.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<OfferRow> =
        sqlx::query_as("select * from boxoffice_waitlist_offer($1, $2, $3, $4)")
            .bind(event.0)
            .bind(seats)
            .bind(hold)
            .bind(OFFER_GRACE_SECONDS)
            .fetch_all(&mut *tx)
            .await?;
    let mut by_entry: BTreeMap<Uuid, Offer> = BTreeMap::new();
    let mut order = Vec::new();
    for r in rows {
        let offer = match by_entry.get_mut(&r.entry_id) {
            Some(offer) => offer,
            None => {
                order.push(r.entry_id);
                by_entry.entry(r.entry_id).or_insert(Offer {
                    entry_id: r.entry_id,
                    hold: Hold {
                        token: r.hold_token,
                        event_id: event,
                        user_id: stored_user_id(&r.user_id)?,
                        seats: Vec::new(),
                        created_at: r.created_at,
                        expires_at: r.expires_at,
                    },
                    deadline: r.offer_expires_at,
                })
            }
        };
        offer.hold.seats.push(ClaimedSeat {
            seat_id: r.seat_id,
            ticket_type: r.ticket_type,
            price_cents: r.price_cents,
        });
    }
    let offers: Vec<Offer> = order
        .into_iter()
        .filter_map(|id| by_entry.remove(&id))
        .collect();
    let changes: Vec<outbox::Change> = offers
        .iter()
        .map(|offer| outbox::Change {
            event_id: event.0,
            topic: Topic::WaitlistOffered,
            payload: offered_payload(offer),
        })
        .collect();
    outbox::write(&mut *tx, &changes).await?;
    Ok(offers)
}

/// The webhook body of an offer.
fn offered_payload(offer: &Offer) -> serde_json::Value {
    serde_json::json!({
        "entry_id": offer.entry_id,
        "event_id": offer.hold.event_id,
        "user_id": offer.hold.user_id.as_str(),
        "hold_token": offer.hold.token,
        "seats": offer.hold.seats.iter().map(|s| serde_json::json!({
            "id": s.seat_id, "ticket_type": s.ticket_type, "price_cents": s.price_cents,
        })).collect::<Vec<_>>(),
        "expires_at": offer.deadline,
    })
}

/// An offer whose deadline has passed (or whose buyer left), ended in the caller's
/// transaction: its seats still held under `token` pass on.
#[derive(Clone, Debug)]
pub struct Lapsed {
    /// The event.
    pub event: EventId,
    /// The offer's hold token.
    pub token: Uuid,
    /// The buyer it was offered to.
    pub user: UserId,
}

/// Ends up to `limit` offers whose deadline has passed, in the caller's transaction (an
/// offer another sweep has locked is skipped): their entries read `lapsed` (or `left`,
/// when the buyer left the list).
pub async fn end_lapsed(tx: &mut PgConnection, limit: i64) -> Result<Vec<Lapsed>, StoreError> {
    let rows: Vec<(Uuid, Uuid, String)> = sqlx::query_as(
        "update waitlist_entry w
            set status = case when w.ended_at is null then 'E' else 'L' end,
                ended_at = coalesce(w.ended_at, now())
          where (w.event_id, w.entry_id) in
                (select event_id, entry_id from waitlist_entry
                  where status = 'O' and offer_expires_at <= now()
                  order by offer_expires_at
                  limit $1
                    for update skip locked)
         returning w.event_id, w.offer_token, w.user_id",
    )
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    rows.into_iter()
        .map(|(event, token, user)| {
            Ok(Lapsed {
                event: EventId(event),
                token,
                user: stored_user_id(&user)?,
            })
        })
        .collect()
}

/// What passing on one lapsed offer (or lapsed order) did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassedOn {
    /// The event.
    pub event: EventId,
    /// The lapsed offer's seats that went on general sale (no entry could take them).
    pub freed: Vec<String>,
    /// The offers its seats went to.
    pub offers: Vec<Offer>,
}

impl PassedOn {
    /// `seats` of the event passed on: those `offers` took, the rest freed.
    pub fn new(event: EventId, seats: Vec<String>, offers: Vec<Offer>) -> Self {
        let offered: Vec<&str> = offers
            .iter()
            .flat_map(|o| o.hold.seats.iter().map(|s| s.seat_id.as_str()))
            .collect();
        let freed = seats
            .into_iter()
            .filter(|s| !offered.contains(&s.as_str()))
            .collect();
        Self {
            event,
            freed,
            offers,
        }
    }
}
