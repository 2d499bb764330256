//! What a run found: per kind of request its throughput, latency and statuses; the
//! scenario's own figures; and the invariant checks. Printed for people, or as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Latency quantiles, in milliseconds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// Slowest.
    pub max: f64,
}

/// One kind of request in a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OperationReport {
    /// What was asked (`hold`, `checkout`, …).
    pub name: String,
    /// Requests sent.
    pub requests: u64,
    /// Requests per second over the run.
    pub per_second: f64,
    /// Their latency.
    pub latency_ms: Latency,
    /// The latency of the 2xx answers alone, when not every answer was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_ms: Option<Latency>,
    /// The latency of the refusals to serve now (429 and 503) alone, when not every answer
    /// was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_ms: Option<Latency>,
    /// Answers by HTTP status (`"0"`: no answer).
    pub statuses: BTreeMap<String, u64>,
}

/// One invariant, checked through the API after the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Check {
    /// What must hold.
    pub name: String,
    /// Whether it did.
    pub passed: bool,
    /// What was seen.
    pub detail: String,
}

impl Check {
    /// `name` holds if `passed`; `detail` says what was seen.
    pub fn new(name: &str, passed: bool, detail: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            passed,
            detail: detail.into(),
        }
    }
}

/// The outcome of one scenario run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    /// The scenario.
    pub scenario: String,
    /// Its parameters, as given.
    pub parameters: BTreeMap<String, String>,
    /// Seconds from the first request to the last answer.
    pub elapsed_seconds: f64,
    /// Per kind of request.
    pub operations: Vec<OperationReport>,
    /// The scenario's own figures (`seats_sold_per_second`, `server_rss_mb`, …).
    pub figures: BTreeMap<String, f64>,
    /// The invariants.
    pub checks: Vec<Check>,
}

impl Report {
    /// A report of `scenario`.
    pub fn new(scenario: &str) -> Self {
        Self {
            scenario: scenario.to_owned(),
            ..Self::default()
        }
    }

    /// Records a parameter.
    pub fn parameter(&mut self, name: &str, value: impl ToString) -> &mut Self {
        self.parameters.insert(name.to_owned(), value.to_string());
        self
    }

    /// Records how requests were paced: `workers` for a closed loop, `rate` for an open one.
    pub fn pace(&mut self, pace: super::Pace) -> &mut Self {
        match pace {
            super::Pace::Closed { workers } => self.parameter("workers", workers),
            super::Pace::Open { per_second } => self.parameter("rate", per_second),
        }
    }

    /// Records a figure.
    pub fn figure(&mut self, name: &str, value: f64) -> &mut Self {
        self.figures.insert(name.to_owned(), value);
        self
    }

    /// The scenario, and what it held: `holds on one hot seat`, `holds on 100000 seats`.
    pub fn scenario_line(&self) -> String {
        match self.parameters.get("seats") {
            Some(seats) if self.scenario == "holds" && seats == "1" => {
                "holds on one hot seat".into()
            }
            Some(seats) if self.scenario == "holds" => format!("holds on {seats} seats"),
            _ => self.scenario.clone(),
        }
    }

    /// Every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }

    /// The report for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let params: Vec<String> = self
            .parameters
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(
            out,
            "{} ({}) in {:.2} s",
            self.scenario,
            params.join(" "),
            self.elapsed_seconds
        );
        for op in &self.operations {
            let statuses: Vec<String> = op
                .statuses
                .iter()
                .map(|(s, n)| format!("{s}×{n}"))
                .collect();
            let l = &op.latency_ms;
            let _ = writeln!(
                out,
                "  {:<12} {:>8} requests {:>9.0}/s  p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1} ms  [{}]",
                op.name,
                op.requests,
                op.per_second,
                l.p50,
                l.p90,
                l.p99,
                l.p99_9,
                l.max,
                statuses.join(" ")
            );
            for (part, l) in [("2xx", &op.granted_ms), ("429/503", &op.refused_ms)] {
                if let Some(l) = l {
                    let _ = writeln!(
                        out,
                        "  {:>12} {:>39}  p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1} ms",
                        "",
                        format!("of which {part}:"),
                        l.p50,
                        l.p90,
                        l.p99,
                        l.p99_9,
                        l.max
                    );
                }
            }
        }
        for (name, value) in &self.figures {
            let _ = writeln!(out, "  {name}: {value:.1}");
        }
        for check in &self.checks {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                if check.passed { "ok  " } else { "FAIL" },
                check.name,
                check.detail
            );
        }
        out
    }
}
