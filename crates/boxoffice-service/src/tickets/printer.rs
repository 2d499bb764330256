//! Where tickets' PDFs are drawn: on a few threads of their own, apart from the request
//! workers and at a lower priority than theirs, so that drawing a hundred pages never
//! delays a check-in or an availability read; and at most [`AT_ONCE_PER_HOLDER`] PDFs at
//! once for one holder, so one buyer cannot fill the pool (`429 rate_limited` past that).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use boxoffice_store::StoreError;

use crate::Error;

/// PDFs one holder may have drawn at once.
pub const AT_ONCE_PER_HOLDER: u32 = 2;

/// How much lower than the request workers' the drawing threads' priority is (their nice
/// value: higher is lower).
const NICER: i32 = 10;

/// When a holder refused for drawing too many PDFs at once is told to come back.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The drawing threads and who is drawing on them.
pub struct Printer {
    pool: rayon::ThreadPool,
    drawing: Arc<Mutex<HashMap<String, u32>>>,
}

impl Printer {
    /// A printer of `threads` threads (at least one).
    pub fn new(threads: usize) -> Self {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("boxoffice-pdf-{i}"))
            .start_handler(|_| {
                // Per thread on Linux: the request workers keep their priority.
                let me = rustix::thread::gettid();
                if let Err(e) = rustix::process::setpriority_process(Some(me), NICER) {
                    tracing::warn!(error = %e, "a PDF thread keeps the request workers' priority");
                }
            })
            .build()
            .expect("the PDF threads start");
        Self {
            pool,
            drawing: Arc::default(),
        }
    }

    /// The threads `boxoffice serve` draws on: half the cores, at least one. (With one a
    /// core, a check-in's p99 while 50 PDFs drew was twice as long on two cores:
    /// `bench/door.sh`, BENCHMARKS.md.)
    pub fn threads() -> usize {
        std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
    }

    /// Draws with `draw` on the printer's threads for `holder`, or refuses at once when
    /// the holder already has [`AT_ONCE_PER_HOLDER`] PDFs drawing. The holder's place is
    /// given back when the drawing ends, even if the asker stopped waiting.
    pub async fn print(
        &self,
        holder: &str,
        draw: impl FnOnce() -> Vec<u8> + Send + 'static,
    ) -> Result<Vec<u8>, Error> {
        let place = Place::take(&self.drawing, holder).ok_or(Error::RateLimited(RETRY_AFTER))?;
        let (done, drawn) = oneshot::channel();
        self.pool.spawn(move || {
            let pdf = draw();
            drop(place);
            let _ = done.send(pdf);
        });
        drawn.await.map_err(|_| {
            Error::Store(StoreError::Other(
                "a PDF's drawing ended without a PDF".into(),
            ))
        })
    }

    /// PDFs being drawn (or waiting for a thread) for `holder`.
    pub fn drawing(&self, holder: &str) -> u32 {
        let drawing = self.drawing.lock().unwrap_or_else(|e| e.into_inner());
        drawing.get(holder).copied().unwrap_or(0)
    }
}

/// One of a holder's places on the printer, given back when dropped.
struct Place {
    drawing: Arc<Mutex<HashMap<String, u32>>>,
    holder: String,
}

impl Place {
    fn take(drawing: &Arc<Mutex<HashMap<String, u32>>>, holder: &str) -> Option<Self> {
        let mut map = drawing.lock().unwrap_or_else(|e| e.into_inner());
        let count = map.entry(holder.to_owned()).or_default();
        if *count >= AT_ONCE_PER_HOLDER {
            return None;
        }
        *count += 1;
        Some(Self {
            drawing: Arc::clone(drawing),
            holder: holder.to_owned(),
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut map = self.drawing.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = map.get_mut(&self.holder) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.holder);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[tokio::test]
    async fn a_holder_draws_two_at_once_and_others_are_not_held_up() {
        let printer = Arc::new(Printer::new(2));
        // Two drawings that wait until they are let go.
        let (go, gate) = mpsc::channel::<()>();
        let gate = Arc::new(Mutex::new(gate));
        let mut drawing = Vec::new();
        for _ in 0..2 {
            let (printer, gate) = (Arc::clone(&printer), Arc::clone(&gate));
            drawing.push(tokio::spawn(async move {
                printer
                    .print("ann", move || {
                        gate.lock().unwrap().recv().unwrap();
                        b"%PDF".to_vec()
                    })
                    .await
            }));
        }
        while printer.drawing("ann") < 2 {
            tokio::task::yield_now().await;
        }
        let third = printer.print("ann", Vec::new).await;
        assert!(matches!(third, Err(Error::RateLimited(_))), "{third:?}");
        assert_eq!(printer.drawing("ann"), 2, "a refusal takes no place");
        go.send(()).unwrap();
        go.send(()).unwrap();
        for d in drawing {
            assert_eq!(d.await.unwrap().unwrap(), b"%PDF");
        }
        assert_eq!(printer.drawing("ann"), 0, "each place is given back");
        assert_eq!(printer.print("ann", || vec![1]).await.unwrap(), vec![1]);
        assert_eq!(printer.print("bob", || vec![2]).await.unwrap(), vec![2]);
    }

    #[tokio::test]
    async fn the_drawing_threads_run_below_the_callers_priority() {
        let printer = Printer::new(1);
        let mine = rustix::process::getpriority_process(None).unwrap();
        let theirs = printer
            .print("ann", || {
                let nice = rustix::process::getpriority_process(None).unwrap();
                nice.to_string().into_bytes()
            })
            .await
            .unwrap();
        let theirs: i32 = String::from_utf8(theirs).unwrap().parse().unwrap();
        assert_eq!(theirs, (mine + NICER).min(19));
    }
}
