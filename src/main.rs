//! `boxoffice`: the seat-inventory server and its tools.
//!
//! - `boxoffice serve [--demo]`: run the HTTP server (creating and migrating its database).
//! - `boxoffice race ga|seat`: race demos against a running server (`ga --unsafe` shows the
//!   naive booking overselling, on a scratch table).
//! - `boxoffice bench hot-seat|best|holds|flash-sale|ga-rush|browse|seat-map|floor`: the load generator
//!   against a running server; exits non-zero if an invariant check fails. `bench plot`
//!   draws saved reports.
//! - `boxoffice relay`: deliver outbox rows to webhooks, alongside or instead of `serve`'s.
//! - `boxoffice migrate`: create the database if missing and apply the migrations.

use boxoffice_server::app::shutdown_signal;
use boxoffice_server::config::ServeArgs;
use boxoffice_server::{demo, Application};
use std::time::Duration;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// mimalloc: under many concurrent requests glibc's allocator spends its time on arena
/// locks (measured with `boxoffice bench holds`). Built without transparent huge pages
/// (`no_thp`): with them every open connection costs about 8 KB more resident memory
/// (`boxoffice bench browse`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "boxoffice",
    version,
    about = "Seat inventory that never sells a seat twice"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve(Box<ServeArgs>),
    /// Deliver outbox rows to webhooks (the same relay `serve` runs when webhooks are set).
    Relay {
        /// Postgres URL.
        #[arg(
            long,
            env = "DATABASE_URL",
            default_value = "postgres://postgres@127.0.0.1:5432/boxoffice"
        )]
        database_url: String,
        /// Webhook URLs (comma-separated).
        #[arg(
            long = "webhook-url",
            env = "BOXOFFICE_WEBHOOK_URLS",
            value_delimiter = ',',
            required = true
        )]
        webhook_urls: Vec<String>,
        /// HMAC-SHA256 key that signs deliveries.
        #[arg(long, env = "BOXOFFICE_WEBHOOK_SECRET", hide_env_values = true)]
        webhook_secret: String,
    },
    /// Race demos against a running server: many buyers released at the same moment.
    Race {
        #[command(subcommand)]
        race: Race,
        #[command(flatten)]
        server: Remote,
    },
    /// Load scenarios against a running server: throughput, latency and status codes, then
    /// the invariants checked through the API. Exits with 1 if a check fails.
    Bench {
        #[command(subcommand)]
        scenario: Scenario,
        #[command(flatten)]
        server: Remote,
        /// Print the report as JSON (no progress bars).
        #[arg(long, global = true)]
        json: bool,
        /// A name for this run, kept in the report (the hold store, say); `plot` draws one
        /// line per label.
        #[arg(long, global = true)]
        label: Option<String>,
    },
    /// Create the database if missing and apply every pending migration.
    Migrate {
        /// Postgres URL.
        #[arg(
            long,
            env = "DATABASE_URL",
            default_value = "postgres://postgres@127.0.0.1:5432/boxoffice"
        )]
        database_url: String,
    },
}

/// The running server that `race` and `bench` drive.
#[derive(clap::Args)]
struct Remote {
    /// The server's base URL.
    #[arg(long, global = true, default_value = "http://127.0.0.1:3000")]
    url: String,
    /// The server's admin token (to create the venue and event a run uses).
    #[arg(
        long,
        global = true,
        env = "BOXOFFICE_ADMIN_TOKEN",
        hide_env_values = true
    )]
    admin_token: Option<String>,
    /// The server's JWT secret: buyers' tokens are minted with it. `bench` needs it;
    /// without it `race` gives each buyer an anonymous session, which the server limits
    /// per address.
    #[arg(
        long,
        global = true,
        env = "BOXOFFICE_JWT_SECRET",
        hide_env_values = true
    )]
    jwt_secret: Option<String>,
}

#[derive(Subcommand)]
enum Race {
    /// Buyers at general-admission places, one place each.
    Ga {
        /// How many buyers.
        #[arg(long, default_value_t = 20)]
        buyers: usize,
        /// How many places.
        #[arg(long, default_value_t = 5)]
        places: u32,
        /// Run the naive read-then-write booking instead, on a scratch table of its own in
        /// this database, to show it overselling. Never touches the server.
        #[arg(long)]
        r#unsafe: bool,
        /// Postgres URL for `--unsafe`.
        #[arg(
            long,
            env = "DATABASE_URL",
            default_value = "postgres://postgres@127.0.0.1:5432/boxoffice"
        )]
        database_url: String,
    },
    /// Buyers at one seat: exactly one may hold it.
    Seat {
        /// How many buyers.
        #[arg(long, default_value_t = 200)]
        buyers: usize,
    },
}

