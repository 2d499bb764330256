//! `POST /v1/venues`, `GET /v1/venues`, `GET /v1/venues/{id}`, `PUT /v1/venues/{id}` (a
//! venue no event uses yet, as the console's designer saves it), and venues imported from a
//! pretix plan or a CSV file and exported as a pretix plan.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use boxoffice_api::{VenueCreated, VenueList, VenueListItem, VenuePreview, VenueView};
use boxoffice_core::venue::pretix::{Object, Plan};
use boxoffice_core::venue::{spreadsheet, VenueLayout, VenueSpec};
use futures::TryStreamExt;
use http_body_util::BodyExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Staff;
use crate::error::{ApiError, Problem};
use crate::extract::{declares, parse_json, Json};
use crate::state::AppState;
use boxoffice_core::ids::OrganizationId;
use boxoffice_service::organizations::Actor;

/// Creates a venue: sections, rows given by seat count or as explicit seats.
#[utoipa::path(post, path = "/v1/venues", tag = "venues", request_body = VenueSpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = VenueCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 413, description = "Body too large", body = Problem),
        (status = 404, description = "`organization_id` names no organization, or another one than the key's", body = Problem),
        (status = 422, description = "Invalid venue", body = Problem),
    ))]
pub async fn create_venue(
    staff: Staff,
    State(state): State<AppState>,
    Json(spec): Json<VenueSpec>,
) -> Result<impl IntoResponse, ApiError> {
    let organization = staff.placing(&state, spec.organization_id).await?;
    let layout = spec.into_layout()?;
    created(&state, organization, &layout, &staff.actor()).await
}

/// Replaces a venue no event or season uses yet with the one given (its name, sections,
/// rows, seats, shapes and focal point), as the console's designer saves a drawing. A
/// venue in use keeps its seats (409 `venue_in_use`): save the drawing as a new venue.
#[utoipa::path(put, path = "/v1/venues/{id}", tag = "venues", request_body = VenueSpec,
    params(("id" = String, Path, description = "Venue id")),
    security(("admin" = [])),
    responses(
        (status = 200, description = "Replaced", body = VenueCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token, or a key without `write_catalog`", body = Problem),
        (status = 404, description = "No such venue", body = Problem),
        (status = 409, description = "`venue_in_use`: an event or a season uses the venue", body = Problem),
        (status = 413, description = "Body too large", body = Problem),
        (status = 422, description = "Invalid venue, or an `organization_id` (a venue stays in its organization)", body = Problem),
    ))]
pub async fn replace_venue(
    staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(spec): Json<VenueSpec>,
) -> Result<axum::Json<VenueCreated>, ApiError> {
    let id = super::venue_id(&id)?;
    if spec.organization_id.is_some() {
        return Err(ApiError::invalid(
            "organization_id",
            "a venue stays in its organization: leave organization_id out",
        ));
    }
    let layout = spec.into_layout()?;
    boxoffice_service::venues::replace(&state, id, &layout, &staff.actor()).await?;
    Ok(axum::Json(VenueCreated {
        id,
        seat_count: layout.seat_count(),
    }))
}

/// Stores a venue of `organization` and answers 201 with its id.
async fn created(
    state: &AppState,
    organization: OrganizationId,
    layout: &VenueLayout,
    actor: &Actor,
) -> Result<impl IntoResponse, ApiError> {
    let id = boxoffice_service::venues::create(state, organization, layout, actor).await?;
    let created = VenueCreated {
        id,
        seat_count: layout.seat_count(),
    };
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/venues/{id}"))],
        axum::Json(created),
    ))
}

/// The query of `POST /v1/venues/import`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// `pretix` (a pretix seating plan, `application/json`) or `csv` (`text/csv`).
    #[param(pattern = "^(pretix|csv)$")]
    format: Option<String>,
    /// The venue's name: needed for CSV; for a pretix plan, instead of the plan's.
    name: Option<String>,
    /// `true`: check the file and answer the venue it would create (200), saving nothing.
    dry_run: Option<bool>,
    /// The organization the venue belongs to (a platform key; `default` when absent).
    organization_id: Option<OrganizationId>,
}

