//! The journal: what a change leaves behind in its own transaction, beside the change and
//! whichever hold store holds. The audit log ([`audit`]: who changed what with a key, in
//! [`Action`]s) and the outbox ([`outbox`]: what an organization's webhook is told, under
//! [`Topic`]s), each with one writer called in the transaction that makes the change, so
//! an entry or a row commits with its change or not at all.
//!
//! Both are Postgres tables, as every sale's rows are; the flows of `crate::sales`, which
//! both hold stores share, write them through here, not through the postgres store.

pub mod audit;
pub mod outbox;

pub use audit::Action;
pub use outbox::Topic;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{Action, Topic};

    /// The rows of the markdown table headed `header` in `page`: each row's cells.
    fn table<'a>(page: &'a str, header: &str) -> Vec<Vec<&'a str>> {
        page.lines()
            .skip_while(|line| line.trim() != header)
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| line.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect()
    }

    /// The `backticked` words of a cell.
    fn quoted(cell: &str) -> Vec<&str> {
        cell.split('`').skip(1).step_by(2).collect()
    }

    #[test]
    fn docs_access_lists_every_action_with_its_target() {
        let page = include_str!("../../../../docs/access.md");
        let documented: BTreeMap<&str, &str> = table(page, "| action | target | changes |")
            .into_iter()
            .flat_map(|row| quoted(row[0]).into_iter().map(move |a| (a, row[1])))
            .collect();
        let actions: BTreeMap<&str, &str> = Action::ALL
            .iter()
            .map(|a| (a.as_str(), a.target_type()))
            .collect();
        assert_eq!(
            documented.keys().collect::<Vec<_>>(),
            actions.keys().collect::<Vec<_>>(),
            "docs/access.md's audit table and journal::Action differ"
        );
        for (action, target) in actions {
            assert!(
                documented[action].starts_with(target),
                "docs/access.md says {action} changes a {}, the log says a {target}",
                documented[action]
            );
        }
    }

    #[test]
    fn docs_api_lists_every_webhook_topic() {
        let page = include_str!("../../../../docs/api.md");
        let mut documented: Vec<&str> = table(page, "| topic | when |")
            .into_iter()
            .flat_map(|row| quoted(row[0]))
            .collect();
        let mut topics: Vec<&str> = Topic::ALL.iter().map(|t| t.as_str()).collect();
        documented.sort_unstable();
        topics.sort_unstable();
        assert_eq!(
            documented, topics,
            "docs/api.md's topics and journal::Topic differ"
        );
    }

    #[test]
    fn the_consoles_audit_filter_offers_every_action() {
        let script = include_str!("../../../boxoffice-server/web/admin/audit.js");
        let list = script
            .split_once("const ACTIONS = [")
            .and_then(|(_, rest)| rest.split_once("];"))
            .expect("audit.js has its ACTIONS")
            .0;
        let mut offered: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
        let mut actions: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
        offered.sort_unstable();
        actions.sort_unstable();
        assert_eq!(
            offered, actions,
            "audit.js's ACTIONS and journal::Action differ"
        );
    }

    #[test]
    fn every_action_and_topic_is_listed_once() {
        let mut actions: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
        actions.sort_unstable();
        actions.dedup();
        assert_eq!(actions.len(), Action::ALL.len());
        let mut topics: Vec<&str> = Topic::ALL.iter().map(|t| t.as_str()).collect();
        topics.sort_unstable();
        topics.dedup();
        assert_eq!(topics.len(), Topic::ALL.len());
    }
}
