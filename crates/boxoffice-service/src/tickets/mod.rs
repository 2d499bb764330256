//! Tickets and entry: every sold seat and GA place is a ticket whose secret checks itself
//! ([`secret`]), shown to the buyer as a QR code and a PDF ([`print`], drawn apart from the
//! request workers by the [`printer`]), and let in once at the door ([`check_in`]).
//!
//! Nothing here is on the sale's path: a ticket is derived from the sold row when it is
//! read, and signed then by its organization's entry key (the one that was signing when
//! the ticket was issued, so the secret never changes).
//!
//! (A long file: the entry keys, a ticket read, the revocation list and the scan all turn
//! on one rule, which key signed which ticket, and read best beside it; the secret's
//! encoding and the PDF are modules of their own.)

pub mod print;
pub mod printer;
pub mod secret;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use boxoffice_api::{
    CheckedTicket, CheckinBody, CheckinResult, CheckinSummary, CheckinView, EntryKeyView,
    GateCount, Passage, RevokedList, RevokedTicket, TicketStatus, TicketView,
};
use boxoffice_core::ids::{EventId, KeyId, OrganizationId, UserId};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::journal::audit::Actor;
use boxoffice_store::pg::tickets::{self as store, Admits, Door, ScanOutcome, StoredTicket};
use boxoffice_store::sales;
use chrono::{DateTime, Utc};
use rand::RngCore;
use uuid::Uuid;

use crate::keyring::{random_text, EntryKey};
use crate::{Error, Services};

/// The organization's entry keys, oldest first, giving it its first if it has none.
pub async fn entry_keys_of(
    state: &Services,
    organization: OrganizationId,
) -> Result<Vec<EntryKey>, Error> {
    let keys = state.keys.entry_keys(organization);
    if !keys.is_empty() {
        return Ok(keys);
    }
    let (kid, seed, public) = new_entry_key();
    store::ensure_entry_key(
        &state.pool,
        &store::NewEntryKey {
            organization_id: organization,
            kid: &kid,
            private_key: &seed,
            public_key: &public,
        },
    )
    .await?;
    state.keys.refresh(&state.pool).await?;
    Ok(state.keys.entry_keys(organization))
}

/// A new entry key: its name, seed and public key.
fn new_entry_key() -> (String, [u8; 32], [u8; 32]) {
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    let public = ed25519_dalek::SigningKey::from_bytes(&seed)
        .verifying_key()
        .to_bytes();
    (format!("ek_{}", random_text(9)), seed, public)
}

/// A new entry key for the organization that signs from now on; earlier tickets stay
/// valid under the keys that signed them.
pub async fn rotate_entry_key(
    state: &Services,
    organization: OrganizationId,
    actor: &Actor,
) -> Result<EntryKeyView, Error> {
    let (kid, seed, public) = new_entry_key();
    let stored = store::rotate_entry_key(
        &state.pool,
        &store::NewEntryKey {
            organization_id: organization,
            kid: &kid,
            private_key: &seed,
            public_key: &public,
        },
        actor,
    )
    .await?;
    state.keys.refresh(&state.pool).await?;
    Ok(EntryKeyView {
        kid: stored.kid,
        public_key: URL_SAFE_NO_PAD.encode(&stored.public_key),
        created_at: stored.created_at,
        retired_at: stored.retired_at,
    })
}

fn key_view(key: &EntryKey) -> EntryKeyView {
    EntryKeyView {
        kid: key.kid.clone(),
        public_key: URL_SAFE_NO_PAD.encode(key.signing.verifying_key().as_bytes()),
        created_at: key.created_at,
        retired_at: key.retired_at,
    }
}

async fn door(state: &Services, event: EventId) -> Result<Door, Error> {
    store::door(&state.pool, event)
        .await?
        .ok_or(Error::EventNotFound)
}

/// The keys that may have signed a ticket of the event: every key of its organization not
/// retired before the event was created, the signing one last.
pub async fn event_entry_keys(
    state: &Services,
    event: EventId,
) -> Result<Vec<EntryKeyView>, Error> {
    let door = door(state, event).await?;
    Ok(entry_keys_of(state, door.organization_id)
        .await?
        .iter()
        .filter(|k| k.retired_at.is_none_or(|r| r > door.created_at))
        .map(key_view)
        .collect())
}

/// The key that signs a ticket issued at `at`: the last made before then (the first key,
/// for tickets issued before the organization had one).
fn signer(keys: &[EntryKey], at: DateTime<Utc>) -> Option<&EntryKey> {
    keys.iter()
        .rev()
        .find(|k| k.created_at <= at)
        .or(keys.first())
}