#[derive(Subcommand)]
enum Scenario {
    /// Buyers released together on one seat: exactly one must win.
    HotSeat {
        /// How many buyers.
        #[arg(long, default_value_t = 2000)]
        buyers: usize,
        /// Every buyer loads the event first (as the page does), so each is released with
        /// a connection open; without it each hold opens its own.
        #[arg(long)]
        connected: bool,
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
    /// Buyers released together on a general-admission area, 1–4 places each.
    GaRush {
        /// Places in the area.
        #[arg(long, default_value_t = 1000)]
        places: u32,
        /// Buyers.
        #[arg(long, default_value_t = 2000)]
        buyers: usize,
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(args) => serve(*args).await,
        Command::Race { race, server } => {
            let line = run_race(
                race,
                &server.url,
                server.admin_token.as_deref(),
                server.jwt_secret,
            )
            .await?;
            println!("{line}");
            Ok(())
        }
        Command::Bench {
            scenario: Scenario::Plot { out, reports },
            ..
        } => {
            let reports = boxoffice_loadgen::bench::plot::read(&reports)?;
            boxoffice_loadgen::bench::plot::draw(&reports, &out)?;
            println!("{}", out.display());
            Ok(())
        }
        Command::Bench {
            scenario,
            server,
            json,
            label,
        } => {
            let Remote {
                url,
                admin_token,
                jwt_secret,
            } = server;
            let (Some(admin_token), Some(jwt_secret)) = (admin_token, jwt_secret) else {
                anyhow::bail!(
                    "give --admin-token and --jwt-secret (or BOXOFFICE_ADMIN_TOKEN and BOXOFFICE_JWT_SECRET)"
                );
            };
            let mut target =
                boxoffice_loadgen::bench::Target::new(&url, &admin_token, &jwt_secret)?;
            if json {
                target = target.quiet();
            }
            let mut report = run_bench(scenario, &target).await?;
            if let Some(label) = label {
                report.parameter("label", label);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.text());
            }
            if !report.passed() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Relay {
            database_url,
            webhook_urls,
            webhook_secret,
        } => relay(&database_url, &webhook_urls, &webhook_secret).await,
        Command::Migrate { database_url } => {
            let created = boxoffice_store::db::ensure_database(&database_url).await?;
            let pool = boxoffice_store::db::connect_lazy(&boxoffice_store::db::DbConfig::new(
                &database_url,
            ))?;
            boxoffice_store::db::migrate(&pool).await?;
            println!(
                "database {} and migrated",
                if created { "created" } else { "exists" }
            );
            Ok(())
        }
    }
}

async fn run_race(
    race: Race,
    url: &str,
    admin_token: Option<&str>,
    jwt_secret: Option<String>,
) -> anyhow::Result<String> {
    use boxoffice_loadgen::{client::Server, race};
    let server = || -> anyhow::Result<Server> {
        let token = admin_token
            .ok_or_else(|| anyhow::anyhow!("give --admin-token or BOXOFFICE_ADMIN_TOKEN"))?;
        Ok(Server::new(url, token).with_jwt_secret(jwt_secret.clone()))
    };
    match race {
        Race::Ga {
            buyers,
            places,
            r#unsafe: true,
            database_url,
        } => boxoffice_loadgen::unsafe_demo::race_ga_unsafe(&database_url, buyers, places).await,
        Race::Ga { buyers, places, .. } => race::race_ga(&server()?, buyers, places).await,
        Race::Seat { buyers } => race::race_seat(&server()?, buyers).await,
    }
}

async fn run_bench(
    scenario: Scenario,
    target: &boxoffice_loadgen::bench::Target,
) -> anyhow::Result<boxoffice_loadgen::bench::Report> {
    use boxoffice_loadgen::bench::{self, Pace};
    match scenario {
        Scenario::HotSeat { buyers, connected } => {
            bench::hot_seat::run(target, buyers, connected).await
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
            };
            bench::holds::run(target, params).await
        }
        Scenario::FlashSale {
            seats,
            buyers,
            think,
            time_limit,
            hold_ttl,
            queue,
        } => {
            let params = bench::flash_sale::Params {
                seats,
                buyers,
                think,
                time_limit,
                hold_ttl_seconds: hold_ttl,
                queue,
            };
            bench::flash_sale::run(target, params).await
        }
        Scenario::GaRush { places, buyers } => bench::ga_rush::run(target, places, buyers).await,
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

async fn relay(database_url: &str, urls: &[String], secret: &str) -> anyhow::Result<()> {
    let config = boxoffice_server::config::relay_config(urls, Some(secret))?
        .ok_or_else(|| anyhow::anyhow!("give at least one --webhook-url"))?;
    let pool =
        boxoffice_store::db::connect_lazy(&boxoffice_store::db::DbConfig::new(database_url))?;
    boxoffice_store::db::migrate(&pool).await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let relay = tokio::spawn(boxoffice_server::relay::Relay::new(pool, config).run(stopped));
    shutdown_signal().await;
    let _ = stop.send(true);
    relay.await?;
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let (settings, generated) = args.settings()?;
    if generated.jwt_secret {
        tracing::warn!("BOXOFFICE_JWT_SECRET is not set: user tokens are signed with a random secret and die with this process");
    }
    let app = Application::build(&settings).await?;
    let base = format!("http://{}", app.local_addr());
    // Printed on stdout, one fact a line, so scripts (and tests) can read them.
    println!("Boxoffice listening on {base}");
    if generated.admin_token {
        println!("admin token: {}", settings.admin_token.expose());
    }
    if args.demo {
        let (event, created) = demo::ensure_demo(app.state()).await?;
        println!(
            "demo event {} ({}): {base}/v1/events/{event}/seats",
            event,
            if created { "created" } else { "already there" }
        );
        println!("seat map page: {base}/?event={event}");
    }
    app.run_until(shutdown_signal()).await?;
    Ok(())
}
