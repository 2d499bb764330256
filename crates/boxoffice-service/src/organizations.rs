//! Organizations and their keys: creating and reading organizations, and creating, listing
//! and revoking the keys their staff call with (a key is shown once, when it is made, and
//! kept only as its digest; see [`crate::keyring`]).

use boxoffice_core::access::Role;
use boxoffice_core::ids::{EventId, KeyId, OrganizationId};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::pg::organizations::{
    self as store, CreateOrganizationError, StoredKey, StoredSigningKey,
};
pub use boxoffice_store::pg::organizations::{Organization, Owned};
use chrono::{DateTime, Utc};

pub use boxoffice_store::journal::audit::Actor;

use crate::keyring;
use crate::{Error, Services};

/// Longest slug, in characters.
pub const MAX_SLUG_LEN: usize = 40;

/// Whether `slug` is 1–40 of `a-z 0-9 -`.
pub fn is_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= MAX_SLUG_LEN
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A slug made from a name: letters and digits lowercased (accents and other letters
/// dropped), every other run of characters one `-`, at most 40; `organization` when
/// nothing is left.
pub fn slug_of(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.truncate(MAX_SLUG_LEN);
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "organization".to_owned()
    } else {
        slug.to_owned()
    }
}

/// Creates an organization named `name`, with `slug` or one made from the name.
pub async fn create(
    services: &Services,
    name: &str,
    slug: Option<&str>,
    actor: &Actor,
) -> Result<Organization, Error> {
    let mut errors = ValidationErrors::default();
    errors.check_name("name", name);
    if let Some(slug) = slug {
        errors.check(is_slug(slug), "slug", "must be 1–40 of a-z, 0-9 and -");
    }
    errors.into_result(())?;
    let slug = slug.map_or_else(|| slug_of(name), str::to_owned);
    let created = store::create_organization(
        &services.pool,
        OrganizationId::new(),
        name.trim(),
        &slug,
        actor,
    )
    .await
    .map_err(|e| match e {
        CreateOrganizationError::SlugTaken => Error::SlugTaken,
        CreateOrganizationError::Store(e) => Error::Store(e),
    })?;
    // Its entry key, which signs its tickets.
    crate::tickets::entry_keys_of(services, created.organization_id).await?;
    Ok(created)
}

/// Every organization, or only `only`.
pub async fn list(
    services: &Services,
    only: Option<OrganizationId>,
) -> Result<Vec<Organization>, Error> {
    Ok(store::list_organizations(&services.pool, only).await?)
}

/// One organization, by id or slug.
pub async fn find(services: &Services, id_or_slug: &str) -> Result<Organization, Error> {
    store::find_organization(&services.pool, id_or_slug)
        .await?
        .ok_or(Error::OrganizationNotFound)
}

/// A key just made: the key itself, which nobody will see again, and what is kept of it.
#[derive(Clone, Debug)]
pub struct NewKey {
    /// The key, `bxk_…`.
    pub key: String,
    /// What is kept.
    pub stored: StoredKey,
}

/// Makes a key of `organization` named `name` with `role`, working until `expires_at` if
/// given (which must be in the future).
pub async fn create_key(
    services: &Services,
    organization: OrganizationId,
    name: &str,
    role: &str,
    expires_at: Option<DateTime<Utc>>,
    events: Option<Vec<EventId>>,
    actor: &Actor,
) -> Result<NewKey, Error> {
    let mut errors = ValidationErrors::default();
    errors.check(
        boxoffice_core::validation::is_name(name, 100),
        "name",
        "must be 1–100 characters",
    );
    let role = role.parse::<Role>();
    if let Err(unknown) = &role {
        errors.add("role", unknown.to_string());
    }
    let now = Utc::now();
    if let Some(at) = expires_at {
        errors.check(at > now, "expires_at", "must be in the future");
    }
    if let Some(events) = &events {
        errors.check(
            role.as_ref().is_ok_and(|r| *r == Role::Checkin),
            "events",
            "only a checkin key is limited to events",
        );
        errors.check(
            (1..=100).contains(&events.len()),
            "events",
            "name 1 to 100 events",
        );
    }
    errors.into_result(())?;
    if let Some(events) = &events {
        let mut distinct = events.clone();
        distinct.sort_by_key(|e| e.0);
        distinct.dedup();
        if store::events_of(&services.pool, organization, &distinct).await? != distinct.len() {
            return Err(Error::invalid(
                "events",
                "each must be an event of the key's organization",
            ));
        }
    }
    let (key, prefix) = keyring::mint();
    let stored = StoredKey {
        key_id: KeyId::new(),
        organization_id: organization,
        name: name.trim().to_owned(),
        role: role.expect("checked above"),
        prefix,
        hash: keyring::digest(&key),
        created_at: now,
        expires_at,
        revoked_at: None,
        last_used_at: None,
        events,
    };
    store::insert_key(&services.pool, &stored, actor).await?;
    Ok(NewKey { key, stored })
}