/// What a ticket's secret and label need of its event: its seat map, and its ticket types
/// and GA areas in order.
struct EventLists {
    map: std::sync::Arc<crate::seat_map::RenderedSeatMap>,
    printed: store::Printed,
}

impl EventLists {
    async fn of(state: &Services, event: EventId) -> Result<Self, Error> {
        Ok(Self {
            map: crate::layouts::event_layout(state, event).await?,
            printed: store::printed(&state.pool, event)
                .await?
                .ok_or(Error::EventNotFound)?,
        })
    }

    /// Where the ticket lets in and its type, as a compact secret indexes them; `None` if
    /// the event's lists do not have them.
    fn indexes(&self, ticket: &StoredTicket) -> Option<(secret::Place, Option<u16>)> {
        let position = |list: &[String], code: &str| list.iter().position(|c| c == code);
        match &ticket.admits {
            Admits::Seat { seat_id, .. } => {
                let seat = self.map.map.index_of(seat_id)?;
                let ticket_type = position(&self.printed.type_codes, &ticket.ticket_type)?;
                Some((
                    secret::Place::Seat(u32::try_from(seat).ok()?),
                    Some(u16::try_from(ticket_type).ok()?),
                ))
            }
            Admits::Place { area, .. } => {
                let index = position(&self.printed.area_codes, area)?;
                let ticket_type = match position(&self.printed.type_codes, &ticket.ticket_type) {
                    Some(t) if ticket.ticket_type != *area => Some(u16::try_from(t).ok()?),
                    _ => None,
                };
                Some((secret::Place::Area(u32::try_from(index).ok()?), ticket_type))
            }
        }
    }
}

/// The ticket's secret: compact, unless its event's lists cannot index it (then JSON).
fn secret_of(
    ticket: &StoredTicket,
    keys: &[EntryKey],
    lists: &EventLists,
) -> Result<String, Error> {
    let key = signer(keys, ticket.issued_at)
        .ok_or_else(|| Error::Store(boxoffice_store::StoreError::Other("no entry key".into())))?;
    let compact = lists.indexes(ticket).and_then(|(place, ticket_type)| {
        secret::sign_compact(
            &secret::Compact {
                tid: ticket.ticket_id,
                eid: ticket.event_id.0,
                key_tag: [0, 0],
                iat: u32::try_from(ticket.issued_at.timestamp()).ok()?,
                place,
                ticket_type,
            },
            &key.signing,
        )
    });
    if let Some(compact) = compact {
        return Ok(compact);
    }
    let (seat, area) = match &ticket.admits {
        Admits::Seat { seat_id, .. } => (Some(seat_id.clone()), None),
        Admits::Place { area, .. } => (None, Some(area.clone())),
    };
    let payload = secret::Payload {
        kid: key.kid.clone(),
        tid: ticket.ticket_id,
        eid: ticket.event_id.0,
        seat,
        area,
        ticket_type: ticket.ticket_type.clone(),
        iat: ticket.issued_at.timestamp(),
    };
    Ok(secret::sign(&payload, &key.signing))
}

/// The ticket's label: its seat's in the event's map, or its place's.
fn label_of(map: &crate::seat_map::RenderedSeatMap, ticket: &StoredTicket) -> String {
    match &ticket.admits {
        Admits::Seat { seat_id, .. } => {
            let label = crate::layouts::label(map, seat_id);
            if label.is_empty() {
                seat_id.clone()
            } else {
                label
            }
        }
        Admits::Place {
            area_name,
            place,
            places,
            ..
        } => format!("{area_name}, place {place} of {places}"),
    }
}

/// Tickets as the API shows them, with their labels, secrets and codes.
async fn views(state: &Services, tickets: Vec<StoredTicket>) -> Result<Vec<TicketView>, Error> {
    let mut lists = std::collections::HashMap::new();
    let mut views = Vec::with_capacity(tickets.len());
    for ticket in tickets {
        let keys = entry_keys_of(state, ticket.organization_id).await?;
        if let std::collections::hash_map::Entry::Vacant(e) = lists.entry(ticket.event_id) {
            e.insert(EventLists::of(state, ticket.event_id).await?);
        }
        views.push(view(&ticket, &keys, &lists[&ticket.event_id])?);
    }
    Ok(views)
}

