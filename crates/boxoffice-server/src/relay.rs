//! The outbox relay: delivers outbox rows to webhooks at least once, in order per event,
//! signed with HMAC-SHA256, retrying failures with exponential backoff.
//!
//! A row goes to its event's organization's webhook (set through the API, signed with the
//! organization's secret), and a `default` organization's row also to the URLs the relay
//! was started with (`BOXOFFICE_WEBHOOK_URLS`, signed with `BOXOFFICE_WEBHOOK_SECRET`).
//! The webhooks are read on every pass, so one set on any instance is served within a
//! pass; an organization with nowhere to deliver to has its rows wait, in order.
//!
//! A delivery is a `POST` of `{"id", "topic", "event_id", "created_at", "payload"}` with
//! `Boxoffice-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` and
//! `Boxoffice-Delivery: <id>`. Receivers should check the signature and the timestamp's
//! age, and drop ids they have seen: at-least-once means a row can arrive twice (say, the
//! relay stopped after the receiver answered but before the row was marked).
//!
//! Rows are leased, not locked: a claim marks them `locked_until` and commits, so no
//! database transaction waits on a slow receiver.
//!
//! A pass that loses the database part way (a failover) keeps what it could not write:
//! the rows it delivered, the failures, and the leases it meant to give back. The next
//! pass writes them first, so once the database is back those rows are neither sent again
//! nor left waiting out their lease. A lease given back late is ended only if it is still
//! the claim's own.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use boxoffice_core::ids::OrganizationId;
use boxoffice_store::journal::outbox::{self, OutboxRow};
use boxoffice_store::pg::webhooks;
use boxoffice_store::StoreError;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;
use sqlx::PgPool;
use tokio::sync::watch;

use boxoffice_service::Secret;

/// One place a row is delivered to, and the key that signs it there.
#[derive(Clone, Debug)]
pub struct Target {
    /// Where deliveries go.
    pub url: String,
    /// HMAC-SHA256 key for the signature header.
    pub secret: Secret,
}

/// Where and how to deliver.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// Webhook URLs every `default` organization's row goes to, besides that
    /// organization's own webhook (`BOXOFFICE_WEBHOOK_URLS`).
    pub urls: Vec<String>,
    /// HMAC-SHA256 key for [`RelayConfig::urls`]' signature header.
    pub secret: Secret,
    /// How long to wait after a pass that found nothing due.
    pub poll_interval: Duration,
    /// First retry delay; doubled after each failed attempt.
    pub backoff_base: Duration,
    /// Longest retry delay.
    pub backoff_max: Duration,
    /// Time limit of one delivery.
    pub timeout: Duration,
    /// Most events claimed per pass.
    pub batch: i64,
    /// Most rows of one event claimed per pass, delivered one after another.
    pub run: i64,
    /// How long a claim keeps a row from other relays: by default longer than delivering
    /// it to every URL can take (these and an organization's own), so a live relay never
    /// loses a row it is delivering.
    pub lease: Duration,
}

impl RelayConfig {
    /// Defaults for these URLs and secret (the `default` organization's, besides its
    /// webhook).
    pub fn new(urls: Vec<String>, secret: Secret) -> Self {
        let timeout = Duration::from_secs(10);
        let lease = timeout * (urls.len() as u32 + 1) + Duration::from_secs(30);
        Self {
            urls,
            secret,
            poll_interval: Duration::from_millis(500),
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(300),
            timeout,
            batch: 100,
            run: 50,
            lease,
        }
    }

    /// Defaults for a relay that serves organizations' own webhooks only.
    pub fn webhooks_only() -> Self {
        Self::new(Vec::new(), Secret::random())
    }

