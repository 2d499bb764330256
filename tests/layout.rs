//! Each crate's map of itself: the `# Layout` section of its `lib.rs` names every module
//! the crate declares there, so a new module cannot go unmapped.

use std::path::Path;

/// The modules `lib.rs` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), test
/// modules aside.
fn declared(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix("pub(crate) mod ")
                .or_else(|| line.strip_prefix("pub mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            let name = rest.strip_suffix(';')?;
            (name != "tests").then(|| name.to_owned())
        })
        .collect()
}

/// The text of the crate documentation's `# Layout` section.
fn layout(lib: &str) -> String {
    lib.lines()
        .map_while(|line| line.strip_prefix("//!"))
        .skip_while(|line| line.trim() != "# Layout")
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with("# "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(krate: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates")
        .join(krate)
        .join("src/lib.rs");
    let lib = std::fs::read_to_string(&path).unwrap();
    let map = layout(&lib);
    assert!(
        !map.is_empty(),
        "{krate}'s lib.rs has no `# Layout` section"
    );
    let missing: Vec<String> = declared(&lib)
        .into_iter()
        .filter(|name| {
            !map.contains(&format!("`{name}`"))
                && !map.contains(&format!("`{name}::"))
                && !map.contains(&format!("`{name}/"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{krate}'s `# Layout` (in {}) does not name these modules: {missing:?}",
        path.display()
    );
}

#[test]
fn the_api_crates_layout_names_every_module() {
    check("boxoffice-api");
}

#[test]
fn the_client_crates_layout_names_every_module() {
    check("boxoffice-client");
}

#[test]
fn the_core_crates_layout_names_every_module() {
    check("boxoffice-core");
}

#[test]
fn the_loadgen_crates_layout_names_every_module() {
    check("boxoffice-loadgen");
}

#[test]
fn the_server_crates_layout_names_every_module() {
    check("boxoffice-server");
}

#[test]
fn the_service_crates_layout_names_every_module() {
    check("boxoffice-service");
}

#[test]
fn the_store_crates_layout_names_every_module() {
    check("boxoffice-store");
}

/// docs/testing.md's rule for the suite: what tests share lives in `helpers/`, and no test
/// file reaches into another.
#[test]
fn the_api_tests_share_only_through_helpers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/boxoffice-server/tests/api");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "main")
        .collect();
    let mut reaching = Vec::new();
    for name in &files {
        let text = std::fs::read_to_string(dir.join(format!("{name}.rs"))).unwrap();
        for other in &files {
            if text.contains(&format!("crate::{other}::")) {
                reaching.push(format!("{name}.rs uses crate::{other}"));
            }
        }
    }
    assert!(
        reaching.is_empty(),
        "move what is shared into helpers/: {reaching:?}"
    );
}
