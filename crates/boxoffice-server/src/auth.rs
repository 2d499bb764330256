//! Authentication: the extractors that tell who a request comes from (staff with a key, a
//! buyer, either, and the buyer's sales channel), by the bearer token: a key the services'
//! key ring holds, `BOXOFFICE_ADMIN_TOKEN`, or a buyer's token the state's
//! [`crate::tokens::Auth`] verifies.

use axum::extract::{FromRequestParts, MatchedPath, RawPathParams};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use boxoffice_core::access::Role;
use boxoffice_core::ids::{EventId, KeyId, OrganizationId, UserId};
use boxoffice_service::audit::By;
use boxoffice_service::organizations::{Actor, Owned};

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

/// A staff caller: the holder of a key, or of `BOXOFFICE_ADMIN_TOKEN` (a platform key),
/// whose role has the right the route needs ([`crate::access::ROUTES`]).
#[derive(Debug, Clone)]
pub struct Staff {
    /// The key's id; none for `BOXOFFICE_ADMIN_TOKEN`.
    pub key_id: Option<KeyId>,
    /// The key's name (`BOXOFFICE_ADMIN_TOKEN` for that token).
    pub key_name: String,
    /// The key's role.
    pub role: Role,
    /// The key's organization (the `default` one for `BOXOFFICE_ADMIN_TOKEN`).
    pub organization_id: OrganizationId,
    /// The request's id (`X-Request-Id`), for the audit log.
    pub request_id: Option<String>,
    /// The events the key is limited to (a scanner paired to a door), if it is.
    pub events: Option<Vec<EventId>>,
}

impl Staff {
    /// `BOXOFFICE_ADMIN_TOKEN`'s holder.
    fn platform_token() -> Self {
        Staff {
            key_id: None,
            key_name: "BOXOFFICE_ADMIN_TOKEN".to_owned(),
            role: Role::Platform,
            organization_id: OrganizationId::DEFAULT,
            request_id: None,
            events: None,
        }
    }

    /// Who this caller is, as the audit log records it.
    pub fn actor(&self) -> Actor {
        Actor {
            key_id: self.key_id,
            key_name: self.key_name.clone(),
            role: self.role,
            request_id: self.request_id.clone(),
        }
    }

    /// Whether this caller sees what belongs to `organization`: a platform key sees every
    /// organization, any other key its own.
    pub fn sees(&self, organization: OrganizationId) -> bool {
        self.role == Role::Platform || self.organization_id == organization
    }

    /// The organization whose things this caller sees, or none for a platform key (all).
    pub fn scope(&self) -> Option<OrganizationId> {
        (self.role != Role::Platform).then_some(self.organization_id)
    }

    /// For a key of an organization: whether `thing` is its organization's, else the 404
    /// of a `thing` that does not exist. A platform key sees everything (a missing thing is
    /// then the handler's 404). The route's own `{id}` is checked before the handler runs
    /// ([`TARGETS`]); this is for what a body names besides.
    pub async fn sees_thing(&self, state: &AppState, thing: Owned) -> Result<(), ApiError> {
        let Some(own) = self.scope() else {
            return Ok(());
        };
        if owner_of(state, thing).await? == Some(own) {
            return Ok(());
        }
        Err(not_found(thing))
    }

    /// The organization something this caller creates belongs to: a key of an
    /// organization creates in its own (a body naming another answers 404, as an
    /// organization that does not exist); a platform key in the one `asked`, or `default`.
    pub async fn placing(
        &self,
        state: &AppState,
        asked: Option<OrganizationId>,
    ) -> Result<OrganizationId, ApiError> {
        let missing = || ApiError::from(boxoffice_service::Error::OrganizationNotFound);
        match (self.scope(), asked) {
            (Some(own), None) => Ok(own),
            (Some(own), Some(asked)) if asked == own => Ok(own),
            (Some(_), Some(_)) => Err(missing()),
            (None, None) => Ok(OrganizationId::DEFAULT),
            (None, Some(asked)) => {
                boxoffice_service::organizations::find(state, &asked.to_string())
                    .await
                    .map_err(|_| missing())?;
                Ok(asked)
            }
        }
    }

