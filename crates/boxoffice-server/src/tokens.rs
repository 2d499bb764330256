//! Tokens: the admin bearer token, and HS256 user tokens (`sub`, `exp`, and optionally
//! `channel`), verified and minted.
//!
//! A ticketing platform mints user tokens for its own logged-in users with the shared
//! secret (with `channel` for the buyers of a partner who sells an event's channel
//! seats); for demos and tests `POST /v1/sessions` mints anonymous ones.

use boxoffice_core::ids::{OrganizationId, UserId};
use boxoffice_service::keyring::KeyRing;
use boxoffice_service::Secret;
use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
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

/// Verifies admin tokens and user tokens, and mints user tokens.
pub struct Auth {
    admin_token: Secret,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
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
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).ok()?;
        checked(data.claims)
    }

    /// The buyer a valid, unexpired token names, their channel, and the organization whose
    /// buyer they are: a token naming a signing key (`kid`) is checked with that key, and
    /// only under its algorithm (`alg` must be the key's), and belongs to its organization;
    /// one without is checked with `BOXOFFICE_JWT_SECRET` and belongs to `default`.
    pub fn verify_buyer(&self, token: &str, ring: &KeyRing) -> Option<Verified> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        let Some(kid) = header.kid else {
            let (user, channel) = self.verify(token)?;
            return Some(Verified {
                user,
                channel,
                organization: OrganizationId::DEFAULT,
            });
        };
        let key = ring.signing_key(&kid)?;
        if header.alg != key.algorithm {
            return None;
        }
        let mut validation = self.validation.clone();
        validation.algorithms = vec![key.algorithm];
        let data = jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation).ok()?;
        let (user, channel) = checked(data.claims)?;
        Some(Verified {
            user,
            channel,
            organization: key.organization_id,
        })
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
