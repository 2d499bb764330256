//! Redis, the optional fast layer: the connection, the redis hold store, the sale-day
//! gate, rate limits shared by every instance and the waiting room's line. Nothing here
//! decides a sale: Postgres does.

pub mod gate;
pub mod holds;
pub mod link;
pub mod queue;
pub mod rate_limit;
