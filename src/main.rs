//! `boxoffice`: the seat-inventory server and its tools.
//!
//! - `boxoffice serve [--demo]`: run the HTTP server (creating and migrating its database).
//! - `boxoffice migrate`: create the database if missing and apply the migrations.

use boxoffice_server::app::shutdown_signal;
use boxoffice_server::config::ServeArgs;
use boxoffice_server::{demo, Application};
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

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
    Serve(ServeArgs),
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
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

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let (settings, generated) = args.settings();
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
    }
    app.run_until(shutdown_signal()).await?;
    Ok(())
}
