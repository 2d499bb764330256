//! Organizations and the keys their staff call with. A key is kept only as its SHA-256; the
//! servers hold every live key in memory and reload them when `key_generation` moves
//! (a trigger moves it with every change to the keys).
//!
//! (A long file: organizations, their keys, signing keys and who owns a thing are one
//! table of ownership each of them reads or writes, with the audit entry of each change.)

use boxoffice_core::access::Role;
use boxoffice_core::ids::{EventId, KeyId, OrganizationId};
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::PgPool;

use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;
use serde_json::json;

/// An organization as stored.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Organization {
    /// Its id.
    #[sqlx(try_from = "uuid::Uuid")]
    pub organization_id: OrganizationId,
    /// Its name.
    pub name: String,
    /// Its slug: 1–40 of `a-z 0-9 -`, unique.
    pub slug: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// Why an organization could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateOrganizationError {
    /// Another organization has the slug.
    #[error("the slug is taken")]
    SlugTaken,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Creates an organization, with its audit entry.
pub async fn create_organization(
    pool: &PgPool,
    id: OrganizationId,
    name: &str,
    slug: &str,
    actor: &Actor,
) -> Result<Organization, CreateOrganizationError> {
    let mut tx = pool.begin().await.map_err(StoreError::from)?;
    let created = sqlx::query_as::<_, Organization>(
        "insert into organization (organization_id, name, slug) values ($1, $2, $3)
         on conflict (slug) do nothing
         returning organization_id, name, slug, created_at",
    )
    .bind(id.0)
    .bind(name)
    .bind(slug)
    .fetch_optional(&mut *tx)
    .await
    .map_err(StoreError::from)?;
    let created = created.ok_or(CreateOrganizationError::SlugTaken)?;
    let change = Change {
        action: Action::OrganizationCreated,
        target_id: id.to_string(),
        changes: json!({ "name": name, "slug": slug }),
    };
    audit::write(&mut tx, actor, &change)
        .await
        .map_err(StoreError::from)?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(created)
}

/// Every organization, oldest first, or only `only`.
pub async fn list_organizations(
    pool: &PgPool,
    only: Option<OrganizationId>,
) -> Result<Vec<Organization>, StoreError> {
    Ok(sqlx::query_as::<_, Organization>(
        "select organization_id, name, slug, created_at from organization
          where $1::uuid is null or organization_id = $1
          order by created_at, organization_id",
    )
    .bind(only.map(|o| o.0))
    .fetch_all(pool)
    .await?)
}

/// One organization, by its id or its slug.
pub async fn find_organization(
    pool: &PgPool,
    id_or_slug: &str,
) -> Result<Option<Organization>, StoreError> {
    let id = boxoffice_core::ids::parse_canonical_uuid(id_or_slug);
    Ok(sqlx::query_as::<_, Organization>(
        "select organization_id, name, slug, created_at from organization
          where organization_id = $1 or ($1 is null and slug = $2)",
    )
    .bind(id)
    .bind(id_or_slug)
    .fetch_optional(pool)
    .await?)
}

/// A key as stored: everything but the key itself, which nobody keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredKey {
    /// Its id.
    pub key_id: KeyId,
    /// The organization it belongs to.
    pub organization_id: OrganizationId,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The first eight characters after `bxk_`.
    pub prefix: String,
    /// SHA-256 of the whole key.
    pub hash: [u8; 32],
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// The minute it was last used in, if ever.
    pub last_used_at: Option<DateTime<Utc>>,
    /// The events it is limited to (a check-in key paired to a door); every event of its
    /// organization when `None`.
    pub events: Option<Vec<EventId>>,
}

type KeyRow = (
    uuid::Uuid,
    uuid::Uuid,
    String,
    String,
    String,
    Vec<u8>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<Vec<uuid::Uuid>>,
);

const KEY_COLUMNS: &str = "key_id, organization_id, name, role, prefix, hash, created_at, \
                           expires_at, revoked_at, last_used_at, events";

fn stored_key(row: KeyRow) -> Result<StoredKey, StoreError> {
    let (
        key_id,
        organization_id,
        name,
        role,
        prefix,
        hash,
        created_at,
        expires,
        revoked,
        used,
        events,
    ) = row;
    Ok(StoredKey {
        key_id: KeyId(key_id),
        organization_id: OrganizationId(organization_id),
        name,
        role: role
            .parse()
            .map_err(|e| StoreError::Other(format!("api_key {key_id}: {e}").into()))?,
        prefix,
        hash: hash.try_into().map_err(|_| {
            StoreError::Other(format!("api_key {key_id}: a hash not 32 bytes").into())
        })?,
        created_at,
        expires_at: expires,
        revoked_at: revoked,
        last_used_at: used,
        events: events.map(|ids| ids.into_iter().map(EventId).collect()),
    })
}

