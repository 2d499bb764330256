//! The keys staff and servers call with, the buyer-token signing keys and the ticket entry
//! keys, held in memory: a call is checked against a map
//! of SHA-256 digests, never against Postgres. Each server reloads the map when the keys'
//! generation in Postgres moves ([`KeyRing::refresh`], several times a second), so a key
//! created or revoked on one instance works or stops on every other within a second. When
//! each key was last used is written back to the minute, in the background.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use base64::Engine;
use boxoffice_core::access::Role;
use boxoffice_core::ids::{KeyId, OrganizationId};
use boxoffice_store::pg::organizations::{self as store, StoredKey};
use boxoffice_store::StoreError;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;

/// What every key starts with.
pub const KEY_PREFIX: &str = "bxk_";

/// A key's length: the prefix and 32 bytes in URL-safe base64 without padding.
pub const KEY_LEN: usize = 4 + 43;

/// Who a key says the caller is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyHolder {
    /// The key's id.
    pub key_id: KeyId,
    /// The key's name.
    pub name: String,
    /// Its organization.
    pub organization_id: OrganizationId,
    /// Its role.
    pub role: Role,
    /// When it stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// The events it is limited to; every event of its organization when `None`.
    pub events: Option<Vec<boxoffice_core::ids::EventId>>,
}

/// Whether `text` is shaped as a key: `bxk_` and 43 URL-safe base64 characters.
pub fn is_key(text: &str) -> bool {
    text.len() == KEY_LEN
        && text.starts_with(KEY_PREFIX)
        && text[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The digest a key is kept and found by.
pub fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// `bytes` random bytes in URL-safe base64 without padding.
pub fn random_text(bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut random);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random)
}

/// A new random key and the first eight characters after its prefix.
pub fn mint() -> (String, String) {
    let key = format!("{KEY_PREFIX}{}", random_text(32));
    let prefix = key[KEY_PREFIX.len()..KEY_PREFIX.len() + 8].to_owned();
    (key, prefix)
}

/// A buyer-token signing key as a server holds it: ready to check a token.
#[derive(Clone)]
pub struct SigningKey {
    /// The organization whose buyers' tokens it signs.
    pub organization_id: OrganizationId,
    /// The only algorithm a token it signs may name.
    pub algorithm: jsonwebtoken::Algorithm,
    /// The key that checks the signature.
    pub decoding: jsonwebtoken::DecodingKey,
}

/// An organization's entry key as a server holds it: ready to sign tickets (while it is
/// the signing one) and to check them.
#[derive(Clone)]
pub struct EntryKey {
    /// Its name in a ticket's payload.
    pub kid: String,
    /// Its organization.
    pub organization_id: OrganizationId,
    /// The private key.
    pub signing: ed25519_dalek::SigningKey,
    /// When it began to sign.
    pub created_at: DateTime<Utc>,
    /// When it stopped signing.
    pub retired_at: Option<DateTime<Utc>>,
}

/// Every live key and signing key of the installation; see the module.
#[derive(Default)]
pub struct KeyRing {
    keys: RwLock<Arc<HashMap<[u8; 32], KeyHolder>>>,
    signing: RwLock<Arc<HashMap<String, SigningKey>>>,
    /// Each organization's entry keys, oldest first.
    entry: RwLock<Arc<HashMap<OrganizationId, Vec<EntryKey>>>>,
    generation: Mutex<Option<i64>>,
    /// How many times the signing keys were replaced: moved only after the new map is in
    /// place (see [`KeyRing::signing_version`]).
    signing_version: AtomicU64,
    used: Mutex<HashSet<KeyId>>,
}

impl KeyRing {
    /// An empty ring: no key works until the first [`KeyRing::refresh`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The holder of `key` if it is live now (not revoked at the last refresh, not
    /// expired); its use is noted for [`KeyRing::record_use`].
    pub fn find(&self, key: &str) -> Option<KeyHolder> {
        if !is_key(key) {
            return None;
        }
        let keys = Arc::clone(&self.keys.read().expect("the key ring's lock"));
        let holder = keys.get(&digest(key))?;
        if holder.expires_at.is_some_and(|at| at <= Utc::now()) {
            return None;
        }
        self.used
            .lock()
            .expect("the used keys' lock")
            .insert(holder.key_id);
        Some(holder.clone())
    }

    /// The live signing key named `kid`, if there is one.
    pub fn signing_key(&self, kid: &str) -> Option<SigningKey> {
        let keys = Arc::clone(&self.signing.read().expect("the signing keys' lock"));
        keys.get(kid).cloned()
    }

