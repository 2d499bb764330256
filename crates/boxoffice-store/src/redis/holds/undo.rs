//! Undoing a hold whose acquire went unanswered: it may have run in Redis all the same.

use std::time::Duration;

use boxoffice_core::hold::ClaimedSeat;
use uuid::Uuid;

use super::{keys, RedisHoldStore};
use crate::hold_store::HoldRequest;

impl RedisHoldStore {
    /// Releases, in the background, a hold whose acquire went unanswered. A command that
    /// timed out may still have reached Redis and run later (a Redis frozen for a while
    /// runs what it was sent once it thaws): the buyer was told 503, so a hold made then
    /// would keep seats from everyone until it lapsed. The release goes down the same
    /// connection after the acquire, so it runs after it; it is compare-and-delete on the
    /// token, so where the acquire never ran it changes nothing. It is retried until Redis
    /// answers or the hold would have lapsed anyway.
    pub(super) fn undo_later(&self, r: &HoldRequest<'_>, token: Uuid) {
        let redis = self.redis.clone();
        let script = self.scripts.release.clone();
        let (event, user) = (r.event, r.user.as_str().to_owned());
        let seats: Vec<ClaimedSeat> = r
            .seats
            .iter()
            .map(|seat| ClaimedSeat {
                seat_id: seat.clone(),
                ticket_type: String::new(),
                price_cents: 0,
            })
            .collect();
        let give_up = tokio::time::Instant::now() + Duration::from_secs(u64::from(r.ttl_seconds));
        tokio::spawn(async move {
            let mut pause = Duration::from_millis(50);
            // The buyer was never told of this hold: releasing it ends no pass.
            let head = [
                keys::held(event),
                keys::user(event, &user),
                keys::pass_ended(event, None),
            ];
            while tokio::time::Instant::now() < give_up {
                let released = match redis.connection().await {
                    Ok(mut conn) => {
                        Self::hold_invocation(
                            &script,
                            event,
                            token,
                            &head,
                            &[user.clone(), "0".to_owned(), String::new()],
                            &seats,
                        )
                        .invoke_async::<i64>(&mut conn)
                        .await
                    }
                    Err(_) => Err(redis::RedisError::from((
                        redis::ErrorKind::Io,
                        "not connected",
                    ))),
                };
                match released {
                    Ok(1) => {
                        tracing::info!(%event, %token, "released a hold whose acquire had timed out");
                        return;
                    }
                    Ok(_) => return,
                    Err(_) => {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(2));
                    }
                }
            }
        });
    }
}
