//! A waiting-room ticket: what a buyer holds while in line, signed by the server so that
//! any instance reads its place from the ticket itself, with no store lookup.
//!
//! A ticket is URL-safe base64 of its fields (a version, the event, the ticket's id, its
//! join number, its place or 0 before the opening, when it joined, the user) followed by
//! the first 16 bytes of an HMAC-SHA256 over them, keyed by a key derived from the JWT
//! secret. Changing any byte, cutting it short or signing with another key makes it
//! invalid.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::Secret;

const VERSION: u8 = 1;
/// Bytes of the signature kept (128 bits).
const MAC_LEN: usize = 16;
/// The fixed part: version, event, id, join, place, joined at.
const FIXED_LEN: usize = 1 + 16 + 16 + 8 + 8 + 8;

/// What a ticket says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// The event whose line it is in.
    pub event: EventId,
    /// Its id: what its pass names.
    pub id: Uuid,
    /// Its join number (1 for the first to join).
    pub join: u64,
    /// Its place (1 = first), `None` if issued before the opening.
    pub place: Option<u64>,
    /// When it joined.
    pub joined_at: DateTime<Utc>,
    /// Its holder.
    pub user: UserId,
}

/// Signs and checks tickets.
pub struct Tickets {
    mac: Hmac<Sha256>,
}

impl Tickets {
    /// Tickets signed with a key derived from `jwt_secret`.
    pub fn new(jwt_secret: &Secret) -> Self {
        let mut derive = Hmac::<Sha256>::new_from_slice(jwt_secret.expose().as_bytes())
            .expect("HMAC takes a key of any length");
        derive.update(b"boxoffice.queue-ticket");
        let key = derive.finalize().into_bytes();
        Self {
            mac: Hmac::new_from_slice(&key).expect("HMAC takes a key of any length"),
        }
    }

    /// The signed form of `ticket`.
    pub fn sign(&self, ticket: &Ticket) -> String {
        let mut bytes = Vec::with_capacity(FIXED_LEN + ticket.user.as_str().len() + MAC_LEN);
        bytes.push(VERSION);
        bytes.extend_from_slice(ticket.event.0.as_bytes());
        bytes.extend_from_slice(ticket.id.as_bytes());
        bytes.extend_from_slice(&ticket.join.to_be_bytes());
        bytes.extend_from_slice(&ticket.place.unwrap_or(0).to_be_bytes());
        bytes.extend_from_slice(&ticket.joined_at.timestamp_millis().to_be_bytes());
        bytes.extend_from_slice(ticket.user.as_str().as_bytes());
        let mut mac = self.mac.clone();
        mac.update(&bytes);
        bytes.extend_from_slice(&mac.finalize().into_bytes()[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The ticket `text` if this server signed it; `None` if it is altered, truncated,
    /// forged or not a ticket at all.
    pub fn verify(&self, text: &str) -> Option<Ticket> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        if bytes.len() < FIXED_LEN + MAC_LEN || bytes[0] != VERSION {
            return None;
        }
        let (fields, signature) = bytes.split_at(bytes.len() - MAC_LEN);
        let mut mac = self.mac.clone();
        mac.update(fields);
        mac.verify_truncated_left(signature).ok()?;
        let number = |at: usize| u64::from_be_bytes(fields[at..at + 8].try_into().expect("8"));
        let uuid = |at: usize| Uuid::from_slice(&fields[at..at + 16]).expect("16 bytes");
        let user = std::str::from_utf8(&fields[FIXED_LEN..]).ok()?;
        Some(Ticket {
            event: EventId(uuid(1)),
            id: uuid(17),
            join: number(33),
            place: Some(number(41)).filter(|&p| p > 0),
            joined_at: DateTime::from_timestamp_millis(number(49) as i64)?,
            user: UserId::parse(user)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(place: Option<u64>) -> Ticket {
        Ticket {
            event: EventId::new(),
            id: Uuid::new_v4(),
            join: 42,
            place,
            joined_at: DateTime::from_timestamp_millis(1_800_000_000_123).unwrap(),
            user: UserId::parse("alice").unwrap(),
        }
    }

    #[test]
    fn a_ticket_reads_back_and_any_change_breaks_it() {
        let tickets = Tickets::new(&Secret::new("shared"));
        for t in [ticket(None), ticket(Some(7))] {
            let signed = tickets.sign(&t);
            assert!(signed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            assert_eq!(tickets.verify(&signed), Some(t.clone()));
            // Every single byte changed, and every cut, is refused.
            let raw = URL_SAFE_NO_PAD.decode(&signed).unwrap();
            for i in 0..raw.len() {
                let mut altered = raw.clone();
                altered[i] ^= 0x01;
                assert_eq!(tickets.verify(&URL_SAFE_NO_PAD.encode(&altered)), None);
                assert_eq!(tickets.verify(&URL_SAFE_NO_PAD.encode(&raw[..i])), None);
            }
            let elsewhere = Tickets::new(&Secret::new("another"));
            assert_eq!(elsewhere.verify(&signed), None);
        }
        assert_eq!(tickets.verify("not-a-ticket"), None);
        assert_eq!(tickets.verify(""), None);
    }
}
