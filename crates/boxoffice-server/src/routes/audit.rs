//! The audit log of an organization: read with filters and a cursor, newest first. Nothing
//! here writes; each change writes its own entry.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use boxoffice_api::{AuditActor, AuditEntry, AuditList, AuditTarget};
use boxoffice_core::ids::KeyId;
use boxoffice_core::validation::ValidationErrors;
use boxoffice_service::audit::{self, Entry, Filters};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::state::AppState;

/// The query of `GET /v1/organizations/{id}/audit`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this action (`event.created`, `key.revoked`, …).
    action: Option<String>,
    /// Only entries about this target (its id).
    target: Option<String>,
    /// Only entries made with this key (its id).
    actor: Option<String>,
    /// Only entries at or after this time (RFC 3339).
    since: Option<String>,
    /// Entries a page, 1–500 (50 when absent).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next_cursor` of the page before.
    cursor: Option<String>,
}

fn view(entry: Entry) -> AuditEntry {
    AuditEntry {
        id: entry.entry_id,
        at: entry.at,
        organization_id: entry.organization_id,
        actor: AuditActor {
            key_id: entry.actor_key_id,
            key_name: entry.actor_key_name,
            role: entry.actor_role,
        },
        action: entry.action,
        target: AuditTarget {
            type_: entry.target_type,
            id: entry.target_id,
        },
        changes: entry.changes,
        request_id: entry.request_id,
    }
}

/// The organization's audit log, newest first: one entry per change made with a key.
#[utoipa::path(get, path = "/v1/organizations/{id}/audit", tag = "organizations",
    security(("admin" = [])),
    params(("id" = String, Path, description = "Organization id or slug"), AuditQuery),
    responses(
        (status = 200, description = "A page of entries", body = AuditList),
        (status = 401, description = "Missing, malformed, unknown, revoked or expired key", body = Problem),
        (status = 403, description = "A role that may not read the log (`required_roles`)", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
        (status = 422, description = "A filter, limit or cursor that is not valid", body = Problem),
    ))]
pub async fn list_audit(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<axum::Json<AuditList>, ApiError> {
    let organization = super::organizations::visible(&state, &staff, &id).await?;
    let Ok(Query(query)) = query else {
        return Err(ApiError::invalid("query", "a parameter is not valid"));
    };
    let mut errors = ValidationErrors::default();
    let actor = query.actor.as_deref().map(KeyId::parse);
    errors.check(!matches!(actor, Some(None)), "actor", "must be a key id");
    let since = query.since.as_deref().map(DateTime::parse_from_rfc3339);
    errors.check(
        !matches!(since, Some(Err(_))),
        "since",
        "must be an RFC 3339 time",
    );
    let before = query.cursor.as_deref().map(audit::cursor);
    errors.check(
        !matches!(before, Some(None)),
        "cursor",
        "must be a next_cursor this log gave",
    );
    errors.into_result(())?;
    let filters = Filters {
        action: query.action,
        target: query.target,
        actor: actor.flatten(),
        since: since.and_then(Result::ok).map(|t| t.with_timezone(&Utc)),
        before: before.flatten(),
    };
    let (entries, next_cursor) = audit::list(
        &state,
        organization.organization_id,
        &filters,
        query.limit.unwrap_or(50),
    )
    .await?;
    Ok(axum::Json(AuditList {
        entries: entries.into_iter().map(view).collect(),
        next_cursor,
    }))
}
