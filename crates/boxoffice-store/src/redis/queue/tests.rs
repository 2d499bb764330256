//! The line against a real Redis: places, the counter, exchanges, lapses and leaving.

use super::*;
use std::collections::HashSet;

fn room() -> WaitingRoom {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    // Generous: the suite loads the machine, and a slow answer is not what is tested.
    let config = RedisConfig {
        timeout: Duration::from_secs(5),
        ..RedisConfig::new(url)
    };
    // One instance: each advance is shown at once.
    WaitingRoom::new(&config)
        .expect("a redis url")
        .showing_after(Duration::ZERO)
}

fn user(i: usize) -> UserId {
    UserId::parse(&format!("fan-{i}")).expect("a user id")
}

fn rules(opens_in_ms: i64, admit_per_minute: u32) -> Rules {
    Rules {
        opens_at: Utc::now() + chrono::Duration::milliseconds(opens_in_ms),
        admit_per_minute,
        session: Duration::from_secs(600),
    }
}

fn report(instance: &str) -> Report<'_> {
    Report {
        instance,
        factor: 1.0,
        why: "",
        left_read: 0,
    }
}

#[test]
fn the_opening_order_is_a_permutation_that_depends_on_the_seed() {
    for n in [1, 2, 3, 5, 16, 17, 1_000, 4_097] {
        for seed in [0, 1, 0xdead_beef_u64] {
            let places: HashSet<u64> = (1..=n)
                .map(|j| place(j, Order::Open { early: n, seed }, true).unwrap())
                .collect();
            assert_eq!(places, (1..=n).collect(), "n = {n}, seed = {seed}");
        }
    }
    let order = |seed| -> Vec<u64> {
        (1..=1_000)
            .map(|j| place(j, Order::Open { early: 1_000, seed }, true).unwrap())
            .collect()
    };
    assert_ne!(order(1), order(2));
    let shuffled = order(7);
    let kept = shuffled
        .iter()
        .enumerate()
        .filter(|(i, p)| **p == *i as u64 + 1);
    assert!(kept.count() < 20, "a shuffle moves nearly everyone");
    // Later joins keep their number; without a shuffle everyone does; nobody has a place
    // before the opening.
    let open = Order::Open { early: 10, seed: 3 };
    assert_eq!(place(11, open, true), Some(11));
    assert_eq!(place(4, open, false), Some(4));
    assert_eq!(place(4, Order::BeforeOpening, true), None);
}

#[tokio::test]
async fn one_ticket_per_user_and_the_order_is_fixed_at_the_opening() {
    let (room, event) = (room(), EventId::new());
    let rules = rules(400, 600);
    let first = room.join(event, &user(1), &rules, None).await.unwrap();
    assert_eq!((first.join, first.order), (1, Order::BeforeOpening));
    let again = room.join(event, &user(1), &rules, None).await.unwrap();
    assert_eq!((again.id, again.join), (first.id, 1));
    room.join(event, &user(2), &rules, None).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let late = room.join(event, &user(3), &rules, None).await.unwrap();
    let Order::Open { early, seed } = late.order else {
        panic!("open by now: {late:?}")
    };
    assert_eq!((late.join, early), (3, 2));
    let state = room.tick(event, &rules, &report("a")).await.unwrap();
    assert_eq!(state.order, Order::Open { early: 2, seed });
    // Replacing a ticket that is not the user's changes nothing; replacing theirs gives a
    // new one at the back.
    let kept = room
        .join(event, &user(1), &rules, Some(Uuid::new_v4()))
        .await
        .unwrap();
    assert_eq!(kept.id, first.id);
    let new = room
        .join(event, &user(1), &rules, Some(first.id))
        .await
        .unwrap();
    assert_ne!(new.id, first.id);
    assert_eq!(new.join, 4);
}

