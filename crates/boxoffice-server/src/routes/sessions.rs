//! `POST /v1/sessions`: anonymous buyer sessions for demos and tests.

use boxoffice_api::SessionCreated;

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{SubsecRound, Utc};

use crate::client::ClientAddress;
use crate::error::{ApiError, Problem};
use crate::state::AppState;
use crate::tokens::SESSION_TTL;

/// Mints an anonymous user and a token for it, unless anonymous sessions are disabled.
#[utoipa::path(post, path = "/v1/sessions", tag = "sessions",
    responses(
        (status = 201, description = "Created", body = SessionCreated),
        (status = 404, description = "Anonymous sessions are disabled", body = Problem),
        (status = 429, description = "Too many sessions from this address; see Retry-After", body = Problem),
    ))]
pub async fn create_session(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
) -> Result<(StatusCode, axum::Json<SessionCreated>), ApiError> {
    if !state.anonymous_sessions() {
        return Err(ApiError::NotFound {
            code: "not_found",
            detail: "anonymous sessions are disabled on this server".into(),
        });
    }
    state
        .rate_limits
        .check(&state.rate_limits.sessions, &client.to_string())
        .await
        .map_err(ApiError::RateLimited)?;
    let user = state.anonymous_users().user_for(client);
    // JWT expiry has whole-second precision; say exactly what the token carries.
    let expires_at = (Utc::now() + SESSION_TTL).trunc_subsecs(0);
    let token = state.auth().mint_user(&user, expires_at);
    Ok((
        StatusCode::CREATED,
        axum::Json(SessionCreated {
            user_id: user.to_string(),
            token,
            expires_at,
        }),
    ))
}
