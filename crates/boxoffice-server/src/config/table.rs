//! The settings as one table, read from `boxoffice serve`'s own flags (their groups, variables,
//! defaults and help): `--help` prints it, docs/configuration.md shows it (a test keeps the
//! page equal to [`markdown`]), and `doctor` names each setting a server would run with
//! that is not its default ([`in_effect`]).

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command};

use super::ServeArgs;

/// One setting: a flag with an environment variable.
#[derive(Clone, Debug)]
pub struct Setting {
    /// The argument's id in parsed matches.
    pub id: String,
    /// Its environment variable.
    pub variable: String,
    /// Its flag, with the leading dashes.
    pub flag: String,
    /// Its default as given on a command line; none for a setting that is off unless set.
    pub default: Option<String>,
    /// What it does, one paragraph.
    pub help: String,
    /// Whether its value is a secret, never shown.
    pub secret: bool,
}

/// The settings under one heading of `--help`.
#[derive(Clone, Debug)]
pub struct Group {
    /// The heading: Server, Stores, Limits, Live updates, Operations.
    pub heading: String,
    /// Its settings, in `--help`'s order.
    pub settings: Vec<Setting>,
}

/// Every setting of `boxoffice serve`, grouped under its heading, in `--help`'s order.
pub fn groups() -> Vec<Group> {
    let command = ServeArgs::augment_args(Command::new("serve"));
    let mut groups: Vec<Group> = Vec::new();
    for arg in command.get_arguments() {
        let Some(variable) = arg.get_env() else {
            continue;
        };
        let heading = arg.get_help_heading().unwrap_or("Options").to_owned();
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let setting = Setting {
            id: arg.get_id().to_string(),
            variable: variable.to_string_lossy().into_owned(),
            flag: format!("--{}", arg.get_long().unwrap_or_default()),
            default: (!defaults.is_empty()).then(|| defaults.join(",")),
            help: help.split_whitespace().collect::<Vec<_>>().join(" "),
            secret: arg.is_hide_env_values_set(),
        };
        match groups.iter_mut().find(|g| g.heading == heading) {
            Some(group) => group.settings.push(setting),
            None => groups.push(Group {
                heading,
                settings: vec![setting],
            }),
        }
    }
    groups
}

/// The table as docs/configuration.md shows it: a section a group, a row a setting.
pub fn markdown() -> String {
    let mut page = String::new();
    for group in groups() {
        page.push_str(&format!(
            "## {}\n\n| variable | flag | default | what it does |\n| --- | --- | --- | --- |\n",
            group.heading
        ));
        for s in &group.settings {
            let default = s
                .default
                .as_deref()
                .map_or_else(|| "none".to_owned(), |d| format!("`{d}`"));
            page.push_str(&format!(
                "| `{}` | `{}` | {default} | {} |\n",
                s.variable, s.flag, s.help
            ));
        }
        page.push('\n');
    }
    page
}

/// Each group's settings that parsed matches of `serve` (or of a command flattening its
/// flags, as `doctor` does) take from the environment or the command line rather than the
/// default, as `VARIABLE=value`; a secret's value shows as `(set)`, a URL's password as `***`.
pub fn in_effect(matches: &ArgMatches) -> Vec<(String, Vec<String>)> {
    groups()
        .into_iter()
        .map(|group| {
            let set = group
                .settings
                .iter()
                .filter(|s| {
                    matches!(
                        matches.value_source(&s.id),
                        Some(ValueSource::EnvVariable | ValueSource::CommandLine)
                    )
                })
                .map(|s| {
                    let value = if s.secret {
                        "(set)".to_owned()
                    } else {
                        matches
                            .get_raw(&s.id)
                            .into_iter()
                            .flatten()
                            .map(|v| without_password(&v.to_string_lossy()))
                            .collect::<Vec<_>>()
                            .join(",")
                    };
                    format!("{}={value}", s.variable)
                })
                .collect();
            (group.heading, set)
        })
        .collect()
}

