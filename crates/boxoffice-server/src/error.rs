//! The API's errors, rendered as `application/problem+json` (RFC 9457) with the stable
//! `code` values of docs/api.md.
//!
//! A long file, on purpose: one enum with every answer the API gives besides success, its
//! status, code and title beside it, the mapping from the service's and the store's errors,
//! and a test that pins each status and code. Split, a new variant could be added in one
//! place and forgotten in another; here the compiler's exhaustive matches are side by side.

pub use boxoffice_api::Problem;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use boxoffice_core::validation::{FieldError, ValidationErrors};
use boxoffice_store::StoreError;

/// Everything a handler can answer other than success. Each variant documents its status.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 401 `unauthorized`: no credentials, or credentials that are not valid.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// 403 `forbidden`: valid credentials that may not do this.
    #[error("{0}")]
    Forbidden(&'static str),
    /// 403 `forbidden`, with `required_roles`: a key whose role may not make this call.
    #[error("a key of another role may make this call: {}", roles_named(.0))]
    RoleForbidden(&'static [boxoffice_core::access::Role]),
    /// 403 `queue_required`: the event's waiting room is on, and the request shows no valid
    /// pass of this buyer.
    #[error("{0}")]
    QueueRequired(&'static str),
    /// 403 `ticket_invalid`: not a waiting-room ticket the server signed (altered,
    /// truncated or forged).
    #[error("the ticket is not valid: join the waiting room again")]
    TicketInvalid,
    /// 403 `ticket_invalid`, at the door: not a ticket of the event's organization (the
    /// secret is malformed, or its signature does not verify with the entry keys).
    #[error("not a ticket: the secret is malformed or its signature does not verify")]
    NotATicket,
    /// 400 `wrong_event`, with `event_id`: a real ticket of another event.
    #[error("a ticket of another event")]
    WrongEvent(boxoffice_core::ids::EventId),
    /// 410 `ticket_revoked`: cancelled, moved or resold.
    #[error("this ticket was revoked (cancelled, moved or resold)")]
    TicketRevoked,
    /// 409 `not_inside`: an exit of a ticket that is not inside.
    #[error("this ticket is not inside: it was never let in, or went out already")]
    NotInside,
    /// 409 `already_redeemed`, with `first`: inside already.
    #[error("inside already, since {}{}", .at.format("%H:%M"), .gate.as_ref().map(|g| format!(" ({g})")).unwrap_or_default())]
    AlreadyRedeemed {
        /// When it went in.
        at: chrono::DateTime<chrono::Utc>,
        /// Through which gate.
        gate: Option<String>,
    },
    /// 403 `queue_required`, for a season hold: these events' waiting rooms are on, and no
    /// valid pass of the buyer's was shown for them (`event_ids`).
    #[error(
        "these events' waiting rooms are on: show a pass of each (Boxoffice-Pass, comma-separated)"
    )]
    PassesRequired(Vec<boxoffice_core::ids::EventId>),
    /// 403 `queue_required`, with `event_ids`: the passes shown for these events of a
    /// season hold have ended.
    #[error(
        "the passes of these events ended (a checkout, a release of every hold, or the ticket given up): join their waiting rooms again"
    )]
    PassesEnded(Vec<boxoffice_core::ids::EventId>),
    /// 404 with a specific code (`not_found`, `event_not_found`, …).
    #[error("{detail}")]
    NotFound {
        /// Stable code.
        code: &'static str,
        /// What was not found.
        detail: String,
    },
    /// 405 `method_not_allowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 400 `malformed_json`: the body is not JSON.
    #[error("{0}")]
    MalformedJson(String),
    /// 413 `payload_too_large`.
    #[error("the request body is larger than this server accepts")]
    PayloadTooLarge,
    /// 431 `header_too_large`: the request head is larger than this server reads.
    #[error("the request head is larger than this server accepts")]
    HeaderTooLarge,
    /// 415 `unsupported_media_type`: a body not declared of the type the route reads
    /// (`application/json` but for CSV imports).
    #[error("expected a body of type {0}")]
    UnsupportedMediaType(&'static str),
    /// 422 `validation_failed`, with every field error.
    #[error("{0}")]
    Validation(ValidationErrors),
    /// 400 `event_started`: the event has started; no more holds.
    #[error("the event has started")]
    EventStarted,
    /// 409 `seat_unavailable`: these seats are held by someone else, sold, or not on sale;
    /// nothing was held.
    #[error("{}", unavailable_detail(.0))]
    SeatUnavailable(Vec<SeatRef>),
    /// 409 `hold_limit_exceeded`: the user's live held seats plus these would exceed the
    /// event's limit; nothing was held.
    #[error("at most {0} seats may be held at once in this event")]
    HoldLimitExceeded(u32),
    /// 409 `limit_exceeded`: the buyer's bookings of a general-admission area would pass
    /// its `max_per_user` (the cap, and what they have booked already).
    #[error("at most {0} places per buyer in this area, and {1} are booked already")]
    LimitExceeded(u32, u32),
    /// 409 `sold_out`: fewer general-admission places left than asked; `left` says how many.
    #[error("only {0} places left")]
    SoldOut(u32),
    /// 409 `hold_not_live`: the token does not, or no longer, own its seats.
    #[error("this hold has expired, was released or was already used")]
    HoldNotLive,
    /// 409 `slug_taken`: another organization has the slug.
    #[error("another organization has this slug")]
    SlugTaken,
    /// 409 `venue_in_use`: an event or a season uses the venue, so its seats stay.
    #[error("an event or a season uses this venue: save the drawing as a new venue")]
    VenueInUse,
    /// 409 `already_paid`: the order was paid before, with another reference.
    #[error("this order was paid before, with another reference")]
    AlreadyPaid,
    /// 409 `already_released`: the season order's seats were released for the event
    /// before, or the order was cancelled.
    #[error("this season order's seats were released for this event before")]
    AlreadyReleased,
    /// 409 `order_not_changeable`: the order's seats cannot change now (it is not paid, or
    /// the season night was not released); nothing changed.
    #[error("{0}")]
    NotChangeable(&'static str),
    /// 409 `payment_window_closed`: the order's `pay_by` passed (it expired), or it was
    /// cancelled; nothing was paid.
    #[error("{0}")]
    PaymentWindowClosed(&'static str),
    /// 408 `request_timeout`: the request (its body) did not arrive in time.
    #[error("the request did not arrive in time")]
    RequestTimeout,
    /// 429 `rate_limited`: too many requests from this client; retry after `Retry-After`.
    #[error("too many requests; retry in {} s", .0.as_secs().max(1))]
    RateLimited(Duration),
    /// 503 `unavailable`: a backing store is down or too slow; retry after a moment.
    #[error("{reason}")]
    Unavailable {
        /// For the logs only.
        reason: String,
        /// Sent as `Retry-After`.
        retry_after: Duration,
    },
    /// 503 `unavailable`: more holds, bookings or checkouts in flight than the server
    /// serves quickly (its adaptive limit); retry after the turn given (`retry_after_ms`,
    /// and `Retry-After` in whole seconds). Not logged: the count is a metric.
    #[error("the server is serving as many requests as it can quickly; retry in {} ms", .0.as_millis())]
    Overloaded(Duration),
    /// 500 `internal`: a bug. The cause is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
}

pub use boxoffice_service::SeatRef;

fn roles_named(roles: &[boxoffice_core::access::Role]) -> String {
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn unavailable_detail(seats: &[SeatRef]) -> String {
    match seats {
        [] => "not enough seats are available".to_owned(),
        [one] => format!("{} just went", one.label),
        many => format!(
            "{} seats just went: {}",
            many.len(),
            many.iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// Most field errors one answer lists; `errors_omitted` counts the rest, so one bad request
/// gets an answer of a few KB at most.
pub const MAX_FIELD_ERRORS: usize = 20;
/// Longest field path or message an answer quotes, in characters; a client's own text (a
/// 15 MB seat id, say) is cut to this.
const MAX_FIELD_TEXT: usize = 120;

/// `text` cut to [`MAX_FIELD_TEXT`] characters, marked with an ellipsis where it was cut.
fn bounded(mut text: String) -> String {
    if let Some((at, _)) = text.char_indices().nth(MAX_FIELD_TEXT) {
        text.truncate(at);
        text.push('…');
    }
    text
}

/// The first [`MAX_FIELD_ERRORS`] field errors, each bounded, and how many were left out.
fn bounded_errors(mut errors: Vec<FieldError>) -> (Vec<FieldError>, Option<usize>) {
    let omitted = errors.len().saturating_sub(MAX_FIELD_ERRORS);
    errors.truncate(MAX_FIELD_ERRORS);
    let errors = errors
        .into_iter()
        .map(|e| FieldError {
            field: bounded(e.field),
            message: bounded(e.message),
        })
        .collect();
    (errors, (omitted > 0).then_some(omitted))
}

impl ApiError {
    /// 404 `event_not_found`.
    pub fn event_not_found() -> Self {
        ApiError::NotFound {
            code: "event_not_found",
            detail: "no such event".into(),
        }
    }

    /// 422 with a single field error.
    pub fn invalid(field: &str, message: &str) -> Self {
        let mut errors = ValidationErrors::default();
        errors.add(field, message);
        ApiError::Validation(errors)
    }

    /// What the error answers: its HTTP status, its stable `code` (docs/api.md) and its
    /// problem's title, one row a variant.
    fn kind(&self) -> (StatusCode, &'static str, &'static str) {
        use StatusCode as S;
        match self {
            ApiError::Unauthorized(_) => (S::UNAUTHORIZED, "unauthorized", "Unauthorized"),
            ApiError::Forbidden(_) | ApiError::RoleForbidden(_) => {
                (S::FORBIDDEN, "forbidden", "Forbidden")
            }
            ApiError::QueueRequired(_) | ApiError::PassesRequired(_) | ApiError::PassesEnded(_) => {
                (S::FORBIDDEN, "queue_required", "Waiting room")
            }
            ApiError::TicketInvalid => (S::FORBIDDEN, "ticket_invalid", "Waiting room"),
            ApiError::NotATicket => (S::FORBIDDEN, "ticket_invalid", "Not a ticket"),
            ApiError::WrongEvent(_) => (S::BAD_REQUEST, "wrong_event", "Another event"),
            ApiError::TicketRevoked => (S::GONE, "ticket_revoked", "Ticket revoked"),
            ApiError::NotFound { code, .. } => (S::NOT_FOUND, code, "Not found"),
            ApiError::MethodNotAllowed => (
                S::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed",
            ),
            ApiError::MalformedJson(_) => (S::BAD_REQUEST, "malformed_json", "Malformed JSON"),
            ApiError::PayloadTooLarge => (
                S::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "Payload too large",
            ),
            ApiError::HeaderTooLarge => (
                S::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "header_too_large",
                "Request head too large",
            ),
            ApiError::UnsupportedMediaType(_) => (
                S::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Unsupported media type",
            ),
            ApiError::Validation(_) => (
                S::UNPROCESSABLE_ENTITY,
                "validation_failed",
                "Validation failed",
            ),
            ApiError::EventStarted => (S::BAD_REQUEST, "event_started", "Event started"),
            ApiError::SeatUnavailable(_) => (S::CONFLICT, "seat_unavailable", "Seat unavailable"),
            ApiError::HoldLimitExceeded(_) => {
                (S::CONFLICT, "hold_limit_exceeded", "Hold limit exceeded")
            }
            ApiError::LimitExceeded(..) => (S::CONFLICT, "limit_exceeded", "Limit exceeded"),
            ApiError::HoldNotLive => (S::CONFLICT, "hold_not_live", "Hold not live"),
            ApiError::AlreadyPaid => (S::CONFLICT, "already_paid", "Already paid"),
            ApiError::AlreadyReleased => (S::CONFLICT, "already_released", "Already released"),
            ApiError::PaymentWindowClosed(_) => (
                S::CONFLICT,
                "payment_window_closed",
                "Payment window closed",
            ),
            ApiError::NotChangeable(_) => {
                (S::CONFLICT, "order_not_changeable", "Order not changeable")
            }
            ApiError::SlugTaken => (S::CONFLICT, "slug_taken", "Slug taken"),
            ApiError::VenueInUse => (S::CONFLICT, "venue_in_use", "Venue in use"),
            ApiError::AlreadyRedeemed { .. } => (S::CONFLICT, "already_redeemed", "Already in"),
            ApiError::NotInside => (S::CONFLICT, "not_inside", "Not inside"),
            ApiError::SoldOut(_) => (S::CONFLICT, "sold_out", "Sold out"),
            ApiError::RequestTimeout => (S::REQUEST_TIMEOUT, "request_timeout", "Request timeout"),
            ApiError::RateLimited(_) => (S::TOO_MANY_REQUESTS, "rate_limited", "Too many requests"),
            ApiError::Unavailable { .. } | ApiError::Overloaded(_) => {
                (S::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable")
            }
            ApiError::Internal(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
        }
    }

    /// The HTTP status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.kind().0
    }

    /// The stable `code` of docs/api.md.
    pub fn code(&self) -> &'static str {
        self.kind().1
    }

    fn title(&self) -> &'static str {
        self.kind().2
    }

    fn problem(self) -> Problem {
        let status = self.status().as_u16();
        let code = self.code();
        let title = self.title();
        let mut seats = None;
        let mut errors = None;
        let mut errors_omitted = None;
        let left = match &self {
            ApiError::SoldOut(left) => Some(*left),
            _ => None,
        };
        let event_ids = match &self {
            ApiError::PassesRequired(events) | ApiError::PassesEnded(events) => {
                Some(events.clone())
            }
            _ => None,
        };
        let required_roles = match &self {
            ApiError::RoleForbidden(roles) => Some(roles.to_vec()),
            _ => None,
        };
        let retry_after_ms = self.retry_after().map(|d| d.as_millis() as u64);
        let event_id = match &self {
            ApiError::WrongEvent(event) => Some(*event),
            _ => None,
        };
        let first = match &self {
            ApiError::AlreadyRedeemed { at, gate } => Some(boxoffice_api::FirstEntry {
                at: *at,
                gate: gate.clone(),
            }),
            _ => None,
        };
        let detail = match self {
            ApiError::Validation(e) => {
                let (listed, omitted) = bounded_errors(e.0);
                errors = Some(listed);
                errors_omitted = omitted;
                "the request is not valid; see errors".to_owned()
            }
            ApiError::SeatUnavailable(list) => {
                let detail = unavailable_detail(&list);
                seats = Some(list);
                detail
            }
            // Never tell a client what broke inside; the log has it.
            ApiError::Internal(_) => "something went wrong on our side".to_owned(),
            ApiError::Unavailable { .. } => {
                "a backing store is unavailable; retry after a moment".to_owned()
            }
            other => other.to_string(),
        };
        Problem {
            type_: format!("/problems/{}", code.replace('_', "-")),
            title: title.to_owned(),
            status,
            code: code.to_owned(),
            detail,
            errors,
            errors_omitted,
            seats,
            left,
            event_ids,
            required_roles,
            retry_after_ms,
            event_id,
            first,
        }
    }

    /// How long the client should wait before asking again, for the answers that say.
    fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::Unavailable { retry_after, .. }
            | ApiError::RateLimited(retry_after)
            | ApiError::Overloaded(retry_after) => Some(*retry_after),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            ApiError::Internal(cause) => tracing::error!(%cause, "request failed"),
            ApiError::Unavailable { reason, .. } => tracing::warn!(%reason, "store unavailable"),
            _ => {}
        }
        let retry_after = self
            .retry_after()
            .map(|d| d.as_millis().div_ceil(1000).max(1) as u64);
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::NotFound {
                code: "not_found",
                detail: "not found".into(),
            },
            StoreError::Unavailable {
                reason,
                retry_after,
            } => ApiError::Unavailable {
                reason,
                retry_after,
            },
            // A constraint that reaches this far was not expected by the caller.
            // Hold stores retry contention themselves; what reaches here is still contended.
            StoreError::Contention => ApiError::Unavailable {
                reason: "transaction aborted by contention".into(),
                retry_after: Duration::from_secs(1),
            },
            StoreError::Conflict { constraint } => {
                ApiError::Internal(format!("unexpected conflict on {constraint}"))
            }
            StoreError::Ahead(why) => ApiError::Internal(why),
            StoreError::Other(e) => ApiError::Internal(e.to_string()),
        }
    }
}

impl From<boxoffice_service::Error> for ApiError {
    fn from(e: boxoffice_service::Error) -> Self {
        use boxoffice_service::Error;
        let not_found = |code, detail: &str| ApiError::NotFound {
            code,
            detail: detail.to_owned(),
        };
        match e {
            Error::EventNotFound => ApiError::event_not_found(),
            Error::AreaNotFound => not_found("area_not_found", "the event has no such area"),
            Error::SeasonNotFound => not_found("not_found", "no such season"),
            Error::PartialNotFound => not_found("not_found", "the season has no such partial"),
            Error::HoldNotFound => not_found("not_found", "no live hold with this token"),
            Error::SeatNotInHold => not_found("not_found", "this hold has no such seat"),
            Error::OrderNotFound => not_found("order_not_found", "no such order"),
            Error::OrganizationNotFound => not_found("not_found", "no such organization"),
            Error::KeyNotFound => not_found("not_found", "no such key"),
            Error::WebhookNotFound => not_found("not_found", "the organization has no webhook"),
            Error::SlugTaken => ApiError::SlugTaken,
            Error::VenueInUse => ApiError::VenueInUse,
            Error::VenueNotFound => not_found("not_found", "no such venue"),
            Error::BookingNotFound => not_found("not_found", "no such booking"),
            Error::NotListed => not_found("not_found", "this order lists no such seat for resale"),
            Error::ChannelNotFound => not_found("not_found", "the event has no such channel"),
            Error::EntryNotFound => not_found("not_found", "no such waiting-list entry"),
            Error::QueueNotFound => {
                not_found("queue_not_found", "this event has no waiting room open")
            }
            Error::TicketNotFound => not_found(
                "ticket_not_found",
                "no such ticket of yours in the waiting room (given up, lapsed or ended): join \
                 again",
            ),
            Error::TicketInvalid => ApiError::TicketInvalid,
            Error::TicketUnknown => not_found("not_found", "no such ticket"),
            Error::NotATicket => ApiError::NotATicket,
            Error::WrongEvent(event) => ApiError::WrongEvent(event),
            Error::TicketRevoked => ApiError::TicketRevoked,
            Error::AlreadyRedeemed { at, gate } => ApiError::AlreadyRedeemed { at, gate },
            Error::NotInside => ApiError::NotInside,
            Error::Forbidden(why) => ApiError::Forbidden(why),
            Error::QueueRequired(why) => ApiError::QueueRequired(why),
            Error::PassesRequired(events) => ApiError::PassesRequired(events),
            Error::PassesEnded(events) => ApiError::PassesEnded(events),
            Error::Invalid(errors) => ApiError::Validation(errors),
            Error::EventStarted => ApiError::EventStarted,
            Error::SeatsUnavailable(seats) => ApiError::SeatUnavailable(seats),
            Error::HoldLimitExceeded(max) => ApiError::HoldLimitExceeded(max),
            Error::AreaLimitExceeded(max, booked) => ApiError::LimitExceeded(max, booked),
            Error::HoldNotLive => ApiError::HoldNotLive,
            Error::AlreadyPaid => ApiError::AlreadyPaid,
            Error::AlreadyReleased => ApiError::AlreadyReleased,
            Error::PaymentWindowClosed(why) => ApiError::PaymentWindowClosed(why),
            Error::NotChangeable(why) => ApiError::NotChangeable(why),
            Error::SoldOut(left) => ApiError::SoldOut(left),
            Error::RateLimited(wait) => ApiError::RateLimited(wait),
            Error::Unavailable {
                reason,
                retry_after,
            } => ApiError::Unavailable {
                reason,
                retry_after,
            },
            Error::Overloaded(retry_after) => ApiError::Overloaded(retry_after),
            Error::Store(e) => e.into(),
        }
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(e: ValidationErrors) -> Self {
        ApiError::Validation(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_pins_its_status_and_code() {
        let cases = [
            (ApiError::Unauthorized("x"), 401, "unauthorized"),
            (ApiError::Forbidden("x"), 403, "forbidden"),
            (
                ApiError::RoleForbidden(&[boxoffice_core::access::Role::Admin]),
                403,
                "forbidden",
            ),
            (ApiError::SlugTaken, 409, "slug_taken"),
            (ApiError::VenueInUse, 409, "venue_in_use"),
            (ApiError::TicketInvalid, 403, "ticket_invalid"),
            (ApiError::NotATicket, 403, "ticket_invalid"),
            (
                ApiError::WrongEvent(boxoffice_core::ids::EventId::new()),
                400,
                "wrong_event",
            ),
            (ApiError::TicketRevoked, 410, "ticket_revoked"),
            (ApiError::NotInside, 409, "not_inside"),
            (
                ApiError::AlreadyRedeemed {
                    at: chrono::Utc::now(),
                    gate: None,
                },
                409,
                "already_redeemed",
            ),
            (ApiError::QueueRequired("x"), 403, "queue_required"),
            (ApiError::PassesRequired(vec![]), 403, "queue_required"),
            (ApiError::event_not_found(), 404, "event_not_found"),
            (ApiError::MalformedJson("x".into()), 400, "malformed_json"),
            (ApiError::PayloadTooLarge, 413, "payload_too_large"),
            (ApiError::HeaderTooLarge, 431, "header_too_large"),
            (ApiError::invalid("f", "m"), 422, "validation_failed"),
            (ApiError::EventStarted, 400, "event_started"),
            (ApiError::SeatUnavailable(vec![]), 409, "seat_unavailable"),
            (ApiError::HoldLimitExceeded(2), 409, "hold_limit_exceeded"),
            (ApiError::LimitExceeded(4, 2), 409, "limit_exceeded"),
            (ApiError::HoldNotLive, 409, "hold_not_live"),
            (ApiError::AlreadyPaid, 409, "already_paid"),
            (ApiError::AlreadyReleased, 409, "already_released"),
            (ApiError::NotChangeable("x"), 409, "order_not_changeable"),
            (
                ApiError::PaymentWindowClosed("x"),
                409,
                "payment_window_closed",
            ),
            (ApiError::SoldOut(0), 409, "sold_out"),
            (
                ApiError::from(StoreError::unavailable("down")),
                503,
                "unavailable",
            ),
            (
                ApiError::Overloaded(Duration::from_millis(150)),
                503,
                "unavailable",
            ),
            (ApiError::RequestTimeout, 408, "request_timeout"),
            (
                ApiError::RateLimited(Duration::from_secs(3)),
                429,
                "rate_limited",
            ),
            (ApiError::Internal("bug".into()), 500, "internal"),
        ];
        for (error, status, code) in cases {
            assert_eq!((error.status().as_u16(), error.code()), (status, code));
        }
    }

    #[test]
    fn a_validation_answer_is_bounded_however_many_errors_there_were() {
        let mut errors = ValidationErrors::default();
        for i in 0..50_000 {
            errors.add(
                format!("seats[{i}]"),
                format!("no seat {:?}", "x".repeat(10_000)),
            );
        }
        let problem = ApiError::Validation(errors).problem();
        assert_eq!(
            problem.errors.as_ref().map(Vec::len),
            Some(MAX_FIELD_ERRORS)
        );
        assert_eq!(problem.errors_omitted, Some(50_000 - MAX_FIELD_ERRORS));
        let size = serde_json::to_vec(&problem).unwrap().len();
        assert!(size < 8 * 1024, "{size} bytes");

        let problem = ApiError::invalid("name", "too long").problem();
        assert_eq!(
            problem.errors_omitted, None,
            "nothing left out, nothing said"
        );
    }

    #[test]
    fn internal_details_never_reach_the_client() {
        let problem = ApiError::Internal("password=hunter2".into()).problem();
        assert!(!problem.detail.contains("hunter2"));
        assert_eq!(problem.type_, "/problems/internal");
    }
}