#[tokio::test]
async fn one_instance_advances_the_counter_and_every_instance_reads_it() {
    let (room, event) = (room(), EventId::new());
    // Opened a minute ago at 60 a minute: ten seconds' worth at once, then one a second.
    let rules = rules(-60_000, 60);
    for i in 0..30 {
        room.join(event, &user(i), &rules, None).await.unwrap();
    }
    let a = room.tick(event, &rules, &report("a")).await.unwrap();
    let b = room.tick(event, &rules, &report("b")).await.unwrap();
    assert_eq!(a.admitted_up_to, 10, "ten seconds' worth: {a:?}");
    assert_eq!(
        b.admitted_up_to, 10,
        "b holds no lease and reads a's counter"
    );
    assert_eq!((a.waiting_at(10), b.waiting_at(10), a.joined), (20, 20, 30));
    assert_eq!(a.updated_at, b.updated_at, "one change, one time");
    assert_eq!(a.admitting_per_minute, 60);

    // b's hold path is saturated: the rate in force halves for everyone.
    let slow = Report {
        factor: 0.5,
        why: "hold_latency",
        ..report("b")
    };
    room.tick(event, &rules, &slow).await.unwrap();
    let a = room.tick(event, &rules, &report("a")).await.unwrap();
    assert_eq!(
        (a.admitting_per_minute, a.why.as_str()),
        (30, "hold_latency")
    );
}

#[tokio::test]
async fn an_admitted_ticket_is_exchanged_once_and_unexchanged_ones_lapse() {
    let (room, event) = (room(), EventId::new());
    let rules = rules(-60_000, 60);
    let mut joined = Vec::new();
    for i in 0..12 {
        joined.push(room.join(event, &user(i), &rules, None).await.unwrap());
    }
    let state = room.tick(event, &rules, &report("a")).await.unwrap();
    assert_eq!(state.admitted_up_to, 10);
    // Places 1..=10 are admitted; place 11 is not yet.
    let exchange = |i: usize| {
        let (room, rules, id) = (room.clone(), rules, joined[i].id);
        async move {
            room.exchange(event, &user(i), id, i as u64 + 1, &rules)
                .await
                .unwrap()
        }
    };
    let Exchange::Pass(at) = exchange(0).await else {
        panic!("admitted")
    };
    assert_eq!(exchange(0).await, Exchange::Pass(at), "the same admission");
    assert_eq!(exchange(10).await, Exchange::Waiting);
    // Someone else's ticket id is not theirs.
    let stolen = room
        .exchange(event, &user(1), joined[0].id, 1, &rules)
        .await
        .unwrap();
    assert_eq!(stolen, Exchange::Gone);

    // The second's session is over: nine places were not exchanged, and lapse.
    let mut conn = room.redis.connection().await.unwrap();
    let keys = Keys::of(event);
    let ticks: Vec<String> = redis::cmd("ZRANGE")
        .arg(&keys.ticks)
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    let old = ticks[0].replacen(
        &format!("{}:", at.timestamp_millis()),
        &format!("{}:", at.timestamp_millis() - 601_000),
        1,
    );
    let used: i64 = redis::cmd("HGET")
        .arg(&keys.used)
        .arg(&ticks[0])
        .query_async(&mut conn)
        .await
        .unwrap();
    redis::pipe()
        .zrem(&keys.ticks, &ticks[0])
        .zadd(&keys.ticks, &old, 10)
        .hset(&keys.used, &old, used)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();
    let state = room.tick(event, &rules, &report("a")).await.unwrap();
    assert_eq!(state.lapsed, 9);
    assert_eq!(state.admitted_up_to, 12, "moved on by the lapsed places");
    assert_eq!(exchange(1).await, Exchange::Gone, "lapsed");
    assert_eq!(exchange(0).await, Exchange::Pass(at), "exchanged in time");
    // A lapsed user joins again at the back.
    let again = room
        .join(event, &user(1), &rules, Some(joined[1].id))
        .await
        .unwrap();
    assert_eq!(again.join, 13);
}

