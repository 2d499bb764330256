//! What every handler shares: the services, auth and the compressed answers.

use std::ops::Deref;
use std::sync::Arc;

use boxoffice_service::limits::StreamSlots;
use boxoffice_service::Services;
use ipnet::IpNet;

use crate::encoded::EncodedCache;
use crate::tokens::Auth;

/// Shared application state; cheap to clone. It derefs to the [`Services`], which the
/// handlers pass on to the service they call.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// The parts of [`AppState`].
pub struct Inner {
    /// The flows and what they share.
    pub services: Services,
    /// Token verification and minting.
    pub auth: Auth,
    /// Whether `POST /v1/sessions` is enabled.
    pub anonymous_sessions: bool,
    /// Who an anonymous session is, by its client address.
    pub anonymous_users: crate::anonymous::AnonymousUsers,
    /// Whether the test payment page is served (`--demo`).
    pub demo_payments: bool,
    /// Seat maps and layouts compressed once for repeat loads.
    pub encoded: EncodedCache,
    /// Event streams open per client address.
    pub streams: StreamSlots,
    /// The largest body the venue import reads, in bytes (`BOXOFFICE_MAX_IMPORT_BYTES`).
    pub max_import_bytes: usize,
    /// Proxies whose `X-Forwarded-For` names the client (`BOXOFFICE_TRUSTED_PROXIES`).
    pub trusted_proxies: Vec<IpNet>,
}

impl AppState {
    /// Wraps the parts.
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }

    /// Token verification and minting.
    pub fn auth(&self) -> &Auth {
        &self.0.auth
    }

    /// Whether `POST /v1/sessions` is enabled.
    pub fn anonymous_sessions(&self) -> bool {
        self.0.anonymous_sessions
    }

    /// Who an anonymous session is, by its client address.
    pub fn anonymous_users(&self) -> &crate::anonymous::AnonymousUsers {
        &self.0.anonymous_users
    }

    /// Whether the test payment page is served (`--demo`).
    pub fn demo_payments(&self) -> bool {
        self.0.demo_payments
    }

    /// The largest body the venue import reads, in bytes.
    pub fn max_import_bytes(&self) -> usize {
        self.0.max_import_bytes
    }

    /// Seat maps and layouts compressed once for repeat loads.
    pub fn encoded(&self) -> &EncodedCache {
        &self.0.encoded
    }

    /// Event streams open per client address.
    pub fn streams(&self) -> &StreamSlots {
        &self.0.streams
    }

    /// Proxies whose `X-Forwarded-For` names the client.
    pub fn trusted_proxies(&self) -> &[IpNet] {
        &self.0.trusted_proxies
    }
}

impl Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0.services
    }
}
