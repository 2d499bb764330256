//! A ticket's secret, in one of two forms, each checked offline with the organization's
//! public entry keys (Ed25519; signing is deterministic, so a ticket read twice has the
//! same secret):
//!
//! - **Compact** (`BX2:`, every ticket issued now): 166 characters of the QR code's
//!   alphanumeric set, so its QR code is version 7 (45×45 modules) at error correction M.
//!   After the prefix, base45 (RFC 9285) of 108 bytes: the ticket id (16), the event id
//!   (16), the first two bytes of the signing key's public key (2), the time of issue in
//!   unix seconds (4, big-endian), the place (4, big-endian: the top bit set for a GA
//!   area, the rest the seat's index in the event's seat list or the area's in its GA
//!   areas), the ticket type's index among the event's ticket types (2, big-endian;
//!   `0xFFFF` for a place whose type is its area), then the Ed25519 signature (64) over
//!   the prefix's bytes followed by the 44 bytes before it.
//! - **JSON** (`bx1.<payload>.<signature>`, tickets issued before): compact JSON naming
//!   the key, the ticket, its event, seat or area, type and time of issue, base64url; the
//!   signature is over the payload's bytes. Still accepted everywhere.
//!
//! A ticket's [`code`] is the typed stand-in for its secret at an online door.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::{Signature, Signer, VerifyingKey};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What every JSON secret starts with.
pub const PREFIX: &str = "bx1.";

/// What every compact secret starts with.
pub const COMPACT_PREFIX: &str = "BX2:";

/// A compact secret's length: the prefix and base45 of 108 bytes.
pub const COMPACT_LEN: usize = COMPACT_PREFIX.len() + 108 / 2 * 3;

/// The bytes a compact secret's signature covers, after the prefix.
const COMPACT_FIELDS: usize = 44;

/// Longest secret looked at; a JSON one is about 330 characters.
pub const MAX_SECRET_LEN: usize = 1000;

/// What a JSON secret says, in the order its JSON gives it.
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

/// The JSON secret of `payload`, signed with `key`.
pub fn sign(payload: &Payload, key: &ed25519_dalek::SigningKey) -> String {
    let json = serde_json::to_vec(payload).expect("a payload serializes");
    let signature = key.sign(&json);
    format!(
        "{PREFIX}{}.{}",
        URL_SAFE_NO_PAD.encode(&json),
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    )
}

/// Where a compact secret's ticket lets in: an index into the event's lists, as
/// `GET /v1/events/{id}/seats` and `GET /v1/events/{id}` give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The seat at this index of the event's seat list.
    Seat(u32),
    /// The GA area at this index of the event's areas.
    Area(u32),
}

/// The top bit of a compact secret's place: a GA area.
const AREA_BIT: u32 = 1 << 31;

/// A compact secret's type field for a place whose type is its area.
const AREA_TYPE: u16 = u16::MAX;

/// What a compact secret says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compact {
    /// The ticket.
    pub tid: Uuid,
    /// The event it lets into.
    pub eid: Uuid,
    /// The first two bytes of the public key that signed it.
    pub key_tag: [u8; 2],
    /// When it was issued, in unix seconds.
    pub iat: u32,
    /// Its seat or area.
    pub place: Place,
    /// Its ticket type's index among the event's ticket types; `None` for a place whose
    /// type is its area.
    pub ticket_type: Option<u16>,
}

impl Compact {
    /// The 44 bytes its signature covers after the prefix; `None` for an index that does
    /// not fit (a seat or area past 2³¹, a type past 65,534).
    fn fields(&self) -> Option<[u8; COMPACT_FIELDS]> {
        let place = match self.place {
            Place::Seat(i) if i < AREA_BIT => i,
            Place::Area(i) if i < AREA_BIT => i | AREA_BIT,
            _ => return None,
        };
        let ticket_type = match self.ticket_type {
            Some(AREA_TYPE) => return None,
            Some(t) => t,
            None => AREA_TYPE,
        };
        let mut out = [0u8; COMPACT_FIELDS];
        out[..16].copy_from_slice(self.tid.as_bytes());
        out[16..32].copy_from_slice(self.eid.as_bytes());
        out[32..34].copy_from_slice(&self.key_tag);
        out[34..38].copy_from_slice(&self.iat.to_be_bytes());
        out[38..42].copy_from_slice(&place.to_be_bytes());
        out[42..44].copy_from_slice(&ticket_type.to_be_bytes());
        Some(out)
    }

