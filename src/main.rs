//! `boxoffice`: the seat-inventory server and its tools.
//!
//! - `boxoffice serve [--demo]`: run the HTTP server (creating and migrating its database).
//! - `boxoffice race ga|seat`: race demos against a running server (`ga --unsafe` shows the
//!   naive booking overselling, on a scratch table).
//! - `boxoffice relay`: deliver outbox rows to webhooks, alongside or instead of `serve`'s.
//! - `boxoffice migrate`: create the database if missing and apply the migrations.

use boxoffice_server::app::shutdown_signal;
use boxoffice_server::config::ServeArgs;
use boxoffice_server::{demo, Application};
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// mimalloc: under many concurrent requests glibc's allocator spends its time on arena
/// locks (measured with `holds_bench`). Built without transparent huge pages (`no_thp`):
/// with them every open connection costs about 8 KB more resident memory
/// (`bench/subscribers.sh`).
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
        /// The server's base URL.
        #[arg(long, global = true, default_value = "http://127.0.0.1:3000")]
        url: String,
        /// The server's admin token (to create the demo's venue and event).
        #[arg(
            long,
            global = true,
            env = "BOXOFFICE_ADMIN_TOKEN",
            hide_env_values = true
        )]
        admin_token: Option<String>,
        /// The server's JWT secret: buyers' tokens are minted with it. Without it each
        /// buyer takes an anonymous session, which the server limits per address.
        #[arg(
            long,
            global = true,
            env = "BOXOFFICE_JWT_SECRET",
            hide_env_values = true
        )]
        jwt_secret: Option<String>,
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
        Command::Race {
            race,
            url,
            admin_token,
            jwt_secret,
        } => {
            let line = run_race(race, &url, admin_token.as_deref(), jwt_secret).await?;
            println!("{line}");
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
