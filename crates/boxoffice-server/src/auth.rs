//! Authentication: the extractors that tell who a request comes from (an admin, a buyer,
//! either, and the buyer's sales channel), by the bearer token the state's
//! [`crate::tokens::Auth`] verifies.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use boxoffice_core::ids::UserId;

use crate::error::ApiError;
use crate::state::AppState;

fn bearer(parts: &Parts) -> Result<&str, ApiError> {
    let value = parts
        .headers
        .get(AUTHORIZATION)
        .ok_or(ApiError::Unauthorized("missing Authorization header"))?;
    value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(ApiError::Unauthorized(
            "expected Authorization: Bearer <token>",
        ))
}

/// An admin or a buyer, for calls either may make (an order is read or cancelled by its
/// owner or an admin). Missing or invalid token → 401.
#[derive(Debug, Clone)]
pub enum Caller {
    /// The admin token.
    Admin,
    /// A user token.
    User(UserId),
}

impl Caller {
    /// The acting user, or `None` for an admin.
    pub fn user(&self) -> Option<&UserId> {
        match self {
            Caller::Admin => None,
            Caller::User(user) => Some(user),
        }
    }

    /// Who the bearer token says the caller is.
    fn authenticate(parts: &Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(parts)?;
        if state.auth().is_admin(token) {
            return Ok(Caller::Admin);
        }
        state
            .auth()
            .verify_user(token)
            .map(Caller::User)
            .ok_or(ApiError::Unauthorized("invalid or expired token"))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Caller::authenticate(parts, state)
    }
}

/// An admin caller. Missing or invalid token → 401; a valid user token → 403.
#[derive(Debug, Clone, Copy)]
pub struct Admin;

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match Caller::authenticate(parts, state)? {
            Caller::Admin => Ok(Admin),
            Caller::User(_) => Err(ApiError::Forbidden("this call needs the admin token")),
        }
    }
}

/// A buyer: the user a valid user token names. Missing, invalid or expired token → 401, and
/// so is the admin token, which names no buyer.
#[derive(Debug, Clone)]
pub struct Buyer(pub UserId);

impl FromRequestParts<AppState> for Buyer {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match Caller::authenticate(parts, state)? {
            Caller::User(user) => Ok(Buyer(user)),
            Caller::Admin => Err(ApiError::Unauthorized("this call needs a user token")),
        }
    }
}

/// The sales channel the caller's user token puts them in (its `channel` claim), if any.
/// Never refuses a request: without a valid user token the caller is in no channel (a
/// call that needs a buyer says so through [`Buyer`]).
#[derive(Debug, Clone, Default)]
pub struct TokenChannel(pub Option<String>);

impl FromRequestParts<AppState> for TokenChannel {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let channel = bearer(parts)
            .ok()
            .and_then(|token| state.auth().verify(token))
            .and_then(|(_, channel)| channel);
        Ok(TokenChannel(channel))
    }
}
