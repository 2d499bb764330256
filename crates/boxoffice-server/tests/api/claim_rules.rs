//! The claim's functions in force are exactly `sql/claim.sql`'s: after the migrations, every
//! start defines them from that file, and no other function of the claim is left in the
//! database (an older version under another signature would be a second copy of a rule).

use std::collections::BTreeSet;

use boxoffice_store::pg::db;
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;

use crate::helpers::{fresh_database_name, server_url, spawn_app};

/// The functions `sql/claim.sql` defines, by name.
fn defined_in_file() -> BTreeSet<String> {
    db::CLAIM_RULES
        .lines()
        .filter_map(|l| l.strip_prefix("create or replace function "))
        .map(|rest| rest.split('(').next().unwrap().trim().to_owned())
        .collect()
}

/// Every `boxoffice_*` function in the database, by name, with its body.
async fn in_database(pool: &PgPool) -> Vec<(String, String)> {
    sqlx::query_as(
        "select proname::text, prosrc from pg_proc
          where pronamespace = 'public'::regnamespace and proname like 'boxoffice\\_%'
          order by 1",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Whether each function's body in the database is the file's, and each named once.
fn matches_file(functions: &[(String, String)]) -> Result<(), String> {
    let names: Vec<&str> = functions.iter().map(|(n, _)| n.as_str()).collect();
    let unique: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
    if unique.len() != names.len() {
        return Err(format!("a function is defined twice: {names:?}"));
    }
    if unique != defined_in_file() {
        return Err(format!(
            "functions in the database {unique:?}, in sql/claim.sql {:?}",
            defined_in_file()
        ));
    }
    for (name, body) in functions {
        if !db::CLAIM_RULES.contains(&format!("$${body}$$")) {
            return Err(format!("{name}'s body is not sql/claim.sql's"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_claims_functions_in_force_are_sql_claim_sql() {
    let app = spawn_app().await;
    assert!(defined_in_file().contains("boxoffice_claim"));
    matches_file(&in_database(&app.db).await).unwrap();
}

#[tokio::test]
async fn a_database_migrated_by_an_earlier_version_gets_the_files_rules_at_start() {
    let url = format!("{}/{}", server_url(), fresh_database_name());
    db::ensure_database(&url).await.unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect(&url)
        .await
        .unwrap();
    // The migrations alone: the functions as the last migration to touch them left them.
    db::MIGRATOR.run(&pool).await.unwrap();
    let before = in_database(&pool).await;
    let refused = matches_file(&before);
    // Then two servers starting at once.
    let (a, b) = tokio::join!(db::migrate(&pool), db::migrate(&pool));
    let after = in_database(&pool).await;
    pool.close().await;
    db::drop_database(&url).await.unwrap();

    assert!(
        refused.is_err(),
        "the migrations alone already define the file's functions"
    );
    a.unwrap();
    b.unwrap();
    matches_file(&after).unwrap();
}

/// A rolling upgrade: a newer server applied a newer claim, then an older server restarts.
/// It refuses, saying why, and leaves the newer rules in force.
#[tokio::test]
async fn an_older_server_never_puts_its_claim_back_over_a_newer_one() {
    let url = format!("{}/{}", server_url(), fresh_database_name());
    db::ensure_database(&url).await.unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&url)
        .await
        .unwrap();
    db::migrate(&pool).await.unwrap();
    let ours = db::Claim::this_server();
    // What a newer server leaves: a rule of its own and its version recorded.
    sqlx::raw_sql(
        "create or replace function boxoffice_on_sale_to(p_allocated text, p_channel text)
         returns boolean language sql immutable
         as $$ select p_allocated is null or p_allocated = p_channel or p_channel = 'newer' $$;
         update claim_in_force set version = version + 1, checksum = 'newer', applied_by = '99.1.0';",
    )
    .execute(&pool)
    .await
    .unwrap();

    let refused = db::migrate(&pool).await;
    let body: String =
        sqlx::query_scalar("select prosrc from pg_proc where proname = 'boxoffice_on_sale_to'")
            .fetch_one(&pool)
            .await
            .unwrap();
    let recorded: (i32, String) = sqlx::query_as("select version, applied_by from claim_in_force")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    db::drop_database(&url).await.unwrap();

    match refused {
        Err(boxoffice_store::StoreError::Ahead(why)) => assert!(
            why.contains(&format!("is version {}", ours.version + 1))
                && why.contains("Run Boxoffice 99.1.0 or newer"),
            "{why}"
        ),
        other => panic!("an older claim was not refused: {other:?}"),
    }
    assert!(
        body.contains("'newer'"),
        "the newer rule was replaced: {body}"
    );
    assert_eq!(recorded, (ours.version + 1, "99.1.0".to_owned()));
}

/// Every start records the claim it applied; a server of the same claim applies it again
/// and records nothing new.
#[tokio::test]
async fn the_claim_in_force_is_recorded_with_its_version_and_checksum() {
    let app = spawn_app().await;
    let recorded: (i32, String, String) =
        sqlx::query_as("select version, checksum, applied_by from claim_in_force")
            .fetch_one(&app.db)
            .await
            .unwrap();
    let ours = db::Claim::this_server();
    assert_eq!(
        recorded,
        (
            ours.version,
            ours.checksum,
            env!("CARGO_PKG_VERSION").to_owned()
        )
    );
    db::migrate(&app.db).await.unwrap();
}
