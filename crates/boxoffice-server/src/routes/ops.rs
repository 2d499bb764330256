//! Operations: liveness, readiness, metrics.

use boxoffice_api::Health;
use boxoffice_service::health;
use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::error::{ApiError, Problem};
use crate::state::AppState;
use boxoffice_service::overload::Path;

/// How long a readiness probe waits for each store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a scrape of `/metrics` waits for each store it asks (readiness, Redis, the
/// outbox): a store that takes longer reads as down.
const SCRAPE_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "Up", body = Health)))]
pub async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
    })
}

/// The database and the hold store answer; 503 otherwise.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "A store is unreachable", body = Problem),
    ))]
pub async fn readyz(State(state): State<AppState>) -> Result<axum::Json<Health>, ApiError> {
    let check = async { Ok::<_, ApiError>(health::ping(&state).await?) };
    match tokio::time::timeout(READY_TIMEOUT, check).await {
        Ok(result) => result.map(|()| {
            axum::Json(Health {
                status: "ready".into(),
            })
        }),
        Err(_) => Err(ApiError::Unavailable {
            reason: "readiness check timed out".into(),
            retry_after: Duration::from_secs(1),
        }),
    }
}

/// Prometheus text: `http_requests_total` and `http_request_duration_seconds` by method,
/// route and status, the counters of the hold store and the sale-day gate, the live
/// streams open (`boxoffice_live_subscribers`) and live changes lost on their way to the
/// bus (`boxoffice_live_dropped_total`), holds refused without asking the hold store
/// because the seats were known taken (`boxoffice_holds_refused_unasked_total`), and for
/// each event whose waiting room is on, by
/// `event`: tickets waiting (`boxoffice_queue_waiting`), admitted
/// (`boxoffice_queue_admitted_total`; per minute, its rate), lapsed unexchanged
/// (`boxoffice_queue_dropped_total`) and passes ended early (`boxoffice_queue_ended_total`);
/// with a replica configured, whether reads go to it (`boxoffice_replica_in_use`, 1 or 0);
/// with the adaptive concurrency limits on, by `path` (`hold`: holds, extensions and
/// bookings; `checkout`), the limit (`boxoffice_overload_limit`), the requests in flight
/// under it (`boxoffice_overload_in_flight`), those waiting for a place
/// (`boxoffice_overload_waiting`) and those it refused (`boxoffice_overload_shed_total`);
/// the rounds of the expiry worker done (`boxoffice_expiry_rounds_total`), the outbox
/// relay's passes (`boxoffice_relay_passes_total`) and the replica's checks
/// (`boxoffice_replica_checks_total`). Also: the hold store's calls, by `store` and
/// `outcome` (`boxoffice_hold_duration_seconds`: granted, refused, retried, error;
/// `boxoffice_checkout_duration_seconds`: sold, pending, repeated, refused, error); the
/// Postgres pool (`boxoffice_db_pool_connections` by `state`, in_use or idle, and
/// `boxoffice_db_pool_max`); Redis (`boxoffice_redis_up`, `boxoffice_redis_breaker_open`,
/// and `boxoffice_redis_needed`: 1 when the hold store, the sale-day gate or a waiting
/// room uses it); the outbox rows not yet delivered (`boxoffice_outbox_backlog`) and the
/// age of the oldest (`boxoffice_outbox_oldest_seconds`); whether the instance is ready
/// (`boxoffice_ready`, as `/readyz`); and `boxoffice_build_info` by `version`.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain")))]
pub async fn get_metrics(State(state): State<AppState>) -> impl IntoResponse {
    let subscribers = state.live.subscribers() as f64;
    let queues = boxoffice_service::queue::counts(&state).await;
    let replica_in_use = state
        .replica
        .as_deref()
        .map(|r| (if r.pool().is_some() { 1.0 } else { 0.0 }, r.checks()));
    let probe = |ok: bool| if ok { 1.0 } else { 0.0 };
    let (ready, redis_up, backlog, queued) = tokio::join!(
        tokio::time::timeout(SCRAPE_PROBE_TIMEOUT, health::ping(&state)),
        tokio::time::timeout(SCRAPE_PROBE_TIMEOUT, state.waiting_room.ping()),
        tokio::time::timeout(SCRAPE_PROBE_TIMEOUT, health::outbox_backlog(&state)),
        tokio::time::timeout(SCRAPE_PROBE_TIMEOUT, health::queued_events(&state, 1)),
    );
    let ready = probe(matches!(ready, Ok(Ok(_))));
    let redis_up = probe(matches!(redis_up, Ok(Ok(()))));
    let breaker_open = probe(state.waiting_room.failing_fast() || state.holds.failing_fast());
    let redis_needed = probe(
        state.holds.kind() == "redis"
            || state.gate.is_some()
            || matches!(&queued, Ok(Ok(events)) if !events.is_empty()),
    );
    let pool_size = state.pool.size();
    let pool_idle = u32::try_from(state.pool.num_idle()).unwrap_or(u32::MAX);
    let pool_max = state.pool.options().get_max_connections();
    state.metrics.record(|| {
        metrics::gauge!("boxoffice_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
        metrics::gauge!("boxoffice_ready").set(ready);
        metrics::gauge!("boxoffice_redis_up").set(redis_up);
        metrics::gauge!("boxoffice_redis_breaker_open").set(breaker_open);
        metrics::gauge!("boxoffice_redis_needed").set(redis_needed);
        metrics::gauge!("boxoffice_db_pool_connections", "state" => "in_use")
            .set(f64::from(pool_size.saturating_sub(pool_idle)));
        metrics::gauge!("boxoffice_db_pool_connections", "state" => "idle")
            .set(f64::from(pool_idle));
        metrics::gauge!("boxoffice_db_pool_max").set(f64::from(pool_max));
        if let Ok(Ok((rows, oldest))) = backlog {
            metrics::gauge!("boxoffice_outbox_backlog").set(rows as f64);
            metrics::gauge!("boxoffice_outbox_oldest_seconds").set(oldest);
        }
        metrics::gauge!("boxoffice_live_subscribers").set(subscribers);
        if state.overload.is_on() {
            for path in Path::ALL {
                let (limit, in_flight) =
                    (state.overload.limit(path), state.overload.in_flight(path));
                metrics::gauge!("boxoffice_overload_limit", "path" => path.name())
                    .set(limit as f64);
                metrics::gauge!("boxoffice_overload_in_flight", "path" => path.name())
                    .set(in_flight as f64);
                metrics::gauge!("boxoffice_overload_waiting", "path" => path.name())
                    .set(state.overload.waiting(path) as f64);
            }
        }
        for path in Path::ALL {
            metrics::counter!("boxoffice_overload_shed_total", "path" => path.name())
                .absolute(state.overload.shed_total(path));
        }
        if let Some((in_use, checks)) = replica_in_use {
            metrics::gauge!("boxoffice_replica_in_use").set(in_use);
            metrics::counter!("boxoffice_replica_checks_total").absolute(checks);
        }
        for (event, counts) in &queues {
            let event = event.to_string();
            metrics::gauge!("boxoffice_queue_waiting", "event" => event.clone())
                .set(counts.waiting as f64);
            metrics::counter!("boxoffice_queue_admitted_total", "event" => event.clone())
                .absolute(counts.admitted);
            metrics::counter!("boxoffice_queue_dropped_total", "event" => event.clone())
                .absolute(counts.dropped);
            metrics::counter!("boxoffice_queue_ended_total", "event" => event)
                .absolute(counts.ended);
        }
    });
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(
            &[
                state.holds.counters(),
                state.rate_limits.counters().to_vec(),
                vec![
                    ("boxoffice_live_dropped_total", state.live.dropped_total()),
                    (
                        "boxoffice_holds_refused_unasked_total",
                        state.live.taken().answered_total(),
                    ),
                ],
            ]
            .concat(),
        ),
    )
}
