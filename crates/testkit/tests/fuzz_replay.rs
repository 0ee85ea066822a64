//! The fuzz targets' bodies (`fuzz/fuzz_targets/`) as ordinary tests on stable Rust: every
//! input of the checked-in corpus (`fuzz/seeds/<target>/`, grown by libFuzzer and minimised
//! with `-merge=1`), then deterministic mutations of it (a fixed seed, so a failure reproduces
//! exactly). No input may panic or hang; errors are fine. Coverage-guided fuzzing is the
//! separate command `scripts/fuzz-smoke` (nightly, cargo-fuzz); what it finds goes into the
//! seed directories and is replayed here from then on.
//!
//! `ARBOR_FUZZ_REPLAY_MUTATIONS` sets the mutations per seed (default 100).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An input that made the target panic (or still ran when the watchdog fired).
struct Failure {
    input: Vec<u8>,
    message: String,
}

/// How long one input may run before the replay reports a hang (libFuzzer's `-timeout=10`).
const HANG: Duration = Duration::from_secs(10);
/// Inputs are capped like the fuzzer's (`-max_len=4096`).
const MAX_LEN: usize = 4096;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    let out: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).expect("seed file")).collect();
    assert!(out.len() >= 100, "{}: only {} seed(s)", dir.display(), out.len());
    out
}

fn mutations_per_seed() -> usize {
    std::env::var("ARBOR_FUZZ_REPLAY_MUTATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

/// One mutation of `input`: the byte-level edits libFuzzer's default mutators make (flip,
/// replace, insert, erase, copy a range, splice with another seed, insert a dictionary token).
fn mutate(rng: &mut StdRng, input: &[u8], others: &[Vec<u8>], dict: &[&[u8]]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        let len = v.len();
        match rng.gen_range(0..7) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] = rng.gen();
            }
            2 => {
                let i = rng.gen_range(0..=len);
                v.insert(i, rng.gen());
            }
            3 if len > 0 => {
                let a = rng.gen_range(0..len);
                let b = rng.gen_range(a..=len.min(a + 16));
                v.drain(a..b);
            }
            4 if len > 0 => {
                let a = rng.gen_range(0..len);
                let b = rng.gen_range(a..=len.min(a + 32));
                let at = rng.gen_range(0..=len);
                let copy = v[a..b].to_vec();
                v.splice(at..at, copy);
            }
            5 if !others.is_empty() => {
                let o = &others[rng.gen_range(0..others.len())];
                let cut = rng.gen_range(0..=len);
                let from = rng.gen_range(0..=o.len());
                v.truncate(cut);
                v.extend_from_slice(&o[from..]);
            }
            _ if !dict.is_empty() => {
                let t = dict[rng.gen_range(0..dict.len())];
                let at = rng.gen_range(0..=len);
                v.splice(at..at, t.iter().copied());
            }
            _ => {}
        }
    }
    v.truncate(MAX_LEN);
    v
}

/// Runs `target` over the seeds and their mutations on a worker thread, with a watchdog on
/// the main thread. Returns the number of inputs run, or the first failing input.
fn replay(
    seeds: Vec<Vec<u8>>,
    per_seed: usize,
    dict: &'static [&'static [u8]],
    (target, hang): (fn(&[u8]), Duration),
) -> Result<u64, Failure> {
    let runs = Arc::new(AtomicU64::new(0));
    let current = Arc::new(Mutex::new(Vec::new()));
    let (r, c) = (runs.clone(), current.clone());
    let worker = std::thread::Builder::new()
        .name("fuzz-replay".into())
        .stack_size(8 << 20)
        .spawn(move || -> Result<(), Failure> {
            let mut rng = StdRng::seed_from_u64(0x5eed_a7b0);
            let one = |input: Vec<u8>| -> Result<(), Failure> {
                *c.lock().expect("current input") = input.clone();
                let res = catch_unwind(AssertUnwindSafe(|| target(&input)));
                r.fetch_add(1, Ordering::Relaxed);
                res.map_err(|p| {
                    let message = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "non-string panic".into());
                    Failure { input, message }
                })
            };
            for s in &seeds {
                one(s.clone())?;
            }
            for s in &seeds {
                for _ in 0..per_seed {
                    one(mutate(&mut rng, s, &seeds, dict))?;
                }
            }
            Ok(())
        })
        .expect("spawning the replay thread");
    let (mut seen, mut since) = (0, Instant::now());
    while !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(50));
        let now = runs.load(Ordering::Relaxed);
        if now != seen {
            (seen, since) = (now, Instant::now());
        } else if since.elapsed() > hang {
            let input = current.lock().map(|c| c.clone()).unwrap_or_default();
            return Err(Failure { input, message: format!("no answer after {hang:?}") });
        }
    }
    match worker.join() {
        Ok(Ok(())) => Ok(runs.load(Ordering::Relaxed)),
        Ok(Err(f)) => Err(f),
        Err(_) => Err(Failure { input: Vec::new(), message: "replay thread died".into() }),
    }
}

