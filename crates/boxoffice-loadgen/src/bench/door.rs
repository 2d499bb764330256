//! The door: `door --tickets N --scanners S --revoked R`, every ticket of an event of N
//! standing places scanned once by S scanners at once (R of them revoked first), then the
//! revocation list read as an offline scanner reads it; and `pdfs --pdfs P --pages Q`,
//! availability reads and check-ins while P PDFs of Q pages each are drawn, against the
//! same reads without them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use boxoffice_client::api::{BookingBody, CheckinBody, Passage, TicketStatus};
use boxoffice_core::ids::EventId;
use futures::{stream, StreamExt};
use uuid::Uuid;

use super::{on_workers, status_of, Check, Report, Stats, Target};

/// Places a booking takes: a PDF of this many pages at most.
const PER_BOOKING: u32 = 100;

/// Setup calls sent at once.
const SETUP_AT_ONCE: usize = 16;

/// A standing event of `places` places, booked whole by buyers `<who>-<i>` in bookings of
/// up to [`PER_BOOKING`] places: the event and each booking with its buyer's token.
async fn booked_event(
    target: &Target,
    places: u32,
    per_booking: u32,
    who: &str,
) -> anyhow::Result<(EventId, Vec<(Uuid, String)>)> {
    let event = target.standing_event("floor", places, per_booking).await?;
    let bookings = places.div_ceil(per_booking);
    let bar = target.progress(u64::from(bookings), "bookings");
    let booked: Vec<anyhow::Result<(Uuid, String)>> = stream::iter(0..bookings)
        .map(|i| {
            let (api, token, bar) = (
                target.api.clone(),
                target.buyer(&format!("{who}-{i}")),
                bar.clone(),
            );
            let quantity = per_booking.min(places - i * per_booking);
            async move {
                let body = BookingBody {
                    area: "floor".into(),
                    quantity,
                };
                let booking = api.book(event, &token, &body, None).await?;
                bar.inc(1);
                Ok((booking.booking_id, token))
            }
        })
        // In order: booking i holds places i·per_booking and on, the last the rest.
        .buffered(SETUP_AT_ONCE)
        .collect()
        .await;
    bar.finish_and_clear();
    Ok((event, booked.into_iter().collect::<anyhow::Result<_>>()?))
}

/// Every ticket of `bookings`: its secret, and whether it is valid.
async fn secrets(
    target: &Target,
    bookings: &[(Uuid, String)],
) -> anyhow::Result<Vec<(String, bool)>> {
    let lists: Vec<anyhow::Result<Vec<(String, bool)>>> = stream::iter(bookings)
        .map(|(booking, token)| {
            let api = target.api.clone();
            async move {
                let list = api.booking_tickets(*booking, token).await?;
                Ok(list
                    .tickets
                    .into_iter()
                    .map(|t| (t.secret, t.status == TicketStatus::Valid))
                    .collect())
            }
        })
        .buffer_unordered(SETUP_AT_ONCE)
        .collect()
        .await;
    let mut all = Vec::new();
    for list in lists {
        all.extend(list?);
    }
    Ok(all)
}

/// A scan of `secret` at the main gate.
fn scan(secret: &str) -> CheckinBody {
    CheckinBody {
        secret: Some(secret.to_owned()),
        code: None,
        nonce: Uuid::new_v4().simple().to_string(),
        passage: Passage::Entry,
        gate: Some("main".into()),
        scanned_at: None,
        force: false,
    }
}

/// The door scenario's size.
#[derive(Clone, Copy, Debug)]
pub struct DoorParams {
    /// Tickets in the event.
    pub tickets: u32,
    /// Scanners scanning at once.
    pub scanners: usize,
    /// Tickets revoked (whole bookings cancelled) before the doors open.
    pub revoked: u32,
}

