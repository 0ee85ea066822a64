//! Fuzz target: any text through the Cypher parser and, when it parses, the binder/planner.
//! Neither may panic, hang or exhaust memory; errors are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(stmt) = arbor_cypher_syntax::parse(text) {
        let _ = arbor_exec::PreparedQuery::prepare(&stmt, text);
    }
});