/// A phone paired to one event's door: a check-in key for that event alone, and the link
/// (and its QR code) that opens the scanner signed in with it.
#[derive(Debug)]
pub struct Pairing {
    /// The key made.
    pub made: NewKey,
    /// `<origin>/scan?event=<id>#key=<key>`: the key in the fragment, never sent to a
    /// server or kept in its logs.
    pub url: String,
    /// The link as a QR code (SVG), for the phone's camera.
    pub qr_svg: String,
}

/// Pairs a scanner with `event`'s door: a `checkin` key limited to the event, expiring a
/// day after it starts, named for it; and the link to the scanner page at `origin` (the
/// console's own, `https://box.example`) that signs a phone in with it.
pub async fn pair_scanner(
    services: &Services,
    event: EventId,
    origin: &str,
    actor: &Actor,
) -> Result<Pairing, Error> {
    let origin = url::Url::parse(origin)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| Error::invalid("origin", "must be an http or https origin"))?;
    let record = boxoffice_store::pg::events::get_event(&services.pool, event)
        .await?
        .ok_or(Error::EventNotFound)?;
    let name: String = format!("Scanner for {}", record.summary.name)
        .chars()
        .take(100)
        .collect();
    let made = create_key(
        services,
        record.summary.organization_id,
        &name,
        Role::Checkin.as_str(),
        Some(record.summary.starts_at + chrono::Duration::days(1)),
        Some(vec![event]),
        actor,
    )
    .await?;
    let url = format!(
        "{}/scan?event={event}#key={}",
        origin.origin().ascii_serialization(),
        made.key
    );
    let qr_svg = crate::tickets::print::qr_svg(&url);
    Ok(Pairing { made, url, qr_svg })
}

/// An organization's keys, revoked ones too, oldest first.
pub async fn keys(
    services: &Services,
    organization: OrganizationId,
) -> Result<Vec<StoredKey>, Error> {
    Ok(store::list_keys(&services.pool, organization).await?)
}

/// Revokes one of an organization's keys (again: nothing changes).
pub async fn revoke_key(
    services: &Services,
    organization: OrganizationId,
    key: KeyId,
    actor: &Actor,
) -> Result<(), Error> {
    if store::revoke_key(&services.pool, organization, key, actor).await? {
        Ok(())
    } else {
        Err(Error::KeyNotFound)
    }
}

/// A signing key just added: what is kept, and for HS256 the secret, which nobody will see
/// again.
#[derive(Clone, Debug)]
pub struct NewSigningKey {
    /// What is kept.
    pub stored: StoredSigningKey,
    /// HS256: the secret the platform signs its buyers' tokens with (its bytes as given).
    pub secret: Option<String>,
}

