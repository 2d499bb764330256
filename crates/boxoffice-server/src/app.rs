//! Building the router and running the server. (A long file: the routes, the OpenAPI
//! document they make, and the middleware every request passes, read together.)

use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::HttpBody;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use boxoffice_service::overload::{Overload, Path, CHECKOUT_PATIENCE};
use boxoffice_service::seat_map::SeatMapCache;
use boxoffice_service::{Parts, Services};
use boxoffice_store::hold_store::HoldStore;
use boxoffice_store::pg::db;
use boxoffice_store::pg::holds::PgHoldStore;
use boxoffice_store::redis::holds::RedisHoldStore;
use tokio::net::TcpListener;
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::router::UtoipaMethodRouterExt;
use utoipa_axum::routes;

use crate::auth::Auth;
use crate::config::{HoldStoreKind, Settings};
use crate::encoded::EncodedCache;
use crate::error::ApiError;
use crate::routes::{
    availability, bookings, console, events, holds, ops, orders, page, pay, queue, sessions,
    stream, venues, waitlist,
};
use crate::state::{AppState, Inner};

/// Events whose rendered seat maps one server keeps.
const SEAT_MAP_CACHE_EVENTS: usize = 32;

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
/// up to `import_bytes`; every other route the server-wide limit. Holds, bookings and
/// checkouts pass `overload` first.
fn api(
    import_bytes: usize,
    overload: &Arc<Overload>,
) -> (Router<AppState>, Router<AppState>, OpenApiDoc) {
    let import = DefaultBodyLimit::max(import_bytes);
    let limited = |path| middleware::from_fn_with_state((overload.clone(), path), shed);
    let (streams, streams_doc) = OpenApiRouter::new()
        .routes(routes!(stream::stream))
        .split_for_parts();
    let (routes, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(venues::list_venues, venues::create_venue).layer(import))
        .routes(routes!(venues::import_venue).layer(import))
        .routes(routes!(venues::get_venue))
        .routes(routes!(venues::export_venue))
        .routes(routes!(events::list_events, events::create_event).layer(import))
        .routes(routes!(events::get_event, events::patch_event))
        .routes(routes!(events::put_allocations).layer(import))
        .routes(routes!(events::withdraw_allocations).layer(import))
        .routes(routes!(events::release_channel))
        .routes(routes!(availability::get_seats))
        .routes(routes!(availability::get_layout))
        .routes(routes!(availability::get_availability))
        .routes(routes!(holds::create_hold).layer(limited(Path::Hold)))
        .routes(routes!(holds::get_hold, holds::release_hold))
        .routes(routes!(holds::extend_hold).layer(limited(Path::Hold)))
        .routes(routes!(holds::add_seats).layer(limited(Path::Hold)))
        .routes(routes!(holds::drop_seat))
        .routes(routes!(orders::create_order).layer(limited(Path::Checkout)))
        .routes(routes!(orders::get_order))
        .routes(routes!(console::list_orders))
        .routes(routes!(console::orders_csv))
        .routes(routes!(console::report))
        .routes(routes!(orders::cancel_order))
        .routes(routes!(orders::pay_order).layer(limited(Path::Checkout)))
        .routes(routes!(queue::join_queue))
        .routes(routes!(queue::poll_queue))
        .routes(routes!(waitlist::join_waitlist))
        .routes(routes!(waitlist::get_entry, waitlist::leave_waitlist))
        .routes(routes!(bookings::create_booking).layer(limited(Path::Hold)))
        .routes(routes!(bookings::cancel_booking))
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
    api(0, &Overload::new(None)).2
}

/// Lets a request on `path` through its adaptive limit (a checkout waits a moment for a
/// place), or answers 503.
async fn shed(
    State((overload, path)): State<(Arc<Overload>, Path)>,
    req: Request,
    next: Next,
) -> Response {
    let entered = match path {
        Path::Hold => overload.enter(path),
        Path::Checkout => overload.enter_within(path, CHECKOUT_PATIENCE).await,
    };
    let permit = match entered {
        Ok(permit) => permit,
        Err(shed) => return ApiError::Overloaded(shed.retry_after).into_response(),
    };
    let response = next.run(req).await;
    permit.finish(response.status() == axum::http::StatusCode::SERVICE_UNAVAILABLE);
    response
}

