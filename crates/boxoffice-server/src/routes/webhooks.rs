//! An organization's webhook: set (its secret shown in that answer only), read (never the
//! secret), removed. The relay delivers the organization's events to it.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use boxoffice_api::{WebhookBody, WebhookSet, WebhookView};
use boxoffice_service::webhooks;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::extract::Json;
use crate::routes::organizations::visible;
use crate::state::AppState;

/// Sets the organization's webhook, replacing the one it had. Events raised while it had
/// none are delivered from now on, in commit order per event.
#[utoipa::path(put, path = "/v1/organizations/{id}/webhook", tag = "organizations", request_body = WebhookBody,
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 200, description = "Set; the `secret` shown this once", body = WebhookSet),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage the webhook (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
        (status = 422, description = "A URL that is not an absolute http or https URL, or a secret too short", body = Problem),
    ))]
pub async fn set_webhook(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<WebhookBody>,
) -> Result<axum::Json<WebhookSet>, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let set = webhooks::set(
        &state,
        organization.organization_id,
        &body.url,
        body.secret.as_deref(),
        &staff.actor(),
    )
    .await?;
    Ok(axum::Json(WebhookSet {
        url: set.url,
        secret: set.secret,
    }))
}

/// The organization's webhook: its URL, never its secret.
#[utoipa::path(get, path = "/v1/organizations/{id}/webhook", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 200, description = "The webhook", body = WebhookView),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage the webhook (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, another one's, or no webhook set", body = Problem),
    ))]
pub async fn get_webhook(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<WebhookView>, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    let webhook = webhooks::find(&state, organization.organization_id).await?;
    Ok(axum::Json(WebhookView {
        url: webhook.url,
        created_at: webhook.created_at,
        updated_at: webhook.updated_at,
    }))
}

/// Removes the organization's webhook: its events wait (up to 7 days) until one is set.
#[utoipa::path(delete, path = "/v1/organizations/{id}/webhook", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug")),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not manage the webhook (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, another one's, or no webhook set", body = Problem),
    ))]
pub async fn delete_webhook(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let organization = visible(&state, &staff, &id).await?;
    webhooks::remove(&state, organization.organization_id, &staff.actor()).await?;
    Ok(StatusCode::NO_CONTENT)
}