    /// Whether the role may make this call (by the route it matched), else 403 with the
    /// roles that may. A staff route missing from the table is a bug: 500, never a call
    /// let through.
    fn allowed(mut self, parts: &Parts) -> Result<Self, ApiError> {
        self.request_id = parts
            .headers
            .get(&crate::middleware::REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let path = parts
            .extensions
            .get::<MatchedPath>()
            .map(MatchedPath::as_str)
            .unwrap_or_default();
        let right = crate::access::right_of(&parts.method, path).ok_or_else(|| {
            ApiError::Internal(format!(
                "{} {path} takes a staff key but is not in access::ROUTES",
                parts.method
            ))
        })?;
        if !self.role.may(right) {
            return Err(ApiError::RoleForbidden(right.roles()));
        }
        self.within_events(path, parts.uri.path())?;
        Ok(self)
    }

    /// For a key limited to events: a route on another event (`/v1/events/{id}…`) answers
    /// the 404 of an event that does not exist.
    fn within_events(&self, route: &str, path: &str) -> Result<(), ApiError> {
        let Some(events) = &self.events else {
            return Ok(());
        };
        if !route.starts_with("/v1/events/{id}") {
            return Ok(());
        }
        let named = path
            .split('/')
            .nth(3)
            .and_then(boxoffice_core::ids::parse_canonical_uuid)
            .map(EventId);
        match named {
            Some(event) if events.contains(&event) => Ok(()),
            _ => Err(ApiError::event_not_found()),
        }
    }
}

/// Staff or a buyer, for calls either may make (an order is read or cancelled by its
/// owner or by staff). Missing or invalid token → 401.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A staff key.
    Staff(Staff),
    /// A buyer's token, and the organization whose buyer it names.
    User(UserId, OrganizationId),
}

impl Caller {
    /// The acting user, or `None` for staff.
    pub fn user(&self) -> Option<&UserId> {
        match self {
            Caller::Staff(_) => None,
            Caller::User(user, _) => Some(user),
        }
    }

    /// Who the bearer token says the caller is: `BOXOFFICE_ADMIN_TOKEN`, a live key, or a
    /// buyer's token.
    fn authenticate(parts: &Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(parts)?;
        if state.auth().is_admin(token) {
            return Ok(Caller::Staff(Staff::platform_token()));
        }
        if token.starts_with(boxoffice_service::keyring::KEY_PREFIX) {
            let holder = state
                .keys
                .find(token)
                .ok_or(ApiError::Unauthorized("unknown, revoked or expired key"))?;
            return Ok(Caller::Staff(Staff {
                key_id: Some(holder.key_id),
                key_name: holder.name,
                role: holder.role,
                organization_id: holder.organization_id,
                request_id: None,
                events: holder.events,
            }));
        }
        state
            .auth()
            .verify_buyer(token, &state.keys)
            .map(|v| Caller::User(v.user, v.organization))
            .ok_or(ApiError::Unauthorized("invalid or expired token"))
    }
}

/// What a route's `{id}` names, from the id.
type OwnedBy = fn(uuid::Uuid) -> Owned;

/// What the `{id}` of every route under these prefixes names: something an organization
/// owns. Decided here once, as the route's right is checked, for every route: staff of
/// another organization see none of it (the 404 of a thing that does not exist), a buyer
/// of another organization acts on none of it (401). (`/v1/organizations/{id}` names an
/// organization by id or slug, and `/v1/tickets/{id}` a ticket: their handlers find it and
/// check its organization; a test keeps every staff route with an `{id}` in one of the
/// three.)
pub(crate) const TARGETS: [(&str, OwnedBy); 5] = [
    ("/v1/venues/{id}", Owned::Venue),
    ("/v1/events/{id}", Owned::Event),
    ("/v1/seasons/{id}", Owned::Season),
    ("/v1/orders/{id}", Owned::Order),
    ("/v1/bookings/{id}", Owned::Booking),
];

/// What the matched route's `{id}` names, when it is under [`TARGETS`] and the id is one
/// (anything else is no such thing, the handler's own 404).
async fn target(parts: &mut Parts, state: &AppState) -> Option<Owned> {
    let path = parts
        .extensions
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let (_, thing) = TARGETS
        .iter()
        .find(|(prefix, _)| path.starts_with(prefix))?;
    let params = RawPathParams::from_request_parts(parts, state).await.ok()?;
    let id = params
        .iter()
        .find(|(name, _)| *name == "id")
        .and_then(|(_, value)| boxoffice_core::ids::parse_canonical_uuid(value))?;
    Some(thing(id))
}

