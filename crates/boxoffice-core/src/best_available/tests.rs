use proptest::prelude::*;

use super::*;

/// A row of `pattern`: `.` free, `x` taken, `-` not for sale, `w` a free wheelchair space
/// (`W` taken), `c` a free companion seat; every seat type `a`.
fn row<'a>(section: &'a str, label: &'a str, pattern: &str) -> Vec<Slot<'a>> {
    pattern
        .chars()
        .map(|c| Slot {
            section,
            row: label,
            ticket_type: (c != '-').then_some("a"),
            free: matches!(c, '.' | 'w' | 'c'),
            accessible: matches!(c, 'w' | 'W'),
            companion: c == 'c',
            distance: 0,
        })
        .collect()
}

fn ask(quantity: usize) -> Ask<'static> {
    Ask {
        quantity,
        ticket_type: None,
        section_order: &[],
        accessible: false,
    }
}

fn accessible(quantity: usize) -> Ask<'static> {
    Ask {
        accessible: true,
        ..ask(quantity)
    }
}

#[test]
fn an_ordinary_ask_never_gets_a_wheelchair_space_or_a_companion_seat() {
    let slots = [row("s", "A", "wc....cw"), row("s", "B", "wc.cw")].concat();
    assert_eq!(choose(&slots, &ask(4)).unwrap().seats, vec![2, 3, 4, 5]);
    // Five ordinary seats are there, but not together, and only from rows A and B.
    let five = choose(&slots, &ask(5)).unwrap();
    assert_eq!(five.seats, vec![2, 3, 4, 5, 10]);
    assert!(!five.adjacent);
    assert_eq!(choose(&slots, &ask(6)), None);
}

#[test]
fn an_accessible_ask_gets_a_wheelchair_space_and_the_seats_beside_it() {
    let slots = [row("s", "A", "........"), row("s", "B", "..cwwc..")].concat();
    // Row A has no wheelchair space: the block comes from row B and holds one.
    let two = choose(&slots, &accessible(2)).unwrap();
    assert!(two.adjacent);
    assert!(two.seats.iter().any(|&i| slots[i].accessible), "{two:?}");
    assert!(two.seats.iter().all(|&i| i >= 8));
    assert_eq!(
        choose(&slots, &accessible(4)).unwrap().seats,
        vec![10, 11, 12, 13]
    );
}

#[test]
fn an_accessible_ask_with_no_block_takes_the_space_and_the_nearest_seats() {
    let slots = row("s", "A", ".x.wx.x.");
    let choice = choose(&slots, &accessible(3)).unwrap();
    assert_eq!(choice.seats, vec![2, 3, 5]);
    assert!(!choice.adjacent);
    // No free wheelchair space: nothing, whatever else is free.
    let slots = [row("s", "A", "cW......"), row("s", "B", "........")].concat();
    assert_eq!(choose(&slots, &accessible(1)), None);
}

#[test]
fn two_together_nearest_the_centre_of_the_front_row() {
    let slots = [row("s", "A", "........"), row("s", "B", "........")].concat();
    let choice = choose(&slots, &ask(2)).unwrap();
    assert_eq!(
        choice,
        Choice {
            seats: vec![3, 4],
            adjacent: true
        }
    );
}

#[test]
fn a_block_that_strands_a_seat_loses_to_one_that_does_not() {
    // Seats 0–4 free: 1-2 strands seat 0, 2-3 strands seat 4; 0-1 and 3-4 strand none,
    // and 3-4 is nearer the centre of the six.
    let slots = row("s", "A", ".....x");
    let choice = choose(&slots, &ask(2)).unwrap();
    assert!(!strands(&slots, choice.seats[0], 2), "{choice:?}");
    assert_eq!(choice.seats, vec![3, 4]);
}

#[test]
fn when_every_block_strands_one_the_sale_is_made_anyway() {
    let slots = row("s", "A", "x...x");
    let choice = choose(&slots, &ask(2)).unwrap();
    assert!(choice.adjacent);
    assert_eq!(choice.seats.len(), 2);
}