/// Adds a buyer-token signing key to `organization`: `HS256` (a new random secret, shown
/// once) or `EdDSA` with the PEM of the platform's Ed25519 public key.
pub async fn create_signing_key(
    services: &Services,
    organization: OrganizationId,
    algorithm: &str,
    public_key: Option<&str>,
    actor: &Actor,
) -> Result<NewSigningKey, Error> {
    let (secret, public_key) = match (algorithm, public_key) {
        ("HS256", None) => (Some(keyring::random_text(32)), None),
        ("HS256", Some(_)) => {
            return Err(Error::invalid(
                "public_key",
                "an HS256 key has no public key: its secret is made here",
            ))
        }
        ("EdDSA", Some(pem)) => {
            if jsonwebtoken::DecodingKey::from_ed_pem(pem.as_bytes()).is_err() {
                return Err(Error::invalid(
                    "public_key",
                    "must be the PEM (SubjectPublicKeyInfo) of an Ed25519 public key",
                ));
            }
            (None, Some(pem.trim().to_owned()))
        }
        ("EdDSA", None) => {
            return Err(Error::invalid(
                "public_key",
                "an EdDSA key needs the PEM of the platform's Ed25519 public key",
            ))
        }
        _ => return Err(Error::invalid("algorithm", "must be HS256 or EdDSA")),
    };
    let stored = StoredSigningKey {
        kid: format!("sk_{}", keyring::random_text(12)),
        organization_id: organization,
        algorithm: algorithm.to_owned(),
        secret: secret.as_ref().map(|s| s.as_bytes().to_vec()),
        public_key,
        created_at: Utc::now(),
        retired_at: None,
    };
    store::insert_signing_key(&services.pool, &stored, actor).await?;
    Ok(NewSigningKey { stored, secret })
}

/// An organization's signing keys, retired ones too, oldest first.
pub async fn signing_keys(
    services: &Services,
    organization: OrganizationId,
) -> Result<Vec<StoredSigningKey>, Error> {
    Ok(store::list_signing_keys(&services.pool, organization).await?)
}

/// Retires one of an organization's signing keys: tokens it signed stop working.
pub async fn retire_signing_key(
    services: &Services,
    organization: OrganizationId,
    kid: &str,
    actor: &Actor,
) -> Result<(), Error> {
    if store::retire_signing_key(&services.pool, organization, kid, actor).await? {
        Ok(())
    } else {
        Err(Error::KeyNotFound)
    }
}

/// The organization that owns `thing`; none when there is no such thing.
pub async fn owner(services: &Services, thing: Owned) -> Result<Option<OrganizationId>, Error> {
    Ok(store::owner(&services.pool, thing).await?)
}

/// Which organization each event belongs to, as this server has read it: an event never
/// changes organization, so a buyer's every call asks Postgres once per event at most.
#[derive(Default)]
pub struct EventOwners(std::sync::RwLock<std::collections::HashMap<EventId, OrganizationId>>);

impl EventOwners {
    /// The organization of `event`; none when there is no such event.
    pub async fn owner(
        &self,
        services: &Services,
        event: EventId,
    ) -> Result<Option<OrganizationId>, Error> {
        if let Some(owner) = self.0.read().expect("the event owners' lock").get(&event) {
            return Ok(Some(*owner));
        }
        let owner = store::owner(&services.pool, Owned::Event(event.0)).await?;
        if let Some(owner) = owner {
            self.0
                .write()
                .expect("the event owners' lock")
                .insert(event, owner);
        }
        Ok(owner)
    }
}

/// Whether `thing` exists and belongs to `organization`.
pub async fn owns(
    services: &Services,
    organization: OrganizationId,
    thing: Owned,
) -> Result<bool, Error> {
    Ok(store::owner(&services.pool, thing).await? == Some(organization))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_is_made_from_a_name() {
        assert_eq!(slug_of("Acme Concerts"), "acme-concerts");
        assert_eq!(slug_of("  Théâtre du Châtelet!  "), "th-tre-du-ch-telet");
        assert_eq!(slug_of("***"), "organization");
        assert_eq!(slug_of(&"a ".repeat(40)).len(), 39);
        for name in ["Acme Concerts", "Ωμέγα", "x".repeat(300).as_str()] {
            assert!(is_slug(&slug_of(name)), "{name}");
        }
        assert!(!is_slug("Acme"));
        assert!(!is_slug(""));
        assert!(!is_slug(&"a".repeat(41)));
    }
}