/// How answers are compressed for clients that offer zstd, brotli or gzip: at the fastest
/// level, where a 100,000-seat map goes from 19 MB to about 400 KB in tens of milliseconds.
pub(crate) fn compression() -> CompressionLayer {
    CompressionLayer::new().quality(CompressionLevel::Fastest)
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
    let (routes, streams, doc) = api(body_limits.import, &state.overload);
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
        .route("/assets/app.js", axum::routing::get(page::script))
        .route("/assets/hall.js", axum::routing::get(page::hall))
        .route("/assets/app.css", axum::routing::get(page::style))
        .route("/admin", axum::routing::get(page::console))
        .route("/admin/{*screen}", axum::routing::get(page::console))
        .route("/assets/admin.js", axum::routing::get(page::console_script))
        .route("/pay/{order}", axum::routing::get(pay::page).post(pay::act))
        .route("/embed.js", axum::routing::get(page::embed))
        .route("/embed.d.ts", axum::routing::get(page::embed_types))
        .route("/assets/admin.css", axum::routing::get(page::console_style))
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
        .layer(DefaultBodyLimit::max(body_limits.ordinary))
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

/// The header that names a request: the client's (or a proxy's) if it sent one, else a
/// new UUID; answered back on the response, and logged on every line of the request.
static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The span a request is served in: its id, method and path (never the query, which may
/// carry a token).
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        path = %request.uri().path(),
    )
}

/// CORS for pages on `origins` (a platform's checkout embedding the map): they may call
/// every route with a token and read the answers, the stream included; a preflight is
/// answered here, before any route. Any other origin gets no CORS header at all; with no
/// origin named there is no layer (an `OPTIONS` is answered as without CORS).
fn cors(origins: &[HeaderValue]) -> Option<tower_http::cors::CorsLayer> {
    use axum::http::{header, Method};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let layer = CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().cloned()))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static(crate::extract::PASS_HEADER),
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::RETRY_AFTER,
            header::LOCATION,
            header::ETAG,
            HeaderName::from_static("boxoffice-holds"),
        ])
        .max_age(Duration::from_secs(600));
    Some(layer)
}

/// Refuses a request whose head is larger than [`crate::serve::MAX_HEAD_BYTES`] (431).
/// hyper refuses such a head only while it is still arriving; one that arrives complete in
/// a few large reads is parsed whole, and is refused here instead.
async fn head_size(req: Request, next: Next) -> Response {
    // The request line and every header line as sent (`name: value\r\n`).
    let uri = req.uri();
    let target = uri.scheme_str().map_or(0, |s| s.len() + 3)
        + uri.authority().map_or(0, |a| a.as_str().len())
        + uri.path_and_query().map_or(1, |p| p.as_str().len());
    let line = req.method().as_str().len() + target + 11;
    let headers: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if line + headers > crate::serve::MAX_HEAD_BYTES {
        return ApiError::HeaderTooLarge.into_response();
    }
    next.run(req).await
}

/// Abandons a request that takes longer than the limit, so a stuck store or a slow client
/// never leaves a request hanging: 408 if its body had not arrived in full by then (the
/// client was slow), 503 if it had (the server was).
async fn timeout(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let received = Arc::new(AtomicBool::new(body.is_end_stream()));
    let body = axum::body::Body::new(Received {
        inner: body,
        received: received.clone(),
    });
    match tokio::time::timeout(limit, next.run(Request::from_parts(parts, body))).await {
        Ok(response) => response,
        Err(_) if !received.load(Ordering::Acquire) => ApiError::RequestTimeout.into_response(),
        Err(_) => ApiError::Unavailable {
            reason: "request timed out".into(),
            retry_after: Duration::from_secs(1),
        }
        .into_response(),
    }
}

/// A request body that says when it has been read to its end.
struct Received {
    inner: axum::body::Body,
    received: Arc<AtomicBool>,
}

impl hyper::body::Body for Received {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, std::task::Poll::Ready(None)) || self.inner.is_end_stream() {
            self.received.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// A server bound to its address, its database created and migrated, ready to run.
pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    relay: Option<crate::relay::RelayConfig>,
    limits: crate::serve::ConnectionLimits,
    retention: boxoffice_store::pg::sweep::Retention,
    sweep_interval: Duration,
    expiry_interval: Duration,
}

