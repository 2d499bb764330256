//! `GET /`: the seat-map page buyers use; `GET /admin`: the organizer console; `GET
//! /scan`: the scanner at the door; their ES modules and style sheets under `/assets/`;
//! and `GET /embed.js`, the element platforms embed. Plain HTML, CSS and JavaScript modules, embedded in the binary; no build step.
//!
//! The web code lives in `web/`: `core/` is shared (`hall.js` draws a hall, `viewport.js`
//! zooms, pans and moves with the keyboard, `stream.js` follows an event, `api.js` calls
//! the API and waits out a busy server's turn, `format.js` writes money, dates and escaped
//! text), `page/` is the buyer's page, `admin/` the organizer console, `scan/` the
//! scanner (`entry.js` decides alone when offline; Node's test runner tests it), `embed/`
//! the element. `/embed.js` is one file for hosts: the element's modules joined in one
//! function scope (see [`bundle`]), so it defines `<boxoffice-seat-map>` and nothing else
//! in the host's page, loaded as a module or as a classic script.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::LazyLock;

/// A file of `web/`, by its path there, embedded at build time.
macro_rules! web {
    ($path:literal) => {
        ($path, include_str!(concat!("../../web/", $path)))
    };
}

const INDEX: &str = include_str!("../../web/index.html");
const CONSOLE: &str = include_str!("../../web/admin.html");
const SCANNER: &str = include_str!("../../web/scan.html");
const FAVICON: &str = include_str!("../../web/favicon.svg");
/// The element's TypeScript declarations.
const EMBED_TYPES: &str = include_str!("../../web/embed.d.ts");

/// Everything under `/assets/`: the style sheets and every module of the page and the
/// console.
const ASSETS: &[(&str, &str)] = &[
    web!("app.css"),
    web!("admin.css"),
    web!("scan.css"),
    web!("core/api.js"),
    web!("core/format.js"),
    web!("core/hall.js"),
    web!("core/stream.js"),
    web!("core/viewport.js"),
    web!("page/basket.js"),
    web!("page/extras.js"),
    web!("page/line.js"),
    web!("page/main.js"),
    web!("page/map.js"),
    web!("page/mine.js"),
    web!("page/shared.js"),
    web!("page/tickets.js"),
    web!("admin/audit.js"),
    web!("admin/dashboard.js"),
    web!("admin/event-new.js"),
    web!("admin/keys.js"),
    web!("admin/main.js"),
    web!("admin/orders.js"),
    web!("admin/report.js"),
    web!("admin/seasons.js"),
    web!("admin/seats.js"),
    web!("admin/shared.js"),
    web!("admin/venues.js"),
    web!("design/canvas.js"),
    web!("design/checks.js"),
    web!("design/designer.js"),
    web!("design/forms.js"),
    web!("design/geometry.js"),
    web!("design/history.js"),
    web!("design/model.js"),
    web!("scan/camera.js"),
    web!("scan/entry.js"),
    web!("scan/main.js"),
    // jsQR (npm, Apache-2.0), vendored unchanged: the scanner's QR decoder where the
    // browser has no BarcodeDetector.
    (
        "vendor/jsQR.js",
        include_str!("../../../../vendor/jsqr/jsQR.js"),
    ),
];

/// The element's modules, in the order [`bundle`] joins them: each after what it imports.
const EMBED_MODULES: &[(&str, &str)] = &[
    web!("core/format.js"),
    web!("core/api.js"),
    web!("core/stream.js"),
    web!("core/hall.js"),
    web!("core/viewport.js"),
    web!("embed/strings.js"),
    web!("embed/standing.js"),
    web!("embed/element.js"),
];

/// ES modules joined into one script for hosts: each module's `import` lines dropped (what
/// they import is beside them in the same scope) and `export` taken off its declarations,
/// all inside one function, so nothing reaches the host's global scope. The modules keep
/// to what this needs: imports on single lines, `export` only before a declaration, and no
/// two top-level names alike (a clash is a SyntaxError the embed's browser tests meet).
pub fn bundle(modules: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "// <boxoffice-seat-map>, the Boxoffice seat map for a platform's own pages.\n\
         // Defines the element and nothing else; loading it twice defines it once.\n\
         (() => {\n\"use strict\";\n",
    );
    for (path, text) in modules {
        out.push_str("\n// ---- ");
        out.push_str(path);
        out.push_str(" ----\n");
        for line in text.lines() {
            if line.starts_with("import ") {
                continue;
            }
            out.push_str(line.strip_prefix("export ").unwrap_or(line));
            out.push('\n');
        }
    }
    out.push_str("})();\n");
    out
}