/// A value as it may be shown: a URL's password (`postgres://user:secret@host`) as `***`.
fn without_password(value: &str) -> String {
    let Some(scheme_end) = value.find("://").map(|i| i + 3) else {
        return value.to_owned();
    };
    let authority_end = value[scheme_end..]
        .find('/')
        .map_or(value.len(), |i| scheme_end + i);
    let authority = &value[scheme_end..authority_end];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!(
            "{}{}:***{}",
            &value[..scheme_end],
            &authority[..colon],
            &value[scheme_end + at..]
        ),
        _ => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_in_one_group_with_a_variable_a_flag_and_help() {
        let groups = groups();
        let headings: Vec<&str> = groups.iter().map(|g| g.heading.as_str()).collect();
        assert_eq!(
            headings,
            ["Server", "Stores", "Limits", "Live updates", "Operations"]
        );
        let settings: Vec<&Setting> = groups.iter().flat_map(|g| &g.settings).collect();
        assert_eq!(settings.len(), 39);
        for s in &settings {
            assert!(!s.help.is_empty(), "{} has no help", s.variable);
            assert!(s.flag.len() > 2, "{} has no flag", s.variable);
            assert_eq!(
                settings.iter().filter(|o| o.variable == s.variable).count(),
                1,
                "{} is twice in the table",
                s.variable
            );
        }
        let secrets: Vec<&str> = settings
            .iter()
            .filter(|s| s.secret)
            .map(|s| s.variable.as_str())
            .collect();
        assert_eq!(
            secrets,
            [
                "BOXOFFICE_ADMIN_TOKEN",
                "BOXOFFICE_JWT_SECRET",
                "BOXOFFICE_WEBHOOK_SECRET"
            ]
        );
    }

    #[test]
    fn docs_configuration_shows_the_table() {
        let page = include_str!("../../../../docs/configuration.md");
        let table = markdown();
        assert!(
            page.contains(&table),
            "docs/configuration.md's settings differ from `boxoffice serve`'s flags; the \
             section from the first `###` to `## Housekeeping` should read:\n\n{table}"
        );
    }

    #[test]
    fn the_settings_in_effect_name_what_was_set_and_hide_secrets() {
        let command = ServeArgs::augment_args(Command::new("serve")).mut_args(|a| a.env(None));
        let matches = command
            .try_get_matches_from([
                "serve",
                "--hold-store",
                "redis",
                "--jwt-secret",
                "s3cret",
                "--holds-per-minute",
                "30",
            ])
            .unwrap();
        let in_effect = in_effect(&matches);
        let of = |heading: &str| {
            in_effect
                .iter()
                .find(|(h, _)| h == heading)
                .map(|(_, set)| set.clone())
                .unwrap()
        };
        assert_eq!(of("Server"), ["BOXOFFICE_JWT_SECRET=(set)"]);
        assert_eq!(of("Stores"), ["BOXOFFICE_HOLD_STORE=redis"]);
        // Given on the command line, even at its default value: it was set.
        assert_eq!(of("Limits"), ["BOXOFFICE_HOLDS_PER_MINUTE=30"]);
        assert!(of("Operations").is_empty());
    }

    #[test]
    fn a_urls_password_is_never_shown() {
        assert_eq!(
            without_password("postgres://box:s3cret@db:5432/boxoffice"),
            "postgres://box:***@db:5432/boxoffice"
        );
        assert_eq!(
            without_password("redis://:s3cret@cache:6379"),
            "redis://:***@cache:6379"
        );
        for plain in [
            "postgres://postgres@127.0.0.1:5432/boxoffice",
            "redis://127.0.0.1:6379",
            "127.0.0.1:3000",
            "https://shop.example",
        ] {
            assert_eq!(without_password(plain), plain);
        }
    }

    #[test]
    fn the_defaults_are_the_tables() {
        let defaults = ServeArgs::defaults();
        assert_eq!(
            defaults.stores.hold_store,
            super::super::HoldStoreKind::Postgres
        );
        assert_eq!(
            defaults.stores.database_url,
            super::super::defaults::DATABASE_URL
        );
        assert_eq!(
            defaults.server.bind.to_string(),
            super::super::defaults::BIND
        );
    }
}