/// Stores a new key, with its audit entry (never the key, nor its hash).
pub async fn insert_key(pool: &PgPool, key: &StoredKey, actor: &Actor) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "insert into api_key (key_id, organization_id, name, role, prefix, hash, created_at,
                              expires_at, events)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(key.key_id.0)
    .bind(key.organization_id.0)
    .bind(&key.name)
    .bind(key.role.as_str())
    .bind(&key.prefix)
    .bind(&key.hash[..])
    .bind(key.created_at)
    .bind(key.expires_at)
    .bind(
        key.events
            .as_ref()
            .map(|ids| ids.iter().map(|e| e.0).collect::<Vec<_>>()),
    )
    .execute(&mut *tx)
    .await?;
    let change = Change {
        action: Action::KeyCreated,
        target_id: key.key_id.to_string(),
        changes: json!({
            "name": key.name,
            "role": key.role,
            "prefix": key.prefix,
            "expires_at": key.expires_at,
            "events": key.events,
        }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(())
}

/// An organization's keys, oldest first, revoked ones too.
pub async fn list_keys(
    pool: &PgPool,
    organization: OrganizationId,
) -> Result<Vec<StoredKey>, StoreError> {
    let rows: Vec<KeyRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {KEY_COLUMNS} from api_key where organization_id = $1 order by created_at, key_id"
    )))
    .bind(organization.0)
    .fetch_all(pool)
    .await?;
    rows.into_iter().map(stored_key).collect()
}

/// Every key not revoked, for a server to hold in memory (expired ones too: a server checks
/// the expiry itself, as the moment passes).
pub async fn live_keys(pool: &PgPool) -> Result<Vec<StoredKey>, StoreError> {
    let rows: Vec<KeyRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {KEY_COLUMNS} from api_key where revoked_at is null"
    )))
    .fetch_all(pool)
    .await?;
    rows.into_iter().map(stored_key).collect()
}

/// Revokes an organization's key, with its audit entry: whether it was there (a key
/// already revoked is, and is left as it was, with no entry).
pub async fn revoke_key(
    pool: &PgPool,
    organization: OrganizationId,
    key: KeyId,
    actor: &Actor,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let found: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
        "select revoked_at from api_key where key_id = $1 and organization_id = $2 for update",
    )
    .bind(key.0)
    .bind(organization.0)
    .fetch_optional(&mut *tx)
    .await?;
    match found {
        None => return Ok(false),
        Some(Some(_)) => return Ok(true),
        Some(None) => {}
    }
    let revoked_at: DateTime<Utc> = sqlx::query_scalar(
        "update api_key set revoked_at = now() where key_id = $1 returning revoked_at",
    )
    .bind(key.0)
    .fetch_one(&mut *tx)
    .await?;
    let change = Change {
        action: Action::KeyRevoked,
        target_id: key.to_string(),
        changes: json!({ "revoked_at": [null, revoked_at] }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(true)
}

/// Where the keys are: it moves with every change to them.
pub async fn key_generation(pool: &PgPool) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("select generation from key_generation")
        .fetch_one(pool)
        .await?)
}

/// Records that these keys were used in the minute `at` falls in.
pub async fn record_key_use(
    pool: &PgPool,
    keys: &[KeyId],
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let ids: Vec<uuid::Uuid> = keys.iter().map(|k| k.0).collect();
    sqlx::query(
        "update api_key set last_used_at = date_trunc('minute', $2::timestamptz)
          where key_id = any($1)
            and (last_used_at is null or last_used_at < date_trunc('minute', $2::timestamptz))",
    )
    .bind(&ids)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Something an organization owns, by its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owned {
    /// A venue.
    Venue(uuid::Uuid),
    /// An event (and all that hangs off it).
    Event(uuid::Uuid),
    /// A season.
    Season(uuid::Uuid),
    /// An order: an event's or a season's, by either id.
    Order(uuid::Uuid),
    /// A general-admission booking.
    Booking(uuid::Uuid),
}

/// The organization that owns `thing`; none when there is no such thing.
pub async fn owner(pool: &PgPool, thing: Owned) -> Result<Option<OrganizationId>, StoreError> {
    let (sql, id) = match thing {
        Owned::Venue(id) => ("select organization_id from venue where venue_id = $1", id),
        Owned::Event(id) => ("select organization_id from event where event_id = $1", id),
        Owned::Season(id) => (
            "select organization_id from season where season_id = $1",
            id,
        ),
        Owned::Order(id) => (
            "select e.organization_id from ticket_order o join event e using (event_id)
              where o.order_id = $1
             union all
             select s.organization_id from season_order o join season s using (season_id)
              where o.season_order_id = $1
             limit 1",
            id,
        ),
        Owned::Booking(id) => (
            "select e.organization_id from ga_booking b join event e using (event_id)
              where b.booking_id = $1
             limit 1",
            id,
        ),
    };
    let owner: Option<uuid::Uuid> = sqlx::query_scalar(sql)
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(owner.map(OrganizationId))
}

/// A buyer-token signing key as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSigningKey {
    /// Its name in a token's header.
    pub kid: String,
    /// The organization whose buyers' tokens it signs.
    pub organization_id: OrganizationId,
    /// `HS256` or `EdDSA`.
    pub algorithm: String,
    /// HS256: the shared secret.
    pub secret: Option<Vec<u8>>,
    /// EdDSA: the public key, PEM.
    pub public_key: Option<String>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// When it was retired, if it was.
    pub retired_at: Option<DateTime<Utc>>,
}

