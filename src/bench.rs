//! `boxoffice bench`: the load generator's scenarios as command-line flags.

use std::time::Duration;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum Scenario {
    /// Buyers released together on one seat: exactly one must win.
    HotSeat {
        /// How many buyers.
        #[arg(long, default_value_t = 2000)]
        buyers: usize,
        /// Every buyer loads the event first (as the page does), so each is released with
        /// a connection open; without it each hold opens its own.
        #[arg(long)]
        connected: bool,
        /// Crowds, one after another, each on an event of its own.
        #[arg(long, default_value_t = 1)]
        rounds: usize,
        /// Check each buyer's first answer instead of keeping the turns the server gives:
        /// a crowd on one seat must get one 201 and the rest 409, never a 503.
        #[arg(long)]
        first_answers: bool,
    },
    /// Buyers released together asking for the best seats, round after round.
    Best {
        /// Buyers per round.
        #[arg(long, default_value_t = 500)]
        buyers: usize,
        /// Seats each asks for.
        #[arg(long, default_value_t = 2)]
        quantity: u32,
        /// Seats in the event.
        #[arg(long, default_value_t = 20_000)]
        seats: usize,
        /// Rounds, each of new buyers.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// One-seat holds on random seats by random buyers: the throughput scenario.
    Holds {
        /// Seats in the event.
        #[arg(long, default_value_t = 100_000)]
        seats: usize,
        /// How long to send (`10s`, `500ms`, `2m`; plain numbers are seconds).
        #[arg(long, default_value = "10s", value_parser = duration)]
        duration: Duration,
        /// Concurrent workers, each sending its next request when the last is answered.
        #[arg(long, default_value_t = 64, conflicts_with = "rate")]
        workers: usize,
        /// Send at this many requests per second instead (open loop).
        #[arg(long)]
        rate: Option<f64>,
        /// Distinct buyers, one chosen at random per request.
        #[arg(long, default_value_t = 50_000)]
        users: usize,
        /// The event's hold lifetime in seconds; the run ends by waiting it out to check
        /// that every hold lapsed.
        #[arg(long, default_value_t = 5)]
        hold_ttl: u32,
        /// Sell half the rows in a sales channel, to half the buyers (each buyer holds
        /// seats of their own half).
        #[arg(long)]
        channels: bool,
    },
    /// One-seat season holds on random seats by random buyers, each held in every event
    /// of one season at once (beside `holds`, the same on one event).
    SeasonHolds {
        /// Events in the season.
        #[arg(long, default_value_t = 20)]
        events: usize,
        /// Seats in the venue.
        #[arg(long, default_value_t = 10_000)]
        seats: usize,
        /// How long to send (`10s`, `500ms`, `2m`; plain numbers are seconds).
        #[arg(long, default_value = "10s", value_parser = duration)]
        duration: Duration,
        /// Concurrent workers, each sending its next request when the last is answered.
        #[arg(long, default_value_t = 64)]
        workers: usize,
        /// Distinct buyers, one chosen at random per request.
        #[arg(long, default_value_t = 50_000)]
        users: usize,
        /// The events' hold lifetime in seconds: longer than the run, so that the check
        /// after it sees every hold.
        #[arg(long, default_value_t = 120)]
        hold_ttl: u32,
    },
    /// Buyers arriving at once for 1–4 seats together: best available, think, check out.
    FlashSale {
        /// Seats in the event.
        #[arg(long, default_value_t = 20_000)]
        seats: usize,
        /// Buyers.
        #[arg(long, default_value_t = 5_000)]
        buyers: usize,
        /// How long a buyer thinks between hold and checkout.
        #[arg(long, default_value = "0s", value_parser = duration)]
        think: Duration,
        /// Stop after this long, sold out or not.
        #[arg(long, default_value = "120s", value_parser = duration)]
        time_limit: Duration,
        /// The event's hold lifetime in seconds.
        #[arg(long, default_value_t = 30)]
        hold_ttl: u32,
        /// Put a waiting room in front of the sale, admitting this many a minute.
        #[arg(long)]
        queue: Option<u32>,
        /// Give the event a payment window of this many seconds: each order is paid (as
        /// the platform's server would) right after checkout.
        #[arg(long, default_value_t = 0)]
        payment_window: u32,
    },
    /// Buyers joining an event's waiting room before it opens, then polling it while it
    /// admits: joins and polls per second, and the line's promises checked.
    Queue {
        /// Buyers in the line.
        #[arg(long, default_value_t = 10_000)]
        buyers: usize,
        /// Admissions per minute.
        #[arg(long, default_value_t = 6_000)]
        admit_per_minute: u32,
        /// How long to poll after opening.
        #[arg(long, default_value = "20s", value_parser = duration)]
        duration: Duration,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 64)]
        workers: usize,
    },
    /// A line of many: buyers join a waiting room before it opens, then poll their tickets
    /// as fast as the server answers while a few clients read the line's public status.
    /// Reports joins and polls a second, the store calls the polls made (given the stores'
    /// addresses), the status requests that reached an instance, fairness, and the time
    /// from admission to a pass.
    Line {
        /// Buyers in the line.
        #[arg(long, default_value_t = 100_000)]
        buyers: usize,
        /// Admissions per minute.
        #[arg(long, default_value_t = 6_000)]
        admit_per_minute: u32,
        /// How long to poll after opening.
        #[arg(long, default_value = "20s", value_parser = duration)]
        duration: Duration,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 64)]
        workers: usize,
        /// Clients reading the line's status back to back meanwhile.
        #[arg(long, default_value_t = 8)]
        status_workers: usize,
        /// The Redis the server's waiting room uses: its commands are counted.
        #[arg(long)]
        redis_url: Option<String>,
        /// The server's database: its transactions are counted.
        #[arg(long)]
        database_url: Option<String>,
        /// An instance behind the target (repeatable): the status requests that reached
        /// it are counted from its `/metrics` (default: the target).
        #[arg(long = "origin")]
        origins: Vec<String>,
    },
    /// An event sold out in one-seat orders, as many buyers on its waiting list, and every
    /// order cancelled at once: offers made a second.
    Waitlist {
        /// Orders cancelled at once (and buyers waiting).
        #[arg(long, default_value_t = 1_000)]
        orders: usize,
    },
    /// Buyers released together on a general-admission area, 1–4 places each.
    GaRush {
        /// Places in the area.
        #[arg(long, default_value_t = 1000)]
        places: u32,
        /// Buyers.
        #[arg(long, default_value_t = 2000)]
        buyers: usize,
    },
    /// Every ticket of a standing event scanned once by many scanners at once (some
    /// revoked first): check-ins a second and their p99; then the revocation list's size
    /// and read time.
    Door {
        /// Tickets in the event.
        #[arg(long, default_value_t = 20_000)]
        tickets: u32,
        /// Scanners scanning at once.
        #[arg(long, default_value_t = 16)]
        scanners: usize,
        /// Tickets revoked before the doors open (whole bookings of 100 cancelled).
        #[arg(long, default_value_t = 1_000)]
        revoked: u32,
    },
    /// Availability reads and check-ins back to back, alone and then while tickets' PDFs
    /// are drawn (two a buyer): their p99 both ways, and PDFs a second.
    Pdfs {
        /// PDFs drawn at once.
        #[arg(long, default_value_t = 50)]
        pdfs: u32,
        /// Pages (tickets) a PDF.
        #[arg(long, default_value_t = 20)]
        pages: u32,
        /// Readers sending reads and scans.
        #[arg(long, default_value_t = 4)]
        readers: usize,
        /// How long the readers read alone first.
        #[arg(long, default_value = "5s", value_parser = duration)]
        baseline: Duration,
        /// Guests with a ticket to scan (once all are in, the readers only read).
        #[arg(long, default_value_t = 20_000)]
        guests: u32,
    },
    /// Buyers loading the seat map (`GET /seats`, or as the page does with `--page`) back
    /// to back: latency and bytes per load.
    SeatMap {
        /// Seats in the event.
        #[arg(long, default_value_t = 100_000)]
        seats: usize,
        /// How long to send.
        #[arg(long, default_value = "10s", value_parser = duration)]
        duration: Duration,
        /// Concurrent readers.
        #[arg(long, default_value_t = 4)]
        workers: usize,
        /// Offer compression as a browser does (`gzip, deflate, br, zstd`).
        #[arg(long)]
        compressed: bool,
        /// Send the last `ETag` as `If-None-Match`, as a browser's cache does.
        #[arg(long)]
        revalidate: bool,
        /// Load as the seat-map page does: the layout, then the statuses from the stream.
        #[arg(long)]
        page: bool,
    },
    /// `GET /healthz` back to back: the server's HTTP floor.
    Floor {
        /// How long to send.
        #[arg(long, default_value = "10s", value_parser = duration)]
        duration: Duration,
        /// Concurrent workers.
        #[arg(long, default_value_t = 64)]
        workers: usize,
    },
    /// Draw throughput and p99 against workers from `--json` reports, to SVG. Needs no
    /// server.
    Plot {
        /// Where to write the SVG.
        #[arg(long)]
        out: std::path::PathBuf,
        /// The reports.
        #[arg(required = true)]
        reports: Vec<std::path::PathBuf>,
    },
    /// Live subscribers, availability reads and holds: memory and change delivery.
    Browse {
        /// Live subscribers (one stream each).
        #[arg(long, default_value_t = 1000)]
        subscribers: usize,
        /// Holds made one after another, each timed until every subscriber has it.
        #[arg(long, default_value_t = 5)]
        changes: usize,
        /// Buyers reading availability back to back meanwhile.
        #[arg(long, default_value_t = 4)]
        readers: usize,
        /// The server's process id, to report its resident memory.
        #[arg(long)]
        server_pid: Option<u32>,
    },
}

