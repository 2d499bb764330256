//! `boxoffice race`: the race demos, run against a server (or, with `ga --unsafe`, the
//! naive booking on a scratch table).

use clap::Subcommand;

#[derive(Subcommand)]
pub enum Race {
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

/// Runs `race` against the server at `url`; answers the report to print.
pub async fn run_race(
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
