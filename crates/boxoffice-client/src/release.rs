//! Releasing many calls at the same moment, the way a race is run.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Barrier;

/// Runs every one of `calls` on a task of its own, all released together from one
/// barrier once every task has started, and answers their outputs in the same order.
///
/// # Panics
///
/// If a call panics.
pub async fn together<F>(calls: Vec<F>) -> Vec<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let barrier = Arc::new(Barrier::new(calls.len()));
    let tasks: Vec<_> = calls
        .into_iter()
        .map(|call| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                call.await
            })
        })
        .collect();
    let mut outputs = Vec::with_capacity(tasks.len());
    for task in tasks {
        outputs.push(task.await.expect("a released call does not panic"));
    }
    outputs
}