/// Runs the door scenario and reports it.
pub async fn door(target: &Target, params: DoorParams) -> anyhow::Result<Report> {
    let (event, bookings) = booked_event(target, params.tickets, PER_BOOKING, "guest").await?;
    // The first bookings are whole: `revoked` rounded up to whole bookings.
    let cancelled = (params.revoked.div_ceil(PER_BOOKING) as usize).min(bookings.len());
    for (booking, token) in &bookings[..cancelled] {
        target.api.cancel_booking(*booking, token).await?;
    }
    let mut tickets = secrets(target, &bookings).await?;
    // The order guests arrive in: mixed, revoked ones among them.
    {
        use rand::seq::SliceRandom;
        tickets.shuffle(&mut rand::rng());
    }
    let valid = tickets.iter().filter(|(_, valid)| *valid).count() as u64;
    let revoked = tickets.len() as u64 - valid;
    let tickets = Arc::new(tickets);
    target.mark("start");
    let (stats, elapsed) = {
        let (api, tickets) = (target.api.clone(), Arc::clone(&tickets));
        on_workers(params.scanners, tickets.len(), move |i| {
            let (api, tickets) = (api.clone(), Arc::clone(&tickets));
            async move { status_of(&api.check_in(event, &scan(&tickets[i].0)).await, 201) }
        })
        .await
    };
    target.mark("end");

    // The revocation list as a scanner going offline reads it: its time, and its size
    // as sent.
    let mut reads = Vec::new();
    let mut list = None;
    for _ in 0..5 {
        let started = Instant::now();
        let read = target.api.revoked(event).await?;
        reads.push(started.elapsed());
        list = Some(read);
    }
    reads.sort();
    let list = list.expect("read five times");
    let bytes = serde_json::to_vec(&list)?.len();

    let mut report = Report::new("door");
    report
        .parameter("tickets", params.tickets)
        .parameter("scanners", params.scanners)
        .parameter("revoked", params.revoked);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("checkin", elapsed));
    report
        .figure(
            "checkins_per_second",
            stats.count() as f64 / elapsed.as_secs_f64(),
        )
        .figure("revoked_list_entries", list.revoked.len() as f64)
        .figure("revoked_list_bytes", bytes as f64)
        .figure(
            "revoked_list_ms_median",
            reads[reads.len() / 2].as_secs_f64() * 1000.0,
        );
    report.checks.push(Check::new(
        "every valid ticket let in once, every revoked one refused",
        stats.of(201) == valid && stats.of(410) == revoked && stats.count() == valid + revoked,
        format!(
            "{} let in of {valid} valid, {} refused as revoked of {revoked}, {} answers",
            stats.of(201),
            stats.of(410),
            stats.count()
        ),
    ));
    report.checks.push(Check::new(
        "the revocation list names every revoked ticket",
        list.revoked.len() as u64 == revoked,
        format!("{} listed, {revoked} revoked", list.revoked.len()),
    ));
    Ok(report)
}

/// The PDF scenario's size.
#[derive(Clone, Copy, Debug)]
pub struct PdfParams {
    /// PDFs drawn at once (two a buyer).
    pub pdfs: u32,
    /// Pages (tickets) a PDF.
    pub pages: u32,
    /// Readers sending availability reads and check-ins, back to back.
    pub readers: usize,
    /// How long the readers read without PDFs, for the baseline.
    pub baseline: Duration,
    /// Guests with a ticket to scan (in another event): once all are in, the readers only
    /// read.
    pub guests: u32,
}

/// Availability reads and check-ins, alternating, on `readers` loops until `until`
/// answers: the two kinds' statistics.
async fn read_and_scan(
    target: &Target,
    event: EventId,
    doors: Arc<Vec<(String, bool)>>,
    readers: usize,
    until: impl std::future::Future<Output = ()>,
) -> (Stats, Stats, Duration) {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let loops: Vec<_> = (0..readers.max(1))
        .map(|_| {
            let (api, doors, stop, next) = (
                target.api.clone(),
                Arc::clone(&doors),
                Arc::clone(&stop),
                Arc::clone(&next),
            );
            tokio::spawn(async move {
                let (mut reads, mut scans) = (Stats::default(), Stats::default());
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let sent = Instant::now();
                    let status = status_of(&api.availability(event).await, 200);
                    reads.record(status, sent.elapsed());
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((secret, _)) = doors.get(i) else {
                        continue;
                    };
                    let sent = Instant::now();
                    let status = status_of(&api.check_in(event, &scan(secret)).await, 201);
                    scans.record(status, sent.elapsed());
                }
                (reads, scans)
            })
        })
        .collect();
    until.await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut reads, mut scans) = (Stats::default(), Stats::default());
    for done in futures::future::join_all(loops).await {
        let (r, s) = done.expect("a reader never panics");
        reads.merge(&r);
        scans.merge(&s);
    }
    (reads, scans, started.elapsed())
}