    fn from_fields(b: &[u8; COMPACT_FIELDS]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let place = u32_at(38);
        let ticket_type = u16::from_be_bytes([b[42], b[43]]);
        Self {
            tid: Uuid::from_slice(&b[..16]).expect("16 bytes"),
            eid: Uuid::from_slice(&b[16..32]).expect("16 bytes"),
            key_tag: [b[32], b[33]],
            iat: u32_at(34),
            place: if place & AREA_BIT == 0 {
                Place::Seat(place)
            } else {
                Place::Area(place & !AREA_BIT)
            },
            ticket_type: (ticket_type != AREA_TYPE).then_some(ticket_type),
        }
    }
}

/// The bytes a compact secret's signature covers: the prefix, then the fields.
fn signed_message(fields: &[u8]) -> Vec<u8> {
    [COMPACT_PREFIX.as_bytes(), fields].concat()
}

/// The compact secret of `compact`, signed with `key` (its `key_tag` is set from the key);
/// `None` when an index does not fit.
pub fn sign_compact(compact: &Compact, key: &ed25519_dalek::SigningKey) -> Option<String> {
    let public = key.verifying_key().to_bytes();
    let compact = Compact {
        key_tag: [public[0], public[1]],
        ..*compact
    };
    let fields = compact.fields()?;
    let signature = key.sign(&signed_message(&fields));
    let bytes = [&fields[..], &signature.to_bytes()].concat();
    Some(format!("{COMPACT_PREFIX}{}", base45::encode(bytes)))
}

/// What a secret says, in either form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Says {
    /// A JSON secret's payload.
    Json(Payload),
    /// A compact secret's fields.
    Compact(Compact),
}

/// A secret taken apart, its signature not checked yet.
#[derive(Debug)]
pub struct Unchecked {
    /// What it says.
    pub says: Says,
    message: Vec<u8>,
    signature: Signature,
}

impl Unchecked {
    /// The ticket it names.
    pub fn ticket(&self) -> Uuid {
        match &self.says {
            Says::Json(p) => p.tid,
            Says::Compact(c) => c.tid,
        }
    }

    /// The event it names.
    pub fn event(&self) -> Uuid {
        match &self.says {
            Says::Json(p) => p.eid,
            Says::Compact(c) => c.eid,
        }
    }

    /// Whether the key `kid` with public key `key` is the one it says signed it: named
    /// (JSON), or the first two bytes of its public key (compact; two keys of one
    /// organization may share them, so each that does is tried).
    pub fn names(&self, kid: &str, key: &VerifyingKey) -> bool {
        match &self.says {
            Says::Json(p) => p.kid == kid,
            Says::Compact(c) => key.as_bytes()[..2] == c.key_tag,
        }
    }

    /// Whether `key` signed it.
    pub fn signed_by(&self, key: &VerifyingKey) -> bool {
        key.verify_strict(&self.message, &self.signature).is_ok()
    }
}

/// Takes a secret apart; `None` if it is not shaped as one (truncated, not base64url or
/// base45 as written, not a payload, a signature of the wrong length).
pub fn parse(secret: &str) -> Option<Unchecked> {
    if secret.len() > MAX_SECRET_LEN {
        return None;
    }
    if let Some(rest) = secret.strip_prefix(COMPACT_PREFIX) {
        return parse_compact(rest);
    }
    let rest = secret.strip_prefix(PREFIX)?;
    let (payload, signature) = rest.split_once('.')?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let signature: [u8; 64] = URL_SAFE_NO_PAD.decode(signature).ok()?.try_into().ok()?;
    let payload = serde_json::from_slice(&bytes).ok()?;
    Some(Unchecked {
        says: Says::Json(payload),
        message: bytes,
        signature: Signature::from_bytes(&signature),
    })
}