type SigningKeyRow = (
    String,
    uuid::Uuid,
    String,
    Option<Vec<u8>>,
    Option<String>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
);

fn signing_key(row: SigningKeyRow) -> StoredSigningKey {
    let (kid, organization, algorithm, secret, public_key, created_at, retired_at) = row;
    StoredSigningKey {
        kid,
        organization_id: OrganizationId(organization),
        algorithm,
        secret,
        public_key,
        created_at,
        retired_at,
    }
}

/// Stores a new signing key, with its audit entry (never the secret).
pub async fn insert_signing_key(
    pool: &PgPool,
    key: &StoredSigningKey,
    actor: &Actor,
) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "insert into signing_key (kid, organization_id, algorithm, secret, public_key, created_at)
         values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&key.kid)
    .bind(key.organization_id.0)
    .bind(&key.algorithm)
    .bind(&key.secret)
    .bind(&key.public_key)
    .bind(key.created_at)
    .execute(&mut *tx)
    .await?;
    let change = Change {
        action: Action::SigningKeyCreated,
        target_id: key.organization_id.to_string(),
        changes: json!({ "kid": key.kid, "algorithm": key.algorithm }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(())
}

/// An organization's signing keys, oldest first, retired ones too.
pub async fn list_signing_keys(
    pool: &PgPool,
    organization: OrganizationId,
) -> Result<Vec<StoredSigningKey>, StoreError> {
    let rows: Vec<SigningKeyRow> = sqlx::query_as(
        "select kid, organization_id, algorithm, secret, public_key, created_at, retired_at
           from signing_key where organization_id = $1 order by created_at, kid",
    )
    .bind(organization.0)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(signing_key).collect())
}

/// Every signing key not retired, for a server to hold in memory.
pub async fn live_signing_keys(pool: &PgPool) -> Result<Vec<StoredSigningKey>, StoreError> {
    let rows: Vec<SigningKeyRow> = sqlx::query_as(
        "select kid, organization_id, algorithm, secret, public_key, created_at, retired_at
           from signing_key where retired_at is null",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(signing_key).collect())
}

/// Retires an organization's signing key, with its audit entry: whether it was there (one
/// retired already is, and is left as it was).
pub async fn retire_signing_key(
    pool: &PgPool,
    organization: OrganizationId,
    kid: &str,
    actor: &Actor,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let found: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
        "select retired_at from signing_key where kid = $1 and organization_id = $2 for update",
    )
    .bind(kid)
    .bind(organization.0)
    .fetch_optional(&mut *tx)
    .await?;
    match found {
        None => return Ok(false),
        Some(Some(_)) => return Ok(true),
        Some(None) => {}
    }
    let retired_at: DateTime<Utc> = sqlx::query_scalar(
        "update signing_key set retired_at = now() where kid = $1 returning retired_at",
    )
    .bind(kid)
    .fetch_one(&mut *tx)
    .await?;
    let change = Change {
        action: Action::SigningKeyRetired,
        target_id: organization.to_string(),
        changes: json!({ "kid": kid, "retired_at": [null, retired_at] }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(true)
}

/// How many of `events` are events of `organization`.
pub async fn events_of(
    pool: &PgPool,
    organization: OrganizationId,
    events: &[EventId],
) -> Result<usize, StoreError> {
    let ids: Vec<uuid::Uuid> = events.iter().map(|e| e.0).collect();
    let found: i64 = sqlx::query_scalar(
        "select count(*) from event where organization_id = $1 and event_id = any($2)",
    )
    .bind(organization.0)
    .bind(&ids)
    .fetch_one(pool)
    .await?;
    Ok(found as usize)
}
