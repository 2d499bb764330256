//! Best-available selection: "2 good seats together" chosen from the layout, without
//! leaving a single seat stranded when a choice just as good leaves none.
//!
//! # Scoring
//!
//! Seats are judged by where they are, best first:
//!
//! 1. **Section**: its place in the event's `section_order` (by default the venue's order of
//!    sections). A section the order does not name comes after every named one.
//! 2. **Row**: rows nearer the front rank higher; the front row is the section's first.
//! 3. **Centre**: within a row, seats nearer the middle of the row rank higher. Adjacency
//!    and the middle both come from the seats' order within the row, never from their
//!    printed numbers.
//!
//! A row is a quality tier. The choice is made in the best row that has `quantity`
//! adjacent seats that are free and of the asked ticket type (any type when none is asked).
//! Within that row the block nearest the centre wins, except that a block that would leave
//! a single free seat on sale stranded (between taken seats, or at the row's end) loses to
//! any block that strands none. If every block of the row strands one, the best of them is
//! taken anyway: the rule never costs a sale.
//!
//! If no row has `quantity` adjacent seats, the closest group is taken: the fewest
//! consecutive rows of one section (best-ranked first) that together have enough, the seats
//! of each row nearest its centre; failing that, the best seats wherever they are. Such an
//! answer says `adjacent: false`.
//!
//! Among blocks of a row equally near its middle, the one nearer the venue's focal point
//! (the stage's centre, where the venue has one) wins. Other ties go to the seat earlier in
//! venue order, so the same input always gives the same answer.
//!
//! # Wheelchair spaces
//!
//! Wheelchair spaces (`accessible`) and their companion seats are kept for the buyers who
//! need them: an ordinary ask never gets one. An ask with `accessible` gets a wheelchair
//! space and, for the rest, the companion or other seats beside it: the block chosen in a
//! row must hold a wheelchair space. If no row has such a block, the best wheelchair space
//! is taken with the seats of its row nearest to it (`adjacent: false`); if no row has a
//! free wheelchair space and enough seats besides, nothing is chosen.

/// One seat, in venue order (each row's seats together, in their order along the row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot<'a> {
    /// Section id.
    pub section: &'a str,
    /// Row label.
    pub row: &'a str,
    /// The seat's ticket type in this event; `None` if it is not for sale.
    pub ticket_type: Option<&'a str>,
    /// Neither held nor sold.
    pub free: bool,
    /// A wheelchair space.
    pub accessible: bool,
    /// A companion seat beside a wheelchair space.
    pub companion: bool,
    /// How far the seat is from the venue's focal point, in any unit (0 for all seats when
    /// the venue has none): among blocks equally near a row's middle, the one whose seats
    /// are nearer in sum wins.
    pub distance: u32,
}

impl Slot<'_> {
    /// On sale and free: a seat someone could still buy, whatever its type.
    fn open(&self) -> bool {
        self.free && self.ticket_type.is_some()
    }

    /// A seat this ask may get: open, of its type, and a wheelchair space or companion
    /// seat only when it asks for one.
    fn wanted(&self, ask: &Ask<'_>) -> bool {
        self.open()
            && ask.ticket_type.is_none_or(|t| self.ticket_type == Some(t))
            && (ask.accessible || !(self.accessible || self.companion))
    }
}

/// What a buyer asks for.
#[derive(Clone, Copy, Debug)]
pub struct Ask<'a> {
    /// How many seats.
    pub quantity: usize,
    /// Only seats of this ticket type; any type if `None`.
    pub ticket_type: Option<&'a str>,
    /// Section ids, best first.
    pub section_order: &'a [String],
    /// A wheelchair space, with companion or other seats beside it for the rest.
    pub accessible: bool,
}

/// The seats chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Positions of the chosen seats in the slots given, ascending.
    pub seats: Vec<usize>,
    /// All in one row, side by side.
    pub adjacent: bool,
}