#[test]
fn section_order_outranks_rows() {
    let slots = [row("stalls", "A", "...."), row("circle", "A", "....")].concat();
    let order = ["circle".to_owned()];
    let choice = choose(
        &slots,
        &Ask {
            quantity: 2,
            ticket_type: None,
            section_order: &order,
            accessible: false,
        },
    )
    .unwrap();
    // The circle, where the centre pair would strand a seat at each end: an end pair.
    assert_eq!(choice.seats, vec![4, 5]);
}

#[test]
fn without_room_in_one_row_the_fewest_rows_are_used() {
    let slots = [
        row("s", "A", ".x.x."),
        row("s", "B", "x..x."),
        row("s", "C", "x..x."),
    ]
    .concat();
    // Three together nowhere; row A alone has three free seats.
    let choice = choose(&slots, &ask(3)).unwrap();
    assert_eq!(
        choice,
        Choice {
            seats: vec![0, 2, 4],
            adjacent: false
        }
    );
}

#[test]
fn the_asked_type_only_and_nothing_when_too_few() {
    let mut slots = row("s", "A", "....");
    slots[0].ticket_type = Some("b");
    slots[1].ticket_type = Some("b");
    let only_b = Ask {
        quantity: 2,
        ticket_type: Some("b"),
        section_order: &[],
        accessible: false,
    };
    assert_eq!(choose(&slots, &only_b).unwrap().seats, vec![0, 1]);
    assert_eq!(
        choose(
            &slots,
            &Ask {
                quantity: 3,
                ..only_b
            }
        ),
        None
    );
    assert_eq!(choose(&slots, &ask(0)), None);
}

/// Random layouts: up to three sections of up to five rows of up to twelve seats, each
/// seat free or taken, of type `a` or `b` or not for sale.
fn layout() -> impl Strategy<Value = Vec<(usize, usize, Option<u8>, bool)>> {
    prop::collection::vec(
        prop::collection::vec(
            prop::collection::vec(
                (
                    prop::option::weighted(0.9, 0u8..2),
                    prop::bool::weighted(0.6),
                ),
                1..12,
            ),
            1..5,
        ),
        1..3,
    )
    .prop_map(|sections| {
        let mut seats = Vec::new();
        for (s, rows) in sections.into_iter().enumerate() {
            for (r, row) in rows.into_iter().enumerate() {
                for (kind, free) in row {
                    seats.push((s, r, kind, free));
                }
            }
        }
        seats
    })
}

const SECTIONS: [&str; 3] = ["s0", "s1", "s2"];
const ROWS: [&str; 5] = ["A", "B", "C", "D", "E"];
const TYPES: [&str; 2] = ["a", "b"];

fn slots_of(seats: &[(usize, usize, Option<u8>, bool)]) -> Vec<Slot<'static>> {
    seats
        .iter()
        .map(|&(s, r, kind, free)| Slot {
            section: SECTIONS[s],
            row: ROWS[r],
            ticket_type: kind.map(|k| TYPES[usize::from(k)]),
            free,
            accessible: false,
            companion: false,
            distance: 0,
        })
        .collect()
}

/// Runs of one row: (start, len) in slot positions.
fn rows_of(slots: &[Slot<'_>]) -> Vec<(usize, usize)> {
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        match rows.last_mut() {
            Some((start, len))
                if slots[*start].section == s.section && slots[*start].row == s.row =>
            {
                *len += 1
            }
            _ => rows.push((i, 1)),
        }
    }
    rows
}

