//! Fuzzes the MCP tools' arguments: the first byte picks a tool (or an unknown name), the rest is
//! read as the JSON arguments. Every call must return a result or a tool error without a panic,
//! a result must stay under the documented 60 KB, and an error message under its cap and
//! without the over-long argument quoted back.
#![no_main]

mod fixture;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use quire_app::limits::{MAX_ERROR_CHARS, MAX_RESULT_BYTES};

const TOOLS: &[&str] = &[
    "search_notes",
    "get_note",
    "find_related_notes",
    "get_outline",
    "list_notes",
    "vault_tree",
    "no_such_tool",
];

struct State {
    _fixture: fixture::Fixture,
    live: quire_app::LiveVault,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let fixture = fixture::fixture();
        let mut config = quire_app::AppConfig::new(fixture.vault.clone(), fixture.index.clone());
        config.watch = false;
        let live = quire_app::start_live(config, |_| {}).expect("start the live vault");
        // The first parse of the vault runs on a thread: wait for it once.
        let _ = live.live.vault(std::time::Duration::from_secs(60));
        State {
            _fixture: fixture,
            live,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = TOOLS[pick as usize % TOOLS.len()];
    let arguments = match serde_json::from_slice::<serde_json::Value>(rest) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        Ok(serde_json::Value::Null) => None,
        // Any other JSON value as the arguments object's only field.
        Ok(other) => Some(serde_json::Map::from_iter([("query".to_string(), other)])),
        Err(_) => return,
    };
    let longest_argument = arguments
        .as_ref()
        .map(|a| serde_json::to_string(a).map(|s| s.len()).unwrap_or(0))
        .unwrap_or(0);
    match quire_app::ops::call(&state().live.live, name, arguments) {
        Ok(value) => {
            let size = serde_json::to_string(&value).map(|s| s.len()).unwrap_or(0);
            assert!(size <= MAX_RESULT_BYTES, "{name}: a {size}-byte result");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.chars().count() <= MAX_ERROR_CHARS + 200,
                "{name}: a {}-character error",
                message.chars().count()
            );
            // A long argument is never echoed whole.
            assert!(longest_argument < 4_000 || message.len() < longest_argument);
        }
    }
});
