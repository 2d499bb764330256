//! The line against a real Redis: admission order, rates, and what a ticket sees.

use super::*;
use std::collections::HashMap;

fn room() -> WaitingRoom {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    // Generous: the suite loads the machine, and a slow answer is not what is tested.
    let config = RedisConfig {
        timeout: Duration::from_secs(5),
        ..RedisConfig::new(url)
    };
    WaitingRoom::new(&config).expect("a redis url")
}

fn user(i: usize) -> UserId {
    UserId::parse(&format!("fan-{i}")).expect("a user id")
}

fn rules(opens_in_ms: i64, admit_per_minute: u32) -> Rules {
    Rules {
        opens_at: Utc::now() + chrono::Duration::milliseconds(opens_in_ms),
        admit_per_minute,
        drop_after: Duration::from_secs(60),
        session: Duration::from_secs(600),
        shuffle: true,
    }
}

fn ticket(place: Place) -> Uuid {
    match place {
        Place::Waiting { ticket, .. } | Place::Admitted { ticket, .. } => ticket,
        Place::Ended { .. } | Place::Gone => panic!("a ticket was gone"),
    }
}

/// The admission number of every admitted ticket.
async fn admission_order(room: &WaitingRoom, event: EventId) -> HashMap<Uuid, u64> {
    let [.., admitted, _, _] = keys(event);
    let order: Vec<(String, u64)> = redis::cmd("ZRANGE")
        .arg(&admitted)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(&mut room.redis.connection().await.unwrap())
        .await
        .unwrap();
    order
        .into_iter()
        .map(|(t, n)| (t.parse().unwrap(), n))
        .collect()
}

/// Polls every ticket until each is admitted.
async fn poll_until_admitted(
    room: &WaitingRoom,
    event: EventId,
    tickets: &[(UserId, Uuid)],
    rules: &Rules,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut waiting = 0;
        for (user, ticket) in tickets {
            match room.poll(event, user, *ticket, rules).await.unwrap() {
                Place::Admitted { .. } => {}
                Place::Waiting { .. } => waiting += 1,
                Place::Ended { .. } | Place::Gone => {
                    panic!("{ticket} was dropped while polling")
                }
            }
        }
        if waiting == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{waiting} still waiting"
        );
    }
}

/// Spearman's rank correlation of two rankings of the same items.
fn rank_correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let d2: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    1.0 - 6.0 * d2 / (n * (n * n - 1.0))
}

#[tokio::test]
async fn the_pre_queue_is_admitted_in_a_random_order_and_latecomers_after_it() {
    let (room, event) = (room(), EventId::new());
    let rules = rules(3_000, 600_000);
    let mut early = Vec::new();
    for i in 0..1_000 {
        let u = user(i);
        let place = room.join(event, &u, &rules).await.unwrap();
        assert!(
            matches!(place, Place::Waiting { ahead: None, .. }),
            "before opening nobody sees a place: {place:?}"
        );
        // One ticket per user: joining again gives the same one.
        assert_eq!(
            ticket(room.join(event, &u, &rules).await.unwrap()),
            ticket(place)
        );
        early.push((u, ticket(place)));
    }
    assert!(
        Utc::now() < rules.opens_at,
        "the joins took too long to test"
    );
    tokio::time::sleep((rules.opens_at - Utc::now()).to_std().unwrap_or_default()).await;
    let mut late = Vec::new();
    for i in 1_000..1_100 {
        let u = user(i);
        let place = room.join(event, &u, &rules).await.unwrap();
        late.push((u, ticket(place)));
    }
    poll_until_admitted(&room, event, &early, &rules).await;
    poll_until_admitted(&room, event, &late, &rules).await;

    let order = admission_order(&room, event).await;
    assert_eq!(order.len(), 1_100, "everyone admitted once");
    let mut numbers: Vec<u64> = order.values().copied().collect();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (1..=1_100).collect::<Vec<_>>(),
        "nobody admitted twice"
    );
    let joined: Vec<f64> = (0..early.len()).map(|i| i as f64).collect();
    let admitted: Vec<f64> = early.iter().map(|(_, t)| order[t] as f64).collect();
    let rho = rank_correlation(&joined, &admitted);
    // For 1,000 independent rankings rho's standard deviation is about 0.03.
    assert!(
        rho.abs() < 0.15,
        "admission follows join order: rho = {rho}"
    );
    for (i, (_, t)) in late.iter().enumerate() {
        assert_eq!(
            order[t],
            1_001 + i as u64,
            "latecomers after the pre-queue, in order"
        );
    }
    let counts = room.counts(event).await.unwrap();
    assert_eq!(
        (counts.waiting, counts.admitted, counts.dropped),
        (0, 1_100, 0)
    );
}

#[tokio::test]
async fn unshuffled_the_pre_queue_is_admitted_in_the_order_it_joined() {
    let (room, event) = (room(), EventId::new());
    let rules = Rules {
        shuffle: false,
        ..rules(1_000, 600_000)
    };
    let mut fans = Vec::new();
    for i in 0..50 {
        let u = user(i);
        let t = ticket(room.join(event, &u, &rules).await.unwrap());
        fans.push((u, t));
    }
    assert!(
        Utc::now() < rules.opens_at,
        "the joins took too long to test"
    );
    tokio::time::sleep((rules.opens_at - Utc::now()).to_std().unwrap_or_default()).await;
    poll_until_admitted(&room, event, &fans, &rules).await;
    let order = admission_order(&room, event).await;
    for (i, (_, t)) in fans.iter().enumerate() {
        assert_eq!(order[t], i as u64 + 1);
    }
}

