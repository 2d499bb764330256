//! The router: every route, the OpenAPI document they make, and the layers every request
//! passes (from [`crate::middleware`]), in the order they wrap it.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::middleware::{self};
use axum::Router;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::router::UtoipaMethodRouterExt;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::middleware::{compression, cors, head_size, request_span, timeout, REQUEST_ID};
use crate::routes::{
    admin, audit, availability, bookings, changes, events, holds, ops, orders, organizations, page,
    pay, queue, seasons, sessions, stream, tickets, venues, waitlist, webhooks,
};
use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "Boxoffice", description = "Seat inventory under heavy concurrency: venues, events, availability, holds, orders."),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for name in ["admin", "user"] {
            components.add_security_scheme(
                name,
                SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
            );
        }
    }
}

/// The API routes and the OpenAPI document generated from the same handlers, so the two
/// cannot drift apart: the event streams apart from every other route, which may be
/// compressed.
///
/// The routes that write the catalog (venues, events, allocations), admin only, take bodies
/// up to `import_bytes`; every other route the server-wide limit.
fn api(import_bytes: usize) -> (Router<AppState>, Router<AppState>, OpenApiDoc) {
    let import = DefaultBodyLimit::max(import_bytes);
    let (streams, streams_doc) = OpenApiRouter::new()
        .routes(routes!(stream::stream))
        .split_for_parts();
    let (routes, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(
            organizations::list_organizations,
            organizations::create_organization
        ))
        .routes(routes!(organizations::get_organization))
        .routes(routes!(organizations::me))
        .routes(routes!(organizations::list_keys, organizations::create_key))
        .routes(routes!(organizations::revoke_key))
        .routes(routes!(audit::list_audit))
        .routes(routes!(
            organizations::list_signing_keys,
            organizations::create_signing_key
        ))
        .routes(routes!(organizations::retire_signing_key))
        .routes(routes!(
            webhooks::get_webhook,
            webhooks::set_webhook,
            webhooks::delete_webhook
        ))
        .routes(routes!(venues::list_venues, venues::create_venue).layer(import))
        .routes(routes!(venues::import_venue).layer(import))
        .routes(routes!(venues::get_venue, venues::replace_venue).layer(import))
        .routes(routes!(venues::export_venue))
        .routes(routes!(events::list_events, events::create_event).layer(import))
        .routes(routes!(events::get_event, events::patch_event))
        .routes(routes!(events::put_allocations).layer(import))
        .routes(routes!(events::withdraw_allocations).layer(import))
        .routes(routes!(events::release_channel))
        .routes(routes!(availability::get_seats))
        .routes(routes!(availability::get_layout))
        .routes(routes!(availability::get_availability))
        .routes(routes!(holds::create_hold))
        .routes(routes!(holds::get_hold, holds::release_hold))
        .routes(routes!(holds::extend_hold))
        .routes(routes!(holds::add_seats))
        .routes(routes!(holds::drop_seat))
        .routes(routes!(orders::create_order))
        .routes(routes!(orders::get_order))
        .routes(routes!(admin::list_orders))
        .routes(routes!(admin::orders_csv))
        .routes(routes!(admin::report))
        .routes(routes!(orders::cancel_order))
        .routes(routes!(orders::pay_order))
        .routes(routes!(orders::release_night))
        .routes(routes!(changes::move_seats))
        .routes(routes!(changes::swap))
        .routes(routes!(changes::reclaim_night))
        .routes(routes!(changes::list_for_resale, changes::listed))
        .routes(routes!(changes::withdraw))
        .routes(routes!(queue::join_queue))
        .routes(routes!(queue::queue_status))
        .routes(routes!(queue::poll_queue, queue::leave_queue))
        .routes(routes!(waitlist::join_waitlist))
        .routes(routes!(waitlist::get_entry, waitlist::leave_waitlist))
        .routes(routes!(seasons::list_seasons, seasons::create_season).layer(import))
        .routes(routes!(seasons::get_season))
        .routes(routes!(seasons::get_season_seats))
        .routes(routes!(seasons::create_season_hold))
        .routes(routes!(
            seasons::get_season_hold,
            seasons::release_season_hold
        ))
        .routes(routes!(seasons::extend_season_hold))
        .routes(routes!(seasons::create_season_order))
        .routes(routes!(seasons::list_season_orders))
        .routes(routes!(seasons::get_season_sales))
        .routes(routes!(bookings::create_booking))
        .routes(routes!(bookings::cancel_booking))
        .routes(routes!(bookings::pay_booking))
        .routes(routes!(orders::my_orders))
        .routes(routes!(organizations::pair_scanner))
        .routes(routes!(tickets::order_ticket_list))
        .routes(routes!(tickets::order_ticket_pdf))
        .routes(routes!(tickets::booking_ticket_list))
        .routes(routes!(tickets::booking_ticket_pdf))
        .routes(routes!(tickets::ticket_qr))
        .routes(routes!(tickets::entry_keys))
        .routes(routes!(tickets::rotate_entry_key))
        .routes(routes!(tickets::revoked))
        .routes(routes!(tickets::check_in))
        .routes(routes!(tickets::checkin_summary))
        .routes(routes!(sessions::create_session))
        .routes(routes!(page::index))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::get_metrics))
        .split_for_parts();
    doc.merge(streams_doc);
    (routes, streams, problems_as_sent(doc))
}

