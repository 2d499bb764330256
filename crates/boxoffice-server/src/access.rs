//! Which right each staff route needs: one table, by method and route, read by the
//! [`crate::auth::Staff`] extractor (which right a role has is
//! `boxoffice_core::access::RIGHTS`). A test walks the router so that no route taking a
//! staff key is missing here. What a route's `{id}` names, and so whose organization it
//! is, the same extractor decides from the route's prefix ([`crate::auth::TARGETS`]),
//! before the handler runs.

use axum::http::Method;
use boxoffice_core::access::Right;

/// Every route a staff key may call, with the right it needs.
pub const ROUTES: &[(Method, &str, Right)] = &[
    (
        Method::POST,
        "/v1/organizations",
        Right::CreateOrganizations,
    ),
    (Method::GET, "/v1/organizations", Right::ReadOrganization),
    (
        Method::GET,
        "/v1/organizations/{id}",
        Right::ReadOrganization,
    ),
    (
        Method::POST,
        "/v1/organizations/{id}/keys",
        Right::ManageKeys,
    ),
    (
        Method::GET,
        "/v1/organizations/{id}/keys",
        Right::ManageKeys,
    ),
    (
        Method::DELETE,
        "/v1/organizations/{id}/keys/{key_id}",
        Right::ManageKeys,
    ),
    (
        Method::GET,
        "/v1/organizations/{id}/audit",
        Right::ReadAudit,
    ),
    (
        Method::POST,
        "/v1/organizations/{id}/signing-keys",
        Right::ManageKeys,
    ),
    (
        Method::GET,
        "/v1/organizations/{id}/signing-keys",
        Right::ManageKeys,
    ),
    (
        Method::DELETE,
        "/v1/organizations/{id}/signing-keys/{kid}",
        Right::ManageKeys,
    ),
    (
        Method::PUT,
        "/v1/organizations/{id}/webhook",
        Right::ManageKeys,
    ),
    (
        Method::GET,
        "/v1/organizations/{id}/webhook",
        Right::ManageKeys,
    ),
    (
        Method::DELETE,
        "/v1/organizations/{id}/webhook",
        Right::ManageKeys,
    ),
    (Method::GET, "/v1/me", Right::ReadOrganization),
    (
        Method::POST,
        "/v1/organizations/{id}/entry-keys",
        Right::ManageKeys,
    ),
    (Method::GET, "/v1/orders/{id}/tickets", Right::ReadOrders),
    (
        Method::GET,
        "/v1/orders/{id}/tickets.pdf",
        Right::ReadOrders,
    ),
    (Method::GET, "/v1/bookings/{id}/tickets", Right::ReadOrders),
    (
        Method::GET,
        "/v1/bookings/{id}/tickets.pdf",
        Right::ReadOrders,
    ),
    (Method::GET, "/v1/tickets/{id}/qr.svg", Right::ReadOrders),
    (Method::GET, "/v1/events/{id}/entry/keys", Right::CheckIn),
    (
        Method::POST,
        "/v1/events/{id}/scanner-pairings",
        Right::ManageKeys,
    ),
    (Method::GET, "/v1/events/{id}/entry/revoked", Right::CheckIn),
    (Method::POST, "/v1/events/{id}/checkins", Right::CheckIn),
    (
        Method::GET,
        "/v1/events/{id}/checkins/summary",
        Right::ReadCatalog,
    ),
    (Method::POST, "/v1/venues", Right::WriteCatalog),
    (Method::POST, "/v1/venues/import", Right::WriteCatalog),
    (Method::PUT, "/v1/venues/{id}", Right::WriteCatalog),
    (Method::GET, "/v1/venues", Right::ReadCatalog),
    (Method::GET, "/v1/venues/{id}/export", Right::ReadCatalog),
    (Method::POST, "/v1/events", Right::WriteCatalog),
    (Method::PATCH, "/v1/events/{id}", Right::WriteCatalog),
    (
        Method::PUT,
        "/v1/events/{id}/allocations",
        Right::WriteCatalog,
    ),
    (
        Method::POST,
        "/v1/events/{id}/allocations/withdraw",
        Right::WriteCatalog,
    ),
    (
        Method::POST,
        "/v1/events/{id}/channels/{code}/release",
        Right::WriteCatalog,
    ),
    (Method::GET, "/v1/events/{id}/orders", Right::ReadOrders),
    (Method::GET, "/v1/events/{id}/orders.csv", Right::ReadOrders),
    (Method::GET, "/v1/events/{id}/report", Right::ReadOrders),
    (Method::GET, "/v1/orders/{id}", Right::ReadOrders),
    (Method::POST, "/v1/orders/{id}/payment", Right::ChangeOrders),
    (Method::POST, "/v1/orders/{id}/cancel", Right::ChangeOrders),
    (Method::POST, "/v1/orders/{id}/moves", Right::ChangeOrders),
    (Method::POST, "/v1/orders/{id}/resale", Right::ChangeOrders),
    (Method::GET, "/v1/orders/{id}/resale", Right::ReadOrders),
    (
        Method::DELETE,
        "/v1/orders/{id}/resale/{seat_id}",
        Right::ChangeOrders,
    ),
    (Method::POST, "/v1/events/{id}/swaps", Right::ChangeOrders),
    (
        Method::POST,
        "/v1/orders/{id}/events/{event_id}/reclaim",
        Right::ChangeOrders,
    ),
    (
        Method::POST,
        "/v1/orders/{id}/events/{event_id}/release",
        Right::ChangeOrders,
    ),
    (
        Method::POST,
        "/v1/bookings/{id}/cancel",
        Right::ChangeOrders,
    ),
    (
        Method::POST,
        "/v1/bookings/{id}/payment",
        Right::ChangeOrders,
    ),
    (Method::POST, "/v1/seasons", Right::WriteCatalog),
    (Method::GET, "/v1/seasons/{id}/orders", Right::ReadOrders),
    (Method::GET, "/v1/seasons/{id}/sales", Right::ReadOrders),
];

