//! `sqlx::migrate!` embeds the migrations when this crate compiles; without this, cargo
//! would not compile it again when a migration is added.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
