//! The application: the services built over the stores, the router served on a socket,
//! the background workers started, and a clean stop on a signal.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use boxoffice_service::Services;
use boxoffice_store::hold_store::HoldStore;
use boxoffice_store::pg::db;
use boxoffice_store::pg::holds::PgHoldStore;
use boxoffice_store::redis::holds::RedisHoldStore;
use tokio::net::TcpListener;

use crate::config::{HoldStoreKind, Settings};
use crate::encoded::EncodedCache;
use crate::router::{router, BodyLimits};
use crate::state::{AppState, Inner};
use crate::tokens::Auth;
use crate::workers::{expiries, keys, sweeps, upkeep};

/// A server bound to its address, its database created and migrated, ready to run.
pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    relay: crate::relay::RelayConfig,
    limits: crate::serve::ConnectionLimits,
    retention: boxoffice_store::pg::sweep::Retention,
    sweep_interval: Duration,
    expiry_interval: Duration,
}

impl Application {
    /// Creates the database if missing, migrates it, builds the hold store and binds the
    /// listener (port 0 picks a free port).
    pub async fn build(settings: &Settings) -> anyhow::Result<Self> {
        db::ensure_database(&settings.stores.database.url).await?;
        let pool = db::connect_lazy(&settings.stores.database)?;
        db::migrate(&pool).await?;
        let holds: Arc<dyn HoldStore> = match settings.stores.hold_store {
            HoldStoreKind::Postgres => Arc::new(PgHoldStore::new(pool.clone())),
            HoldStoreKind::Redis => {
                Arc::new(RedisHoldStore::new(&settings.stores.redis, pool.clone())?)
            }
        };
        let gate = if settings.stores.ga_gate {
            Some(boxoffice_store::redis::gate::Gate::new(
                &settings.stores.redis,
            )?)
        } else {
            None
        };
        // Where Redis is in use anyway, the limits count there, across every instance.
        let uses_redis =
            settings.stores.hold_store == HoldStoreKind::Redis || settings.stores.ga_gate;
        let rate_limits = boxoffice_service::limits::RateLimits::new(
            settings.limits.sessions_per_minute,
            settings.limits.holds_per_minute,
            if uses_redis {
                Some(boxoffice_store::redis::rate_limit::RedisRateLimit::new(
                    &settings.stores.redis,
                )?)
            } else {
                None
            },
        );
        let mut services = Services::builder(
            pool,
            holds,
            &settings.stores.redis,
            &settings.server.jwt_secret,
        )
        .rate_limits(rate_limits)
        .live(settings.live.stream_heartbeat, settings.live.known_taken)
        .overload(settings.limits.overload);
        if let Some(gate) = gate {
            services = services.gate(gate);
        }
        if let Some((config, max_lag)) = &settings.stores.replica {
            services = services.replica(boxoffice_service::replica::Replica::new(
                boxoffice_store::pg::db::connect_lazy(config)?,
                *max_lag,
            ));
        }
        let services = services.build()?;
        // Keys work from the first request on.
        services.keys.refresh(&services.pool).await?;
        let state = AppState::new(Inner {
            services,
            auth: Auth::new(&settings.server.admin_token, &settings.server.jwt_secret),
            anonymous_sessions: settings.server.anonymous_sessions,
            anonymous_users: crate::anonymous::AnonymousUsers::new(
                &settings.server.jwt_secret,
                settings.limits.sessions_per_address,
            ),
            demo_payments: settings.server.demo_payments,
            encoded: EncodedCache::new(boxoffice_service::CACHED_EVENTS),
            streams: boxoffice_service::limits::StreamSlots::new(
                settings.limits.streams_per_address,
            ),
            max_import_bytes: settings.limits.max_import_bytes,
            trusted_proxies: settings.server.trusted_proxies.clone(),
        });
        let router = router(
            state.clone(),
            settings.limits.request_timeout,
            BodyLimits {
                ordinary: settings.limits.max_body_bytes,
                import: settings.limits.max_import_bytes,
            },
            &settings.server.allowed_origins,
        );
        let listener = crate::serve::bind(settings.server.bind)?;
        let mut limits = settings.limits.connections;
        limits.max_connections = crate::serve::fit_connection_cap(limits.max_connections);
        Ok(Self {
            listener,
            router,
            state,
            relay: settings.operations.relay.clone(),
            limits,
            retention: settings.operations.retention,
            sweep_interval: settings.operations.sweep_interval,
            expiry_interval: settings.operations.expiry_interval,
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

    /// Serves (and relays the outbox to the webhooks) until `shutdown`
    /// completes, then lets requests in flight finish for at most the shutdown grace
    /// period.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let passes = Services::clone(&self.state);
        let relay = tokio::spawn(
            crate::relay::Relay::new(self.state.pool.clone(), self.relay)
                .counting(move || passes.metrics.increment("boxoffice_relay_passes_total"))
                .run(stopped.clone()),
        );
        let sweeps = tokio::spawn(sweeps(
            Services::clone(&self.state),
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
        let keys = tokio::spawn(keys(Services::clone(&self.state), stopped.clone()));
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
        let _ = relay.await;
        if let Some(replica) = replica {
            let _ = replica.await;
        }
        let _ = upkeep.await;
        let _ = keys.await;
        let _ = sweeps.await;
        let _ = expiries.await;
        Ok(())
    }
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