impl Application {
    /// Creates the database if missing, migrates it, builds the hold store and binds the
    /// listener (port 0 picks a free port).
    pub async fn build(settings: &Settings) -> anyhow::Result<Self> {
        db::ensure_database(&settings.database.url).await?;
        let pool = db::connect_lazy(&settings.database)?;
        db::migrate(&pool).await?;
        let holds: Arc<dyn HoldStore> = match settings.hold_store {
            HoldStoreKind::Postgres => Arc::new(PgHoldStore::new(pool.clone())),
            HoldStoreKind::Redis => Arc::new(RedisHoldStore::new(&settings.redis, pool.clone())?),
        };
        let gate = if settings.ga_gate {
            Some(boxoffice_store::redis::gate::Gate::new(&settings.redis)?)
        } else {
            None
        };
        // Where Redis is in use anyway, the limits count there, across every instance.
        let uses_redis = settings.hold_store == HoldStoreKind::Redis || settings.ga_gate;
        let rate_limits = boxoffice_service::limits::RateLimits::new(
            settings.sessions_per_minute,
            settings.holds_per_minute,
            settings.trusted_proxies.clone(),
            if uses_redis {
                Some(boxoffice_store::redis::rate_limit::RedisRateLimit::new(
                    &settings.redis,
                )?)
            } else {
                None
            },
        );
        let services = Services::new(Parts {
            pool,
            holds,
            seat_maps: SeatMapCache::new(
                NonZeroUsize::new(SEAT_MAP_CACHE_EVENTS).expect("non-zero"),
            ),
            chooser: boxoffice_service::best_available::Chooser::new(
                NonZeroUsize::new(SEAT_MAP_CACHE_EVENTS).expect("non-zero"),
            ),
            gate,
            metrics: boxoffice_service::metrics::Metrics::new(),
            live: boxoffice_service::live::Live::new(
                settings.stream_heartbeat,
                settings.known_taken,
            ),
            rate_limits,
            // Connects on first use: an event without a waiting room never needs Redis.
            waiting_room: boxoffice_store::redis::queue::WaitingRoom::new(&settings.redis)?,
            admission: boxoffice_service::admission::Admission::new(&settings.jwt_secret),
            overload: boxoffice_service::overload::Overload::new(settings.overload),
            replica: match &settings.replica {
                Some((config, max_lag)) => {
                    Some(Arc::new(boxoffice_service::replica::Replica::new(
                        boxoffice_store::pg::db::connect_lazy(config)?,
                        *max_lag,
                    )))
                }
                None => None,
            },
        });
        let state = AppState::new(Inner {
            services,
            auth: Auth::new(&settings.admin_token, &settings.jwt_secret),
            anonymous_sessions: settings.anonymous_sessions,
            demo_payments: settings.demo_payments,
            encoded: EncodedCache::new(NonZeroUsize::new(SEAT_MAP_CACHE_EVENTS).expect("non-zero")),
            streams: boxoffice_service::limits::StreamSlots::new(settings.streams_per_address),
            max_import_bytes: settings.max_import_bytes,
        });
        let router = router(
            state.clone(),
            settings.request_timeout,
            BodyLimits {
                ordinary: settings.max_body_bytes,
                import: settings.max_import_bytes,
            },
            &settings.allowed_origins,
        );
        let listener = crate::serve::bind(settings.bind)?;
        let mut limits = settings.connections;
        limits.max_connections = crate::serve::fit_connection_cap(limits.max_connections);
        Ok(Self {
            listener,
            router,
            state,
            relay: settings.relay.clone(),
            limits,
            retention: settings.retention,
            sweep_interval: settings.sweep_interval,
            expiry_interval: settings.expiry_interval,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The shared state, for setting up data before serving.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves (and relays the outbox, if webhooks are configured) until `shutdown`
    /// completes, then lets requests in flight finish for at most the shutdown grace
    /// period.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let relay = self.relay.map(|config| {
            let relay = crate::relay::Relay::new(self.state.pool.clone(), config);
            tokio::spawn(relay.run(stopped.clone()))
        });
        let sweeps = tokio::spawn(sweeps(
            self.state.pool.clone(),
            self.retention,
            self.sweep_interval,
            stopped.clone(),
        ));
        let expiries = tokio::spawn(expiries(
            Services::clone(&self.state),
            self.expiry_interval,
            stopped.clone(),
        ));
        let live = boxoffice_service::live::run(Services::clone(&self.state), stopped.clone());
        let replica = self
            .state
            .replica
            .clone()
            .map(|r| boxoffice_service::replica::watch(r, stopped.clone()));
        let upkeep = tokio::spawn(upkeep(self.state.clone(), stopped));
        let state = self.state.clone();
        crate::serve::serve(self.listener, self.router, self.limits, async move {
            shutdown.await;
            // Streams never end by themselves: end them so the drain does not wait.
            state.live.close();
            let _ = stop.send(true);
        })
        .await;
        let _ = live.await;
        if let Some(relay) = relay {
            let _ = relay.await;
        }
        if let Some(replica) = replica {
            let _ = replica.await;
        }
        let _ = upkeep.await;
        let _ = sweeps.await;
        let _ = expiries.await;
        Ok(())
    }
}

