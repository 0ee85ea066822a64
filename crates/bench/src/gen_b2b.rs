//! The B2B graph generator (`arbor bench gen-b2b`): a port of `../shared/bench/gen_b2b.py`
//! that writes the same files (names, headers, rows, `manifest.json`) and, for the same seed
//! and scale, byte-identical uncompressed CSV content, because it draws from a bit-exact
//! CPython `random` ([`arbor_mgbench::pyrandom`]) in the same order as the script.
//!
//! The random stream is one sequential Mersenne Twister, so the calling thread draws every
//! number; the rows are formatted (and gzip-compressed, level 1) in chunks on worker threads,
//! and one writer thread puts the chunks back in order. Each compressed chunk is its own gzip
//! member: a multi-member gzip file, which Arbor's importer, neo4j-admin and Python all read
//! as one stream.
//!
//! With `fifo` the files are named pipes instead (plain CSV): [`generate`] creates all five
//! first, then writes each as a reader opens it, in the order the import reads them (the node
//! files, then the relationship files, as `arbor import` is given them in the README's
//! command), so that an import reads the data set without it ever being on disk.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arbor_mgbench::pyrandom::PyRandom;
use crossbeam_channel::{bounded, Receiver, Sender};

const FULL_INDIVIDUAL: f64 = 196_000_000.0;
const FULL_ORGANIZATION: f64 = 261_000_000.0;
const FULL_TOUCHED: f64 = 1_870_000_000.0;
const FULL_WORKS_FOR: f64 = 306_000_000.0;
const FIRST: [&str; 26] = [
    "Ada", "Ben", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena",
    "Mateo", "Nina", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera", "Wei",
    "Ximena", "Yusuf", "Zoe",
];
const LAST: [&str; 20] = [
    "Smith", "Garcia", "Muller", "Rossi", "Kowalski", "Nguyen", "Okafor", "Tanaka", "Silva",
    "Ivanova", "Haddad", "Larsen", "Dubois", "Kim", "Patel", "Novak", "Jensen", "Moreau", "Costa",
    "Schmidt",
];
const ORG_A: [&str; 16] = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Stark",
    "Wayne",
    "Hooli",
    "Vandelay",
    "Soylent",
    "Tyrell",
    "Cyberdyne",
    "Wonka",
    "Aperture",
    "Massive",
    "Oscorp",
    "Duff",
];
const ORG_B: [&str; 10] = [
    "Holdings",
    "Labs",
    "Systems",
    "Logistics",
    "Foods",
    "Capital",
    "Media",
    "Energy",
    "Health",
    "Retail",
];
const ORG_C: [&str; 8] = ["Inc", "Ltd", "GmbH", "SA", "BV", "LLC", "AB", "Oy"];
/// Rows per formatting job (a few MB of CSV).
const CHUNK_ROWS: u64 = 1 << 18;

/// What to generate: the script's command-line arguments.
#[derive(Clone, Debug)]
pub struct Options {
    pub scale: f64,
    pub out: PathBuf,
    pub seed: u64,
    pub gzip: bool,
    pub activities: u64,
    /// Formatting/compression threads (at least 1).
    pub threads: usize,
    /// Print a progress line on stderr every few seconds.
    pub progress: bool,
    /// Create the files as named pipes (plain CSV) and write each when a reader opens it.
    pub fifo: bool,
}

/// The files in the order they are written (and must be read when they are pipes).
pub const FILES: [&str; 5] = ["activities", "individuals", "organizations", "touched", "works_for"];

/// Node and relationship counts derived from the scale, as the script computes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub activities: u64,
    pub individuals: u64,
    pub organizations: u64,
    pub touched: u64,
    pub works_for: u64,
}