/// Fails the test naming the input: as text, as hex, and as a file under the target directory
/// that `cargo fuzz run <target> <file>` reproduces.
fn check(target: &str, result: Result<u64, Failure>) {
    match result {
        Ok(n) => eprintln!("{target}: {n} input(s), no panic or hang"),
        Err(f) => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-replay");
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(target);
            let _ = std::fs::write(&file, &f.input);
            let hex: String = f.input.iter().map(|b| format!("{b:02x}")).collect();
            panic!(
                "{target}: {}\ninput ({} bytes, written to {}): {:?}\nhex: {hex}",
                f.message,
                f.input.len(),
                file.display(),
                String::from_utf8_lossy(&f.input)
            );
        }
    }
}

/// Tokens the Cypher mutations splice in (libFuzzer finds them by coverage; here they are given).
const CYPHER_DICT: &[&[u8]] = &[
    b"MATCH ",
    b"RETURN ",
    b"WITH ",
    b"WHERE ",
    b"UNWIND ",
    b"CALL { ",
    b"CALL (x) { ",
    b"} ",
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b"-[",
    b"]->",
    b"<-",
    b"*",
    b"..",
    b"|",
    b"$p",
    b"`",
    b"'",
    b"\"",
    b"\\",
    b"9223372036854775808",
    b"-9223372036854775808",
    b"0x7fffffffffffffff",
    b"1e309",
    b"OPTIONAL ",
    b"MERGE ",
    b"DELETE ",
    b"SET ",
    b"REMOVE ",
    b"FOREACH (x IN [1] | ",
    b"CASE WHEN ",
    b" THEN ",
    b" END",
    b"EXISTS { ",
    b"COUNT { ",
    b"shortestPath(",
    b"reduce(",
    b"ORDER BY ",
    b"SKIP ",
    b"LIMIT ",
    b"UNION ",
    b"CYPHER 5 ",
    b"USE db ",
    b"IN TRANSACTIONS ",
];

/// PackStream markers and Bolt request signatures.
const PACKSTREAM_DICT: &[&[u8]] = &[
    &[0xB1, 0x01],
    &[0xB3, 0x10],
    &[0xB0, 0x2F],
    &[0xC0],
    &[0xC1],
    &[0xC3],
    &[0xC8],
    &[0xC9],
    &[0xCA],
    &[0xCB],
    &[0xD0],
    &[0xD1],
    &[0xD2],
    &[0xD4],
    &[0xD5],
    &[0xD6],
    &[0xD8],
    &[0xD9],
    &[0xDA],
    &[0xCC],
    &[0xCD],
    &[0xCE],
    &[0x8F],
    &[0x9F],
    &[0xAF],
    &[0xBF],
    &[0xD1, 0xFF, 0xFF],
    &[0xD2, 0x7F, 0xFF, 0xFF, 0xFF],
    &[0xB3, 0x58],
    &[0xB8, 0x50],
    &[0xB3, 0x4E],
];

fn cypher_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(stmt) = arbor_cypher_syntax::parse(text) {
        let _ = arbor_exec::PreparedQuery::prepare(&stmt, text);
    }
}

fn packstream_decode(data: &[u8]) {
    let _ = arbor_bolt::message::parse_request(data);
    let mut dec = arbor_bolt::packstream::Decoder::new(data);
    while !dec.is_at_end() {
        if arbor_bolt::values::decode_value(&mut dec).is_err() {
            break;
        }
    }
}

#[test]
fn cypher_parser_and_planner_survive_the_corpus_and_its_mutations() {
    let r = replay(seeds("cypher_parse"), mutations_per_seed(), CYPHER_DICT, (cypher_parse, HANG));
    check("cypher_parse", r);
}

#[test]
fn packstream_decoder_survives_the_corpus_and_its_mutations() {
    let r = replay(
        seeds("packstream_decode"),
        mutations_per_seed() * 4,
        PACKSTREAM_DICT,
        (packstream_decode, HANG),
    );
    check("packstream_decode", r);
}

/// The replay can fail: a target with a planted bug reachable only by mutation is caught, and
/// so is one that never returns.
#[test]
fn replay_reports_a_planted_panic_and_a_hang() {
    fn planted(data: &[u8]) {
        assert!(!data.windows(2).any(|w| w == b"}}"), "planted bug");
    }
    let seeds = vec![b"{a}".to_vec(), b"RETURN {x: 1}".to_vec()];
    let f = replay(seeds, 200, CYPHER_DICT, (planted, HANG)).expect_err("the planted bug is found");
    assert!(f.message.contains("planted bug"), "{}", f.message);
    assert!(f.input.windows(2).any(|w| w == b"}}"));

    fn hangs(data: &[u8]) {
        if data.len() > 3 {
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
    }
    let f = replay(vec![b"abcd".to_vec()], 0, &[], (hangs, Duration::from_millis(500)))
        .expect_err("the hang is found");
    assert_eq!(f.input, b"abcd");
    assert!(f.message.contains("no answer"), "{}", f.message);
}