/// What every page asset is sent with: revalidated on every load (so a new server version
/// is picked up at once), never sniffed, and allowed to load only from this server.
const HEADERS: [(header::HeaderName, &str); 3] = [
    (header::CACHE_CONTROL, "no-cache"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
];

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The seat-map page: the event list, or one event's map with `?event=<id>`.
#[utoipa::path(get, path = "/", tag = "operations",
    params(("event" = Option<String>, Query, description = "Open this event's seat map directly")),
    responses((status = 200, description = "The seat-map page", content_type = "text/html")))]
pub async fn index() -> impl IntoResponse {
    (HEADERS, [(header::CONTENT_TYPE, HTML)], INDEX)
}

/// The organizer console, at `/admin` and every path under it (the console routes in the
/// browser).
pub async fn admin() -> impl IntoResponse {
    (HEADERS, [(header::CONTENT_TYPE, HTML)], CONSOLE)
}

/// The scanner page, `/scan?event=<id>`: signed in with a check-in key, it checks tickets
/// in at the door, through a lost connection too.
pub async fn scanner() -> impl IntoResponse {
    (HEADERS, [(header::CONTENT_TYPE, HTML)], SCANNER)
}

/// `GET /favicon.ico` and `/favicon.svg`: the icon of every page (an SVG, which browsers
/// take at either address), kept for a day.
pub async fn favicon() -> impl IntoResponse {
    (
        [
            (header::CACHE_CONTROL, "public, max-age=86400"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_TYPE, "image/svg+xml"),
        ],
        FAVICON,
    )
}

/// `GET /assets/{file}`: a module or style sheet of the page or the console.
pub async fn asset(Path(file): Path<String>) -> Response {
    let Some((_, text)) = ASSETS.iter().find(|(path, _)| *path == file) else {
        return crate::error::ApiError::NotFound {
            code: "not_found",
            detail: "no such asset".into(),
        }
        .into_response();
    };
    let kind = if file.ends_with(".css") {
        CSS
    } else {
        JAVASCRIPT
    };
    (HEADERS, [(header::CONTENT_TYPE, kind)], *text).into_response()
}