/// The organization that owns `thing` (an event's from the cache of event owners), or
/// none when there is no such thing.
async fn owner_of(state: &AppState, thing: Owned) -> Result<Option<OrganizationId>, ApiError> {
    Ok(match thing {
        Owned::Event(event) => state.event_owners.owner(state, EventId(event)).await?,
        other => boxoffice_service::organizations::owner(state, other).await?,
    })
}

/// The 404 of a `thing` that does not exist.
fn not_found(thing: Owned) -> ApiError {
    let missing = |code: &'static str, what: &str| ApiError::NotFound {
        code,
        detail: format!("no such {what}"),
    };
    match thing {
        Owned::Venue(_) => crate::routes::venue_not_found(),
        Owned::Event(_) => ApiError::event_not_found(),
        Owned::Season(_) => missing("not_found", "season"),
        Owned::Order(_) => missing("order_not_found", "order"),
        Owned::Booking(_) => missing("not_found", "booking"),
    }
}

impl Staff {
    /// For a key of an organization: the route's `{id}` ([`TARGETS`]) is its
    /// organization's, else the 404 of a thing that does not exist.
    async fn sees_target(self, parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if self.scope().is_some() {
            if let Some(thing) = target(parts, state).await {
                self.sees_thing(state, thing).await?;
            }
        }
        Ok(self)
    }
}

/// Whether a buyer of `organization` may act on what the route names: an event, a season,
/// an order or a booking of another organization answers 401 (their token is not valid
/// there). Something that does not exist is the handler's 404.
async fn buyer_may_act(
    parts: &mut Parts,
    state: &AppState,
    organization: OrganizationId,
) -> Result<(), ApiError> {
    let Some(thing) = target(parts, state).await else {
        return Ok(());
    };
    match owner_of(state, thing).await? {
        Some(owner) if owner != organization => Err(ApiError::Unauthorized(
            "this buyer's token is of another organization",
        )),
        _ => Ok(()),
    }
}

/// Who acts on an order or a booking, owned for the length of a call.
#[derive(Debug, Clone)]
pub enum Acting {
    /// Its buyer.
    Buyer(UserId),
    /// Staff, whose change is in the audit log.
    Staff(Actor),
}

impl Acting {
    /// Borrowed, as the services take it.
    pub fn by(&self) -> By<'_> {
        match self {
            Acting::Buyer(user) => By::Buyer(user),
            Acting::Staff(actor) => By::Staff(actor),
        }
    }
}

impl Caller {
    /// Who acts, as the services take it.
    pub fn acting(&self) -> Acting {
        match self {
            Caller::Staff(staff) => Acting::Staff(staff.actor()),
            Caller::User(user, _) => Acting::Buyer(user.clone()),
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match Caller::authenticate(parts, state)? {
            Caller::Staff(staff) => Ok(Caller::Staff(
                staff.allowed(parts)?.sees_target(parts, state).await?,
            )),
            Caller::User(user, organization) => {
                buyer_may_act(parts, state, organization).await?;
                Ok(Caller::User(user, organization))
            }
        }
    }
}

impl FromRequestParts<AppState> for Staff {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match Caller::authenticate(parts, state)? {
            Caller::Staff(staff) => staff.allowed(parts)?.sees_target(parts, state).await,
            Caller::User(..) => Err(ApiError::Forbidden("this call needs a staff key")),
        }
    }
}

/// A buyer: the user a valid user token names. Missing, invalid or expired token → 401, and
/// so is a staff key, which names no buyer, and a token of another organization than the
/// event's, season's, order's or booking's the route names.
#[derive(Debug, Clone)]
pub struct Buyer(pub UserId);

impl FromRequestParts<AppState> for Buyer {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match Caller::authenticate(parts, state)? {
            Caller::User(user, organization) => {
                buyer_may_act(parts, state, organization).await?;
                Ok(Buyer(user))
            }
            Caller::Staff(_) => Err(ApiError::Unauthorized("this call needs a user token")),
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
            .and_then(|token| state.auth().verify_buyer(token, &state.keys))
            .and_then(|verified| verified.channel);
        Ok(TokenChannel(channel))
    }
}