    /// How long to wait before attempt `attempts + 1`, after `attempts` failures.
    pub fn backoff(&self, attempts: i32) -> Duration {
        let factor = 2u32.saturating_pow(attempts.clamp(0, 20) as u32);
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Rows delivered to every URL.
    pub delivered: usize,
    /// Rows that failed and wait for their retry.
    pub failed: usize,
}

/// The `Boxoffice-Signature` value for `body` sent at `timestamp` (unix seconds).
pub fn signature(secret: &Secret, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// What a pass has to write about a row it claimed once a receiver has answered (or it
/// stopped before asking one).
#[derive(Clone, Debug)]
enum Settle {
    /// The row reached every target.
    Delivered { outbox_id: i64 },
    /// A target refused it: try again after `retry_in`.
    Failed {
        outbox_id: i64,
        error: String,
        retry_in: Duration,
        leased_until: DateTime<Utc>,
    },
    /// The pass will not deliver these rows of one event: end their lease.
    Release {
        event_id: uuid::Uuid,
        outbox_ids: Vec<i64>,
        leased_until: DateTime<Utc>,
    },
}

impl Settle {
    /// Gives back `rows`, if there are any.
    fn release(rows: &[OutboxRow]) -> Option<Self> {
        let first = rows.first()?;
        Some(Self::Release {
            event_id: first.event_id,
            outbox_ids: rows.iter().map(|r| r.outbox_id).collect(),
            leased_until: first.leased_until,
        })
    }

    async fn write(&self, pool: &PgPool) -> Result<(), StoreError> {
        match self {
            Self::Delivered { outbox_id } => outbox::mark_delivered(pool, *outbox_id).await,
            Self::Failed {
                outbox_id,
                error,
                retry_in,
                leased_until,
            } => outbox::mark_failed(pool, *outbox_id, error, *retry_in, *leased_until).await,
            Self::Release {
                event_id,
                outbox_ids,
                leased_until,
            } => outbox::release(pool, *event_id, outbox_ids, *leased_until).await,
        }
    }
}

/// Delivers outbox rows; several may run at once against one database.
pub struct Relay {
    pool: PgPool,
    config: RelayConfig,
    client: reqwest::Client,
    /// What earlier passes could not write (the database went away), oldest first.
    unsettled: Mutex<Vec<Settle>>,
    /// Told after every pass, done or failed (a server counts them in its metrics).
    on_pass: Option<Box<dyn Fn() + Send + Sync>>,
}

impl Relay {
    /// A relay over this pool.
    pub fn new(pool: PgPool, config: RelayConfig) -> Self {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .expect("a plain HTTP client builds");
        Self {
            pool,
            config,
            client,
            unsettled: Mutex::default(),
            on_pass: None,
        }
    }

    /// The same relay, calling `told` after each pass it runs, done or failed.
    pub fn counting(self, told: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            on_pass: Some(Box::new(told)),
            ..self
        }
    }

    /// One pass: leases the oldest due rows of each event, up to [`RelayConfig::run`] of
    /// them (events another relay leased are passed over), and delivers each event's rows
    /// one after another, marking each delivered or failed. Events are delivered at once.
    /// An event's delivery stops at a failure, or when its lease runs short, and the rows
    /// after that go back unleased. No transaction is open while a receiver answers. If
    /// the relay dies mid-pass its leases lapse and the rows are delivered again later:
    /// at least once. A pass first writes what earlier passes could not.
    pub async fn pass(&self) -> Result<PassReport, StoreError> {
        self.settle_earlier().await?;
        let targets = self.targets().await?;
        let organizations: Vec<OrganizationId> = targets.keys().copied().collect();
        let claimed = Instant::now();
        let rows = outbox::lease_runs(
            &self.pool,
            &organizations,
            self.config.batch,
            self.config.run,
            self.config.lease,
        )
        .await?;
        let mut rows = rows;
        rows.sort_by_key(|r| (r.event_id, r.outbox_id));
        let runs = rows.chunk_by(|a, b| a.event_id == b.event_id);
        let reports = futures::future::join_all(runs.map(|run| {
            let to = targets
                .get(&OrganizationId(run[0].organization_id))
                .map_or(&[][..], Vec::as_slice);
            self.deliver_run(run, to, claimed)
        }))
        .await;
        let mut report = PassReport::default();
        for one in reports {
            let one = one?;
            report.delivered += one.delivered;
            report.failed += one.failed;
        }
        Ok(report)
    }

    /// Where each organization's rows go now: its webhook, and for the `default`
    /// organization the relay's own URLs too. Organizations with nowhere are left out.
    async fn targets(&self) -> Result<HashMap<OrganizationId, Vec<Target>>, StoreError> {
        let mut targets: HashMap<OrganizationId, Vec<Target>> = HashMap::new();
        if !self.config.urls.is_empty() {
            targets.insert(
                OrganizationId::DEFAULT,
                self.config
                    .urls
                    .iter()
                    .map(|url| Target {
                        url: url.clone(),
                        secret: self.config.secret.clone(),
                    })
                    .collect(),
            );
        }
        for webhook in webhooks::all(&self.pool).await? {
            targets
                .entry(webhook.organization_id)
                .or_default()
                .push(Target {
                    url: webhook.url,
                    secret: Secret::new(webhook.secret),
                });
        }
        Ok(targets)
    }

    /// Delivers one event's claimed rows in order to `targets`, until one fails or the
    /// lease would not cover another delivery to every target; gives back the rest.
    async fn deliver_run(
        &self,
        run: &[OutboxRow],
        targets: &[Target],
        claimed: Instant,
    ) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        let longest = self.config.timeout * (targets.len().max(1) as u32);
        for (i, row) in run.iter().enumerate() {
            if i > 0 && claimed.elapsed() + longest >= self.config.lease {
                if let Some(rest) = Settle::release(&run[i..]) {
                    self.settle(rest, &[]).await?;
                }
                return Ok(report);
            }
            match self.deliver(row, targets).await {
                Ok(()) => {
                    let delivered = Settle::Delivered {
                        outbox_id: row.outbox_id,
                    };
                    self.settle(delivered, &run[i + 1..]).await?;
                    report.delivered += 1;
                }
                Err(error) => {
                    tracing::warn!(outbox_id = row.outbox_id, %error, "webhook delivery failed");
                    let failed = Settle::Failed {
                        outbox_id: row.outbox_id,
                        error,
                        retry_in: self.config.backoff(row.attempts),
                        leased_until: row.leased_until,
                    };
                    self.settle(failed, &run[i + 1..]).await?;
                    report.failed += 1;
                    if let Some(rest) = Settle::release(&run[i + 1..]) {
                        self.settle(rest, &[]).await?;
                    }
                    return Ok(report);
                }
            }
        }
        Ok(report)
    }