#[tokio::test]
async fn places_given_up_are_stepped_over_and_an_ended_pass_frees_its_place() {
    let (room, event) = (room(), EventId::new());
    // One a minute, opened a minute ago: one admission now.
    let rules = rules(-60_000, 1);
    let mut joined = Vec::new();
    for i in 0..5 {
        joined.push(room.join(event, &user(i), &rules, None).await.unwrap());
    }
    assert_eq!(
        room.tick(event, &rules, &report("a"))
            .await
            .unwrap()
            .admitted_up_to,
        1
    );
    // 2 and 3 give up while waiting; 1 is exchanged, then checks out.
    for i in [1, 2] {
        let left = room
            .leave(event, &user(i), joined[i].id, Some(i as u64 + 1))
            .await
            .unwrap();
        assert_eq!(left, Left::Left);
    }
    assert_eq!(
        room.leave(event, &user(3), joined[1].id, Some(2))
            .await
            .unwrap(),
        Left::Gone,
        "not user 3's ticket"
    );
    assert!(matches!(
        room.exchange(event, &user(0), joined[0].id, 1, &rules)
            .await
            .unwrap(),
        Exchange::Pass(_)
    ));
    assert_eq!(room.end(event, &user(0)).await.unwrap(), Left::Ended);
    assert_eq!(room.end(event, &user(0)).await.unwrap(), Left::Gone);
    let state = room.tick(event, &rules, &report("a")).await.unwrap();
    assert_eq!(
        state.admitted_up_to, 4,
        "the freed place admits place 4, stepping over 2 and 3"
    );
    assert_eq!(
        (
            state.waiting_at(state.admitted_up_to),
            state.left,
            state.ended
        ),
        (1, 2, 1)
    );
    assert_eq!(state.left_ids, vec![joined[1].id, joined[2].id]);
    let later = room
        .tick(
            event,
            &rules,
            &Report {
                left_read: 2,
                ..report("a")
            },
        )
        .await
        .unwrap();
    assert!(later.left_ids.is_empty(), "read from where it stopped");
    let counts = room.counts(event).await.unwrap();
    assert_eq!(
        counts,
        LineCounts {
            waiting: 1,
            admitted: 4,
            dropped: 0,
            ended: 1
        }
    );
}

#[tokio::test]
async fn an_advance_is_shown_from_one_moment_on_every_instance() {
    let event = EventId::new();
    let room = room().showing_after(Duration::from_millis(1_500));
    let rules = rules(-60_000, 60);
    let mut joined = Vec::new();
    for i in 0..12 {
        joined.push(room.join(event, &user(i), &rules, None).await.unwrap());
    }
    let a = room.tick(event, &rules, &report("a")).await.unwrap();
    let (from, up) = a.shown[0];
    assert_eq!(up, 10, "advanced by ten seconds' worth");
    assert_eq!(a.admitted_up_to, 0, "not shown yet");
    assert!(from > a.now, "shown from a moment to come");
    assert_eq!(
        (a.admitted_up_to_at(from), a.admitted_up_to_at(a.now)),
        (10, 0)
    );
    // Until then nobody is admitted, whoever asks, and a join sees the counter as shown.
    let early = room
        .exchange(event, &user(0), joined[0].id, 1, &rules)
        .await
        .unwrap();
    assert_eq!(early, Exchange::Waiting);
    assert_eq!(
        room.join(event, &user(0), &rules, None)
            .await
            .unwrap()
            .admitted_up_to,
        0
    );
    tokio::time::sleep(
        (from - Utc::now()).to_std().unwrap_or_default() + Duration::from_millis(50),
    )
    .await;
    let Exchange::Pass(at) = room
        .exchange(event, &user(0), joined[0].id, 1, &rules)
        .await
        .unwrap()
    else {
        panic!("shown by now")
    };
    assert_eq!(at, from, "admitted from the moment it was shown");
    let b = room.tick(event, &rules, &report("b")).await.unwrap();
    assert_eq!((b.admitted_up_to, b.shown_since(b.now)), (10, Some(from)));
}