/// A row: where its seats are in the slots, and how it ranks.
#[derive(Clone, Copy, Debug)]
struct Row {
    section_rank: usize,
    row_rank: usize,
    start: usize,
    len: usize,
}

/// Chooses `ask.quantity` seats, or `None` if fewer than that many are free and of the
/// asked type (or nothing was asked for).
pub fn choose(slots: &[Slot<'_>], ask: &Ask<'_>) -> Option<Choice> {
    let q = ask.quantity;
    let wanted = |s: &Slot<'_>| s.wanted(ask);
    if q == 0 {
        return None;
    }
    let rows = ranked_rows(slots, ask.section_order);
    for row in &rows {
        if let Some(start) = together(&slots[row.start..row.start + row.len], ask) {
            return Some(Choice {
                seats: (row.start + start..row.start + start + q).collect(),
                adjacent: true,
            });
        }
    }
    if ask.accessible {
        return around_a_wheelchair_space(slots, &rows, q, &wanted);
    }
    // No row has enough together; counting is needed only now.
    if slots.iter().filter(|s| wanted(s)).count() < q {
        return None;
    }
    Some(Choice {
        seats: closest_group(slots, &rows, q, &wanted),
        adjacent: false,
    })
}

/// The rows of `slots` in rank order (by section rank, then front to back), as ranges of
/// positions: the order [`choose`] tries them in. They depend on the layout alone, so a
/// caller choosing many times from one layout can rank its rows once and try them itself
/// with [`together`], falling back to [`choose`] only when no row has enough together.
pub fn rows_in_rank_order(
    slots: &[Slot<'_>],
    section_order: &[String],
) -> Vec<std::ops::Range<usize>> {
    ranked_rows(slots, section_order)
        .into_iter()
        .map(|r| r.start..r.start + r.len)
        .collect()
}

/// Where in `row` (one row's slots, in order) the best block of `ask.quantity` adjacent
/// free seats of the asked type starts, as [`choose`] would take it from that row.
pub fn together(row: &[Slot<'_>], ask: &Ask<'_>) -> Option<usize> {
    if ask.quantity == 0 {
        return None;
    }
    best_block(row, ask.quantity, &|s| s.wanted(ask), ask.accessible)
}

/// Rows in rank order: by section rank, then front to back.
fn ranked_rows(slots: &[Slot<'_>], section_order: &[String]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut sections: Vec<&str> = Vec::new();
    let mut rows_in_section = 0;
    for (i, slot) in slots.iter().enumerate() {
        match rows.last_mut() {
            Some(row)
                if slots[row.start].section == slot.section && slots[row.start].row == slot.row =>
            {
                row.len += 1;
            }
            _ => {
                if sections.last() != Some(&slot.section) {
                    sections.push(slot.section);
                    rows_in_section = 0;
                }
                let named = section_order.iter().position(|s| s == slot.section);
                rows.push(Row {
                    section_rank: named.unwrap_or(section_order.len() + sections.len()),
                    row_rank: rows_in_section,
                    start: i,
                    len: 1,
                });
                rows_in_section += 1;
            }
        }
    }
    rows.sort_by_key(|r| (r.section_rank, r.row_rank, r.start));
    rows
}

/// Twice the distance from the middle of a row of `len` seats to the middle of `q` seats
/// starting at `start` (twice, to stay in whole numbers).
fn off_centre(start: usize, q: usize, len: usize) -> usize {
    (2 * start + q).abs_diff(len)
}

/// The best block of `q` adjacent wanted seats in one row (holding a wheelchair space if
/// `accessible`): the nearest the centre among those that strand no single seat, else among
/// all.
fn best_block(
    row: &[Slot<'_>],
    q: usize,
    wanted: &impl Fn(&Slot<'_>) -> bool,
    accessible: bool,
) -> Option<usize> {
    let mut best: Option<(bool, usize, u64, usize)> = None;
    let mut run = 0;
    let mut last_space = None;
    for (i, slot) in row.iter().enumerate() {
        run = if wanted(slot) { run + 1 } else { 0 };
        if slot.accessible {
            last_space = Some(i);
        }
        if run >= q {
            let start = i + 1 - q;
            if accessible && last_space.is_none_or(|space| space < start) {
                continue;
            }
            let key = (
                strands(row, start, q),
                off_centre(start, q, row.len()),
                row[start..start + q]
                    .iter()
                    .map(|s| u64::from(s.distance))
                    .sum::<u64>(),
                start,
            );
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
    }
    best.map(|(_, _, _, start)| start)
}

/// Whether taking `q` seats from `start` leaves a single open seat alone beside them.
pub fn strands(row: &[Slot<'_>], start: usize, q: usize) -> bool {
    let open = |i: usize| row.get(i).is_some_and(Slot::open);
    let alone_left = start >= 1 && open(start - 1) && (start == 1 || !open(start - 2));
    let end = start + q;
    let alone_right = open(end) && !open(end + 1);
    alone_left || alone_right
}

/// Seats for `q` when no row has `q` together: the fewest consecutive rows of one section,
/// best-ranked first; failing that, the best seats anywhere. Each row gives its seats
/// nearest the centre.
fn closest_group(
    slots: &[Slot<'_>],
    rows: &[Row],
    q: usize,
    wanted: &impl Fn(&Slot<'_>) -> bool,
) -> Vec<usize> {
    let count = |r: &Row| {
        slots[r.start..r.start + r.len]
            .iter()
            .filter(|s| wanted(s))
            .count()
    };
    // (rows spanned, first row's place in `rows`) of the best group found.
    let mut best: Option<(usize, usize)> = None;
    for first in 0..rows.len() {
        let mut have = 0;
        for (k, row) in rows[first..].iter().enumerate() {
            if row.section_rank != rows[first].section_rank
                || row.row_rank != rows[first].row_rank + k
            {
                break;
            }
            have += count(row);
            if have >= q {
                if best.is_none_or(|(span, _)| k + 1 < span) {
                    best = Some((k + 1, first));
                }
                break;
            }
        }
    }
    let group: &[Row] = match best {
        Some((span, first)) => &rows[first..first + span],
        None => rows,
    };
    let mut chosen = Vec::with_capacity(q);
    for row in group {
        let mut seats: Vec<usize> = (row.start..row.start + row.len)
            .filter(|&i| wanted(&slots[i]))
            .collect();
        seats.sort_by_key(|&i| (off_centre(i - row.start, 1, row.len), i));
        chosen.extend(seats.into_iter().take(q - chosen.len()));
        if chosen.len() == q {
            break;
        }
    }
    chosen.sort_unstable();
    chosen
}

/// For an accessible ask no row has a block for: the best-ranked free wheelchair space
/// whose row has `q - 1` more wanted seats, with those nearest to it.
fn around_a_wheelchair_space(
    slots: &[Slot<'_>],
    rows: &[Row],
    q: usize,
    wanted: &impl Fn(&Slot<'_>) -> bool,
) -> Option<Choice> {
    rows.iter().find_map(|row| {
        let range = row.start..row.start + row.len;
        let mut seats: Vec<usize> = range.filter(|&i| wanted(&slots[i])).collect();
        let space = seats
            .iter()
            .copied()
            .filter(|&i| slots[i].accessible)
            .min_by_key(|&i| (off_centre(i - row.start, 1, row.len), i))?;
        if seats.len() < q {
            return None;
        }
        seats.sort_by_key(|&i| (i.abs_diff(space), i));
        let mut chosen: Vec<usize> = seats.into_iter().take(q).collect();
        chosen.sort_unstable();
        Some(Choice {
            seats: chosen,
            adjacent: false,
        })
    })
}

#[cfg(test)]
mod tests;
