//! Prometheus metrics of one server: the counters of the stores and the sale-day gate, and
//! the request counts and latencies the HTTP layer records into it.
//!
//! Each server keeps a recorder of its own rather than the process-wide one: several
//! servers in one process (as the tests run them) then never count into each other's
//! figures, and a test can assert exact values on its own server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use metrics::{Counter, Histogram};
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
    /// The request metrics' handles, registered once for each route, method and status.
    requests: Mutex<HashMap<Box<str>, Vec<RequestHandles>>>,
    /// The hold stores' call histograms, registered once for each name, store and outcome.
    store_calls: Mutex<HashMap<(&'static str, &'static str, &'static str), Histogram>>,
}

/// The handles of one route's requests of one method answered with one status.
struct RequestHandles {
    method: Box<str>,
    status: u16,
    count: Counter,
    duration: Histogram,
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
        Self {
            recorder,
            handle,
            requests: Mutex::default(),
            store_calls: Mutex::default(),
        }
    }

    /// Records one HTTP request answered: `http_requests_total` and
    /// `http_request_duration_seconds`, by method, route (its pattern) and status.
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let mut requests = self.requests.lock().expect("the request metrics' lock");
        let of_route = match requests.get_mut(route) {
            Some(of_route) => of_route,
            None => requests.entry(route.into()).or_default(),
        };
        let handles = match of_route
            .iter()
            .position(|h| h.status == status && &*h.method == method)
        {
            Some(at) => &of_route[at],
            None => {
                let labels = [
                    ("method", method.to_owned()),
                    ("route", route.to_owned()),
                    ("status", status.to_string()),
                ];
                let (count, duration) = self.record(|| {
                    (
                        metrics::counter!("http_requests_total", &labels),
                        metrics::histogram!("http_request_duration_seconds", &labels),
                    )
                });
                of_route.push(RequestHandles {
                    method: method.into(),
                    status,
                    count,
                    duration,
                });
                of_route.last().expect("just pushed")
            }
        };
        handles.count.increment(1);
        handles.duration.record(took.as_secs_f64());
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
        self.store_calls
            .lock()
            .expect("the store calls' lock")
            .entry((name, store, outcome))
            .or_insert_with(|| {
                self.record(|| metrics::histogram!(name, "store" => store, "outcome" => outcome))
            })
            .record(took.as_secs_f64());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample line starting `prefix` in `text`.
    fn sample(text: &str, prefix: &str) -> Option<f64> {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }

    /// Requests and store calls are counted under their own labels each, whether their
    /// handles were registered just now or long before.
    #[test]
    fn each_route_method_and_status_counts_apart() {
        let metrics = Metrics::new();
        let ms = Duration::from_millis;
        metrics.request("POST", "/v1/events/{id}/holds", 201, ms(3));
        metrics.request("POST", "/v1/events/{id}/holds", 201, ms(30));
        metrics.request("POST", "/v1/events/{id}/holds", 503, ms(1));
        metrics.request("GET", "/v1/events/{id}/holds", 201, ms(1));
        metrics.store_call("boxoffice_hold_duration_seconds", "redis", "held", ms(2));
        metrics.store_call("boxoffice_hold_duration_seconds", "redis", "held", ms(2));
        metrics.store_call("boxoffice_hold_duration_seconds", "redis", "refused", ms(2));
        let text = metrics.render(&[]);
        let count = |method: &str, status: u16| {
            let labels = format!(
                "http_requests_total{{method=\"{method}\",route=\"/v1/events/{{id}}/holds\",status=\"{status}\"}}"
            );
            sample(&text, &labels)
        };
        assert_eq!(count("POST", 201), Some(2.0), "{text}");
        assert_eq!(count("POST", 503), Some(1.0));
        assert_eq!(count("GET", 201), Some(1.0));
        assert_eq!(count("GET", 503), None);
        let took = sample(
            &text,
            "http_request_duration_seconds_sum{method=\"POST\",route=\"/v1/events/{id}/holds\",status=\"201\"}",
        );
        assert!(took.is_some_and(|s| (s - 0.033).abs() < 1e-9), "{took:?}");
        let calls = |outcome: &str| {
            sample(
                &text,
                &format!("boxoffice_hold_duration_seconds_count{{store=\"redis\",outcome=\"{outcome}\"}}"),
            )
        };
        assert_eq!((calls("held"), calls("refused")), (Some(2.0), Some(1.0)));
    }
}
