//! Organizations and their keys: creating organizations (a platform key), reading them, and
//! creating, listing and revoking keys. Another organization answers 404, exactly as one
//! that does not exist.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{
    KeyBody, KeyCreated, KeyList, KeyView, MeView, OrganizationBody, OrganizationList,
    OrganizationView, ScannerPairing, ScannerPairingBody, SigningKeyBody, SigningKeyCreated,
    SigningKeyList, SigningKeyView,
};
use boxoffice_core::access::{Right, Role};
use boxoffice_core::ids::KeyId;
use boxoffice_service::organizations::{self, Organization};
use boxoffice_store::pg::organizations::StoredKey;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::extract::{Json, JsonWithLines};
use crate::state::AppState;

fn view(organization: Organization) -> OrganizationView {
    OrganizationView {
        id: organization.organization_id,
        name: organization.name,
        slug: organization.slug,
        created_at: organization.created_at,
    }
}

fn key_view(key: StoredKey) -> KeyView {
    KeyView {
        id: key.key_id,
        name: key.name,
        role: key.role,
        prefix: key.prefix,
        created_at: key.created_at,
        expires_at: key.expires_at,
        last_used_at: key.last_used_at,
        revoked_at: key.revoked_at,
        events: key.events,
    }
}

/// The organization a path names (its id or slug), if the caller sees it; else 404.
pub(crate) async fn visible(
    state: &AppState,
    staff: &Staff,
    id: &str,
) -> Result<Organization, ApiError> {
    let organization = organizations::find(state, id).await?;
    if staff.sees(organization.organization_id) {
        Ok(organization)
    } else {
        Err(boxoffice_service::Error::OrganizationNotFound.into())
    }
}

/// The organization a list's `?organization=` names (its id or slug), if any; a name of
/// none answers 404.
pub(crate) async fn named(
    state: &AppState,
    named: Option<&str>,
) -> Result<Option<Organization>, ApiError> {
    match named {
        Some(named) => Ok(Some(organizations::find(state, named).await?)),
        None => Ok(None),
    }
}

/// The key the call is made with: its name, role and organization, and the rights its role
/// has, so that a console shows what the key may do and nothing more.
#[utoipa::path(get, path = "/v1/me", tag = "organizations",
    security(("admin" = [])),
    responses(
        (status = 200, description = "The calling key", body = MeView),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A buyer's token, not a key", body = Problem),
    ))]
pub async fn me(staff: Staff) -> axum::Json<MeView> {
    axum::Json(MeView {
        key_id: staff.key_id,
        name: staff.key_name,
        role: staff.role,
        organization_id: staff.organization_id,
        rights: Right::ALL
            .into_iter()
            .filter(|r| staff.role.may(*r))
            .map(|r| r.as_str().to_owned())
            .collect(),
    })
}

/// Creates an organization (a platform key).
#[utoipa::path(post, path = "/v1/organizations", tag = "organizations", request_body = OrganizationBody,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = OrganizationView),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "Not a platform key (`required_roles`)", body = Problem),
        (status = 409, description = "Another organization has the slug (`slug_taken`)", body = Problem),
        (status = 422, description = "A name or slug that is not valid", body = Problem),
    ))]
pub async fn create_organization(
    staff: Staff,
    State(state): State<AppState>,
    Json(body): Json<OrganizationBody>,
) -> Result<impl IntoResponse, ApiError> {
    let organization =
        organizations::create(&state, &body.name, body.slug.as_deref(), &staff.actor()).await?;
    Ok((
        StatusCode::CREATED,
        [(
            header::LOCATION,
            format!("/v1/organizations/{}", organization.organization_id),
        )],
        axum::Json(view(organization)),
    ))
}

/// The organizations the key sees: a platform key every one, any other its own.
#[utoipa::path(get, path = "/v1/organizations", tag = "organizations",
    security(("admin" = [])),
    responses(
        (status = 200, description = "Organizations", body = OrganizationList),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
    ))]
pub async fn list_organizations(
    staff: Staff,
    State(state): State<AppState>,
) -> Result<axum::Json<OrganizationList>, ApiError> {
    let organizations = organizations::list(&state, staff.scope()).await?;
    Ok(axum::Json(OrganizationList {
        organizations: organizations.into_iter().map(view).collect(),
    }))
}

/// One organization, by id or slug.
#[utoipa::path(get, path = "/v1/organizations/{id}", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 200, description = "The organization", body = OrganizationView),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
    ))]
pub async fn get_organization(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<OrganizationView>, ApiError> {
    Ok(axum::Json(view(visible(&state, &staff, &id).await?)))
}

/// Makes a key of the organization; the key is in this answer and nowhere else, ever.
/// Only a platform key makes a `platform` key.
#[utoipa::path(post, path = "/v1/organizations/{id}/keys", tag = "organizations", request_body = KeyBody,
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 201, description = "Created; `key` shown this once", body = KeyCreated),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys, or an admin key asking for a platform key (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
        (status = 422, description = "A name, role or `expires_at` (in the past) that is not valid, or `events` on a role other than `checkin` or naming another organization's", body = Problem),
    ))]
pub async fn create_key(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<KeyBody>,
) -> Result<impl IntoResponse, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    if body.role == Role::Platform.as_str() && staff.role != Role::Platform {
        return Err(ApiError::RoleForbidden(&[Role::Platform]));
    }
    let made = organizations::create_key(
        &state,
        organization.organization_id,
        &body.name,
        &body.role,
        body.expires_at,
        body.events,
        &staff.actor(),
    )
    .await?;
    // The new key works on this instance at once, not at the next refresh.
    state.keys.refresh(&state.pool).await?;
    let key = made.stored;
    Ok((
        StatusCode::CREATED,
        axum::Json(KeyCreated {
            id: key.key_id,
            name: key.name,
            role: key.role,
            key: made.key,
            prefix: key.prefix,
            created_at: key.created_at,
            expires_at: key.expires_at,
            events: key.events,
        }),
    ))
}