/// A duration as `10s`, `500ms`, `2m` or plain seconds.
fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 10s, 500ms or 2m"))?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("{text:?}: the unit is ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// Runs `scenario` against `target`.
pub async fn run_bench(
    scenario: Scenario,
    target: &boxoffice_loadgen::bench::Target,
) -> anyhow::Result<boxoffice_loadgen::bench::Report> {
    use boxoffice_loadgen::bench::{self, Pace};
    match scenario {
        Scenario::HotSeat {
            buyers,
            connected,
            rounds,
            first_answers,
        } => {
            let params = bench::hot_seat::Params {
                buyers,
                connected,
                rounds,
                first_answers,
            };
            bench::hot_seat::run(target, params).await
        }
        Scenario::Best {
            buyers,
            quantity,
            seats,
            rounds,
        } => {
            let params = bench::best::Params {
                buyers,
                quantity,
                seats,
                rounds,
            };
            bench::best::run(target, params).await
        }
        Scenario::Holds {
            seats,
            duration,
            workers,
            rate,
            users,
            hold_ttl,
            channels,
        } => {
            let pace = match rate {
                Some(per_second) => Pace::Open { per_second },
                None => Pace::Closed { workers },
            };
            let params = bench::holds::Params {
                seats,
                duration,
                pace,
                users,
                hold_ttl_seconds: hold_ttl,
                channels,
            };
            bench::holds::run(target, params).await
        }
        Scenario::SeasonHolds {
            events,
            seats,
            duration,
            workers,
            users,
            hold_ttl,
        } => {
            let params = bench::seasons::Params {
                events,
                seats,
                duration,
                pace: Pace::Closed { workers },
                users,
                hold_ttl_seconds: hold_ttl,
            };
            bench::seasons::run(target, params).await
        }
        Scenario::FlashSale {
            seats,
            buyers,
            think,
            time_limit,
            hold_ttl,
            queue,
            payment_window,
        } => {
            let params = bench::flash_sale::Params {
                seats,
                buyers,
                think,
                time_limit,
                hold_ttl_seconds: hold_ttl,
                queue,
                payment_window_seconds: payment_window,
            };
            bench::flash_sale::run(target, params).await
        }
        Scenario::GaRush { places, buyers } => bench::ga_rush::run(target, places, buyers).await,
        Scenario::Door {
            tickets,
            scanners,
            revoked,
        } => {
            let params = bench::door::DoorParams {
                tickets,
                scanners,
                revoked,
            };
            bench::door::door(target, params).await
        }
        Scenario::Pdfs {
            pdfs,
            pages,
            readers,
            baseline,
            guests,
        } => {
            let params = bench::door::PdfParams {
                pdfs,
                pages,
                readers,
                baseline,
                guests,
            };
            bench::door::pdfs(target, params).await
        }
        Scenario::Waitlist { orders } => bench::waitlist::run(target, orders).await,
        Scenario::Queue {
            buyers,
            admit_per_minute,
            duration,
            workers,
        } => {
            let params = bench::queue::Params {
                buyers,
                admit_per_minute,
                duration,
                workers,
            };
            bench::queue::run(target, params).await
        }
        Scenario::Line {
            buyers,
            admit_per_minute,
            duration,
            workers,
            status_workers,
            redis_url,
            database_url,
            origins,
        } => {
            let params = bench::line::Params {
                buyers,
                admit_per_minute,
                duration,
                workers,
                status_workers,
                redis_url,
                database_url,
                origins,
            };
            bench::line::run(target, params).await
        }
        Scenario::SeatMap {
            seats,
            duration,
            workers,
            compressed,
            revalidate,
            page,
        } => {
            let params = bench::seat_map::Params {
                seats,
                pace: Pace::Closed { workers },
                duration,
                accept_encoding: compressed.then_some("gzip, deflate, br, zstd"),
                revalidate,
                page,
            };
            bench::seat_map::run(target, params).await
        }
        Scenario::Floor { duration, workers } => {
            bench::floor::run(target, Pace::Closed { workers }, duration).await
        }
        Scenario::Plot { .. } => unreachable!("plot needs no server and is run before"),
        Scenario::Browse {
            subscribers,
            changes,
            readers,
            server_pid,
        } => {
            let params = bench::browse::Params {
                subscribers,
                changes,
                readers,
                server_pid,
            };
            bench::browse::run(target, params).await
        }
    }
}
