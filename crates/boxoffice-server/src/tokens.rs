//! Tokens: the admin bearer token, and HS256 user tokens (`sub`, `exp`, and optionally
//! `channel`), verified and minted.
//!
//! A ticketing platform mints user tokens for its own logged-in users with the shared
//! secret (with `channel` for the buyers of a partner who sells an event's channel
//! seats); for demos and tests `POST /v1/sessions` mints anonymous ones.
//!
//! A buyer sends the same token with every request of a sale, so the buyer tokens checked
//! lately are remembered ([`Auth::verify_buyer`]): a token seen again is answered without
//! its signature and claims being checked again, until it expires (by the same clock and
//! leeway as the check) or, for a token signed with an organization's key, until the
//! signing keys are reloaded (a key revoked or added).

use boxoffice_core::ids::{OrganizationId, UserId};
use boxoffice_service::keyring::KeyRing;
use boxoffice_service::Secret;
use std::num::NonZeroUsize;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lru::LruCache;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// How long an anonymous session's token is valid.
pub const SESSION_TTL: Duration = Duration::hours(24);

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    channel: Option<String>,
}

/// The buyer and channel a token's claims name, if they are valid: a `channel` that is no
/// channel code makes the token not valid.
fn checked(claims: Claims) -> Option<(UserId, Option<String>)> {
    let channel = match claims.channel {
        Some(code) if !boxoffice_core::event::is_channel_code(&code) => return None,
        channel => channel,
    };
    Some((UserId::parse(&claims.sub)?, channel))
}

/// The claims of `token` if its signature and times check out with `key`.
fn claims(token: &str, key: &DecodingKey, validation: &Validation) -> Option<Claims> {
    Some(
        jsonwebtoken::decode::<Claims>(token, key, validation)
            .ok()?
            .claims,
    )
}

/// A buyer's token, verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The buyer.
    pub user: UserId,
    /// The sales channel it puts them in.
    pub channel: Option<String>,
    /// The organization whose buyer they are.
    pub organization: OrganizationId,
}

/// How many buyer tokens checked lately are remembered: a flash sale's buyers, at a few
/// hundred bytes each.
const REMEMBERED_TOKENS: NonZeroUsize = NonZeroUsize::new(32_768).expect("not zero");

/// A buyer token checked lately: whom it names, until when, and under which load of the
/// signing keys (`None`: checked with `BOXOFFICE_JWT_SECRET`, which never changes while the
/// server runs).
struct Remembered {
    verified: Verified,
    exp: i64,
    signing_version: Option<u64>,
}

/// Verifies admin tokens and user tokens, and mints user tokens.
pub struct Auth {
    admin_token: Secret,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Buyer tokens checked lately, by their text.
    remembered: Mutex<LruCache<Box<str>, Remembered>>,
}