fn parse_compact(rest: &str) -> Option<Unchecked> {
    if rest.len() != COMPACT_LEN - COMPACT_PREFIX.len() {
        return None;
    }
    let bytes = base45::decode(rest).ok()?;
    let (fields, signature) = bytes.split_at_checked(COMPACT_FIELDS)?;
    let fields: &[u8; COMPACT_FIELDS] = fields.try_into().ok()?;
    let signature: [u8; 64] = signature.try_into().ok()?;
    let says = Compact::from_fields(fields);
    // One encoding per ticket: the reserved type value never names a seat's type.
    if says.fields().as_ref() != Some(fields) {
        return None;
    }
    Some(Unchecked {
        says: Says::Compact(says),
        message: signed_message(fields),
        signature: Signature::from_bytes(&signature),
    })
}

/// The alphabet of a ticket's code: Crockford's base32, read case-blind, `I` and `L` as
/// `1`, `O` as `0`, dashes and spaces skipped.
fn code_encoding() -> data_encoding::Encoding {
    let mut spec = data_encoding::Specification::new();
    spec.symbols.push_str("0123456789ABCDEFGHJKMNPQRSTVWXYZ");
    spec.translate.from.push_str("abcdefghjkmnpqrstvwxyzIiLlOo");
    spec.translate.to.push_str("ABCDEFGHJKMNPQRSTVWXYZ111100");
    spec.ignore.push_str("- ");
    spec.check_trailing_bits = true;
    spec.encoding().expect("a valid base32 specification")
}

/// A ticket's code: the first 48 bits of its id (random in a version-4 id) in Crockford's
/// base32, 10 characters, printed `7KQF-2M9X-PD`. As secret as the ticket's id, which is
/// shown to those who may see its secret.
pub fn code(ticket: Uuid) -> String {
    code_encoding().encode(&ticket.as_bytes()[..6])
}

/// `code` grouped for print: `7KQF-2M9X-PD`.
pub fn printed_code(code: &str) -> String {
    format!("{}-{}-{}", &code[..4], &code[4..8], &code[8..])
}