/// The right a staff call of `method` on the route `path` (as the router matched it, with
/// its `{parameters}`) needs; none for a route not in [`ROUTES`].
pub fn right_of(method: &Method, path: &str) -> Option<Right> {
    ROUTES
        .iter()
        .find(|(m, p, _)| m == method && *p == path)
        .map(|(_, _, right)| *right)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the OpenAPI document the router makes: every operation that takes a staff key
    /// (its security names `admin`) is in [`ROUTES`], and every row of [`ROUTES`] is such an
    /// operation, so a new staff route cannot go without its right.
    #[test]
    fn every_staff_route_is_in_the_table_and_the_table_names_no_other() {
        let doc = serde_json::to_value(crate::router::openapi()).unwrap();
        let mut staff_routes = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let takes_a_key = operation["security"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|r| r.get("admin").is_some()));
                if takes_a_key {
                    let method: Method = method.to_uppercase().parse().unwrap();
                    assert!(
                        right_of(&method, path).is_some(),
                        "{method} {path} takes a staff key: name its right in access::ROUTES"
                    );
                    staff_routes.push((method, path.clone()));
                }
            }
        }
        for (method, path, _) in ROUTES {
            assert!(
                staff_routes.iter().any(|(m, p)| m == method && p == path),
                "{method} {path} is in access::ROUTES but no such staff route exists"
            );
        }
        assert_eq!(staff_routes.len(), ROUTES.len());
    }

    /// Organization scope is decided with the right, before any handler runs: every staff
    /// route with an `{id}` names something of [`crate::auth::TARGETS`] (checked against
    /// the key's organization in the extractor), or an organization or a ticket, whose
    /// handlers find it first and check its organization.
    #[test]
    fn every_staff_route_with_an_id_has_its_organization_checked() {
        let found_first = ["/v1/organizations/{id}", "/v1/tickets/{id}"];
        for (method, path, _) in ROUTES {
            if !path.contains("{id}") {
                continue;
            }
            let scoped = crate::auth::TARGETS
                .iter()
                .map(|(prefix, _)| *prefix)
                .chain(found_first)
                .any(|prefix| path.starts_with(prefix));
            assert!(
                scoped,
                "{method} {path}: say what its {{id}} names in auth::TARGETS"
            );
        }
    }
}
