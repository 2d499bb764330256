//! Who may do what: the roles a key has, the rights a call needs, and the one table that
//! says which role has which right ([`RIGHTS`]). Every staff route names the right it needs
//! (the server's route table); nothing else decides.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A key's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Everything in every organization, and creating organizations.
    Platform,
    /// Everything in its organization.
    Admin,
    /// Reads its events, seasons and orders; changes orders (cancel, pay, release, move).
    Sales,
    /// Reads its events; lets tickets in.
    Checkin,
    /// Reads only.
    Reports,
}

impl Role {
    /// Every role, most powerful first.
    pub const ALL: [Role; 5] = [
        Role::Platform,
        Role::Admin,
        Role::Sales,
        Role::Checkin,
        Role::Reports,
    ];

    /// Its name, as in the API and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Platform => "platform",
            Role::Admin => "admin",
            Role::Sales => "sales",
            Role::Checkin => "checkin",
            Role::Reports => "reports",
        }
    }

    /// Whether this role has `right`, by [`RIGHTS`].
    pub fn may(self, right: Right) -> bool {
        right.roles().contains(&self)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no role.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}: one of platform, admin, sales, checkin, reports")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == name)
            .ok_or_else(|| UnknownRole(name.to_owned()))
    }
}

/// What a staff call does, as far as who may do it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Right {
    /// Create organizations.
    CreateOrganizations,
    /// Read its organization (and, for a platform key, list every one).
    ReadOrganization,
    /// Create, list and revoke keys and signing keys; set the webhook.
    ManageKeys,
    /// Create and change venues, events, seasons, allocations, channels, waiting rooms.
    WriteCatalog,
    /// Read venues, events and seasons as staff.
    ReadCatalog,
    /// Read orders, sales, reports and exports.
    ReadOrders,
    /// Cancel orders, record payments, release season nights, move and swap seats.
    ChangeOrders,
    /// Let tickets in, and read what scanners need.
    CheckIn,
    /// Read the audit log.
    ReadAudit,
}

use Role::{Admin, Checkin, Platform, Reports, Sales};

/// The table: each right and the roles that have it. A new right is a new row here, and a
/// route that needs it names it in the server's route table.
pub const RIGHTS: &[(Right, &[Role])] = &[
    (Right::CreateOrganizations, &[Platform]),
    (
        Right::ReadOrganization,
        &[Platform, Admin, Sales, Checkin, Reports],
    ),
    (Right::ManageKeys, &[Platform, Admin]),
    (Right::WriteCatalog, &[Platform, Admin]),
    (
        Right::ReadCatalog,
        &[Platform, Admin, Sales, Checkin, Reports],
    ),
    (Right::ReadOrders, &[Platform, Admin, Sales, Reports]),
    (Right::ChangeOrders, &[Platform, Admin, Sales]),
    (Right::CheckIn, &[Platform, Admin, Checkin]),
    (Right::ReadAudit, &[Platform, Admin, Reports]),
];

impl Right {
    /// Every right.
    pub const ALL: [Right; 9] = [
        Right::CreateOrganizations,
        Right::ReadOrganization,
        Right::ManageKeys,
        Right::WriteCatalog,
        Right::ReadCatalog,
        Right::ReadOrders,
        Right::ChangeOrders,
        Right::CheckIn,
        Right::ReadAudit,
    ];

    /// Its name, as `GET /v1/me` lists it.
    pub fn as_str(self) -> &'static str {
        match self {
            Right::CreateOrganizations => "create_organizations",
            Right::ReadOrganization => "read_organization",
            Right::ManageKeys => "manage_keys",
            Right::WriteCatalog => "write_catalog",
            Right::ReadCatalog => "read_catalog",
            Right::ReadOrders => "read_orders",
            Right::ChangeOrders => "change_orders",
            Right::CheckIn => "check_in",
            Right::ReadAudit => "read_audit",
        }
    }

    /// The roles that have this right, by [`RIGHTS`].
    pub fn roles(self) -> &'static [Role] {
        RIGHTS
            .iter()
            .find(|(right, _)| *right == self)
            .map(|(_, roles)| *roles)
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_right_is_in_the_table_once_and_the_platform_has_each() {
        assert_eq!(RIGHTS.len(), Right::ALL.len());
        for right in Right::ALL {
            assert_eq!(RIGHTS.iter().filter(|(r, _)| *r == right).count(), 1);
            assert!(Role::Platform.may(right), "{right:?}");
        }
    }

    #[test]
    fn each_role_has_the_rights_its_job_needs_and_no_more() {
        let rights = |role: Role| -> Vec<Right> {
            RIGHTS
                .iter()
                .filter(|(_, roles)| roles.contains(&role))
                .map(|(r, _)| *r)
                .collect()
        };
        use Right::*;
        assert_eq!(
            rights(Role::Admin),
            [
                ReadOrganization,
                ManageKeys,
                WriteCatalog,
                ReadCatalog,
                ReadOrders,
                ChangeOrders,
                CheckIn,
                ReadAudit
            ]
        );
        assert_eq!(
            rights(Role::Sales),
            [ReadOrganization, ReadCatalog, ReadOrders, ChangeOrders]
        );
        assert_eq!(
            rights(Role::Checkin),
            [ReadOrganization, ReadCatalog, CheckIn]
        );
        assert_eq!(
            rights(Role::Reports),
            [ReadOrganization, ReadCatalog, ReadOrders, ReadAudit]
        );
    }

    #[test]
    fn each_right_has_a_name_of_its_own() {
        let mut names: Vec<&str> = Right::ALL.iter().map(|r| r.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Right::ALL.len());
    }

    #[test]
    fn roles_read_back_from_their_names() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
        assert!("root".parse::<Role>().is_err());
        assert!("Admin".parse::<Role>().is_err());
    }

    #[test]
    fn docs_access_shows_the_table_row_for_row() {
        let page = include_str!("../../../docs/access.md");
        let header = "| right | `platform` | `admin` | `sales` | `checkin` | `reports` |";
        let rows: Vec<Vec<&str>> = page
            .lines()
            .skip_while(|line| *line != header)
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| line.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        assert_eq!(
            rows.len(),
            RIGHTS.len(),
            "docs/access.md's rights table: {rows:?}"
        );
        for (row, (right, roles)) in rows.iter().zip(RIGHTS) {
            assert!(
                row[0].starts_with(&format!("`{}`", right.as_str())),
                "docs/access.md names {} where RIGHTS has {}",
                row[0],
                right.as_str()
            );
            let marked: Vec<Role> = Role::ALL
                .into_iter()
                .zip(&row[1..])
                .filter(|(_, cell)| **cell == "✓")
                .map(|(role, _)| role)
                .collect();
            assert_eq!(
                &marked,
                roles,
                "docs/access.md's row for {}",
                right.as_str()
            );
        }
    }
}