/// Runs the PDF scenario and reports it.
pub async fn pdfs(target: &Target, params: PdfParams) -> anyhow::Result<Report> {
    let buyers = params.pdfs.div_ceil(2);
    let (_, printed) = booked_event(target, buyers * params.pages, params.pages, "printer").await?;
    // Guests at the door meanwhile, in another event.
    let (door_event, guests) = booked_event(target, params.guests, PER_BOOKING, "walker").await?;
    let doors = secrets(target, &guests).await?;
    let half = doors.len() / 2;
    let (before, during) = doors.split_at(half);
    let (before, during) = (Arc::new(before.to_vec()), Arc::new(during.to_vec()));

    let (base_reads, base_scans, _) = read_and_scan(
        target,
        door_event,
        before,
        params.readers,
        tokio::time::sleep(params.baseline),
    )
    .await;

    target.mark("start");
    let drawing = Arc::new(std::sync::Mutex::new(Stats::default()));
    let started = Instant::now();
    let print_all = {
        let calls: Vec<_> = (0..params.pdfs as usize)
            .map(|n| {
                let (api, (booking, token), drawing) = (
                    target.api.clone(),
                    printed[n / 2].clone(),
                    Arc::clone(&drawing),
                );
                async move {
                    let sent = Instant::now();
                    let answer = api.booking_pdf(booking, &token).await;
                    let ok = matches!(&answer, Ok(pdf) if pdf.starts_with(b"%PDF"));
                    drawing.lock().unwrap_or_else(|e| e.into_inner()).record(
                        if ok { 200 } else { status_of(&answer, 200) },
                        sent.elapsed(),
                    );
                }
            })
            .collect();
        futures::future::join_all(calls)
    };
    let (reads, scans, _) = read_and_scan(target, door_event, during, params.readers, async {
        print_all.await;
    })
    .await;
    let elapsed = started.elapsed();
    target.mark("end");
    let drawing = drawing.lock().unwrap_or_else(|e| e.into_inner()).clone();

    let mut report = Report::new("pdfs");
    report
        .parameter("pdfs", params.pdfs)
        .parameter("pages", params.pages)
        .parameter("readers", params.readers)
        .parameter("baseline_s", params.baseline.as_secs_f64())
        .parameter("guests", params.guests);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report
        .operations
        .push(base_reads.report("availability_alone", params.baseline));
    report
        .operations
        .push(base_scans.report("checkin_alone", params.baseline));
    report.operations.push(drawing.report("pdf", elapsed));
    report
        .operations
        .push(reads.report("availability_while_drawing", elapsed));
    report
        .operations
        .push(scans.report("checkin_while_drawing", elapsed));
    report.figure(
        "pdfs_per_second",
        drawing.of(200) as f64 / elapsed.as_secs_f64(),
    );
    report.checks.push(Check::new(
        "every PDF drawn",
        drawing.of(200) == u64::from(params.pdfs),
        format!("{} of {}", drawing.of(200), params.pdfs),
    ));
    let all_ok = |s: &Stats, status: u16| s.of(status) == s.count() && s.count() > 0;
    report.checks.push(Check::new(
        "every read and scan answered",
        all_ok(&base_reads, 200)
            && all_ok(&reads, 200)
            && all_ok(&base_scans, 201)
            && all_ok(&scans, 201),
        format!(
            "reads {}/{} and {}/{}, scans {}/{} and {}/{}",
            base_reads.of(200),
            base_reads.count(),
            reads.of(200),
            reads.count(),
            base_scans.of(201),
            base_scans.count(),
            scans.of(201),
            scans.count()
        ),
    ));
    Ok(report)
}