/// The organization's keys, oldest first, revoked ones too; never a key itself.
#[utoipa::path(get, path = "/v1/organizations/{id}/keys", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 200, description = "Keys", body = KeyList),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
    ))]
pub async fn list_keys(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<KeyList>, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let keys = organizations::keys(&state, organization.organization_id).await?;
    Ok(axum::Json(KeyList {
        keys: keys.into_iter().map(key_view).collect(),
    }))
}

/// Revokes a key: it answers 401 on every instance within a second.
#[utoipa::path(delete, path = "/v1/organizations/{id}/keys/{key_id}", tag = "organizations",
    security(("admin" = [])),
    params(
        ("id" = String, Path, description = "Organization id or slug"),
        ("key_id" = String, Path, description = "Key id"),
    ),
    responses(
        (status = 204, description = "Revoked (or it was already)"),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization or key, or another organization's", body = Problem),
    ))]
pub async fn revoke_key(
    staff: Staff,
    State(state): State<AppState>,
    Path((id, key_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let key = KeyId::parse(&key_id).ok_or(boxoffice_service::Error::KeyNotFound)?;
    organizations::revoke_key(&state, organization.organization_id, key, &staff.actor()).await?;
    state.keys.refresh(&state.pool).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Adds a buyer-token signing key: `HS256` (its secret in this answer only) or `EdDSA` with
/// the platform's Ed25519 public key. A token naming it (`kid`) is valid for this
/// organization's events, seasons, orders and waiting rooms only.
#[utoipa::path(post, path = "/v1/organizations/{id}/signing-keys", tag = "organizations", request_body = SigningKeyBody,
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 201, description = "Added; an HS256 `secret` shown this once", body = SigningKeyCreated),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
        (status = 422, description = "An unknown algorithm, or a PEM that is not an Ed25519 public key", body = Problem),
    ))]
pub async fn create_signing_key(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonWithLines(body): JsonWithLines<SigningKeyBody>,
) -> Result<impl IntoResponse, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let made = organizations::create_signing_key(
        &state,
        organization.organization_id,
        &body.algorithm,
        body.public_key.as_deref(),
        &staff.actor(),
    )
    .await?;
    // Tokens it signs work on this instance at once.
    state.keys.refresh(&state.pool).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(SigningKeyCreated {
            kid: made.stored.kid,
            algorithm: made.stored.algorithm,
            secret: made.secret,
            created_at: made.stored.created_at,
        }),
    ))
}

/// The organization's signing keys, oldest first, retired ones too; never a secret.
#[utoipa::path(get, path = "/v1/organizations/{id}/signing-keys", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 200, description = "Signing keys", body = SigningKeyList),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
    ))]
pub async fn list_signing_keys(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<SigningKeyList>, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let keys = organizations::signing_keys(&state, organization.organization_id).await?;
    Ok(axum::Json(SigningKeyList {
        signing_keys: keys
            .into_iter()
            .map(|k| SigningKeyView {
                kid: k.kid,
                algorithm: k.algorithm,
                created_at: k.created_at,
                retired_at: k.retired_at,
            })
            .collect(),
    }))
}

/// Retires a signing key: tokens it signed answer 401 on every instance within a second.
#[utoipa::path(delete, path = "/v1/organizations/{id}/signing-keys/{kid}", tag = "organizations",
    security(("admin" = [])),
    params(
        ("id" = String, Path, description = "Organization id or slug"),
        ("kid" = String, Path, description = "The signing key's kid"),
    ),
    responses(
        (status = 204, description = "Retired (or it was already)"),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization or signing key, or another organization's", body = Problem),
    ))]
pub async fn retire_signing_key(
    staff: Staff,
    State(state): State<AppState>,
    Path((id, kid)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    organizations::retire_signing_key(&state, organization.organization_id, &kid, &staff.actor())
        .await?;
    state.keys.refresh(&state.pool).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pairs a scanner with the event's door: makes a `checkin` key for this event alone
/// (expiring a day after it starts) and answers the link, and its QR code, that opens the
/// scanner on a phone signed in with it. The key is in this answer and nowhere else.
#[utoipa::path(post, path = "/v1/events/{id}/scanner-pairings", tag = "organizations", request_body = ScannerPairingBody,
    security(("admin" = [])),
    params(("id" = String, Path, description = "Event id")),
    responses(
        (status = 201, description = "Paired; `key` shown this once", body = ScannerPairing),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage keys (`required_roles`)", body = Problem),
        (status = 404, description = "No such event, or another organization's", body = Problem),
        (status = 422, description = "An origin that is not http(s), or an event that started more than a day ago", body = Problem),
    ))]
pub async fn pair_scanner(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<ScannerPairingBody>,
) -> Result<impl IntoResponse, ApiError> {
    let event = super::event_id(&id)?;
    let pairing = organizations::pair_scanner(&state, event, &body.origin, &staff.actor()).await?;
    state.keys.refresh(&state.pool).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(ScannerPairing {
            key_id: pairing.made.stored.key_id,
            key: pairing.made.key,
            expires_at: pairing.made.stored.expires_at,
            url: pairing.url,
            qr_svg: pairing.qr_svg,
        }),
    ))
}