/// The document with every error answer under the media type the server sends it as,
/// `application/problem+json` (utoipa files every `body = Problem` under
/// `application/json`); on every operation that takes a body, the answers the body's
/// reading gives whatever the operation: 400 (not JSON, or JSON followed by more), 413
/// (past its size limit) and 415 (not sent as `application/json`); and on every operation,
/// 503 (the request timed out in the server, or a store or the server's limit said no).
fn problems_as_sent(mut doc: OpenApiDoc) -> OpenApiDoc {
    use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
    const PROBLEM: &str = "#/components/schemas/Problem";
    const JSON: &str = "application/json";
    let body_problems = [
        (
            "400",
            "Malformed JSON (`malformed_json`), or a request the operation refuses as such",
        ),
        (
            "413",
            "The body is larger than the server takes (`payload_too_large`)",
        ),
        ("415", "The body is not sent as `application/json`"),
    ];
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            // Any request may time out in the server; holds, bookings and checkouts may
            // meet the adaptive limit.
            let unavailable = [(
                "503",
                "A store is down or too slow, the request timed out in the server, or the server is at its limit (`unavailable`); see Retry-After",
            )];
            let body = if operation.request_body.is_some() {
                &body_problems[..]
            } else {
                &[]
            };
            for &(status, description) in body.iter().chain(&unavailable) {
                operation
                    .responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| {
                        let problem = ContentBuilder::new()
                            .schema(Some(Ref::new(PROBLEM)))
                            .build();
                        RefOr::T(
                            ResponseBuilder::new()
                                .description(description)
                                .content("application/problem+json", problem)
                                .build(),
                        )
                    });
            }
            for response in operation.responses.responses.values_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                let is_problem = response.content.get(JSON).is_some_and(
                    |c| matches!(&c.schema, Some(RefOr::Ref(r)) if r.ref_location == PROBLEM),
                );
                if is_problem {
                    let problem = response.content.shift_remove(JSON).expect("just seen");
                    response
                        .content
                        .insert("application/problem+json".to_owned(), problem);
                }
            }
        }
    }
    doc
}

/// The OpenAPI 3.1 document of every route.
pub fn openapi() -> OpenApiDoc {
    api(0).2
}

/// The largest request bodies read, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimits {
    /// Every route but the catalog writes.
    pub ordinary: usize,
    /// The catalog writes: creating venues and events, changing allocations (admin only,
    /// and the token is checked before the body is read).
    pub import: usize,
}

/// The whole HTTP application over `state`.
pub fn router(
    state: AppState,
    request_timeout: Duration,
    body_limits: BodyLimits,
    allowed_origins: &[HeaderValue],
) -> Router {
    let (routes, streams, doc) = api(body_limits.import);
    let doc = Arc::new(doc);
    // Event streams stay outside the compression layer: each event must leave as it is
    // written (a stream compresses its own way, see routes/stream.rs), and the layer's
    // wrapper would cost every idle stream 6 KB.
    let compression = compression();
    routes
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { axum::Json(doc.as_ref().clone()) }
            }),
        )
        .route("/assets/{*file}", axum::routing::get(page::asset))
        .route("/admin", axum::routing::get(page::admin))
        .route("/scan", axum::routing::get(page::scanner))
        .route("/favicon.ico", axum::routing::get(page::favicon))
        .route("/favicon.svg", axum::routing::get(page::favicon))
        .route("/admin/{*screen}", axum::routing::get(page::admin))
        .route("/pay/{order}", axum::routing::get(pay::page).post(pay::act))
        .route("/embed.js", axum::routing::get(page::embed))
        .route("/embed.d.ts", axum::routing::get(page::embed_types))
        .layer(compression)
        .merge(streams)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::track,
        ))
        .fallback(|| async {
            ApiError::NotFound {
                code: "not_found",
                detail: "no such route".into(),
            }
        })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        // Inside the timeout: a write's work goes on when the wait for it is dropped.
        .layer(middleware::from_fn(crate::middleware::run_to_end))
        .layer(DefaultBodyLimit::max(body_limits.ordinary))
        // Outside the timeout, so that a body left unread is read out even when the
        // answer was the timeout's.
        .layer(middleware::from_fn(crate::unread::drain))
        .layer(middleware::from_fn(head_size))
        .layer(middleware::from_fn_with_state(request_timeout, timeout))
        // Failures are logged where they are known (an internal error with its cause, a
        // store down with its reason), not once more for each 5xx: under overload every
        // refusal would be a line. Every line logged while a request is served carries
        // its span: the request id, method and path.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_failure(()),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
        .layer(tower::util::option_layer(cors(allowed_origins)))
        .with_state(state)
}
