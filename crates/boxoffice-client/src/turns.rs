//! Keeping the server's turns: a call refused for now (`503` with `retry_after_ms`, the
//! turn the server gave it: its adaptive limit, or a store too busy) is made again at that
//! turn, as the buyer's page does, until it is answered otherwise. (A `429` is the buyer
//! asking too often, and is answered as it is.)

use std::future::Future;
use std::time::Duration;

use crate::{Error, Result};

/// The most turns a call keeps before its refusal is answered as it is.
pub const MAX_TURNS: usize = 200;

/// Makes `call` until it is answered with anything but a turn (at most [`MAX_TURNS`]
/// times again), waiting out each turn first; answers the last answer.
pub async fn kept<T, F, Fut>(mut call: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut turns = 0;
    loop {
        match call().await {
            Err(Error::Problem(problem)) if turns < MAX_TURNS => match turn(&problem) {
                Some(wait) => {
                    turns += 1;
                    tokio::time::sleep(wait).await;
                }
                None => return Err(Error::Problem(problem)),
            },
            answer => return answer,
        }
    }
}

/// The turn a refusal gives, if it gives one.
pub fn turn(problem: &crate::api::Problem) -> Option<Duration> {
    (problem.status == 503)
        .then_some(problem.retry_after_ms)
        .flatten()
        .map(Duration::from_millis)
}