/// Creates a venue from a pretix seating plan or a CSV file of seats.
///
/// A pretix plan (schema version 0.0.1): each zone with seats becomes a section, each
/// `row_number` a row label, each `seat_number` a seat number; a seat sits at its zone's
/// position plus its row's plus its own; its category is its `category` (with the marks
/// `[accessible]`, `[companion]`, `[restricted view]` read as attributes) and its
/// `seat_guid` its `external_id`; areas become shapes. Errors name the path in the plan.
///
/// CSV: a header line naming `section,row,number,x,y` and optionally
/// `category,accessible,companion,restricted_view`, in any order; errors name the line.
#[utoipa::path(post, path = "/v1/venues/import", tag = "venues",
    params(ImportQuery),
    request_body(content(
        (Plan = "application/json"),
        (String = "text/csv"),
    )),
    security(("admin" = [])),
    responses(
        (status = 200, description = "With `dry_run=true`: the venue it would create, not saved", body = VenuePreview),
        (status = 201, description = "Created", body = VenueCreated),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 413, description = "Body too large", body = Problem),
        (status = 415, description = "A body neither `application/json` nor `text/csv`", body = Problem),
        (status = 404, description = "`organization_id` names no organization, or another one than the key's", body = Problem),
        (status = 422, description = "Invalid plan or file; `format` missing, unknown, or not the body's type", body = Problem),
    ))]
pub async fn import_venue(
    staff: Staff,
    State(state): State<AppState>,
    query: Result<Query<ImportQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<axum::response::Response, ApiError> {
    let Ok(Query(ImportQuery {
        format,
        name,
        dry_run,
        organization_id,
    })) = query
    else {
        return Err(ApiError::invalid("format", "must be pretix or csv"));
    };
    let organization = staff.placing(&state, organization_id).await?;
    let pretix = match format.as_deref() {
        Some("pretix") => true,
        Some("csv") => false,
        _ => return Err(ApiError::invalid("format", "must be pretix or csv")),
    };
    // Both types are this operation's; a body of one sent with the other's format is a
    // mistake in the query.
    let json = declares(&headers, mime::APPLICATION, mime::JSON);
    let csv = declares(&headers, mime::TEXT, mime::CSV);
    if !json && !csv {
        return Err(ApiError::UnsupportedMediaType(
            "application/json (format=pretix) or text/csv (format=csv)",
        ));
    }
    if pretix != json {
        let message = if pretix {
            "format=pretix reads an application/json body; this one is text/csv"
        } else {
            "format=csv reads a text/csv body; this one is application/json"
        };
        return Err(ApiError::invalid("format", message));
    }
    // The body is read under the import's own limit, and a CSV file as it arrives (a
    // buffer at a time, never held whole); a pretix plan is parsed whole, since a syntax
    // error anywhere in it must win over a shape error found first.
    let body = http_body_util::Limited::new(body, state.max_import_bytes());
    let layout = if pretix {
        let bytes = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return Err(unreadable(&*e)),
        };
        // Reading 200,000 seats takes a while: off the threads that serve the sale.
        blocking(move || {
            let Object(plan) = parse_json::<Object<Plan>>(&bytes)?;
            Ok(plan.into_layout(name)?)
        })
        .await?
    } else {
        let name =
            name.ok_or_else(|| ApiError::invalid("name", "a CSV file needs the venue's name"))?;
        let stream = http_body_util::BodyDataStream::new(body).map_err(std::io::Error::other);
        let mut input = Recorded::new(tokio_util::io::SyncIoBridge::new(
            tokio_util::io::StreamReader::new(stream),
        ));
        blocking(move || {
            let read = spreadsheet::read_csv(&mut input, &name);
            // The file's errors are the client's only if the body itself arrived.
            match input.error {
                Some(e) => Err(e.get_ref().map_or(
                    ApiError::MalformedJson(format!("could not read the body: {e}")),
                    |e| unreadable(e),
                )),
                None => Ok(read?),
            }
        })
        .await?
    };
    if dry_run == Some(true) {
        let preview = VenuePreview {
            seat_count: layout.seat_count(),
            layout,
        };
        return Ok(axum::Json(preview).into_response());
    }
    Ok(created(&state, organization, &layout, &staff.actor())
        .await?
        .into_response())
}

/// Runs `read` off the threads that serve the sale.
async fn blocking(
    read: impl FnOnce() -> Result<VenueLayout, ApiError> + Send + 'static,
) -> Result<VenueLayout, ApiError> {
    tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| ApiError::Internal(format!("reading the import failed: {e}")))?
}

