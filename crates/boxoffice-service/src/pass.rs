//! The waiting room's pass: what an admitted buyer shows (`Boxoffice-Pass`) to hold seats
//! and book places while an event's queue is on.
//!
//! A pass is an HS256 token (`sub` the user, `evt` the event, `tkt` the ticket, `exp`)
//! signed with a key derived from the JWT secret, so every instance checks it without a
//! store lookup, and neither a user token nor a pass can be shown as the other.

use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

use crate::Secret;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    evt: Uuid,
    tkt: Uuid,
    exp: i64,
}

/// A pass that checked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The waiting-room ticket it was issued for.
    pub ticket: Uuid,
    /// When it stops being valid.
    pub expires_at: DateTime<Utc>,
}

/// Why a pass was refused (each answers 403 `queue_required`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not a pass signed here: malformed, tampered with, or signed with another key.
    #[error("the pass is not valid")]
    Invalid,
    /// Its time is over.
    #[error("the pass has expired")]
    Expired,
    /// Issued for another event or to another user.
    #[error("the pass is not for this event and buyer")]
    NotYours,
}

/// Mints and checks passes.
pub struct Passes {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl Passes {
    /// Passes signed with a key derived from `jwt_secret`.
    pub fn new(jwt_secret: &Secret) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(jwt_secret.expose().as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"boxoffice.pass");
        let key = mac.finalize().into_bytes();
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        // This server's own clock made it: no leeway.
        validation.leeway = 0;
        Self {
            encoding: EncodingKey::from_secret(&key).expect("a 32-byte key"),
            decoding: DecodingKey::from_secret(&key).expect("a 32-byte key"),
            validation,
        }
    }

    /// A pass for `user` in `event` under `ticket`, valid until `expires_at`.
    pub fn mint(
        &self,
        event: EventId,
        user: &UserId,
        ticket: Uuid,
        expires_at: DateTime<Utc>,
    ) -> String {
        let claims = Claims {
            sub: user.as_str().to_owned(),
            evt: event.0,
            tkt: ticket,
            exp: expires_at.timestamp(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing with an in-memory key cannot fail")
    }

    /// The pass `token`, if it is valid for `user` in `event` now.
    pub fn verify(&self, token: &str, event: EventId, user: &UserId) -> Result<Pass, Refused> {
        use jsonwebtoken::errors::ErrorKind;
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => Refused::Expired,
                _ => Refused::Invalid,
            })?
            .claims;
        if claims.evt != event.0 || claims.sub != user.as_str() {
            return Err(Refused::NotYours);
        }
        Ok(Pass {
            ticket: claims.tkt,
            expires_at: DateTime::from_timestamp(claims.exp, 0).ok_or(Refused::Invalid)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(text: &str) -> Secret {
        Secret::new(text.to_owned())
    }

    #[test]
    fn a_pass_is_good_for_its_buyer_and_event_until_it_expires() {
        let passes = Passes::new(&secret("shared"));
        let (event, other_event) = (EventId::new(), EventId::new());
        let (alice, bob) = (
            UserId::parse("alice").unwrap(),
            UserId::parse("bob").unwrap(),
        );
        let ticket = Uuid::new_v4();
        let until = Utc::now() + chrono::Duration::minutes(10);
        let pass = passes.mint(event, &alice, ticket, until);
        let checked = passes.verify(&pass, event, &alice).unwrap();
        assert_eq!(checked.ticket, ticket);
        assert_eq!(checked.expires_at.timestamp(), until.timestamp());

        assert_eq!(passes.verify(&pass, event, &bob), Err(Refused::NotYours));
        assert_eq!(
            passes.verify(&pass, other_event, &alice),
            Err(Refused::NotYours)
        );
        let old = passes.mint(
            event,
            &alice,
            ticket,
            Utc::now() - chrono::Duration::seconds(1),
        );
        assert_eq!(passes.verify(&old, event, &alice), Err(Refused::Expired));
        // Any change to the token breaks it.
        let mut tampered = pass.clone().into_bytes();
        let i = tampered.len() / 2;
        tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(
            passes.verify(&tampered, event, &alice),
            Err(Refused::Invalid)
        );
        assert_eq!(passes.verify("", event, &alice), Err(Refused::Invalid));
        let elsewhere = Passes::new(&secret("another")).mint(event, &alice, ticket, until);
        assert_eq!(
            passes.verify(&elsewhere, event, &alice),
            Err(Refused::Invalid)
        );
    }
}