impl Counts {
    /// Python's `max(1, round(FULL * scale))` (round half to even) and the script's check.
    pub fn new(scale: f64, activities: u64) -> anyhow::Result<Counts> {
        if !scale.is_finite() || scale < 0.0 {
            bail!("--scale must be a finite non-negative number, got {scale}");
        }
        let round = |full: f64| (full * scale).round_ties_even() as u64;
        let c = Counts {
            activities,
            individuals: round(FULL_INDIVIDUAL).max(1),
            organizations: round(FULL_ORGANIZATION).max(1),
            touched: round(FULL_TOUCHED),
            works_for: round(FULL_WORKS_FOR),
        };
        let too_many_touched =
            u128::from(c.touched) > u128::from(c.individuals) * u128::from(activities);
        if too_many_touched || c.works_for > 2 * c.individuals || c.organizations < 2 {
            bail!("scale too small for distinct relationship endpoints");
        }
        Ok(c)
    }
}

/// What was written: per file (name, data rows, bytes) and the totals.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub files: Vec<(String, u64, u64)>,
    pub rows: u64,
    pub bytes: u64,
    pub uncompressed_bytes: u64,
    pub seconds: f64,
}

/// Generates the data set into `opts.out` (created if missing) and writes `manifest.json`.
pub fn generate(opts: &Options) -> anyhow::Result<Summary> {
    let c = Counts::new(opts.scale, opts.activities)?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating output directory {}", opts.out.display()))?;
    if opts.fifo {
        for name in FILES {
            make_fifo(&opts.out.join(format!("{name}.csv")))?;
        }
    }
    let mut rng = PyRandom::from_int_seed(u128::from(opts.seed));
    let started = Instant::now();
    let mut summary = Summary::default();
    let mut w = |name: &str, rows: u64, produce: &mut dyn FnMut(&mut Emitter) -> u64| {
        let file = write_file(opts, name, rows, produce)?;
        summary.rows += file.rows;
        summary.bytes += file.bytes;
        summary.uncompressed_bytes += file.raw_bytes;
        summary.files.push((file.name, file.rows, file.bytes));
        anyhow::Ok(())
    };
    let n_act = c.activities;
    w("activities", n_act, &mut |e| {
        e.header("id:ID(Activity),name,:LABEL\n");
        chunked(e, n_act, |e, lo, hi| {
            e.emit(hi - lo, move |b| {
                for i in lo..hi {
                    push_u64(b, i);
                    b.extend_from_slice(b",\"activity-");
                    let s = i.to_string();
                    b.extend(std::iter::repeat_n(b'0', 5usize.saturating_sub(s.len())));
                    b.extend_from_slice(s.as_bytes());
                    b.extend_from_slice(b"\",Activity\n");
                }
            })
        })
    })?;
    individuals(&mut w, &mut rng, c)?;
    organizations(&mut w, &mut rng, c)?;
    touched(&mut w, &mut rng, c)?;
    works_for(&mut w, &mut rng, c)?;
    summary.seconds = started.elapsed().as_secs_f64();
    let manifest = manifest_json(opts, c, &summary);
    std::fs::write(opts.out.join("manifest.json"), manifest)
        .with_context(|| format!("writing {}", opts.out.join("manifest.json").display()))?;
    Ok(summary)
}

type FileWriter<'a> =
    dyn FnMut(&str, u64, &mut dyn FnMut(&mut Emitter) -> u64) -> anyhow::Result<()> + 'a;

fn individuals(w: &mut FileWriter<'_>, rng: &mut PyRandom, c: Counts) -> anyhow::Result<()> {
    w("individuals", c.individuals, &mut |e| {
        e.header("id:ID(Individual),name,:LABEL\n");
        chunked(e, c.individuals, |e, lo, hi| {
            let picks: Vec<[u8; 2]> = (lo..hi)
                .map(|_| [rng.randbelow_u32(26) as u8, rng.randbelow_u32(20) as u8])
                .collect();
            e.emit(hi - lo, move |b| {
                for (i, p) in (lo..hi).zip(picks) {
                    push_u64(b, i);
                    b.extend_from_slice(b",\"");
                    b.extend_from_slice(FIRST[usize::from(p[0])].as_bytes());
                    b.push(b' ');
                    b.extend_from_slice(LAST[usize::from(p[1])].as_bytes());
                    b.push(b' ');
                    push_u64(b, i);
                    b.extend_from_slice(b"\",Individual\n");
                }
            })
        })
    })
}

