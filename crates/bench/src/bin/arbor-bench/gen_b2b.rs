//! `arbor-bench gen-b2b` (what `arbor bench gen-b2b` runs): argument plumbing for
//! [`arbor_bench::gen_b2b`], the Rust port of `../shared/bench/gen_b2b.py`.

use std::path::PathBuf;

use arbor_bench::gen_b2b::{self, Options};

#[derive(clap::Args)]
pub struct GenB2bArgs {
    /// Multiplies the full-size Individual, Organization, TOUCHED and WORKS_FOR counts.
    #[arg(long, default_value_t = 0.001)]
    scale: f64,
    /// Output directory (created if missing).
    #[arg(long, required_unless_present = "fifo")]
    out: Option<PathBuf>,
    /// Seed of Python's `random.Random` (same seed, same rows as the Python generator).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write plain .csv instead of .csv.gz.
    #[arg(long)]
    no_gzip: bool,
    /// Activity nodes (not scaled).
    #[arg(long, default_value_t = 254)]
    activities: u64,
    /// Formatting/compression threads (default: the available cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
    /// Write into named pipes created in DIR (plain CSV, each written as `arbor import` opens
    /// it: give the import the node files, then the relationship files, in the order they are
    /// listed in the README), so that no CSV is ever on disk. Replaces --out.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    fifo: Option<PathBuf>,
}

pub fn run(a: GenB2bArgs) -> anyhow::Result<()> {
    let threads =
        a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let opts = Options {
        scale: a.scale,
        fifo: a.fifo.is_some(),
        out: a.fifo.or(a.out).unwrap_or_default(),
        seed: a.seed,
        gzip: !a.no_gzip,
        activities: a.activities,
        threads,
        progress: !a.quiet,
    };
    let s = gen_b2b::generate(&opts)?;
    let secs = s.seconds.max(1e-9);
    println!(
        "wrote {} rows, {:.1} MB ({:.1} MB uncompressed) to {} in {secs:.1} s: {:.2} M rows/s, {:.1} MB/s written, {:.1} MB/s uncompressed",
        s.rows,
        s.bytes as f64 / 1e6,
        s.uncompressed_bytes as f64 / 1e6,
        opts.out.display(),
        s.rows as f64 / secs / 1e6,
        s.bytes as f64 / secs / 1e6,
        s.uncompressed_bytes as f64 / secs / 1e6,
    );
    Ok(())
}