    /// Which load of the signing keys is in place: it moves each time they are reloaded.
    /// Read it before [`KeyRing::signing_key`]: a token checked with a key got after
    /// reading version `v` was checked against the keys of version `v` or a later one, so
    /// whatever remembers the check under `v` forgets it once the version moves.
    pub fn signing_version(&self) -> u64 {
        self.signing_version.load(Ordering::Acquire)
    }

    /// The organization's entry keys, oldest first (none until it is given one).
    pub fn entry_keys(&self, organization: OrganizationId) -> Vec<EntryKey> {
        let keys = Arc::clone(&self.entry.read().expect("the entry keys' lock"));
        keys.get(&organization).cloned().unwrap_or_default()
    }

    /// Reloads the keys if their generation moved since the last time: whether it did.
    pub async fn refresh(&self, pool: &PgPool) -> Result<bool, StoreError> {
        let generation = store::key_generation(pool).await?;
        if *self.generation.lock().expect("the generation's lock") == Some(generation) {
            return Ok(false);
        }
        let keys: HashMap<[u8; 32], KeyHolder> = store::live_keys(pool)
            .await?
            .into_iter()
            .map(|k: StoredKey| {
                (
                    k.hash,
                    KeyHolder {
                        key_id: k.key_id,
                        name: k.name,
                        organization_id: k.organization_id,
                        role: k.role,
                        expires_at: k.expires_at,
                        events: k.events,
                    },
                )
            })
            .collect();
        let signing: HashMap<String, SigningKey> = store::live_signing_keys(pool)
            .await?
            .into_iter()
            .filter_map(|k| {
                let key = match (k.algorithm.as_str(), &k.secret, &k.public_key) {
                    ("HS256", Some(secret), _) => SigningKey {
                        organization_id: k.organization_id,
                        algorithm: jsonwebtoken::Algorithm::HS256,
                        decoding: jsonwebtoken::DecodingKey::from_secret(secret).ok()?,
                    },
                    ("EdDSA", _, Some(pem)) => SigningKey {
                        organization_id: k.organization_id,
                        algorithm: jsonwebtoken::Algorithm::EdDSA,
                        decoding: jsonwebtoken::DecodingKey::from_ed_pem(pem.as_bytes()).ok()?,
                    },
                    _ => return None,
                };
                Some((k.kid, key))
            })
            .collect();
        let mut entry: HashMap<OrganizationId, Vec<EntryKey>> = HashMap::new();
        for k in boxoffice_store::pg::tickets::all_entry_keys(pool).await? {
            let Ok(seed) = <[u8; 32]>::try_from(k.private_key.as_slice()) else {
                continue;
            };
            entry.entry(k.organization_id).or_default().push(EntryKey {
                kid: k.kid,
                organization_id: k.organization_id,
                signing: ed25519_dalek::SigningKey::from_bytes(&seed),
                created_at: k.created_at,
                retired_at: k.retired_at,
            });
        }
        *self.keys.write().expect("the key ring's lock") = Arc::new(keys);
        *self.entry.write().expect("the entry keys' lock") = Arc::new(entry);
        *self.signing.write().expect("the signing keys' lock") = Arc::new(signing);
        self.signing_version.fetch_add(1, Ordering::AcqRel);
        *self.generation.lock().expect("the generation's lock") = Some(generation);
        Ok(true)
    }

    /// Writes down, to the minute, which keys were used since the last time.
    pub async fn record_use(&self, pool: &PgPool) -> Result<(), StoreError> {
        let used: Vec<KeyId> = self
            .used
            .lock()
            .expect("the used keys' lock")
            .drain()
            .collect();
        if used.is_empty() {
            return Ok(());
        }
        store::record_key_use(pool, &used, Utc::now()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_key_is_shaped_as_a_key_and_others_are_not() {
        let (key, prefix) = mint();
        assert!(is_key(&key), "{key}");
        assert_eq!(&key[4..12], prefix);
        assert_ne!(mint().0, key);
        for not in [
            "",
            "bxk_",
            &key[..key.len() - 1],
            &format!("{key}A"),
            &key.replacen("bxk_", "bxq_", 1),
            &format!("bxk_{}", "+".repeat(43)),
            &format!("bxk_{}", "é".repeat(21)),
        ] {
            assert!(!is_key(not), "{not}");
        }
    }
}