fn organizations(w: &mut FileWriter<'_>, rng: &mut PyRandom, c: Counts) -> anyhow::Result<()> {
    w("organizations", c.organizations, &mut |e| {
        e.header("id:ID(Organization),name,:LABEL\n");
        chunked(e, c.organizations, |e, lo, hi| {
            let picks: Vec<[u8; 3]> = (lo..hi)
                .map(|_| {
                    let a = rng.randbelow_u32(16) as u8;
                    let b = rng.randbelow_u32(10) as u8;
                    [a, b, rng.randbelow_u32(8) as u8]
                })
                .collect();
            e.emit(hi - lo, move |b| {
                for (i, p) in (lo..hi).zip(picks) {
                    push_u64(b, i);
                    b.extend_from_slice(b",\"");
                    b.extend_from_slice(ORG_A[usize::from(p[0])].as_bytes());
                    b.push(b' ');
                    b.extend_from_slice(ORG_B[usize::from(p[1])].as_bytes());
                    b.push(b' ');
                    push_u64(b, i);
                    b.push(b' ');
                    b.extend_from_slice(ORG_C[usize::from(p[2])].as_bytes());
                    b.extend_from_slice(b"\",Organization\n");
                }
            })
        })
    })
}

/// `split_exact(total, n, i)`: floor or ceil of total/n, summing exactly to total.
fn split_exact(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

fn touched(w: &mut FileWriter<'_>, rng: &mut PyRandom, c: Counts) -> anyhow::Result<()> {
    let n_act = c.activities;
    let mut bits = vec![0u64; n_act.div_ceil(64) as usize];
    w("touched", c.touched, &mut |e| {
        e.header(":START_ID(Activity),:END_ID(Individual),:TYPE\n");
        let mut rows = 0;
        // Chunks of individuals, sized so a chunk holds about CHUNK_ROWS relationships.
        let per = (c.touched / c.individuals).max(1);
        let step = (CHUNK_ROWS / per).max(1);
        let mut lo = 0;
        while lo < c.individuals {
            let hi = (lo + step).min(c.individuals);
            let mut ks = Vec::with_capacity((hi - lo) as usize);
            let mut xs: Vec<u64> = Vec::with_capacity(((hi - lo) * (per + 1)) as usize);
            for i in lo..hi {
                let k = split_exact(c.touched, c.individuals, i);
                let start = xs.len();
                // `while len(seen) < k: seen.add(randrange(n_act))`, then sorted.
                while ((xs.len() - start) as u64) < k {
                    let x = rng.randbelow(n_act);
                    let (word, bit) = ((x / 64) as usize, 1u64 << (x % 64));
                    if bits[word] & bit == 0 {
                        bits[word] |= bit;
                        xs.push(x);
                    }
                }
                for &x in &xs[start..] {
                    bits[(x / 64) as usize] = 0;
                }
                xs[start..].sort_unstable();
                ks.push(k as u32);
            }
            rows += xs.len() as u64;
            e.emit(xs.len() as u64, move |b| {
                let mut at = 0;
                for (i, k) in (lo..hi).zip(ks) {
                    for &x in &xs[at..at + k as usize] {
                        push_u64(b, x);
                        b.push(b',');
                        push_u64(b, i);
                        b.extend_from_slice(b",TOUCHED\n");
                    }
                    at += k as usize;
                }
            });
            lo = hi;
        }
        rows
    })
}

fn works_for(w: &mut FileWriter<'_>, rng: &mut PyRandom, c: Counts) -> anyhow::Result<()> {
    let n_org = c.organizations;
    w("works_for", c.works_for, &mut |e| {
        e.header(":START_ID(Individual),:END_ID(Organization),:TYPE\n");
        let mut rows = 0;
        let step = CHUNK_ROWS / 2;
        let mut lo = 0;
        while lo < c.individuals {
            let hi = (lo + step).min(c.individuals);
            // Per individual: o1 and o2 + 1 (0 = no second organization).
            let mut picks = Vec::with_capacity((hi - lo) as usize);
            let before = rows;
            for i in lo..hi {
                let k = split_exact(c.works_for, c.individuals, i);
                let o1 = rng.randbelow(n_org);
                rows += 1;
                let o2 = if k == 2 {
                    rows += 1;
                    let o2 = rng.randbelow(n_org - 1);
                    o2 + u64::from(o2 >= o1) + 1
                } else {
                    0
                };
                picks.push((o1, o2));
            }
            e.emit(rows - before, move |b| {
                for (i, (o1, o2)) in (lo..hi).zip(picks) {
                    for o in [o1 + 1, o2] {
                        if o > 0 {
                            push_u64(b, i);
                            b.push(b',');
                            push_u64(b, o - 1);
                            b.extend_from_slice(b",WORKS_FOR\n");
                        }
                    }
                }
            });
            lo = hi;
        }
        rows
    })
}

/// Calls `f(e, lo, hi)` over `[0, n)` in chunks of CHUNK_ROWS; returns n (the rows written).
fn chunked(e: &mut Emitter, n: u64, mut f: impl FnMut(&mut Emitter, u64, u64)) -> u64 {
    let mut lo = 0;
    while lo < n {
        let hi = (lo + CHUNK_ROWS).min(n);
        f(e, lo, hi);
        lo = hi;
    }
    n
}

/// Appends the decimal digits of `v`.
fn push_u64(b: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut at = tmp.len();
    loop {
        at -= 1;
        tmp[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    b.extend_from_slice(&tmp[at..]);
}

/// Formats one chunk of rows into the buffer.
type Format = Box<dyn FnOnce(&mut Vec<u8>) + Send>;
type Job = (u64, Format);

/// Hands formatting jobs, in output order, to the worker threads of one file.
pub struct Emitter {
    tx: Sender<Job>,
    seq: u64,
    header: Option<&'static str>,
    name: String,
    planned_rows: u64,
    emitted: u64,
    progress: bool,
    started: Instant,
    last_report: Instant,
}

impl Emitter {
    fn header(&mut self, h: &'static str) {
        self.header = Some(h);
    }

    /// Queues a job that formats `rows` rows (the count is for progress lines).
    fn emit(&mut self, rows: u64, f: impl FnOnce(&mut Vec<u8>) + Send + 'static) {
        let header = self.header.take();
        let job: Format = Box::new(move |b: &mut Vec<u8>| {
            if let Some(h) = header {
                b.extend_from_slice(h.as_bytes());
            }
            f(b);
        });
        // A send fails only when the workers are gone (the writer failed); the error is
        // reported when the file is finished.
        let _ = self.tx.send((self.seq, job));
        self.seq += 1;
        self.emitted += rows;
        if self.progress && self.last_report.elapsed() >= Duration::from_secs(5) {
            self.last_report = Instant::now();
            let secs = self.started.elapsed().as_secs_f64().max(1e-9);
            eprintln!(
                "gen-b2b: {}: ~{} of {} rows ({:.0}%), {:.2} M rows/s",
                self.name,
                self.emitted,
                self.planned_rows,
                100.0 * self.emitted as f64 / self.planned_rows.max(1) as f64,
                self.emitted as f64 / secs / 1e6
            );
        }
    }

    /// Emits the header alone when no chunk carried it (an empty file).
    fn finish(&mut self) {
        if self.header.is_some() {
            self.emit(0, |_| {});
        }
    }
}

struct FileStats {
    name: String,
    rows: u64,
    bytes: u64,
    raw_bytes: u64,
}

/// Writes one CSV file: `produce` draws the random numbers and emits formatting jobs, which
/// worker threads run (and compress); a writer thread writes the chunks in order.
fn write_file(
    opts: &Options,
    name: &str,
    planned_rows: u64,
    produce: &mut dyn FnMut(&mut Emitter) -> u64,
) -> anyhow::Result<FileStats> {
    let gzip = opts.gzip && !opts.fifo;
    let file_name = format!("{name}{}", if gzip { ".csv.gz" } else { ".csv" });
    let path = opts.out.join(&file_name);
    // A pipe's open waits for its reader.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(!opts.fifo)
        .truncate(!opts.fifo)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let threads = opts.threads.max(1);
    let (job_tx, job_rx) = bounded::<Job>(threads * 2);
    let (out_tx, out_rx) = bounded::<(u64, Vec<u8>, u64)>(threads * 2);
    let started = Instant::now();
    let (rows, written) = std::thread::scope(|s| {
        for _ in 0..threads {
            let (rx, tx) = (job_rx.clone(), out_tx.clone());
            s.spawn(move || worker(&rx, &tx, gzip));
        }
        drop((job_rx, out_tx));
        let writer = s.spawn(move || write_in_order(file, &out_rx));
        let mut e = Emitter {
            tx: job_tx,
            seq: 0,
            header: None,
            name: file_name.clone(),
            planned_rows,
            emitted: 0,
            progress: opts.progress,
            started,
            last_report: started,
        };
        let rows = produce(&mut e);
        e.finish();
        drop(e);
        let written =
            writer.join().unwrap_or_else(|_| Err(std::io::Error::other("writer thread panicked")));
        (rows, written)
    });
    let (bytes, raw_bytes) = written.with_context(|| format!("writing {}", path.display()))?;
    if rows != planned_rows {
        bail!("{file_name}: wrote {rows} rows, expected {planned_rows}");
    }
    if opts.progress {
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        eprintln!(
            "gen-b2b: {file_name}: {rows} rows, {:.1} MB ({:.1} MB uncompressed) in {secs:.1} s: {:.2} M rows/s, {:.0} MB/s uncompressed",
            bytes as f64 / 1e6,
            raw_bytes as f64 / 1e6,
            rows as f64 / secs / 1e6,
            raw_bytes as f64 / secs / 1e6
        );
    }
    Ok(FileStats { name: file_name, rows, bytes, raw_bytes })
}

fn worker(rx: &Receiver<Job>, tx: &Sender<(u64, Vec<u8>, u64)>, gzip: bool) {
    for (seq, job) in rx {
        let mut buf = Vec::with_capacity(8 << 20);
        job(&mut buf);
        let raw = buf.len() as u64;
        let out = if gzip {
            let mut enc = flate2::write::GzEncoder::new(
                Vec::with_capacity(buf.len() / 3),
                flate2::Compression::new(1),
            );
            // Writing into a Vec cannot fail.
            let _ = enc.write_all(&buf);
            enc.finish().unwrap_or_default()
        } else {
            buf
        };
        if tx.send((seq, out, raw)).is_err() {
            return;
        }
    }
}

/// Writes the chunks in sequence order; returns (bytes written, uncompressed bytes).
fn write_in_order(file: File, rx: &Receiver<(u64, Vec<u8>, u64)>) -> std::io::Result<(u64, u64)> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut pending = BTreeMap::new();
    let (mut next, mut bytes, mut raw_bytes) = (0u64, 0u64, 0u64);
    for (seq, chunk, raw) in rx {
        pending.insert(seq, (chunk, raw));
        while let Some((chunk, raw)) = pending.remove(&next) {
            out.write_all(&chunk)?;
            bytes += chunk.len() as u64;
            raw_bytes += raw;
            next += 1;
        }
    }
    out.flush()?;
    Ok((bytes, raw_bytes))
}

/// Creates the named pipe `path` (an existing pipe is used again; anything else there is an
/// error: a data set's file is not overwritten by a pipe).
#[allow(unsafe_code)] // `mkfifo(3)` has no safe wrapper in std.
fn make_fifo(path: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_fifo() {
            return Ok(());
        }
        bail!("{} exists and is not a named pipe", path.display());
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .with_context(|| format!("{} contains a NUL byte", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; mkfifo only reads it.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("creating the named pipe {}", path.display()));
    }
    Ok(())
}

/// `manifest.json` exactly as the script's `json.dump(manifest, f, indent=2)` writes it.
fn manifest_json(opts: &Options, c: Counts, s: &Summary) -> String {
    let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
    let mut m = String::from("{\n");
    m +=
        &format!("  \"generator\": \"gen_b2b.py\",\n  \"scale\": {},\n", py_float_repr(opts.scale));
    m += &format!("  \"seed\": {},\n  \"gzip\": {},\n", opts.seed, opts.gzip);
    let total_nodes = c.activities + c.individuals + c.organizations;
    m += &format!(
        "  \"nodes\": {{\n    \"Activity\": {},\n    \"Individual\": {},\n    \"Organization\": {},\n    \"total\": {total_nodes}\n  }},\n",
        c.activities, c.individuals, c.organizations
    );
    m += &format!(
        "  \"relationships\": {{\n    \"TOUCHED\": {},\n    \"WORKS_FOR\": {},\n    \"total\": {}\n  }},\n",
        c.touched,
        c.works_for,
        c.touched + c.works_for
    );
    m += "  \"properties_per_node\": 2,\n  \"files\": {\n";
    let files: Vec<String> =
        s.files.iter().map(|(n, rows, _)| format!("    {}: {rows}", q(n))).collect();
    m += &files.join(",\n");
    m += &format!("\n  }},\n  \"bytes\": {},\n  \"neo4j_admin_args\": [\n", s.bytes);
    let name = |i: usize| s.files.get(i).map(|f| f.0.as_str()).unwrap_or("");
    let mut args: Vec<String> = (0..3).map(|i| format!("--nodes={}", name(i))).collect();
    args.extend((3..5).map(|i| format!("--relationships={}", name(i))));
    args.push("--id-type=integer".into());
    let args: Vec<String> = args.iter().map(|a| format!("    {}", q(a))).collect();
    m += &args.join(",\n");
    m += "\n  ]\n}";
    m
}

/// Python's `repr(float)`: the shortest round-trip digits, fixed notation for decimal exponents
/// in [-4, 16), otherwise `d.ddde±XX`.
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let sci = format!("{x:e}"); // e.g. "-1.234e-5", shortest round-trip digits
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = mant.strip_prefix('-').map_or(("", mant), |m| ("-", m));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let s = if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (a, b) = digits.split_at((exp + 1) as usize);
            format!("{a}.{b}")
        };
        format!("{sign}{s}")
    } else {
        let (a, b) = digits.split_at(1);
        let m = if b.is_empty() { a.to_string() } else { format!("{a}.{b}") };
        format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (0.01, "0.01"),
            (1.0, "1.0"),
            (2e-05, "2e-05"),
            (0.0001, "0.0001"),
            (0.001, "0.001"),
            (0.5, "0.5"),
            (123.25, "123.25"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.0, "0.0"),
            (1.2345e-7, "1.2345e-07"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn counts_round_half_to_even_and_check_endpoints() {
        let c = Counts::new(0.001, 254).expect("valid scale");
        assert_eq!(
            (c.individuals, c.organizations, c.touched, c.works_for),
            (196_000, 261_000, 1_870_000, 306_000)
        );
        let err = Counts::new(1e-9, 254).expect_err("too small").to_string();
        assert!(err.contains("scale too small"), "{err}");
        assert!(Counts::new(f64::NAN, 254).is_err());
    }

    #[test]
    fn split_exact_sums_to_total() {
        let total: u64 = (0..7).map(|i| split_exact(30, 7, i)).sum();
        assert_eq!(total, 30);
        assert_eq!(split_exact(30, 7, 0), 5);
        assert_eq!(split_exact(30, 7, 6), 4);
    }

    #[test]
    fn integers_format_in_decimal() {
        let mut b = Vec::new();
        for v in [0, 7, 10, 12_345, u64::MAX] {
            push_u64(&mut b, v);
            b.push(b' ');
        }
        assert_eq!(String::from_utf8(b).unwrap(), format!("0 7 10 12345 {} ", u64::MAX));
    }
}