fn view(ticket: &StoredTicket, keys: &[EntryKey], lists: &EventLists) -> Result<TicketView, Error> {
    let (order_id, booking_id, seat_id, area) = match &ticket.admits {
        Admits::Seat {
            order_id,
            season_order_id,
            seat_id,
        } => (
            Some(season_order_id.unwrap_or(*order_id)),
            None,
            Some(seat_id.clone()),
            None,
        ),
        Admits::Place {
            booking_id, area, ..
        } => (None, Some(*booking_id), None, Some(area.clone())),
    };
    Ok(TicketView {
        id: ticket.ticket_id,
        order_id,
        booking_id,
        event_id: ticket.event_id,
        seat_id,
        area,
        label: label_of(&lists.map, ticket),
        ticket_type: ticket.ticket_type.clone(),
        holder: ticket.holder.clone(),
        secret: secret_of(ticket, keys, lists)?,
        code: secret::code(ticket.ticket_id),
        price_cents: ticket.price_cents,
        currency: ticket.currency.clone(),
        status: match ticket.status {
            store::TicketStatus::Valid => TicketStatus::Valid,
            store::TicketStatus::Redeemed => TicketStatus::Redeemed,
            store::TicketStatus::Revoked => TicketStatus::Revoked,
        },
    })
}

