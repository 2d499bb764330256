//! Prometheus metrics of one server: the counters of the stores and the sale-day gate, and
//! the request counts and latencies the HTTP layer records into it.
//!
//! Each server keeps a recorder of its own rather than the process-wide one: several
//! servers in one process (as the tests run them) then never count into each other's
//! figures, and a test can assert exact values on its own server.

use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Buckets of the latency histograms (every metric named `…_duration_seconds`), in seconds.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// One server's metrics.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// An empty set of metrics.
    pub fn new() -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_duration_seconds".into()), LATENCY_BUCKETS)
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        Self { recorder, handle }
    }

    /// Runs `record` (which uses the `metrics` macros) against this server's recorder.
    pub fn record<T>(&self, record: impl FnOnce() -> T) -> T {
        metrics::with_local_recorder(&self.recorder, record)
    }

    /// Adds one to a counter without labels.
    pub fn increment(&self, name: &'static str) {
        self.record(|| metrics::counter!(name).increment(1));
    }

    /// Records how long one call to the hold store took: the histogram `name` (a hold's or
    /// a checkout's), by store and outcome.
    pub fn store_call(
        &self,
        name: &'static str,
        store: &'static str,
        outcome: &'static str,
        took: std::time::Duration,
    ) {
        self.record(|| {
            metrics::histogram!(name, "store" => store, "outcome" => outcome)
                .record(took.as_secs_f64())
        });
    }

    /// Drains recorded histogram samples into their buckets; run now and then so samples
    /// never pile up between scrapes.
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }

    /// The Prometheus text exposition, with `absolute` counters (kept elsewhere, such as
    /// in a hold store) set to their current values first.
    pub fn render(&self, absolute: &[(&'static str, u64)]) -> String {
        self.record(|| {
            for &(name, value) in absolute {
                metrics::counter!(name).absolute(value);
            }
        });
        self.handle.run_upkeep();
        self.handle.render()
    }
}
