//! Where a ticket stands in the line, by arithmetic alone: the place of a join number
//! (the opening's keyed permutation of the early joins) and the wait it means.

use super::Order;

/// A seed for the opening's permutation, from the thread's cryptographically secure
/// generator (drawn with every call that may open the line; the first one at the opening
/// is kept).
pub(super) fn new_seed() -> u64 {
    rand::random()
}

/// The place (1 = first) of join number `join` (1 = first) in a line of `order`: joins
/// after the opening keep their number; with `shuffle`, the `early` joins before it take
/// the places `1..=early` in the order of a keyed permutation of their numbers (a Feistel
/// network over the smallest power of four that holds them, walked until it lands inside).
pub fn place(join: u64, order: Order, shuffle: bool) -> Option<u64> {
    match order {
        Order::BeforeOpening => None,
        Order::Open { early, seed } if shuffle && join >= 1 && join <= early => {
            Some(permute(join - 1, early, seed) + 1)
        }
        Order::Open { .. } => Some(join),
    }
}

/// `x` (below `n`) under the permutation of `0..n` that `seed` picks.
fn permute(x: u64, n: u64, seed: u64) -> u64 {
    if n <= 1 {
        return x;
    }
    // Half the bits of the smallest even-width domain holding n.
    let half = (64 - (n - 1).leading_zeros()).div_ceil(2).max(1);
    let mask = (1u64 << half) - 1;
    let mut y = x;
    loop {
        let (mut left, mut right) = (y >> half, y & mask);
        for round in 0..6u64 {
            let f = mix(right ^ seed.rotate_left(11 * round as u32) ^ (round << 56)) & mask;
            (left, right) = (right, left ^ f);
        }
        y = (left << half) | right;
        // Cycle-walking: a value outside 0..n is permuted again until it is inside, which
        // keeps the whole a permutation of 0..n.
        if y < n {
            return y;
        }
    }
}

/// SplitMix64's finalizer: every bit of the input moves every bit of the output.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The estimated wait of someone with `ahead` people ahead at `admit_per_minute`, in whole
/// seconds (rounded up).
pub fn estimated_wait_seconds(ahead: u64, admit_per_minute: u32) -> u64 {
    ahead
        .saturating_mul(60)
        .div_ceil(u64::from(admit_per_minute.max(1)))
}
