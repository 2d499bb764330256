//! The door: a scan lets a ticket's holder in once, or out, as one more change to a sold
//! seat, under the lock every such change takes first ([`super::seats`]). A ticket that
//! lets someone in keeps its seat: a listing of it ends, and a resale of it either
//! committed before the scan (the ticket is revoked) or finds the seat the seller's.

use sqlx::PgPool;

use super::{orders, seats, SaleSeats};
use crate::pg::tickets::{self, Admits, Passage, Scan, ScanOutcome, StoredTicket, TicketStatus};
use crate::StoreError;

/// Records a scan in one transaction. A ticket enters once: of many concurrent entries,
/// the one whose insert of the ticket's `ticket_entry` row wins is let in; the others wait
/// for it on the primary key and find the ticket inside. With `reentry`, a ticket that
/// went out may enter again. An exit of a ticket that is not inside records nothing
/// ([`ScanOutcome::NotInside`]). An upload (`force`) is recorded whatever the ticket's
/// state, as a `duplicate` when it was in already (or, for an exit, not inside). The same
/// nonce again answers what it came to the first time and records nothing.
pub async fn scan(
    pool: &PgPool,
    store: &dyn SaleSeats,
    scan: &Scan<'_>,
) -> Result<ScanOutcome, StoreError> {
    let mut tx = pool.begin().await?;
    // The seat's lock first: whatever changed the seat (a resale, a move, a cancellation)
    // committed before the ticket is read below, or waits for this scan to commit.
    seats::lock_ticket(&mut tx, scan.event, scan.ticket_id).await?;
    if let Some(first) = tickets::by_nonce(&mut tx, scan.event, scan.nonce).await? {
        return Ok(first);
    }
    let ticket = match tickets::find(&mut tx, scan.ticket_id).await? {
        Some(ticket) if ticket.event_id == scan.event => ticket,
        Some(_) => return Ok(ScanOutcome::Unknown),
        // A seat moved, swapped or resold left its order with its row: its ticket is only
        // in the revocation list.
        None => {
            let revoked: bool = sqlx::query_scalar(
                "select exists (select 1 from revoked_ticket where event_id = $1 and ticket_id = $2)",
            )
            .bind(scan.event.0)
            .bind(scan.ticket_id)
            .fetch_one(&mut *tx)
            .await?;
            return Ok(if revoked {
                ScanOutcome::Revoked
            } else {
                ScanOutcome::Unknown
            });
        }
    };
    if ticket.status == TicketStatus::Revoked {
        return Ok(ScanOutcome::Revoked);
    }
    let passed = match scan.passage {
        Passage::Entry => sqlx::query_scalar::<_, i32>(
            "insert into ticket_entry (event_id, ticket_id, inside, first_at, first_gate)
                 values ($1, $2, true, coalesce($3, now()), $4)
                 on conflict (event_id, ticket_id) do update
                    set inside = true, first_at = excluded.first_at,
                        first_gate = excluded.first_gate
                  where not ticket_entry.inside and $5
                 returning 1",
        )
        .bind(scan.event.0)
        .bind(scan.ticket_id)
        .bind(scan.scanned_at)
        .bind(scan.gate)
        .bind(scan.reentry)
        .fetch_optional(&mut *tx)
        .await?
        .is_some(),
        Passage::Exit => sqlx::query_scalar::<_, i32>(
            "update ticket_entry set inside = false
              where event_id = $1 and ticket_id = $2 and inside
             returning 1",
        )
        .bind(scan.event.0)
        .bind(scan.ticket_id)
        .fetch_optional(&mut *tx)
        .await?
        .is_some(),
    };
    if !passed && !scan.force {
        return refused(&mut tx, scan).await;
    }
    if passed && scan.passage == Passage::Entry {
        if let Admits::Seat {
            order_id, seat_id, ..
        } = &ticket.admits
        {
            if let Some(seat) = seats::listed(&mut tx, *order_id, seat_id).await? {
                let order = orders::lock(&mut tx, *order_id)
                    .await?
                    .ok_or_else(|| StoreError::Other("a listed seat's order went".into()))?;
                seats::kept_by_holder(&mut tx, store, &order, &seat).await?;
            }
        }
    }
    let duplicate = !passed;
    let checkin_id = uuid::Uuid::new_v4();
    let recorded = sqlx::query(
        "insert into checkin (event_id, checkin_id, ticket_id, nonce, kind, gate, result,
                              forced, scanned_at, key_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9, now()), $10)
         on conflict (event_id, nonce) do nothing",
    )
    .bind(scan.event.0)
    .bind(checkin_id)
    .bind(scan.ticket_id)
    .bind(scan.nonce)
    .bind(scan.passage.as_str())
    .bind(scan.gate)
    .bind(if duplicate { "duplicate" } else { "ok" })
    .bind(scan.force)
    .bind(scan.scanned_at)
    .bind(scan.key_id.map(|k| k.0))
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if !recorded {
        // The same nonce committed meanwhile (a ticket not in an order locks nothing):
        // this scan changes nothing.
        tx.rollback().await?;
        let mut conn = pool.acquire().await?;
        return tickets::by_nonce(&mut conn, scan.event, scan.nonce)
            .await?
            .ok_or_else(|| StoreError::Other("a check-in's nonce vanished".into()));
    }
    tx.commit().await?;
    let ticket = StoredTicket {
        status: match scan.passage {
            Passage::Entry => TicketStatus::Redeemed,
            Passage::Exit => ticket.status,
        },
        ..ticket
    };
    Ok(ScanOutcome::Recorded {
        checkin_id,
        duplicate,
        ticket,
    })
}

/// What a scan that let nobody in or out answers: the first answer of its nonce, if a
/// concurrent scan with it was the one; else not inside (an exit) or inside already.
async fn refused(tx: &mut sqlx::PgConnection, scan: &Scan<'_>) -> Result<ScanOutcome, StoreError> {
    if let Some(first) = tickets::by_nonce(tx, scan.event, scan.nonce).await? {
        return Ok(first);
    }
    if scan.passage == Passage::Exit {
        return Ok(ScanOutcome::NotInside);
    }
    let (at, gate) = sqlx::query_as(
        "select first_at, first_gate from ticket_entry where event_id = $1 and ticket_id = $2",
    )
    .bind(scan.event.0)
    .bind(scan.ticket_id)
    .fetch_one(&mut *tx)
    .await?;
    Ok(ScanOutcome::AlreadyIn { at, gate })
}
