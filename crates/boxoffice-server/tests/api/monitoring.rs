//! What operators watch: every query of the Grafana dashboard (`deploy/grafana/`) and every
//! expression of the Prometheus rules (`deploy/prometheus/`) names a metric a running
//! server exports, or one the rules record; and the server exports the store's latency
//! by store and outcome. (The alerts themselves are tested by `promtool test rules`.)

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use boxoffice_service::overload::OverloadSettings;
use serde_json::Value;

use crate::helpers::event_with_queue;
use crate::helpers::stores::Store;
use crate::helpers::{spawn_app_with, TestApp};

fn deploy(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The metric names a PromQL expression reads: identifiers that are neither functions,
/// keywords, label names nor label values (`{…}`, `by (…)` and ranges are skipped).
fn metric_names(expr: &str) -> Vec<String> {
    // Words that are never metric names, and of those the ones a label list follows.
    const KEYWORDS: &str = "and or unless bool offset inf nan \
        sum min max avg count group stddev stdvar topk bottomk quantile count_values";
    const GROUPING: &str = "by without on ignoring group_left group_right";
    let keyword = |w: &str| {
        KEYWORDS
            .split_whitespace()
            .chain(GROUPING.split_whitespace())
            .any(|k| k == w)
    };
    let grouping = |w: &str| GROUPING.split_whitespace().any(|k| k == w);
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    let skip_to = |from: usize, close: char| -> usize {
        let mut j = from;
        while j < chars.len() && chars[j] != close {
            if chars[j] == '"' {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    j += 1;
                }
            }
            j += 1;
        }
        j + 1
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => i = skip_to(i + 1, '}'),
            '[' => i = skip_to(i + 1, ']'),
            '"' => i = skip_to(i + 1, '"'),
            '$' => {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == ':' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut next = i;
                while next < chars.len() && chars[next].is_whitespace() {
                    next += 1;
                }
                let call = chars.get(next) == Some(&'(');
                if grouping(&word) && call {
                    i = skip_to(next + 1, ')');
                } else if !call && !keyword(&word) {
                    names.push(word);
                }
            }
            c if c.is_ascii_digit() || c == '.' => {
                // A number, perhaps with an exponent or a duration unit.
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    names
}

#[test]
fn metric_names_are_read_out_of_promql() {
    assert_eq!(
        metric_names(
            "histogram_quantile(0.99, sum by (store, le) (rate(a_bucket{instance=~\"$instance\",x=\"a b\"}[$__rate_interval]))) \
             / on (instance) b:c == 0 or vector(1e3) and up{job=\"boxoffice\"} > 0.25"
        ),
        ["a_bucket", "b:c", "up"]
    );
}

/// The expressions of a Prometheus rules file: each `expr:`, on its line or as the
/// indented block under `expr: |`.
fn rule_exprs(rules: &str) -> Vec<String> {
    let lines: Vec<&str> = rules.lines().collect();
    let mut exprs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(at) = line.find("expr:") {
            let rest = line[at + 5..].trim();
            if rest == "|" {
                let indent = at;
                let mut block = String::new();
                i += 1;
                while i < lines.len() && lines[i].len() - lines[i].trim_start().len() > indent {
                    block.push_str(lines[i].trim());
                    block.push(' ');
                    i += 1;
                }
                exprs.push(block);
                continue;
            }
            exprs.push(rest.to_owned());
        }
        i += 1;
    }
    exprs
}

/// The metric families of a Prometheus text exposition, with a histogram's series.
fn exported(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split(' ');
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        names.insert(name.to_owned());
        if kind == "histogram" {
            for suffix in ["_bucket", "_count", "_sum"] {
                names.insert(format!("{name}{suffix}"));
            }
        }
    }
    names
}

/// A server with every optional family on (the redis store, the adaptive limits, a
/// waiting room) after a hold, a refused hold and a checkout: its `/metrics`.
async fn busy_server() -> (TestApp, String) {
    let app = spawn_app_with(|s| {
        Store::Redis.configure(s);
        // Every refusal asks the store (none answered from what the instance knows).
        s.live.known_taken = Duration::ZERO;
        s.limits.overload = Some(OverloadSettings {
            target: Duration::from_secs(1),
            floor: 8,
            ceiling: 64,
        });
    })
    .await;
    event_with_queue(&app, chrono::Duration::zero(), 600).await;
    let event = app.create_event().await;
    app.order_seats(&event, &app.buyer("ann"), &["stalls-A-1"])
        .await;
    let (status, _) = app
        .post_holds(&event, &app.buyer("bob"), &["stalls-A-1"])
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT);
    let text = app.metrics().await;
    (app, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_and_the_rules_name_only_metrics_the_server_exports() {
    let (_app, text) = busy_server().await;
    let exported = exported(&text);
    let rules = deploy("prometheus/boxoffice.rules.yml");
    let recorded: BTreeSet<String> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- record:"))
        .map(|name| name.trim().to_owned())
        .collect();
    assert!(recorded.len() >= 5, "{recorded:?}");
    // `up` is Prometheus' own, for every target it scrapes.
    let known = |name: &str| {
        name == "up"
            || if name.contains(':') {
                recorded.contains(name)
            } else {
                exported.contains(name)
            }
    };

    let exprs = rule_exprs(&rules);
    assert!(exprs.len() > recorded.len(), "alerts too: {exprs:?}");
    for expr in &exprs {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{expr}");
        for name in names {
            assert!(
                known(&name),
                "the rules read {name}, which the server does not export: {expr}\n{text}"
            );
        }
    }

    let dashboard: Value = serde_json::from_str(&deploy("grafana/boxoffice.json")).unwrap();
    let mut queries = 0;
    let panels = dashboard["panels"].as_array().unwrap();
    for panel in panels {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            queries += 1;
            for name in metric_names(expr) {
                assert!(
                    known(&name),
                    "panel {:?} reads {name}, which neither the server exports nor a rule records: {expr}",
                    panel["title"]
                );
            }
        }
    }
    assert!(queries >= 15, "{queries} queries");
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(query) = variable["query"]["query"].as_str() {
            let inner = query
                .strip_prefix("label_values(")
                .and_then(|q| q.split(',').next())
                .unwrap_or(query);
            for name in metric_names(inner) {
                assert!(known(&name), "variable {} reads {name}", variable["name"]);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hold_store_latency_is_exported_by_store_and_outcome() {
    let (app, text) = busy_server().await;
    let count = |name: &str, outcome: &str| {
        text.lines()
            .find(|l| {
                l.starts_with(&format!("{name}_count{{"))
                    && l.contains("store=\"redis\"")
                    && l.contains(&format!("outcome=\"{outcome}\""))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
    };
    assert_eq!(
        count("boxoffice_hold_duration_seconds", "granted"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        count("boxoffice_hold_duration_seconds", "refused"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        count("boxoffice_checkout_duration_seconds", "sold"),
        Some(1.0),
        "{text}"
    );
    for line in [
        "boxoffice_ready 1",
        "boxoffice_redis_up 1",
        "boxoffice_redis_needed 1",
        "boxoffice_redis_breaker_open 0",
        "boxoffice_db_pool_connections{state=\"in_use\"}",
        // The test servers' pools have four connections.
        "boxoffice_db_pool_max 4",
    ] {
        assert!(text.lines().any(|l| l.starts_with(line)), "{line}\n{text}");
    }
    // No relay runs: the order's row waits.
    let backlog = app.counter("boxoffice_outbox_backlog").await;
    assert!(backlog >= 1.0, "{text}");
}
