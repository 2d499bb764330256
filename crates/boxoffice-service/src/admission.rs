//! Who may hold and book while an event's waiting room is on.
//!
//! Every hold and booking asks whether the event's queue is on, so each instance keeps the
//! queue settings it read for a moment ([`SETTINGS_KEPT`]) and forgets an event's at once
//! when any instance changes them (the live bus carries the word). When kept settings grow
//! old, one request reads them again while the others go on with the kept ones, and
//! settings never read are read by one request at a time: thousands of buyers arriving
//! together make one query, not thousands. A pass is checked here by its signature alone
//! ([`crate::pass`]); whether it ended early (its buyer checked out or released every hold)
//! is the hold store's to say, in the claim itself (`HoldRequest::pass`), so every instance
//! refuses an ended pass, after a restart too.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::EventId;
use boxoffice_store::pg::events;
use boxoffice_store::StoreError;
use sqlx::PgPool;

use crate::pass::Passes;
use crate::Secret;

/// How long an instance answers from the queue settings it read, should the word that
/// they changed not reach it.
pub const SETTINGS_KEPT: Duration = Duration::from_secs(2);
/// Events whose settings are kept before the stale ones are cleared out.
const EVENTS_KEPT: usize = 10_000;

/// The waiting rooms' side of holding and booking.
pub struct Admission {
    /// Mints and checks passes.
    pub passes: Passes,
    settings: Mutex<HashMap<EventId, Kept>>,
    /// Held while reading settings no request has kept yet.
    first_read: tokio::sync::Mutex<()>,
}

struct Kept {
    read: Instant,
    queue: Option<QueueSettings>,
    /// A request is reading them again.
    rereading: bool,
}

/// What to do about an event's settings.
enum Lookup {
    Use(Option<QueueSettings>),
    Reread,
    FirstRead,
}

impl Admission {
    /// Passes signed with a key derived from `jwt_secret`; nothing kept yet.
    pub fn new(jwt_secret: &Secret) -> Self {
        Self {
            passes: Passes::new(jwt_secret),
            settings: Mutex::default(),
            first_read: tokio::sync::Mutex::const_new(()),
        }
    }

    /// The event's waiting room if it is on (`None` too for an event that does not exist).
    pub async fn queue(
        &self,
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<QueueSettings>, StoreError> {
        let _first_read = match self.kept(event) {
            Lookup::Use(queue) => return Ok(queue),
            Lookup::Reread => None,
            Lookup::FirstRead => {
                let turn = self.first_read.lock().await;
                // Another request may have read them meanwhile.
                if let Lookup::Use(queue) = self.kept(event) {
                    return Ok(queue);
                }
                Some(turn)
            }
        };
        let read = Instant::now();
        let queue = match events::queue(pool, event).await {
            Ok(queue) => queue.filter(|q| q.enabled),
            Err(error) => {
                if let Some(kept) = self.lock_settings().get_mut(&event) {
                    kept.rereading = false;
                }
                return Err(error);
            }
        };
        let mut settings = self.lock_settings();
        if settings.len() >= EVENTS_KEPT {
            settings.retain(|_, kept| kept.read.elapsed() < SETTINGS_KEPT);
        }
        settings.insert(
            event,
            Kept {
                read,
                queue,
                rereading: false,
            },
        );
        Ok(queue)
    }

    /// Whether the kept settings of `event` serve this request, or it reads them.
    fn kept(&self, event: EventId) -> Lookup {
        let mut settings = self.lock_settings();
        match settings.get_mut(&event) {
            // A reread that went away unfinished is given up on after a while.
            Some(kept)
                if kept.read.elapsed() < SETTINGS_KEPT
                    || (kept.rereading && kept.read.elapsed() < 2 * SETTINGS_KEPT) =>
            {
                Lookup::Use(kept.queue)
            }
            Some(kept) => {
                kept.rereading = true;
                Lookup::Reread
            }
            None => Lookup::FirstRead,
        }
    }

    /// Forgets the event's settings: they changed.
    pub fn forget(&self, event: EventId) {
        self.lock_settings().remove(&event);
    }

    /// Forgets every event's settings (word of a change may have been missed).
    pub fn forget_all(&self) {
        self.lock_settings().clear();
    }

    fn lock_settings(&self) -> std::sync::MutexGuard<'_, HashMap<EventId, Kept>> {
        self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }
}
