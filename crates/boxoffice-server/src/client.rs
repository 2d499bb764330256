//! Who is at the other end of a request: the client's address, as the socket's peer or,
//! behind trusted proxies, as `X-Forwarded-For` names it. Per-address limits (anonymous
//! sessions, open event streams) count by it.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use ipnet::IpNet;

use crate::error::ApiError;
use crate::state::AppState;

/// The client's address ([`client_address`] of the request's peer and headers).
#[derive(Clone, Copy, Debug)]
pub struct ClientAddress(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddress {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| *peer)
            .ok_or(ApiError::Internal(
                "the server was not started with connection info".into(),
            ))?;
        Ok(Self(client_address(
            peer,
            &parts.headers,
            state.trusted_proxies(),
        )))
    }
}

/// The client's address: the peer's, or, when the peer is a trusted proxy, the nearest
/// address in `X-Forwarded-For` that is not one (each proxy appends the address it got the
/// request from, so addresses left of the last untrusted one are whatever the client chose
/// to send).
pub fn client_address(peer: SocketAddr, headers: &HeaderMap, trusted_proxies: &[IpNet]) -> IpAddr {
    let trusted = |ip: &IpAddr| trusted_proxies.iter().any(|net| net.contains(ip));
    let mut client = peer.ip();
    if !trusted(&client) {
        return client;
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for hop in forwarded.iter().rev() {
        match hop.parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !trusted(&ip) {
                    break;
                }
            }
            // Garbage where an address should be: stop at the last address trusted.
            Err(_) => break,
        }
    }
    client
}

/// Parses `BOXOFFICE_TRUSTED_PROXIES`: addresses or CIDR blocks.
pub fn parse_trusted_proxies(entries: &[String]) -> anyhow::Result<Vec<IpNet>> {
    entries
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.parse::<IpNet>()
                .or_else(|_| e.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| anyhow::anyhow!("not an address or CIDR block: {e:?}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted(entries: &[&str]) -> Vec<IpNet> {
        let entries: Vec<String> = entries.iter().map(|s| (*s).to_owned()).collect();
        parse_trusted_proxies(&entries).unwrap()
    }

    fn forwarded(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", value.parse().unwrap());
        headers
    }

    #[test]
    fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
        let peer: SocketAddr = "10.0.0.5:4000".parse().unwrap();
        assert_eq!(
            client_address(peer, &forwarded("1.2.3.4"), &[]),
            peer.ip(),
            "an untrusted peer cannot name another address"
        );
        let proxies = trusted(&["10.0.0.0/8"]);
        assert_eq!(
            client_address(peer, &forwarded("1.2.3.4"), &proxies),
            "1.2.3.4".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            client_address(peer, &forwarded("6.6.6.6, 1.2.3.4, 10.0.0.9"), &proxies),
            "1.2.3.4".parse::<IpAddr>().unwrap(),
            "the nearest untrusted hop, not what the client wrote first"
        );
        assert_eq!(
            client_address(peer, &HeaderMap::new(), &proxies),
            peer.ip(),
            "no header: the proxy itself"
        );
        assert_eq!(
            client_address(peer, &forwarded("not-an-ip"), &proxies),
            peer.ip()
        );
    }

    #[test]
    fn trusted_proxies_are_addresses_or_blocks() {
        assert!(parse_trusted_proxies(&[
            "10.0.0.1".into(),
            " ::1 ".into(),
            "172.16.0.0/12".into()
        ])
        .is_ok());
        assert!(parse_trusted_proxies(&["proxy.local".into()]).is_err());
    }
}