impl Auth {
    /// Auth with this admin token and JWT secret.
    pub fn new(admin_token: &Secret, jwt_secret: &Secret) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        // A token not valid before some time is not valid now, whatever else it says.
        validation.validate_nbf = true;
        // Clocks of the platform minting tokens and of this server may differ a little.
        validation.leeway = 5;
        Self {
            admin_token: admin_token.clone(),
            encoding: EncodingKey::from_secret(jwt_secret.expose().as_bytes())
                .expect("the JWT secret is not empty (settings refuse an empty one)"),
            decoding: DecodingKey::from_secret(jwt_secret.expose().as_bytes())
                .expect("the JWT secret is not empty (settings refuse an empty one)"),
            validation,
            remembered: Mutex::new(LruCache::new(REMEMBERED_TOKENS)),
        }
    }

    /// True for the admin token. Compared in constant time so response timing does not
    /// reveal how much of a guess was right.
    pub fn is_admin(&self, token: &str) -> bool {
        token
            .as_bytes()
            .ct_eq(self.admin_token.expose().as_bytes())
            .into()
    }

    /// The user a valid, unexpired user token names.
    pub fn verify_user(&self, token: &str) -> Option<UserId> {
        self.verify(token).map(|(user, _)| user)
    }

    /// The user a valid, unexpired user token names, and the sales channel it puts them in
    /// (its `channel` claim). A token whose `channel` is not a channel code is not valid.
    pub fn verify(&self, token: &str) -> Option<(UserId, Option<String>)> {
        let claims = claims(token, &self.decoding, &self.validation)?;
        checked(claims)
    }

    /// The buyer a valid, unexpired token names, their channel, and the organization whose
    /// buyer they are: a token naming a signing key (`kid`) is checked with that key, and
    /// only under its algorithm (`alg` must be the key's), and belongs to its organization;
    /// one without is checked with `BOXOFFICE_JWT_SECRET` and belongs to `default`. A token
    /// checked lately is answered as it was then while it is unexpired and the signing
    /// keys were not reloaded since (see the module).
    pub fn verify_buyer(&self, token: &str, ring: &KeyRing) -> Option<Verified> {
        let now = i64::try_from(jsonwebtoken::get_current_timestamp()).unwrap_or(i64::MAX);
        let leeway = i64::try_from(self.validation.leeway).unwrap_or(0);
        // Read before any key is looked up (`KeyRing::signing_version`).
        let version = ring.signing_version();
        {
            let mut remembered = self.remembered.lock().expect("the remembered tokens' lock");
            if let Some(seen) = remembered.get(token) {
                // Expired by the check's own rule: `exp` before now less the leeway.
                let live = seen.exp >= now.saturating_sub(leeway);
                if live && seen.signing_version.is_none_or(|v| v == version) {
                    return Some(seen.verified.clone());
                }
                remembered.pop(token);
            }
        }
        let (verified, exp, signing_version) = self.check_buyer(token, ring, version)?;
        self.remembered
            .lock()
            .expect("the remembered tokens' lock")
            .put(
                token.into(),
                Remembered {
                    verified: verified.clone(),
                    exp,
                    signing_version,
                },
            );
        Some(verified)
    }

    /// [`Auth::verify_buyer`]'s check itself, with the token's `exp` and the version of the
    /// signing keys it was checked under (none for `BOXOFFICE_JWT_SECRET`).
    fn check_buyer(
        &self,
        token: &str,
        ring: &KeyRing,
        version: u64,
    ) -> Option<(Verified, i64, Option<u64>)> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        let Some(kid) = header.kid else {
            let claims = claims(token, &self.decoding, &self.validation)?;
            let exp = claims.exp;
            let (user, channel) = checked(claims)?;
            let verified = Verified {
                user,
                channel,
                organization: OrganizationId::DEFAULT,
            };
            return Some((verified, exp, None));
        };
        let key = ring.signing_key(&kid)?;
        if header.alg != key.algorithm {
            return None;
        }
        let mut validation = self.validation.clone();
        validation.algorithms = vec![key.algorithm];
        let claims = claims(token, &key.decoding, &validation)?;
        let exp = claims.exp;
        let (user, channel) = checked(claims)?;
        let verified = Verified {
            user,
            channel,
            organization: key.organization_id,
        };
        Some((verified, exp, Some(version)))
    }

    /// A user token for `user` valid until `expires_at`.
    pub fn mint_user(&self, user: &UserId, expires_at: DateTime<Utc>) -> String {
        let claims = Claims {
            sub: user.as_str().to_owned(),
            exp: expires_at.timestamp(),
            channel: None,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing with an in-memory key cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn auth() -> Auth {
        Auth::new(&Secret::new("admin-secret"), &Secret::new("jwt-secret"))
    }

    #[test]
    fn minted_tokens_verify_until_they_expire() {
        let auth = auth();
        let user = UserId::parse("user-1").unwrap();
        let token = auth.mint_user(&user, Utc::now() + Duration::minutes(5));
        assert_eq!(auth.verify_user(&token), Some(user.clone()));
        let expired = auth.mint_user(&user, Utc::now() - Duration::minutes(5));
        assert_eq!(auth.verify_user(&expired), None);
    }

    #[test]
    fn tokens_signed_with_another_secret_are_refused() {
        let other = Auth::new(&Secret::new("admin-secret"), &Secret::new("another"));
        let user = UserId::parse("user-1").unwrap();
        let token = other.mint_user(&user, Utc::now() + Duration::minutes(5));
        assert_eq!(auth().verify_user(&token), None);
        assert_eq!(auth().verify_user("not.a.jwt"), None);
    }

    /// A token with these claims, signed with the test JWT secret.
    fn signed(claims: serde_json::Value) -> String {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(b"jwt-secret").unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn a_token_not_valid_yet_is_refused() {
        let exp = (Utc::now() + Duration::minutes(5)).timestamp();
        let later = (Utc::now() + Duration::minutes(1)).timestamp();
        let earlier = (Utc::now() - Duration::minutes(1)).timestamp();
        assert_eq!(
            auth().verify_user(&signed(json!({"sub": "ann", "exp": exp, "nbf": later}))),
            None
        );
        assert_eq!(
            auth().verify_user(&signed(json!({"sub": "ann", "exp": exp, "nbf": earlier}))),
            UserId::parse("ann")
        );
    }

    /// A buyer token answered from memory the second time stops there as it would have
    /// stopped checked: at its `exp` plus the leeway; and a token not valid is never
    /// remembered.
    #[test]
    fn a_remembered_buyer_token_expires_as_a_checked_one_does() {
        let auth = auth();
        let ring = KeyRing::new();
        // Expires the second after next, by the check's rule (`exp` before now less 5 s).
        let exp = i64::try_from(jsonwebtoken::get_current_timestamp()).unwrap() - 4;
        let token = signed(json!({"sub": "ann", "exp": exp}));
        let ann = auth.verify_buyer(&token, &ring).expect("valid now");
        assert_eq!(ann.user.as_str(), "ann");
        assert_eq!(auth.verify_buyer(&token, &ring), Some(ann), "remembered");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        assert_eq!(auth.verify_buyer(&token, &ring), None, "expired");
        assert_eq!(auth.verify_user(&token), None);

        let later = (Utc::now() + Duration::minutes(1)).timestamp();
        let exp = (Utc::now() + Duration::minutes(5)).timestamp();
        let early = signed(json!({"sub": "bob", "exp": exp, "nbf": later}));
        assert_eq!(auth.verify_buyer(&early, &ring), None);
        assert_eq!(auth.verify_buyer(&early, &ring), None, "not remembered");
        let forged = format!("{}x", signed(json!({"sub": "cy", "exp": exp})));
        assert_eq!(auth.verify_buyer(&forged, &ring), None);
    }

    #[test]
    fn a_subject_of_white_space_is_no_user() {
        let exp = (Utc::now() + Duration::minutes(5)).timestamp();
        for sub in [" ", "ann ", " ann"] {
            assert_eq!(
                auth().verify_user(&signed(json!({"sub": sub, "exp": exp}))),
                None,
                "{sub:?}"
            );
        }
    }

    #[test]
    fn only_the_exact_admin_token_is_admin() {
        let auth = auth();
        assert!(auth.is_admin("admin-secret"));
        assert!(!auth.is_admin("admin-secre"));
        assert!(!auth.is_admin("admin-secret2"));
    }

    #[test]
    fn a_user_token_is_no_pass_and_a_pass_no_user_token() {
        let shared = Secret::new("shared");
        let (passes, auth) = (
            boxoffice_service::pass::Passes::new(&shared),
            Auth::new(&Secret::new("admin"), &shared),
        );
        let (event, alice) = (
            boxoffice_core::ids::EventId::new(),
            UserId::parse("alice").unwrap(),
        );
        let until = Utc::now() + chrono::Duration::minutes(10);
        let token = auth.mint_user(&alice, until);
        assert_eq!(
            passes.verify(&token, event, &alice),
            Err(boxoffice_service::pass::Refused::Invalid)
        );
        let pass = passes.mint(event, &alice, uuid::Uuid::new_v4(), until);
        assert_eq!(auth.verify_user(&pass), None);
    }
}
