//! Best available on a 100,000-seat event (four sections of 25 rows of 1,000 seats) with
//! half its seats taken at random: how long choosing 4 seats takes.
//!
//! ```sh
//! cargo bench -p boxoffice-core --bench best_available
//! ```

use boxoffice_core::best_available::{choose, Ask, Slot};
use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};

const SECTIONS: [&str; 4] = ["stalls", "dress", "upper", "gallery"];

fn bench(c: &mut Criterion) {
    let rows: Vec<String> = (0..25).map(|r| format!("R{r}")).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut slots = Vec::with_capacity(100_000);
    for section in SECTIONS {
        for row in &rows {
            for _ in 0..1000 {
                slots.push(Slot {
                    section,
                    row,
                    ticket_type: Some("standard"),
                    free: rng.random_bool(0.5),
                    accessible: false,
                    companion: false,
                    distance: 0,
                });
            }
        }
    }
    let order = vec!["dress".to_owned()];
    for (name, free) in [("half taken", None), ("front rows sold out", Some(()))] {
        let mut slots = slots.clone();
        if free.is_some() {
            // Every seat of the best section taken: the search runs through all its rows.
            for s in slots.iter_mut().filter(|s| s.section == "dress") {
                s.free = false;
            }
        }
        let ask = Ask {
            quantity: 4,
            ticket_type: Some("standard"),
            section_order: &order,
            accessible: false,
        };
        assert!(choose(&slots, &ask).is_some());
        c.bench_function(&format!("4 seats of 100,000, {name}"), |b| {
            b.iter(|| choose(std::hint::black_box(&slots), &ask))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