/// The tickets of order `id` (an event's, or a season's every night), for its buyer
/// (`by`) or staff (`None`); none while it is not paid.
pub async fn of_order(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<Vec<TicketView>, Error> {
    let owner = match sales::seasons::load(&state.pool, id).await? {
        Some(order) => order.user_id,
        None => {
            sales::orders::load_order(&state.pool, id)
                .await?
                .ok_or(Error::OrderNotFound)?
                .user_id
        }
    };
    if by.is_some_and(|u| u != &owner) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    views(state, store::of_order(&state.pool, id).await?).await
}

/// The tickets of GA booking `id`, a place each, for its buyer (`by`) or staff (`None`).
/// A booking waiting for its payment has none yet.
pub async fn of_booking(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<Vec<TicketView>, Error> {
    let tickets = store::of_booking(&state.pool, id).await?;
    let Some(first) = tickets.first() else {
        crate::bookings::get_booking(state, Some(id), by).await?;
        return Ok(Vec::new());
    };
    if by.is_some_and(|u| u.as_str() != first.holder) {
        return Err(Error::Forbidden("this booking belongs to another user"));
    }
    views(state, tickets).await
}

/// One ticket, for its holder (`by`) or staff of its organization (`None`; the caller
/// checks the organization).
pub async fn ticket(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<(TicketView, OrganizationId), Error> {
    let ticket = store::load(&state.pool, id)
        .await?
        .ok_or(Error::TicketUnknown)?;
    if by.is_some_and(|u| u.as_str() != ticket.holder) {
        return Err(Error::Forbidden("this ticket belongs to another user"));
    }
    let keys = entry_keys_of(state, ticket.organization_id).await?;
    let lists = EventLists::of(state, ticket.event_id).await?;
    Ok((view(&ticket, &keys, &lists)?, ticket.organization_id))
}

/// The tickets as a PDF, a page each, drawn on the printer's threads (at most
/// [`printer::AT_ONCE_PER_HOLDER`] at once for the tickets' holder, else `RateLimited`).
pub async fn pdf(state: &Services, tickets: Vec<TicketView>) -> Result<Vec<u8>, Error> {
    let mut printed = std::collections::HashMap::new();
    for t in &tickets {
        if let std::collections::hash_map::Entry::Vacant(e) = printed.entry(t.event_id) {
            e.insert(
                store::printed(&state.pool, t.event_id)
                    .await?
                    .ok_or(Error::EventNotFound)?,
            );
        }
    }
    let holder = tickets
        .first()
        .map(|t| t.holder.clone())
        .unwrap_or_default();
    state
        .printer
        .print(&holder, move || draw(&tickets, &printed))
        .await
}

/// The PDF of `tickets`, whose events are in `printed`.
fn draw(
    tickets: &[TicketView],
    printed: &std::collections::HashMap<EventId, store::Printed>,
) -> Vec<u8> {
    let codes: Vec<String> = tickets
        .iter()
        .map(|t| secret::printed_code(&t.code))
        .collect();
    let pages: Vec<print::Page<'_>> = tickets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let event = &printed[&t.event_id];
            print::Page {
                event: &event.name,
                starts_at: event.starts_at,
                time_zone: &event.time_zone,
                venue: &event.venue,
                label: &t.label,
                ticket_type: event
                    .type_names
                    .get(&t.ticket_type)
                    .map_or(t.ticket_type.as_str(), String::as_str),
                ticket_id: t.id,
                order: t.order_id.or(t.booking_id),
                price: print::price(t.price_cents, &t.currency),
                secret: &t.secret,
                code: &codes[i],
            }
        })
        .collect();
    print::pdf(&pages)
}

/// Longest nonce and gate name.
pub const MAX_NONCE: usize = 64;
/// Longest gate name.
pub const MAX_GATE: usize = 64;

/// Records a scan at the event's door (see docs/api.md, "Tickets and entry"): the secret's signature is
/// checked with the organization's entry keys, then the store lets the ticket in once.
pub async fn check_in(
    state: &Services,
    event: EventId,
    body: &CheckinBody,
    key: Option<KeyId>,
) -> Result<CheckinView, Error> {
    let mut errors = ValidationErrors::default();
    let nonce_len = body.nonce.chars().count();
    errors.check(
        (1..=MAX_NONCE).contains(&nonce_len),
        "nonce",
        "must be 1 to 64 characters",
    );
    if let Some(gate) = &body.gate {
        errors.check(
            (1..=MAX_GATE).contains(&gate.chars().count()),
            "gate",
            "must be 1 to 64 characters",
        );
    }
    errors.check(
        body.scanned_at.is_none() || body.force,
        "scanned_at",
        "is given with force, by an offline scanner's upload",
    );
    errors.check(
        body.secret.is_some() != body.code.is_some(),
        "secret",
        "give the ticket's secret or its code (one of them)",
    );
    errors.into_result(())?;
    let door = door(state, event).await?;
    let ticket_id = match (&body.secret, &body.code) {
        (Some(secret), _) => {
            let parsed = secret::parse(secret).ok_or(Error::NotATicket)?;
            let keys = entry_keys_of(state, door.organization_id).await?;
            let signed = keys.iter().any(|k| {
                let public = k.signing.verifying_key();
                parsed.names(&k.kid, &public) && parsed.signed_by(&public)
            });
            if !signed {
                return Err(Error::NotATicket);
            }
            if parsed.event() != event.0 {
                return Err(Error::WrongEvent(EventId(parsed.event())));
            }
            parsed.ticket()
        }
        (None, code) => {
            let (first, last) = code
                .as_deref()
                .and_then(secret::ids_of_code)
                .ok_or(Error::NotATicket)?;
            match store::by_code(&state.pool, door.organization_id, first, last).await? {
                store::ByCode::One {
                    ticket_id,
                    event_id,
                } if event_id == event => ticket_id,
                store::ByCode::One { event_id, .. } => return Err(Error::WrongEvent(event_id)),
                store::ByCode::None | store::ByCode::Many => return Err(Error::NotATicket),
            }
        }
    };
    let scan = store::Scan {
        event,
        ticket_id,
        nonce: &body.nonce,
        passage: match body.passage {
            Passage::Entry => store::Passage::Entry,
            Passage::Exit => store::Passage::Exit,
        },
        gate: body.gate.as_deref(),
        scanned_at: body.scanned_at,
        force: body.force,
        reentry: door.reentry,
        key_id: key,
    };
    let (checkin_id, duplicate, ticket) =
        match sales::door::scan(&state.pool, &*state.holds, &scan).await? {
            ScanOutcome::Recorded {
                checkin_id,
                duplicate,
                ticket,
            }
            | ScanOutcome::Repeated {
                checkin_id,
                duplicate,
                ticket,
            } => (checkin_id, duplicate, ticket),
            ScanOutcome::AlreadyIn { at, gate } => return Err(Error::AlreadyRedeemed { at, gate }),
            ScanOutcome::Revoked => return Err(Error::TicketRevoked),
            ScanOutcome::NotInside => return Err(Error::NotInside),
            ScanOutcome::Unknown => return Err(Error::NotATicket),
        };
    Ok(CheckinView {
        result: if duplicate {
            CheckinResult::Duplicate
        } else {
            CheckinResult::Ok
        },
        checkin_id,
        ticket: CheckedTicket {
            id: ticket.ticket_id,
            label: label_of(&*crate::layouts::event_layout(state, event).await?, &ticket),
            ticket_type: ticket.ticket_type,
            holder: ticket.holder,
        },
    })
}

/// The door's counts for the event.
pub async fn summary(state: &Services, event: EventId) -> Result<CheckinSummary, Error> {
    door(state, event).await?;
    let counts = store::door_counts(&state.pool, event).await?;
    Ok(CheckinSummary {
        tickets: counts.tickets as u64,
        entered: counts.entered as u64,
        inside: counts.inside as u64,
        duplicates: counts.duplicates as u64,
        by_gate: counts
            .by_gate
            .into_iter()
            .map(|(gate, entered)| GateCount {
                gate,
                entered: entered as u64,
            })
            .collect(),
    })
}

/// The event's tickets revoked since `since` (all, without).
pub async fn revoked(
    state: &Services,
    event: EventId,
    since: Option<DateTime<Utc>>,
) -> Result<RevokedList, Error> {
    door(state, event).await?;
    let (revoked, as_of) = store::revoked_since(&state.pool, event, since).await?;
    Ok(RevokedList {
        revoked: revoked
            .into_iter()
            .map(|(ticket_id, revoked_at)| RevokedTicket {
                ticket_id,
                revoked_at,
            })
            .collect(),
        as_of,
    })
}