#[tokio::test]
async fn admission_keeps_to_the_rate_and_places_only_move_forward() {
    let (room, event) = (room(), EventId::new());
    // Ten a second, open now.
    let rules = rules(0, 600);
    // (user, ticket, people ahead at the last poll, admitted)
    let mut fans = Vec::new();
    for i in 0..40 {
        let u = user(i);
        let place = room.join(event, &u, &rules).await.unwrap();
        fans.push((u, ticket(place), u64::MAX, false));
    }
    let started = Utc::now();
    let mut admitted_at = Vec::new();
    while admitted_at.len() < 15 {
        for (u, t, last_ahead, done) in fans.iter_mut().filter(|f| !f.3) {
            match room.poll(event, u, *t, &rules).await.unwrap() {
                Place::Waiting { ahead, .. } => {
                    let ahead = ahead.expect("a place once open");
                    assert!(ahead <= *last_ahead, "a place moved backwards");
                    assert!(
                        estimated_wait_seconds(ahead, rules.admit_per_minute)
                            <= estimated_wait_seconds(*last_ahead, rules.admit_per_minute),
                        "an estimate rose"
                    );
                    *last_ahead = ahead;
                }
                Place::Admitted { at, .. } => {
                    admitted_at.push(at);
                    *done = true;
                }
                Place::Ended { .. } | Place::Gone => panic!("dropped while polling"),
            }
        }
        assert!(Utc::now() - started < chrono::Duration::seconds(20));
    }
    // By Redis' clock the n-th admission never comes before n tenths of a second after
    // opening (the bucket starts empty), and, with everyone polling, not much later:
    // the fifteenth within a second and a half, give or take how fast polls come.
    admitted_at.sort();
    for (n, at) in admitted_at.iter().enumerate() {
        let since_opening = (*at - rules.opens_at).num_milliseconds();
        assert!(
            since_opening >= (n as i64 + 1) * 100 - 20,
            "admission {} came {since_opening} ms after opening, ahead of the rate",
            n + 1
        );
    }
    let fifteenth = (admitted_at[14] - rules.opens_at).num_milliseconds();
    assert!(
        fifteenth < 1_500 + 2_000,
        "the fifteenth came after {fifteenth} ms"
    );
}

#[tokio::test]
async fn a_ticket_that_stops_polling_is_dropped_and_does_not_block_the_line() {
    let (room, event) = (room(), EventId::new());
    let rules = Rules {
        drop_after: Duration::from_millis(300),
        ..rules(0, 60)
    };
    let (quiet, keen) = (user(1), user(2));
    let quiet_ticket = ticket(room.join(event, &quiet, &rules).await.unwrap());
    // Admitted at once? Then the bucket already had a token: use it up first.
    let first = room
        .poll(event, &quiet, quiet_ticket, &rules)
        .await
        .unwrap();
    assert!(matches!(
        first,
        Place::Waiting { ahead: Some(0), .. } | Place::Admitted { .. }
    ));
    let (quiet, quiet_ticket) = if matches!(first, Place::Admitted { .. }) {
        let u = user(3);
        (
            u.clone(),
            ticket(room.join(event, &u, &rules).await.unwrap()),
        )
    } else {
        (quiet, quiet_ticket)
    };
    let keen_ticket = ticket(room.join(event, &keen, &rules).await.unwrap());
    // One a second: the keen fan polls and is admitted within about a second, as the
    // quiet one's turn comes and goes.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match room.poll(event, &keen, keen_ticket, &rules).await.unwrap() {
            Place::Admitted { .. } => break,
            Place::Waiting { .. } => {}
            Place::Ended { .. } | Place::Gone => panic!("the keen fan was dropped"),
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the line is blocked"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        room.poll(event, &quiet, quiet_ticket, &rules)
            .await
            .unwrap(),
        Place::Gone
    );
    assert_eq!(room.counts(event).await.unwrap().dropped, 1);
    // Joining again queues anew, at the back.
    let again = room.join(event, &quiet, &rules).await.unwrap();
    assert_ne!(ticket(again), quiet_ticket);
}

#[tokio::test]
async fn ending_an_admission_hands_its_slot_to_the_next_in_line() {
    let (room, event) = (room(), EventId::new());
    // One a minute, opened a minute ago: one token in the bucket, the next a minute off.
    let rules = rules(-60_000, 1);
    let (first, second) = (user(1), user(2));
    let first_ticket = ticket(room.join(event, &first, &rules).await.unwrap());
    let second_ticket = ticket(room.join(event, &second, &rules).await.unwrap());
    assert!(matches!(
        room.poll(event, &first, first_ticket, &rules)
            .await
            .unwrap(),
        Place::Admitted { .. }
    ));
    assert_eq!(
        room.poll(event, &second, second_ticket, &rules)
            .await
            .unwrap(),
        Place::Waiting {
            ticket: second_ticket,
            ahead: Some(0)
        }
    );
    // Nobody else has an admission to end.
    assert_eq!(room.end(event, &second, &rules).await.unwrap(), Place::Gone);

    let ended = room.end(event, &first, &rules).await.unwrap();
    assert!(matches!(ended, Place::Ended { ticket, .. } if ticket == first_ticket));
    assert!(matches!(
        room.poll(event, &second, second_ticket, &rules)
            .await
            .unwrap(),
        Place::Admitted { .. }
    ));
    assert_eq!(
        room.poll(event, &first, first_ticket, &rules)
            .await
            .unwrap(),
        Place::Gone
    );
    assert_eq!(room.end(event, &first, &rules).await.unwrap(), Place::Gone);
    let counts = room.counts(event).await.unwrap();
    assert_eq!((counts.admitted, counts.ended, counts.waiting), (2, 1, 0));
}
