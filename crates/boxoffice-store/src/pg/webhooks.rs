//! Each organization's webhook: the URL its outbox events go to and the secret that signs
//! them. Setting and removing one writes its audit entry in the same transaction (the URL,
//! never the secret); relays read them all on every pass.

use boxoffice_core::ids::OrganizationId;
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;

use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;

/// An organization's webhook as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredWebhook {
    /// Whose it is.
    pub organization_id: OrganizationId,
    /// Where deliveries go.
    pub url: String,
    /// The HMAC-SHA256 key that signs them.
    pub secret: String,
    /// When it was first set.
    pub created_at: DateTime<Utc>,
    /// When it was last set.
    pub updated_at: DateTime<Utc>,
}

type WebhookRow = (uuid::Uuid, String, String, DateTime<Utc>, DateTime<Utc>);

fn webhook((organization, url, secret, created_at, updated_at): WebhookRow) -> StoredWebhook {
    StoredWebhook {
        organization_id: OrganizationId(organization),
        url,
        secret,
        created_at,
        updated_at,
    }
}

/// Sets `organization`'s webhook, replacing the one it had, with its audit entry:
/// `webhook.created` with the URL, or `webhook.updated` with the URL before and after and
/// the secret's replacement marked (never its value).
pub async fn set(
    pool: &PgPool,
    organization: OrganizationId,
    url: &str,
    secret: &str,
    actor: &Actor,
) -> Result<StoredWebhook, StoreError> {
    let mut tx = pool.begin().await?;
    let before: Option<(String, String)> = sqlx::query_as(
        "select url, secret from organization_webhook where organization_id = $1 for update",
    )
    .bind(organization.0)
    .fetch_optional(&mut *tx)
    .await?;
    let row: WebhookRow = sqlx::query_as(
        "insert into organization_webhook (organization_id, url, secret) values ($1, $2, $3)
         on conflict (organization_id)
         do update set url = excluded.url, secret = excluded.secret, updated_at = now()
         returning organization_id, url, secret, created_at, updated_at",
    )
    .bind(organization.0)
    .bind(url)
    .bind(secret)
    .fetch_one(&mut *tx)
    .await?;
    let change = match before {
        None => Change {
            action: Action::WebhookCreated,
            target_id: organization.to_string(),
            changes: json!({ "url": url }),
        },
        Some((before_url, before_secret)) => {
            let mut changes = serde_json::Map::new();
            if before_url != url {
                changes.insert("url".into(), json!([before_url, url]));
            }
            if before_secret != secret {
                changes.insert("secret".into(), json!(["(hidden)", "(replaced)"]));
            }
            Change {
                action: Action::WebhookUpdated,
                target_id: organization.to_string(),
                changes: changes.into(),
            }
        }
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(webhook(row))
}

/// `organization`'s webhook, if it has one.
pub async fn find(
    pool: &PgPool,
    organization: OrganizationId,
) -> Result<Option<StoredWebhook>, StoreError> {
    let row: Option<WebhookRow> = sqlx::query_as(
        "select organization_id, url, secret, created_at, updated_at
           from organization_webhook where organization_id = $1",
    )
    .bind(organization.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(webhook))
}

/// Every organization's webhook, for a relay's pass.
pub async fn all(pool: &PgPool) -> Result<Vec<StoredWebhook>, StoreError> {
    let rows: Vec<WebhookRow> = sqlx::query_as(
        "select organization_id, url, secret, created_at, updated_at from organization_webhook",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(webhook).collect())
}

/// Removes `organization`'s webhook, with its audit entry: whether it had one. Its events
/// wait again until one is set.
pub async fn remove(
    pool: &PgPool,
    organization: OrganizationId,
    actor: &Actor,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let url: Option<String> = sqlx::query_scalar(
        "delete from organization_webhook where organization_id = $1 returning url",
    )
    .bind(organization.0)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(url) = url else {
        return Ok(false);
    };
    let change = Change {
        action: Action::WebhookDeleted,
        target_id: organization.to_string(),
        changes: json!({ "url": [url, null] }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(true)
}