proptest! {
    #[test]
    fn chosen_seats_are_free_wanted_and_adjacent_whenever_a_row_has_room(
        seats in layout(),
        quantity in 1usize..5,
        kind in prop::option::of(0u8..2),
        ranked in prop::option::of(prop::sample::subsequence(vec![2usize, 0, 1], 0..3)),
    ) {
        let slots = slots_of(&seats);
        let order: Vec<String> = ranked.unwrap_or_default().into_iter().map(|s| SECTIONS[s].to_owned()).collect();
        let ask = Ask { quantity, ticket_type: kind.map(|k| TYPES[usize::from(k)]), section_order: &order, accessible: false };
        let wanted = |s: &Slot<'_>| s.free && s.ticket_type.is_some() && ask.ticket_type.is_none_or(|t| s.ticket_type == Some(t));
        let available = slots.iter().filter(|s| wanted(s)).count();
        let choice = choose(&slots, &ask);
        // The same input, the same answer.
        prop_assert_eq!(&choice, &choose(&slots, &ask));
        let Some(choice) = choice else {
            prop_assert!(available < quantity);
            return Ok(());
        };
        prop_assert_eq!(choice.seats.len(), quantity);
        prop_assert!(choice.seats.windows(2).all(|w| w[0] < w[1]), "distinct, ascending");
        for &i in &choice.seats {
            prop_assert!(wanted(&slots[i]), "seat {} is taken, not for sale or of another type", i);
        }
        let rows = rows_of(&slots);
        let room = |&(start, len): &(usize, usize)| {
            slots[start..start + len].windows(quantity).any(|w| w.iter().all(&wanted))
        };
        let any_room = rows.iter().any(room);
        prop_assert_eq!(choice.adjacent, any_room);
        if !choice.adjacent {
            // The fewest rows: no run of fewer consecutive rows of one section has enough.
            let row_of = |i: usize| rows.iter().position(|&(s, l)| s <= i && i < s + l).unwrap();
            let mut used: Vec<usize> = choice.seats.iter().map(|&i| row_of(i)).collect();
            used.dedup();
            let count = |&(start, len): &(usize, usize)| slots[start..start + len].iter().filter(|s| wanted(s)).count();
            let mut fewest: Option<usize> = None;
            for first in 0..rows.len() {
                let mut have = 0;
                for (k, r) in rows[first..].iter().enumerate() {
                    if slots[r.0].section != slots[rows[first].0].section {
                        break;
                    }
                    have += count(r);
                    if have >= quantity {
                        fewest = Some(fewest.map_or(k + 1, |f| f.min(k + 1)));
                        break;
                    }
                }
            }
            if let Some(fewest) = fewest {
                // Rows in between may give nothing, so the rows used can be fewer still.
                prop_assert!(used.len() <= fewest, "{} rows used, {} would do", used.len(), fewest);
                let section = slots[choice.seats[0]].section;
                prop_assert!(choice.seats.iter().all(|&i| slots[i].section == section), "one section");
            }
        }
        if choice.adjacent {
            let first = choice.seats[0];
            let &(start, len) = rows.iter().find(|&&(s, l)| s <= first && first < s + l).unwrap();
            prop_assert!(choice.seats.last().copied() == Some(first + quantity - 1));
            prop_assert!(first + quantity <= start + len, "one row");
            // No row with room ranks before the chosen one.
            let rank = |start: usize| {
                let section = slots[start].section;
                let named = order.iter().position(|s| s == section);
                let first_seen = SECTIONS.iter().position(|s| *s == section).unwrap();
                let section_rank = named.unwrap_or(order.len() + first_seen);
                let row_rank = rows.iter().filter(|&&(s, _)| s < start && slots[s].section == section).count();
                (section_rank, row_rank)
            };
            for r in rows.iter().filter(|r| room(r)) {
                prop_assert!(rank(r.0) >= rank(start), "row at {} has room and ranks higher", r.0);
            }
            // Never a stranded seat when a block of the same row strands none.
            let row = &slots[start..start + len];
            if strands(row, first - start, quantity) {
                for other in 0..=len - quantity {
                    let fits = row[other..other + quantity].iter().all(&wanted);
                    prop_assert!(!fits || strands(row, other, quantity), "block at {} strands nothing", other);
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn trying_the_ranked_rows_one_by_one_chooses_as_choose_does(
        seats in layout(),
        quantity in 1usize..5,
        kind in prop::option::of(0u8..2),
        ranked in prop::option::of(prop::sample::subsequence(vec![2usize, 0, 1], 0..3)),
    ) {
        let slots = slots_of(&seats);
        let order: Vec<String> = ranked.unwrap_or_default().into_iter().map(|s| SECTIONS[s].to_owned()).collect();
        let ask = Ask { quantity, ticket_type: kind.map(|k| TYPES[usize::from(k)]), section_order: &order, accessible: false };
        let by_rows = rows_in_rank_order(&slots, &order).into_iter().find_map(|row| {
            together(&slots[row.clone()], &ask).map(|start| row.start + start)
        });
        let chosen = choose(&slots, &ask);
        match by_rows {
            Some(first) => prop_assert_eq!(
                chosen,
                Some(Choice { seats: (first..first + quantity).collect(), adjacent: true })
            ),
            None => prop_assert!(chosen.is_none_or(|c| !c.adjacent)),
        }
    }
}

proptest! {
    #[test]
    fn wheelchair_spaces_go_to_accessible_asks_only(
        seats in layout(),
        marks in prop::collection::vec(0u8..6, 0..200),
        quantity in 1usize..5,
    ) {
        let mut slots = slots_of(&seats);
        for (slot, mark) in slots.iter_mut().zip(marks) {
            slot.accessible = mark == 0;
            slot.companion = mark == 1;
        }
        let ordinary = Ask { quantity, ticket_type: None, section_order: &[], accessible: false };
        if let Some(choice) = choose(&slots, &ordinary) {
            for &i in &choice.seats {
                prop_assert!(!slots[i].accessible && !slots[i].companion, "seat {} is kept for wheelchairs", i);
            }
        }
        let asked = Ask { accessible: true, ..ordinary };
        let open = |s: &Slot<'_>| s.free && s.ticket_type.is_some();
        let rows = rows_of(&slots);
        let possible = rows.iter().any(|&(start, len)| {
            let row = &slots[start..start + len];
            row.iter().any(|s| open(s) && s.accessible) && row.iter().filter(|s| open(s)).count() >= quantity
        });
        match choose(&slots, &asked) {
            Some(choice) => {
                prop_assert_eq!(choice.seats.len(), quantity);
                prop_assert!(choice.seats.iter().all(|&i| open(&slots[i])));
                prop_assert!(choice.seats.iter().any(|&i| slots[i].accessible), "no wheelchair space in {:?}", choice);
                let row = |i: usize| (slots[i].section, slots[i].row);
                prop_assert!(choice.seats.iter().all(|&i| row(i) == row(choice.seats[0])), "one row");
            }
            None => prop_assert!(!possible, "a row had a space and enough seats"),
        }
    }
}

#[test]
fn of_two_blocks_equally_near_the_middle_the_one_nearer_the_focal_point_wins() {
    // Four free seats: the middle two would strand one seat on each side, so two from the
    // left end or two from the right, equally near the middle.
    let mut slots = row("stalls", "A", "....");
    let ask = Ask {
        quantity: 2,
        ticket_type: None,
        section_order: &[],
        accessible: false,
    };
    assert_eq!(
        choose(&slots, &ask).unwrap().seats,
        [0, 1],
        "without one: venue order"
    );
    // The focal point off to the right: the seats on the right are nearer.
    for (i, slot) in slots.iter_mut().enumerate() {
        slot.distance = 10 - i as u32;
    }
    assert_eq!(choose(&slots, &ask).unwrap().seats, [2, 3]);
    // It never outweighs the middle.
    let mut wide = row("stalls", "A", "......");
    for (i, slot) in wide.iter_mut().enumerate() {
        slot.distance = 10 - i as u32;
    }
    assert_eq!(choose(&wide, &ask).unwrap().seats, [2, 3]);
}