/// Background chores of a running server, until `stopped` turns true: draining metric
/// samples into their buckets, forgetting rate-limit counts of clients gone quiet.
async fn upkeep(state: AppState, mut stopped: tokio::sync::watch::Receiver<bool>) {
    let mut every = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = every.tick() => {
                state.metrics.upkeep();
                state.rate_limits.forget_idle();
            }
            _ = stopped.wait_for(|stop| *stop) => return,
        }
    }
}

/// Runs `task` every `interval` (the first at once), until `stopped` turns true; a run
/// late for its tick is not made up for.
async fn every<F, Fut>(interval: Duration, mut stopped: tokio::sync::watch::Receiver<bool>, task: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stopped.wait_for(|stop| *stop) => return,
        }
        task().await;
    }
}

/// Sweeps old idempotency answers and delivered outbox rows every `interval`, until
/// `stopped` turns true. Every instance sweeps; sweeps skip rows another is deleting.
async fn sweeps(
    pool: sqlx::PgPool,
    retention: boxoffice_store::pg::sweep::Retention,
    interval: Duration,
    stopped: tokio::sync::watch::Receiver<bool>,
) {
    every(interval, stopped, || async {
        match boxoffice_store::pg::sweep::sweep(&pool, retention).await {
            Ok(swept) if swept != Default::default() => {
                tracing::info!(
                    idempotency = swept.idempotency,
                    outbox = swept.outbox,
                    "swept old rows"
                );
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "sweep failed; trying again later"),
        }
    })
    .await
}

/// Records unpaid orders past their deadline as expired (with `order.expired`), and passes
/// on the seats of waiting-list offers past theirs, every `interval`, until `stopped` turns
/// true. Orders whose deadline comes within the next three intervals, in events where
/// anyone waits, are kept past it so that their seats go to the waiting list. Every
/// instance does; each skips the orders and offers another is doing.
async fn expiries(
    state: Services,
    interval: Duration,
    stopped: tokio::sync::watch::Receiver<bool>,
) {
    every(interval, stopped, || async {
        match boxoffice_service::waitlist::pass_on_lapsed(&state).await {
            Ok(0) => {}
            Ok(passed) => tracing::info!(passed, "passed lapsed waiting-list offers on"),
            Err(error) => {
                tracing::warn!(%error, "passing lapsed offers on failed; trying again later")
            }
        }
        match boxoffice_service::waitlist::keep_lapsing(&state, 3 * interval).await {
            Ok(0) => {}
            Ok(kept) => tracing::info!(kept, "kept lapsing orders' seats for the waiting list"),
            Err(error) => {
                tracing::warn!(%error, "keeping lapsing orders for the waiting list failed; trying again later")
            }
        }
        let began = std::time::Instant::now();
        match boxoffice_store::pg::orders::expire_pending(&state.pool).await {
            Ok(0) => {}
            Ok(expired) => tracing::info!(
                expired,
                ms = began.elapsed().as_millis() as u64,
                "recorded unpaid orders as expired"
            ),
            Err(error) => {
                tracing::warn!(%error, "recording expired orders failed; trying again later")
            }
        }
    })
    .await
}

/// Completes on Ctrl-C or SIGTERM. The handlers are installed when this is called, not
/// when the future is first polled: a signal that comes between (while the server starts)
/// still ends it cleanly instead of killing the process.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let (mut interrupt, mut terminate) = signals;
            let interrupted = async {
                match interrupt.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let terminated = async {
                match terminate.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = interrupted => {},
                () = terminated => {},
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down: finishing requests in flight");
    }
}
