//! Who an anonymous session is (`POST /v1/sessions`): one client address (an IPv6 one by
//! its /64) is at most [`AnonymousUsers`]' `per_address` buyers, whatever the number of
//! sessions it creates: its sessions take turns among that many user ids,
//! derived from the address under a key of the server's JWT secret (the same on every
//! instance, and telling nothing of the address). So the stores' per-user limits, which
//! hold however many requests race, bound what one address holds in an event to that many
//! times its `max_seats_per_user`; a person with several tabs (which share the page's
//! session anyway) is one or a few of those buyers.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, Ordering};

use boxoffice_core::ids::UserId;
use boxoffice_service::Secret;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Who an anonymous session is: one of a few buyers per client address.
pub struct AnonymousUsers {
    /// Derives an address's user ids; from the JWT secret.
    key: Vec<u8>,
    /// Buyers per address (0: every session a buyer of its own).
    per_address: u32,
    /// Turns: consecutive sessions of one address on this instance are different buyers.
    next: AtomicU32,
}

impl AnonymousUsers {
    /// `per_address` buyers per client address, their ids keyed by `secret`.
    pub fn new(secret: &Secret, per_address: u32) -> Self {
        Self {
            key: secret.expose().as_bytes().to_vec(),
            per_address,
            // Instances behind a balancer start at different turns, so that an address's
            // first sessions through several of them are different buyers too.
            next: AtomicU32::new(rand::random()),
        }
    }

    /// The user a new session from `address` is: `anon-<12 hex of the address's keyed
    /// hash>-<turn>`, or a new UUID when addresses have no budget.
    pub fn user_for(&self, address: IpAddr) -> UserId {
        if self.per_address == 0 {
            let id = uuid::Uuid::new_v4().to_string();
            return UserId::parse(&id).expect("a UUID is a valid user id");
        }
        // An IPv6 host is given a /64 (and may use any address in it): it counts as one.
        let address = match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
            },
            v4 => v4,
        };
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(address.to_string().as_bytes());
        let tag = mac.finalize().into_bytes();
        let tag: String = tag[..6].iter().map(|b| format!("{b:02x}")).collect();
        let turn = self.next.fetch_add(1, Ordering::Relaxed) % self.per_address;
        UserId::parse(&format!("anon-{tag}-{turn}")).expect("a short ASCII id is a valid user id")
    }
}
