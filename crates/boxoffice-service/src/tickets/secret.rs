//! A ticket's secret: `bx1.<payload>.<signature>`, both base64url without padding. The
//! payload is compact JSON naming the entry key, the ticket, its event, seat or area, type
//! and time of issue; the signature is Ed25519 over the payload's bytes. Signing is
//! deterministic, so a ticket read twice has the same secret; a scanner holding the public
//! key alone tells a real ticket from a forged one.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::{Signature, Signer, VerifyingKey};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What every secret starts with.
pub const PREFIX: &str = "bx1.";

/// Longest secret looked at; a real one is about 300 characters.
pub const MAX_SECRET_LEN: usize = 1000;

/// What a secret says, in the order its JSON gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payload {
    /// The entry key that signed it.
    pub kid: String,
    /// The ticket.
    pub tid: Uuid,
    /// The event it lets into.
    pub eid: Uuid,
    /// The seat, for a seated ticket.
    pub seat: Option<String>,
    /// The GA area's code, for a place.
    pub area: Option<String>,
    /// The ticket type.
    #[serde(rename = "type")]
    pub ticket_type: String,
    /// When it was issued, in unix seconds.
    pub iat: i64,
}

/// The secret of `payload`, signed with `key`.
pub fn sign(payload: &Payload, key: &ed25519_dalek::SigningKey) -> String {
    let json = serde_json::to_vec(payload).expect("a payload serializes");
    let signature = key.sign(&json);
    format!(
        "{PREFIX}{}.{}",
        URL_SAFE_NO_PAD.encode(&json),
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    )
}

/// A secret taken apart, its signature not checked yet.
#[derive(Debug)]
pub struct Unchecked {
    /// What it says.
    pub payload: Payload,
    bytes: Vec<u8>,
    signature: Signature,
}

impl Unchecked {
    /// Whether `key` signed it.
    pub fn signed_by(&self, key: &VerifyingKey) -> bool {
        key.verify_strict(&self.bytes, &self.signature).is_ok()
    }
}

/// Takes a secret apart; `None` if it is not shaped as one (truncated, not base64url, not
/// a payload, a signature of the wrong length).
pub fn parse(secret: &str) -> Option<Unchecked> {
    if secret.len() > MAX_SECRET_LEN {
        return None;
    }
    let rest = secret.strip_prefix(PREFIX)?;
    let (payload, signature) = rest.split_once('.')?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let signature: [u8; 64] = URL_SAFE_NO_PAD.decode(signature).ok()?.try_into().ok()?;
    let payload = serde_json::from_slice(&bytes).ok()?;
    Some(Unchecked {
        payload,
        bytes,
        signature: Signature::from_bytes(&signature),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> Payload {
        Payload {
            kid: "ek_1".into(),
            tid: Uuid::new_v4(),
            eid: Uuid::new_v4(),
            seat: Some("stalls-C-12".into()),
            area: None,
            ticket_type: "standard".into(),
            iat: 1_800_000_000,
        }
    }

    #[test]
    fn a_signed_secret_checks_with_its_key_only_and_is_the_same_each_time() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let other = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
        let payload = payload();
        let secret = sign(&payload, &key);
        assert_eq!(secret, sign(&payload, &key));
        assert!(secret.starts_with("bx1."));
        let parsed = parse(&secret).unwrap();
        assert_eq!(parsed.payload, payload);
        assert!(parsed.signed_by(&key.verifying_key()));
        assert!(!parsed.signed_by(&other.verifying_key()));
        let json: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(secret.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(keys.len(), 7);
    }

    #[test]
    fn altered_truncated_and_foreign_secrets_do_not_check() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let secret = sign(&payload(), &key);
        // Another seat in the payload, the signature kept.
        let (head, signature) = secret.rsplit_once('.').unwrap();
        let mut other = payload();
        other.seat = Some("stalls-A-1".into());
        let forged = format!(
            "{PREFIX}{}.{signature}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&other).unwrap())
        );
        assert!(!parse(&forged).unwrap().signed_by(&key.verifying_key()));
        assert!(head.len() > 10);
        for bad in [
            &secret[..secret.len() - 3],
            &secret[4..],
            "bx1.",
            "bx1.e30.",
            &secret.replace("bx1.", "bx2."),
            &format!("{secret}.x"),
            &"A".repeat(5000),
        ] {
            let checks = parse(bad).is_some_and(|p| p.signed_by(&key.verifying_key()));
            assert!(!checks, "{bad}");
        }
    }
}
