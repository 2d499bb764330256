//! Latencies and answers of one kind of request, as a run counts them ([`Stats`]), and a
//! client's few answers until they are added ([`Samples`]).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::{Latency, OperationReport};

/// Latencies and answers of one kind of request.
#[derive(Clone, Debug)]
pub struct Stats {
    latency: Histogram<u64>,
    /// Of the 2xx answers alone.
    granted: Histogram<u64>,
    /// Of the answers that said "not now" (429 and 503) alone.
    refused: Histogram<u64>,
    /// Answers by HTTP status; 0 counts requests that got no answer.
    pub statuses: BTreeMap<u16, u64>,
}

/// The answers of one of many clients as they came, until added to the run's [`Stats`]:
/// a client has a few dozen, where a [`Stats`] of its own would take hundreds of KB (its
/// histograms), gigabytes for thousands of buyers.
#[derive(Clone, Debug, Default)]
pub struct Samples(Vec<(u16, Duration)>);

impl Samples {
    /// One answer of `status` after `elapsed`.
    pub fn record(&mut self, status: u16, elapsed: Duration) {
        self.0.push((status, elapsed));
    }
}

/// An empty latency histogram: microseconds, up to ten minutes, three significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds")
}

impl Default for Stats {
    fn default() -> Self {
        Self {
            latency: histogram(),
            granted: histogram(),
            refused: histogram(),
            statuses: BTreeMap::new(),
        }
    }
}

impl Stats {
    /// One answer of `status` after `elapsed`.
    pub fn record(&mut self, status: u16, elapsed: Duration) {
        let micros = (elapsed.as_micros() as u64).clamp(1, 600_000_000);
        self.latency.saturating_record(micros);
        match status {
            200..=299 => self.granted.saturating_record(micros),
            429 | 503 => self.refused.saturating_record(micros),
            _ => {}
        }
        *self.statuses.entry(status).or_default() += 1;
    }

    /// Adds one client's answers.
    pub fn add(&mut self, samples: &Samples) {
        for &(status, elapsed) in &samples.0 {
            self.record(status, elapsed);
        }
    }

    /// Adds `other`'s answers.
    pub fn merge(&mut self, other: &Stats) {
        for (mine, theirs) in [
            (&mut self.latency, &other.latency),
            (&mut self.granted, &other.granted),
            (&mut self.refused, &other.refused),
        ] {
            mine.add(theirs).expect("histograms of the same bounds");
        }
        for (status, n) in &other.statuses {
            *self.statuses.entry(*status).or_default() += n;
        }
    }

    /// Requests answered or failed.
    pub fn count(&self) -> u64 {
        self.statuses.values().sum()
    }

    /// Answers of `status`.
    pub fn of(&self, status: u16) -> u64 {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    /// The report of these requests over `elapsed`.
    pub fn report(&self, name: &str, elapsed: Duration) -> OperationReport {
        let latency = |h: &Histogram<u64>| {
            let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            Latency {
                p50: at(0.5),
                p90: at(0.9),
                p99: at(0.99),
                p99_9: at(0.999),
                max: h.max() as f64 / 1000.0,
            }
        };
        // Apart only when the answers were mixed.
        let part = |h: &Histogram<u64>| {
            (!h.is_empty() && h.len() < self.latency.len()).then(|| latency(h))
        };
        OperationReport {
            name: name.to_owned(),
            requests: self.count(),
            per_second: self.count() as f64 / elapsed.as_secs_f64().max(1e-9),
            latency_ms: latency(&self.latency),
            granted_ms: part(&self.granted),
            refused_ms: part(&self.refused),
            statuses: self
                .statuses
                .iter()
                .map(|(s, n)| (s.to_string(), *n))
                .collect(),
        }
    }
}