/// `GET /embed.js`: the `<boxoffice-seat-map>` element, for a platform's own pages. Kept by
/// browsers for five minutes, then revalidated by its ETag (a 304 while it is unchanged).
pub async fn embed(headers: axum::http::HeaderMap) -> Response {
    use sha2::{Digest, Sha256};
    static EMBED: LazyLock<(String, String)> = LazyLock::new(|| {
        let script = bundle(EMBED_MODULES);
        let digest = Sha256::digest(script.as_bytes());
        let etag = format!("\"{}\"", hex::encode(&digest[..12]));
        (script, etag)
    });
    let (script, etag) = &*EMBED;
    let cache = [
        (header::CACHE_CONTROL, "public, max-age=300"),
        (header::ETAG, etag.as_str()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag.as_str()));
    if fresh {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (cache, [(header::CONTENT_TYPE, JAVASCRIPT)], script.clone()).into_response()
}

/// `GET /embed.d.ts`: the element's TypeScript declarations (attributes, events, methods).
pub async fn embed_types() -> impl IntoResponse {
    (
        [
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        [(
            header::CONTENT_TYPE,
            "application/typescript; charset=utf-8",
        )],
        EMBED_TYPES,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_keeps_no_import_or_export_and_wraps_one_scope() {
        let script = bundle(EMBED_MODULES);
        assert!(script.trim_end().ends_with("})();"));
        for line in script.lines() {
            assert!(!line.starts_with("import "), "{line}");
            assert!(!line.starts_with("export "), "{line}");
        }
        // Every module's imports are joined before it.
        let order: Vec<&str> = EMBED_MODULES.iter().map(|(path, _)| *path).collect();
        for (i, (path, text)) in EMBED_MODULES.iter().enumerate() {
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let from = line.split('"').nth(1).expect("an import names its module");
                let target = normalize(dir, from);
                let at = order.iter().position(|p| *p == target);
                assert!(
                    at.is_some_and(|at| at < i),
                    "{path} imports {target}, which is not joined before it"
                );
            }
        }
    }

    /// The name a top-level declaration line (`export` or not) declares, if it is one.
    fn declared(line: &str) -> Option<&str> {
        let line = line.strip_prefix("export ").unwrap_or(line);
        let line = line.strip_prefix("async ").unwrap_or(line);
        let rest = [
            "function* ",
            "function ",
            "const ",
            "let ",
            "var ",
            "class ",
        ]
        .iter()
        .find_map(|kw| line.strip_prefix(kw))?;
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    }

    /// The joiner drops `import` lines and `export ` prefixes, so the modules must keep to
    /// what it understands: each import one line naming what it takes, without renaming,
    /// from a module that exports it; `export` only before a declaration; no `import` or
    /// `export` it would miss (indented, or over several lines); and no two top-level names
    /// alike in the joined scope.
    #[test]
    fn the_embed_modules_keep_to_what_the_joiner_understands() {
        let mut names: std::collections::BTreeMap<&str, &str> = Default::default();
        let mut exports: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (path, text) in EMBED_MODULES {
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for line in text.lines() {
                let trimmed = line.trim_start();
                if trimmed != line {
                    assert!(
                        !trimmed.starts_with("import ") && !trimmed.starts_with("export "),
                        "{path}: an indented import or export the joiner would keep: {line}"
                    );
                    continue;
                }
                if let Some(import) = line.strip_prefix("import ") {
                    let (taken, from) = import
                        .strip_prefix('{')
                        .and_then(|rest| rest.split_once("} from \""))
                        .unwrap_or_else(|| {
                            panic!("{path}: not a one-line `import {{ … }} from \"…\";`: {line}")
                        });
                    let (from, end) = from.split_once('"').unwrap();
                    assert_eq!(end, ";", "{path}: {line}");
                    let target = normalize(dir, from);
                    let exported = exports.get(target.as_str()).unwrap_or_else(|| {
                        panic!("{path} imports {target}, which is not joined before it")
                    });
                    for name in taken.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        assert!(
                            !name.contains(' '),
                            "{path}: `{name}` renames an import, which the joiner cannot"
                        );
                        assert!(
                            exported.contains(&name),
                            "{path} imports {name}, which {target} does not export"
                        );
                    }
                    continue;
                }
                if line.starts_with("export ") {
                    let name = declared(line).unwrap_or_else(|| {
                        panic!("{path}: `export` not before a declaration: {line}")
                    });
                    exports.entry(path).or_default().push(name);
                }
                if let Some(name) = declared(line) {
                    assert!(
                        !name.is_empty(),
                        "{path}: a declaration the test cannot read: {line}"
                    );
                    if let Some(first) = names.insert(name, path) {
                        panic!("`{name}` is declared at the top of both {first} and {path}");
                    }
                }
            }
        }
        assert!(names.contains_key("BoxofficeSeatMap"), "{names:?}");
    }

    #[test]
    fn every_module_a_module_imports_is_served() {
        for (path, text) in ASSETS.iter().filter(|(p, _)| p.ends_with(".js")) {
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let from = line.split('"').nth(1).expect("an import names its module");
                let target = normalize(dir, from);
                assert!(
                    ASSETS.iter().any(|(p, _)| *p == target),
                    "{path} imports {target}, which is not served"
                );
            }
        }
    }

    #[test]
    fn no_web_file_is_longer_than_four_hundred_lines() {
        // Vendored code is kept as its package ships it.
        let ours = ASSETS
            .iter()
            .filter(|(path, _)| !path.starts_with("vendor/"));
        for (path, text) in ours.chain(EMBED_MODULES) {
            let lines = text.lines().count();
            assert!(lines <= 400, "{path} has {lines} lines");
        }
    }

    /// `from` (`./x.js`, `../core/x.js`) resolved against the directory `dir` of `web/`.
    fn normalize(dir: &str, from: &str) -> String {
        let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        for part in from.split('/') {
            match part {
                "." => {}
                ".." => {
                    parts.pop();
                }
                name => parts.push(name),
            }
        }
        parts.join("/")
    }
}
