//! The Lua scripts of the redis hold store (`scripts/*.lua`, each headed by its KEYS,
//! ARGV and return value).

use redis::Script;

/// The Lua scripts, each sent by SHA1 (EVALSHA) and loaded again when Redis answers
/// NOSCRIPT (after a restart or a failover).
pub(super) struct Scripts {
    pub(super) acquire: Script,
    pub(super) grow: Script,
    pub(super) shrink: Script,
    pub(super) read: Script,
    pub(super) release: Script,
    pub(super) extend: Script,
    pub(super) checkout: Script,
    pub(super) sold: Script,
    pub(super) restore: Script,
    pub(super) held: Script,
    pub(super) load_begin: Script,
    pub(super) load_finish: Script,
    pub(super) fence: Script,
    pub(super) compare_and_delete: Script,
    pub(super) unsell: Script,
    pub(super) pending: Script,
    pub(super) offer: Script,
    pub(super) withdraw: Script,
    pub(super) reclaim: Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Self {
            acquire: with_prelude(include_str!("../../../scripts/hold_acquire.lua")),
            grow: with_prelude(include_str!("../../../scripts/hold_grow.lua")),
            shrink: with_prelude(include_str!("../../../scripts/hold_shrink.lua")),
            read: with_prelude(include_str!("../../../scripts/hold_read.lua")),
            release: with_prelude(include_str!("../../../scripts/hold_release.lua")),
            extend: with_prelude(include_str!("../../../scripts/hold_extend.lua")),
            checkout: with_prelude(include_str!("../../../scripts/hold_checkout.lua")),
            sold: with_prelude(include_str!("../../../scripts/hold_sold.lua")),
            restore: with_prelude(include_str!("../../../scripts/hold_restore.lua")),
            held: with_prelude(include_str!("../../../scripts/event_held.lua")),
            load_begin: with_prelude(include_str!("../../../scripts/event_load_begin.lua")),
            load_finish: with_prelude(include_str!("../../../scripts/event_load_finish.lua")),
            fence: with_prelude(include_str!("../../../scripts/event_fence.lua")),
            compare_and_delete: with_prelude(include_str!(
                "../../../scripts/compare_and_delete.lua"
            )),
            unsell: with_prelude(include_str!("../../../scripts/event_unsell.lua")),
            pending: with_prelude(include_str!("../../../scripts/order_pending.lua")),
            offer: with_prelude(include_str!("../../../scripts/hold_offer.lua")),
            withdraw: with_prelude(include_str!("../../../scripts/resale_withdraw.lua")),
            reclaim: with_prelude(include_str!("../../../scripts/resale_reclaim.lua")),
        }
    }
}

/// The helpers the scripts share (`scripts/prelude.lua`: Redis' clock, the event's
/// state, the rules of a claim), in front of every one.
const PRELUDE: &str = include_str!("../../../scripts/prelude.lua");

/// A script that calls the prelude's helpers, with the prelude in front.
pub(crate) fn with_prelude(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}\n{body}"))
}