    /// Writes `settle`; if the database cannot take it, keeps it for the next pass, with
    /// the giving back of `rest` (the run's rows this pass will now not deliver).
    async fn settle(&self, settle: Settle, rest: &[OutboxRow]) -> Result<(), StoreError> {
        let Err(error) = settle.write(&self.pool).await else {
            return Ok(());
        };
        let mut unsettled = self.unsettled.lock().expect("never poisoned");
        unsettled.push(settle);
        unsettled.extend(Settle::release(rest));
        Err(error)
    }

    /// Writes, in order, what earlier passes could not; keeps what it still cannot.
    async fn settle_earlier(&self) -> Result<(), StoreError> {
        let earlier = std::mem::take(&mut *self.unsettled.lock().expect("never poisoned"));
        for (i, settle) in earlier.iter().enumerate() {
            if let Err(error) = settle.write(&self.pool).await {
                let mut unsettled = self.unsettled.lock().expect("never poisoned");
                unsettled.splice(0..0, earlier[i..].iter().cloned());
                return Err(error);
            }
        }
        Ok(())
    }

    async fn deliver(&self, row: &OutboxRow, targets: &[Target]) -> Result<(), String> {
        if targets.is_empty() {
            return Err("no webhook to deliver to".to_owned());
        }
        let body = serde_json::to_vec(&json!({
            "id": row.outbox_id,
            "topic": row.topic,
            "event_id": row.event_id,
            "created_at": row.created_at,
            "payload": row.payload.0,
        }))
        .map_err(|e| e.to_string())?;
        for Target { url, secret } in targets {
            let signature = signature(secret, chrono::Utc::now().timestamp(), &body);
            let response = self
                .client
                .post(url)
                .header("content-type", "application/json")
                .header("boxoffice-signature", &signature)
                .header("boxoffice-delivery", row.outbox_id.to_string())
                .body(body.clone())
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            if !response.status().is_success() {
                return Err(format!("{url}: answered {}", response.status()));
            }
        }
        Ok(())
    }

    /// Runs passes until `stop` turns true: back to back while rows are due, otherwise
    /// every poll interval. A pass that fails (the database is down) is logged and tried
    /// again after the interval.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        while !*stop.borrow() {
            let idle = match self.pass().await {
                Ok(report) => report.delivered + report.failed == 0,
                Err(error) => {
                    tracing::warn!(%error, "outbox relay pass failed");
                    true
                }
            };
            if let Some(told) = &self.on_pass {
                told();
            }
            if idle {
                tokio::select! {
                    _ = stop.changed() => {}
                    () = tokio::time::sleep(self.config.poll_interval) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = RelayConfig::new(vec![], Secret::new("s"));
        let delays: Vec<u64> = (0..4).map(|a| config.backoff(a).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8]);
        assert_eq!(config.backoff(30), Duration::from_secs(300));
    }

    #[test]
    fn the_signature_covers_timestamp_and_body() {
        let secret = Secret::new("whsec");
        let a = signature(&secret, 1_700_000_000, b"{}");
        assert!(a.starts_with("t=1700000000,v1=") && a.len() == "t=1700000000,v1=".len() + 64);
        assert_ne!(a, signature(&secret, 1_700_000_001, b"{}"));
        assert_ne!(a, signature(&secret, 1_700_000_000, b"{ }"));
        assert_ne!(a, signature(&Secret::new("other"), 1_700_000_000, b"{}"));
    }
}
