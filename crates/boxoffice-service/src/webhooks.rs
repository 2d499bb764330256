//! Each organization's webhook: where its outbox events are delivered (by the relay), and
//! the secret that signs them. The secret is shown once, when the webhook is set.

use boxoffice_core::ids::OrganizationId;
use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::pg::webhooks as store;
pub use boxoffice_store::pg::webhooks::StoredWebhook;

use crate::keyring;
use crate::organizations::Actor;
use crate::{Error, Services};

/// Longest webhook URL, in bytes.
pub const MAX_URL_LEN: usize = 2000;
/// Shortest and longest secret one may choose, in characters.
pub const SECRET_LEN: std::ops::RangeInclusive<usize> = 16..=256;

/// The problems with a webhook's URL and chosen secret, if any: the URL must be an
/// absolute `http` or `https` URL with a host, of at most [`MAX_URL_LEN`] bytes; a secret
/// 16 to 256 visible ASCII characters.
pub fn check(url: &str, secret: Option<&str>) -> Result<(), Error> {
    let mut errors = ValidationErrors::default();
    let parsed = url::Url::parse(url);
    if url.len() > MAX_URL_LEN {
        errors.add("url", "must be at most 2000 bytes");
    } else if !matches!(&parsed, Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some())
    {
        errors.add("url", "must be an absolute http or https URL");
    }
    if let Some(secret) = secret {
        if !SECRET_LEN.contains(&secret.chars().count())
            || !secret.chars().all(|c| c.is_ascii_graphic())
        {
            errors.add(
                "secret",
                "must be 16 to 256 visible ASCII characters (leave it out to have one made)",
            );
        }
    }
    errors.into_result(()).map_err(Error::Invalid)
}

/// Sets `organization`'s webhook (replacing the one it had), with `secret` or a new random
/// one: the events waiting for it are delivered from the next relay pass on.
pub async fn set(
    services: &Services,
    organization: OrganizationId,
    url: &str,
    secret: Option<&str>,
    actor: &Actor,
) -> Result<StoredWebhook, Error> {
    check(url, secret)?;
    let secret = secret.map_or_else(
        || format!("whsec_{}", keyring::random_text(32)),
        str::to_owned,
    );
    Ok(store::set(&services.pool, organization, url, &secret, actor).await?)
}

/// `organization`'s webhook; [`Error::WebhookNotFound`] when it has none.
pub async fn find(
    services: &Services,
    organization: OrganizationId,
) -> Result<StoredWebhook, Error> {
    store::find(&services.pool, organization)
        .await?
        .ok_or(Error::WebhookNotFound)
}

/// Removes `organization`'s webhook: its events wait again until one is set.
pub async fn remove(
    services: &Services,
    organization: OrganizationId,
    actor: &Actor,
) -> Result<(), Error> {
    if store::remove(&services.pool, organization, actor).await? {
        Ok(())
    } else {
        Err(Error::WebhookNotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_needs_an_absolute_http_url_and_a_long_enough_secret() {
        assert!(check("https://platform.example/hooks", None).is_ok());
        assert!(check("http://127.0.0.1:8080/hook", Some("s3cret-s3cret-s3cret")).is_ok());
        for url in [
            "",
            "platform.example/hooks",
            "ftp://x.example/",
            "https://",
            "mailto:a@b",
        ] {
            assert!(check(url, None).is_err(), "{url:?}");
        }
        let long = format!("https://x.example/{}", "a".repeat(MAX_URL_LEN));
        assert!(check(&long, None).is_err());
        for secret in ["short", "has spaces in it, sixteen+", &"x".repeat(257)] {
            assert!(
                check("https://x.example/", Some(secret)).is_err(),
                "{secret:?}"
            );
        }
    }
}
