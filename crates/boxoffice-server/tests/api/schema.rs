//! The schema is ready to be distributed by event: read from the catalog of a migrated
//! database, every table is classed as event-scoped or global, and every event-scoped
//! table carries `event_id` in its primary key, in each unique index and in each foreign
//! key to another event-scoped table (docs/scaling.md). A table added without a class, or
//! a key without the event, fails here.

use std::collections::BTreeMap;

use crate::helpers::spawn_app;

/// Tables of one event's sale: distributed by `event_id`, each transaction on one shard.
const EVENT_SCOPED: &[&str] = &[
    "event",
    "event_queue",
    "ticket_type",
    "seat_allocation",
    "event_channel",
    "waitlist_entry",
    "ga_area",
    "reservation",
    "ticket_order",
    "order_seat",
    "ga_booking",
    "outbox",
    "idempotency",
    "pass_ended",
    "season_event",
    "season_partial_event",
    "ga_ticket",
    "revoked_ticket",
    "resale_listing",
    "ticket_entry",
    "checkin",
];

/// Tables every event reads and none writes in a sale: reference tables, on every shard.
const GLOBAL: &[&str] = &[
    "venue",
    "venue_section",
    "venue_row",
    "seat",
    "season",
    "season_ticket_type",
    "season_allocation",
    "season_partial",
    "season_partial_price",
    "season_order",
    "claim_in_force",
    "organization",
    "api_key",
    "key_generation",
    "audit_entry",
    "signing_key",
    "organization_webhook",
    "entry_key",
    "demo_secret",
    "_sqlx_migrations",
];

#[tokio::test]
async fn every_table_is_classed_and_every_event_table_is_keyed_by_event() {
    let app = spawn_app().await;
    let tables: Vec<String> = sqlx::query_scalar(
        "select relname::text from pg_class
          where relkind in ('r', 'p') and relnamespace = 'public'::regnamespace
          order by 1",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut problems = Vec::new();
    for table in &tables {
        let classes = [EVENT_SCOPED, GLOBAL]
            .iter()
            .filter(|c| c.contains(&table.as_str()))
            .count();
        if classes != 1 {
            problems.push(format!(
                "{table}: class it in tests/api/schema.rs as event-scoped or global"
            ));
        }
    }
    for listed in EVENT_SCOPED.iter().chain(GLOBAL) {
        if !tables.iter().any(|t| t == listed) {
            problems.push(format!("{listed}: classed, but no such table"));
        }
    }

    // Unique indexes (primary keys among them): table, index, primary?, columns.
    let unique: Vec<(String, String, bool, Vec<String>)> = sqlx::query_as(
        "select c.relname::text, i.indexrelid::regclass::text, i.indisprimary,
                array(select a.attname::text
                        from unnest(i.indkey) as k(attnum)
                        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum)
           from pg_index i
           join pg_class c on c.oid = i.indrelid
          where i.indisunique and c.relnamespace = 'public'::regnamespace",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut has_primary: BTreeMap<&str, bool> = BTreeMap::new();
    for (table, index, primary, columns) in &unique {
        if !EVENT_SCOPED.contains(&table.as_str()) {
            continue;
        }
        *has_primary.entry(table.as_str()).or_default() |= primary;
        if !columns.iter().any(|c| c == "event_id") {
            problems.push(format!(
                "{table}: unique index {index} on ({}) lacks event_id",
                columns.join(", ")
            ));
        }
    }
    for table in EVENT_SCOPED {
        if !has_primary.get(table).copied().unwrap_or(false) {
            problems.push(format!("{table}: no primary key with event_id"));
        }
    }

    // Foreign keys: from table, to table, constraint, their columns.
    type ForeignKey = (String, String, String, Vec<String>, Vec<String>);
    let foreign: Vec<ForeignKey> = sqlx::query_as(
        "select c.relname::text, r.relname::text, con.conname::text,
                array(select a.attname::text from unnest(con.conkey) as k(attnum)
                        join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum),
                array(select a.attname::text from unnest(con.confkey) as k(attnum)
                        join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum)
           from pg_constraint con
           join pg_class c on c.oid = con.conrelid
           join pg_class r on r.oid = con.confrelid
          where con.contype = 'f' and c.relnamespace = 'public'::regnamespace",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    for (from, to, name, columns, referenced) in &foreign {
        let (from_event, to_event) = (
            EVENT_SCOPED.contains(&from.as_str()),
            EVENT_SCOPED.contains(&to.as_str()),
        );
        if !from_event && to_event {
            problems.push(format!(
                "{from}: {name}, a global table referring to an event-scoped one"
            ));
        }
        let keyed = |c: &Vec<String>| c.iter().any(|c| c == "event_id");
        if from_event && to_event && !(keyed(columns) && keyed(referenced)) {
            problems.push(format!(
                "{from}: {name} ({}) → {to} ({}) lacks event_id",
                columns.join(", "),
                referenced.join(", ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the schema is not distributable by event:\n{}",
        problems.join("\n")
    );
    // The check sees what it checks: every event-scoped table's keys were read.
    assert_eq!(has_primary.len(), EVENT_SCOPED.len());
}
