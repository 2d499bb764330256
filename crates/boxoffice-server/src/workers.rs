//! The background workers of a running server: upkeep, the keys, sweeps, and expiries
//! (unpaid orders and lapsed waiting-list offers), each on its own interval until the
//! server stops.

use std::future::Future;
use std::time::Duration;

use boxoffice_service::Services;

use crate::state::AppState;

/// Background chores of a running server, until `stopped` turns true: draining metric
/// samples into their buckets, forgetting rate-limit counts of clients gone quiet.
pub(crate) async fn upkeep(state: AppState, mut stopped: tokio::sync::watch::Receiver<bool>) {
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

/// How often a server asks whether the keys changed: a key revoked on one instance stops
/// working on every other within this, and the time a reload takes.
pub const KEY_REFRESH: Duration = Duration::from_millis(250);

/// Keeps the key ring in step with Postgres ([`KEY_REFRESH`]), and writes down which keys
/// were used every half minute, until `stopped` turns true.
pub(crate) async fn keys(state: Services, stopped: tokio::sync::watch::Receiver<bool>) {
    let rounds = std::sync::atomic::AtomicU32::new(0);
    every(KEY_REFRESH, stopped, || async {
        if let Err(error) = state.keys.refresh(&state.pool).await {
            tracing::warn!(%error, "reloading the keys failed; trying again shortly");
        }
        let round = rounds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if round.is_multiple_of(120) {
            if let Err(error) = state.keys.record_use(&state.pool).await {
                tracing::warn!(%error, "recording the keys' use failed; trying again later");
            }
        }
    })
    .await
}

/// Sweeps old idempotency answers, delivered outbox rows, ended passes and events that
/// waited too long for a webhook every `interval`, until
/// `stopped` turns true. Every instance sweeps; sweeps skip rows another is deleting.
pub(crate) async fn sweeps(
    state: Services,
    retention: boxoffice_store::pg::sweep::Retention,
    interval: Duration,
    stopped: tokio::sync::watch::Receiver<bool>,
) {
    every(interval, stopped, || async {
        match boxoffice_service::housekeeping::sweep(&state, retention).await {
            Ok(swept) if swept != Default::default() => {
                tracing::info!(
                    idempotency = swept.idempotency,
                    outbox = swept.outbox,
                    passes = swept.passes,
                    waited = swept.waited,
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
/// on the seats of waiting-list offers past theirs, and unpaid bookings past theirs (their
/// places back in their areas), every `interval`, until `stopped` turns
/// true. Orders whose deadline comes within the next three intervals, in events where
/// anyone waits, are kept past it so that their seats go to the waiting list. Every
/// instance does; each skips the orders and offers another is doing. Each round done is
/// counted (`boxoffice_expiry_rounds_total`).
pub(crate) async fn expiries(
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
        match boxoffice_service::housekeeping::expire_unpaid(&state).await {
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
        match boxoffice_service::bookings::expire_unpaid(&state).await {
            Ok(0) => {}
            Ok(places) => tracing::info!(places, "recorded unpaid bookings as expired"),
            Err(error) => {
                tracing::warn!(%error, "recording expired bookings failed; trying again later")
            }
        }
        state.metrics.increment("boxoffice_expiry_rounds_total");
    })
    .await
}
