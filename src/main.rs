//! `boxoffice`: the seat-inventory server and its tools.
//!
//! - `boxoffice serve [--demo]`: run the HTTP server (creating and migrating its database).
//! - `boxoffice race ga|seat`: race demos against a running server (`ga --unsafe` shows the
//!   naive booking overselling, on a scratch table).
//! - `boxoffice bench hot-seat|best|holds|season-holds|flash-sale|ga-rush|door|pdfs|browse|seat-map|floor`:
//!   the load generator against a running server; exits non-zero if an invariant check
//!   fails. `bench plot` draws saved reports.
//! - `boxoffice relay`: deliver outbox rows to webhooks, alongside `serve`'s.
//! - `boxoffice migrate`: create the database if missing and apply the migrations.
//! - `boxoffice doctor [--instances N] [--relays N]`: check what a server needs (its
//!   settings, Postgres, Redis, the clocks, the open-file limit) and say how to fix it.

use boxoffice_server::app::shutdown_signal;
use boxoffice_server::config::{defaults, ServeArgs};
use boxoffice_server::{demo, Application};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use bench::{run_bench, Scenario};
use race::{run_race, Race};
use tracing_subscriber::EnvFilter;

/// mimalloc: under many concurrent requests glibc's allocator spends its time on arena
/// locks (measured with `boxoffice bench holds`). Built without transparent huge pages
/// (`no_thp`): with them every open connection costs about 8 KB more resident memory
/// (`boxoffice bench browse`).
mod bench;
mod doctor;
mod race;

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
    /// Deliver outbox rows to webhooks: organizations' own, and the `default`
    /// organization's URLs given here (the same relay `serve` runs).
    Relay {
        /// Postgres URL.
        #[arg(long, env = "DATABASE_URL", default_value = defaults::DATABASE_URL)]
        database_url: String,
        /// Webhook URLs (comma-separated).
        #[arg(
            long = "webhook-url",
            env = "BOXOFFICE_WEBHOOK_URLS",
            value_delimiter = ','
        )]
        webhook_urls: Vec<String>,
        /// HMAC-SHA256 key that signs deliveries to the webhook URLs.
        #[arg(long, env = "BOXOFFICE_WEBHOOK_SECRET", hide_env_values = true)]
        webhook_secret: Option<String>,
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
        /// Write two empty files in this directory: `start` when the load begins (the
        /// event set up) and `end` when it stops (before the checks), for a script that
        /// measures the load alone (`bench/cost.sh`). Flash sales and the timed scenarios.
        #[arg(long, global = true)]
        marks: Option<std::path::PathBuf>,
    },
    /// Check the configuration, Postgres, Redis, the clocks and the open-file limit the way
    /// `serve` would use them; print what is wrong and how to fix it. Exits with 1 if
    /// something is wrong.
    Doctor(Box<doctor::DoctorArgs>),
    /// Create the database if missing and apply every pending migration.
    Migrate {
        /// Postgres URL.
        #[arg(long, env = "DATABASE_URL", default_value = defaults::DATABASE_URL)]
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

/// Logs on stderr, filtered by `RUST_LOG` (`info` by default): text lines, or with
/// `BOXOFFICE_LOG_FORMAT=json` one JSON object a line, whose `span` (while a request is
/// served) carries its `request_id`, `method` and `path`. Text lines are coloured only on
/// a terminal: written to a file, a pipe or the journal they are plain.
fn init_logs() -> Result<(), String> {
    use std::io::IsTerminal;
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match std::env::var("BOXOFFICE_LOG_FORMAT").as_deref() {
        Ok("json") => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
        Ok("text") | Ok("") | Err(_) => logs.init(),
        Ok(other) => {
            return Err(format!(
                "BOXOFFICE_LOG_FORMAT is {other:?}: it may be \"text\" (the default) or \"json\"."
            ))
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if let Err(problem) = init_logs() {
        eprintln!("boxoffice: {problem}");
        std::process::exit(2);
    }
    let matches = Cli::command().get_matches();
    let mut command = Cli::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .command;
    if let (Command::Doctor(args), Some(matches)) =
        (&mut command, matches.subcommand_matches("doctor"))
    {
        args.in_effect = boxoffice_server::config::table::in_effect(matches);
    }
    // Why a store could not be reached at start, as what to do about it: one paragraph.
    let fix = match &command {
        Command::Serve(args) => Some(args.stores.database_url.clone()),
        Command::Migrate { database_url } | Command::Relay { database_url, .. } => {
            Some(database_url.clone())
        }
        _ => None,
    };
    let Err(error) = run(command).await else {
        return Ok(());
    };
    if let Some(why) = doctor::ahead(&error) {
        eprintln!("boxoffice: {why}");
        std::process::exit(1);
    }
    match (fix, doctor::unreachable(&error)) {
        (Some(url), Some(reason)) => {
            eprintln!("boxoffice: {}", doctor::postgres_fix(&url, &reason));
            std::process::exit(1);
        }
        _ => Err(error),
    }
}

async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Doctor(args) => {
            if !doctor::run(*args).await {
                std::process::exit(1);
            }
            Ok(())
        }
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
            marks,
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
            if let Some(marks) = marks {
                target = target.marks(marks);
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
        } => relay(&database_url, &webhook_urls, webhook_secret.as_deref()).await,
        Command::Migrate { database_url } => {
            let created = boxoffice_store::pg::db::ensure_database(&database_url).await?;
            let pool = boxoffice_store::pg::db::connect_lazy(
                &boxoffice_store::pg::db::DbConfig::new(&database_url),
            )?;
            boxoffice_store::pg::db::migrate(&pool).await?;
            println!(
                "database {} and migrated",
                if created { "created" } else { "exists" }
            );
            Ok(())
        }
    }
}

async fn relay(database_url: &str, urls: &[String], secret: Option<&str>) -> anyhow::Result<()> {
    let config = boxoffice_server::config::relay_config(urls, secret)?;
    let pool = boxoffice_store::pg::db::connect_lazy(&boxoffice_store::pg::db::DbConfig::new(
        database_url,
    ))?;
    let shutdown = shutdown_signal();
    boxoffice_store::pg::db::migrate(&pool).await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let relay = tokio::spawn(boxoffice_server::relay::Relay::new(pool, config).run(stopped));
    shutdown.await;
    let _ = stop.send(true);
    relay.await?;
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Before anything starts: a SIGTERM from here on ends the server cleanly.
    let shutdown = shutdown_signal();
    let (mut settings, generated) = args.settings()?;
    if args.demo {
        demo::keep_secrets(&mut settings, &generated).await?;
    } else if generated.jwt_secret {
        tracing::warn!("BOXOFFICE_JWT_SECRET is not set: user tokens are signed with a random secret and die with this process");
    }
    let needs_redis = settings.stores.hold_store == boxoffice_server::config::HoldStoreKind::Redis
        || settings.stores.ga_gate;
    if needs_redis {
        if let Err(reason) = doctor::redis_answers(&settings.stores.redis.url).await {
            // The server starts anyway, and answers 503 for what needs Redis until it is back.
            eprintln!(
                "boxoffice: {}",
                doctor::redis_fix(&settings.stores.redis.url, &reason)
            );
        }
    }
    let app = Application::build(&settings).await?;
    let base = format!("http://{}", app.local_addr());
    // Printed on stdout, one fact a line, so scripts (and tests) can read them. Nobody
    // reading them any more (a closed pipe) must not stop the server.
    let say = |line: String| {
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), "{line}");
    };
    say(format!("Boxoffice listening on {base}"));
    if generated.admin_token {
        say(format!(
            "admin token: {}",
            settings.server.admin_token.expose()
        ));
    }
    if args.demo {
        let (event, created) = demo::ensure_demo(app.state()).await?;
        say(format!(
            "demo event {} ({}): {base}/v1/events/{event}/seats",
            event,
            if created { "created" } else { "already there" }
        ));
        say(format!(
            "console: {base}/admin (sign in with the admin token)"
        ));
        say(format!(
            "scanner: {base}/scan?event={event} (sign in with a check-in key or the admin token)"
        ));
        say(format!("seat map page: {base}/?event={event}"));
    }
    app.run_until(shutdown).await?;
    Ok(())
}
