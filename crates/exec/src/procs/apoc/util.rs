//! `apoc.util.sleep(ms)`: waits, and stops early (with the transaction's error) when the query
//! is interrupted: a transaction timeout, RESET, TERMINATE or a closed connection.

use std::time::{Duration, Instant};

use arbor_cypher_plan::CypherType;
use arbor_model::{Result, Value};

use super::{arg_error, col};
use crate::procs::Procedure;

/// Longest single wait between two looks at the interrupt flag.
const TICK: Duration = Duration::from_millis(5);

pub(super) fn procedures() -> Vec<Procedure> {
    vec![Procedure::new(
        "apoc.util.sleep",
        vec![col("duration", CypherType::Integer)],
        Vec::new(),
        "Causes the current thread to sleep for the given duration in milliseconds.",
        |args, _g| {
            let ms = match args.first() {
                Some(Value::Int(ms)) => *ms,
                Some(Value::Null) | None => 0,
                Some(other) => {
                    return Err(arg_error(
                        "apoc.util.sleep",
                        &format!("duration must be an integer, got {}", other.type_name()),
                    ))
                }
            };
            sleep(Duration::from_millis(ms.max(0) as u64))?;
            Ok(Vec::new())
        },
    )]
}

/// Sleeps `d`, checking the interrupt flag every [`TICK`].
fn sleep(d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    loop {
        crate::interrupt::check()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep((end - now).min(TICK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn sleep_waits_and_stops_when_interrupted() {
        let t = Instant::now();
        sleep(Duration::from_millis(20)).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(20));
        let flag = Arc::new(AtomicBool::new(true));
        let _scope = crate::interrupt::enter(Some(flag));
        let t = Instant::now();
        let err = sleep(Duration::from_secs(30)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(err.status, arbor_model::Status::TransactionTerminated);
    }
}