/// The ids a typed code may stand for: the range of ticket ids starting with its 48
/// bits, `(first, last)`; `None` if it is not 10 characters of the alphabet.
pub fn ids_of_code(code: &str) -> Option<(Uuid, Uuid)> {
    if code.len() > 40 {
        return None;
    }
    let prefix = code_encoding().decode(code.as_bytes()).ok()?;
    let prefix: [u8; 6] = prefix.try_into().ok()?;
    let mut first = [0u8; 16];
    first[..6].copy_from_slice(&prefix);
    let mut last = [0xffu8; 16];
    last[..6].copy_from_slice(&prefix);
    Some((Uuid::from_bytes(first), Uuid::from_bytes(last)))
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
        assert_eq!(parsed.says, Says::Json(payload.clone()));
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

    /// The test vector of docs/api.md ("Compact secrets"), checked in Node too
    /// (tests/js/entry.test.mjs).
    fn vector() -> (ed25519_dalek::SigningKey, Compact) {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let compact = Compact {
            tid: Uuid::parse_str("7a3c9e51-2f4b-4d8e-9c1a-5b6d7e8f9a0b").unwrap(),
            eid: Uuid::parse_str("0e1d2c3b-4a59-4687-b5a4-938271605f4e").unwrap(),
            key_tag: [0, 0],
            iat: 1_800_000_000,
            place: Place::Seat(11),
            ticket_type: Some(1),
        };
        (key, compact)
    }

    #[test]
    fn a_compact_secret_is_166_characters_of_the_qr_alphanumeric_set_in_a_version_7_code() {
        let (key, compact) = vector();
        let secret = sign_compact(&compact, &key).unwrap();
        assert_eq!(secret.len(), COMPACT_LEN);
        assert_eq!(COMPACT_LEN, 166);
        assert!(secret.starts_with("BX2:"));
        assert!(secret
            .chars()
            .all(|c| "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".contains(c)));
        let qr = qrcode::QrCode::with_error_correction_level(&secret, qrcode::EcLevel::M).unwrap();
        assert_eq!(qr.version(), qrcode::Version::Normal(7));
        assert_eq!(qr.width(), 45);
        // The vector of docs/api.md: this key, these fields, this secret.
        assert_eq!(secret, VECTOR);
    }

    /// The compact secret of [`vector`], as docs/api.md prints it.
    const VECTOR: &str = "BX2:HKFT0K2:59 92XJ5PB::FFLJDZ1SQ5/H9A-8F/M7TI:EE82C%RTFPDUOQ000B00100T%SZLHTS9NYJM0QIBP.3BD+I0NH/$EHQELFVRXMV3N-C8I 8E2QP31P2N88IA5K2IDGW2Y93J2JWY7:%JOCF%$L$JDB205G9";

    #[test]
    fn a_compact_secret_reads_back_checks_with_its_key_only_and_is_the_same_each_time() {
        let (key, compact) = vector();
        let other = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
        let secret = sign_compact(&compact, &key).unwrap();
        assert_eq!(secret, sign_compact(&compact, &key).unwrap());
        let parsed = parse(&secret).unwrap();
        let public = key.verifying_key().to_bytes();
        let Says::Compact(read) = parsed.says else {
            panic!("not compact")
        };
        assert_eq!(
            read,
            Compact {
                key_tag: [public[0], public[1]],
                ..compact
            }
        );
        assert_eq!(parsed.ticket(), compact.tid);
        assert_eq!(parsed.event(), compact.eid);
        assert!(parsed.names("any", &key.verifying_key()));
        assert!(parsed.signed_by(&key.verifying_key()));
        assert!(!parsed.signed_by(&other.verifying_key()));
        for place in [Place::Seat(0), Place::Area(3), Place::Seat(AREA_BIT - 1)] {
            let c = Compact {
                place,
                ticket_type: None,
                ..compact
            };
            let Says::Compact(read) = parse(&sign_compact(&c, &key).unwrap()).unwrap().says else {
                panic!("not compact")
            };
            assert_eq!((read.place, read.ticket_type), (place, None));
        }
        assert!(sign_compact(
            &Compact {
                place: Place::Seat(AREA_BIT),
                ..compact
            },
            &key
        )
        .is_none());
        assert!(sign_compact(
            &Compact {
                ticket_type: Some(AREA_TYPE),
                ..compact
            },
            &key
        )
        .is_none());
    }

    #[test]
    fn altered_truncated_and_lowercased_compact_secrets_do_not_check() {
        let (key, compact) = vector();
        let secret = sign_compact(&compact, &key).unwrap();
        let mut flipped = secret.clone().into_bytes();
        // One character of the fields changed: another ticket, the signature kept.
        flipped[10] = if flipped[10] == b'0' { b'1' } else { b'0' };
        let flipped = String::from_utf8(flipped).unwrap();
        for bad in [
            secret[..secret.len() - 3].to_string(),
            format!("{secret}A"),
            secret.to_lowercase(),
            secret.replace("BX2:", "BX3:"),
            flipped,
            "BX2:".to_string(),
        ] {
            let checks = parse(&bad).is_some_and(|p| p.signed_by(&key.verifying_key()));
            assert!(!checks, "{bad}");
        }
    }

    #[test]
    fn a_code_is_ten_crockford_characters_of_the_ids_first_48_bits_read_loosely() {
        let id = Uuid::parse_str("7a3c9e51-2f4b-4d8e-9c1a-5b6d7e8f9a0b").unwrap();
        let typed = code(id);
        assert_eq!(typed.len(), 10);
        assert!(typed
            .chars()
            .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)));
        let printed = printed_code(&typed);
        assert_eq!(printed.len(), 12);
        let (first, last) = ids_of_code(&typed).unwrap();
        assert!(first <= id && id <= last);
        assert_eq!(first.as_bytes()[..6], id.as_bytes()[..6]);
        assert_eq!(ids_of_code(&printed), ids_of_code(&typed));
        assert_eq!(ids_of_code(&printed.to_lowercase()), ids_of_code(&typed));
        // I and L read as 1, O as 0.
        let zero_one = code(Uuid::from_bytes([0; 16]));
        assert_eq!(zero_one, "0000000000");
        assert_eq!(ids_of_code("OOOO-oooo-oo"), ids_of_code(&zero_one));
        let ones = code(Uuid::parse_str("08421084-0000-4000-8000-000000000000").unwrap());
        assert_eq!(ids_of_code(&ones.replace('1', "l")), ids_of_code(&ones));
        for bad in [
            "",
            "0000",
            "00000000000",
            "0000000001",
            "UUUUUUUUUU",
            "0000-0000-0!",
        ] {
            assert_eq!(ids_of_code(bad), None, "{bad}");
        }
    }
}