/// The answer to a body that could not be read whole: 413 past the import's limit, else
/// 400 (the client went away or sent a broken body).
fn unreadable(e: &(dyn std::error::Error + 'static)) -> ApiError {
    if e.is::<http_body_util::LengthLimitError>() {
        ApiError::PayloadTooLarge
    } else {
        ApiError::MalformedJson(format!("could not read the body: {e}"))
    }
}

/// A reader that keeps the first error its source gave, so that a body cut short (or past
/// its limit) is told apart from a file that is wrong.
struct Recorded<R> {
    source: R,
    error: Option<std::io::Error>,
}

impl<R> Recorded<R> {
    fn new(source: R) -> Self {
        Self {
            source,
            error: None,
        }
    }
}

impl<R: std::io::Read> std::io::Read for Recorded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.source.read(buf).map_err(|e| {
            let told = std::io::Error::new(e.kind(), e.to_string());
            self.error.get_or_insert(e);
            told
        })
    }
}

/// The query of `GET /v1/venues/{id}/export`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `pretix`, the only format written.
    #[param(pattern = "^pretix$")]
    format: Option<String>,
}

/// The venue as a pretix seating plan (schema version 0.0.1): one zone per section (its
/// `zone_id` the section's id), one category per seat category (attributes as marks, a
/// seat without a category in the category `""`), `seat_guid` the seat's `external_id`
/// when it has one, else its id. Importing it gives back the same seats.
#[utoipa::path(get, path = "/v1/venues/{id}/export", tag = "venues",
    params(("id" = String, Path, description = "Venue id"), ExportQuery),
    security(("admin" = [])),
    responses(
        (status = 200, description = "The plan", body = Plan),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such venue", body = Problem),
        (status = 422, description = "`format` missing or not `pretix`", body = Problem),
    ))]
pub async fn export_venue(
    _staff: Staff,
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<ExportQuery>, QueryRejection>,
) -> Result<axum::Json<Plan>, ApiError> {
    if !matches!(&query, Ok(Query(ExportQuery { format: Some(f) })) if f == "pretix") {
        return Err(ApiError::invalid("format", "must be pretix"));
    }
    let id = super::venue_id(&id)?;
    let layout = boxoffice_service::venues::get(&state, id)
        .await?
        .ok_or_else(super::venue_not_found)?;
    Ok(axum::Json(Plan::from_layout(&layout)))
}

/// The query of `GET /v1/venues`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenuesQuery {
    /// One organization's venues only, by its id or slug (a key of an organization: its
    /// own; another answers 404).
    organization: Option<String>,
}

/// Every venue the key sees, newest first, with its seat count; with `?organization=`,
/// one organization's.
#[utoipa::path(get, path = "/v1/venues", tag = "venues",
    security(("admin" = [])),
    params(VenuesQuery),
    responses(
        (status = 200, description = "Venues", body = VenueList),
        (status = 401, description = "Missing or invalid token", body = Problem),
        (status = 403, description = "A user token", body = Problem),
        (status = 404, description = "No such organization, or another one's", body = Problem),
    ))]
pub async fn list_venues(
    staff: Staff,
    State(state): State<AppState>,
    query: Result<axum::extract::Query<VenuesQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<VenueList>, ApiError> {
    let Ok(axum::extract::Query(query)) = query else {
        return Err(ApiError::invalid("organization", "name one organization"));
    };
    let scope = match query.organization.as_deref() {
        Some(named) => Some(
            super::organizations::visible(&state, &staff, named)
                .await?
                .organization_id,
        ),
        None => staff.scope(),
    };
    let venues = boxoffice_service::venues::list(&state, scope)
        .await?
        .into_iter()
        .map(|(id, name, seat_count)| VenueListItem {
            id,
            name,
            seat_count,
        })
        .collect();
    Ok(axum::Json(VenueList { venues }))
}

/// A venue with its sections, rows and seats.
#[utoipa::path(get, path = "/v1/venues/{id}", tag = "venues",
    params(("id" = String, Path, description = "Venue id")),
    responses(
        (status = 200, description = "The venue", body = VenueView),
        (status = 404, description = "No such venue", body = Problem),
    ))]
pub async fn get_venue(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<VenueView>, ApiError> {
    let id = super::venue_id(&id)?;
    let layout = boxoffice_service::venues::get(&state, id)
        .await?
        .ok_or_else(super::venue_not_found)?;
    Ok(axum::Json(VenueView {
        id,
        seat_count: layout.seat_count(),
        layout,
    }))
}
