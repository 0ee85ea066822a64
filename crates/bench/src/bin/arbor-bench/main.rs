//! The `arbor-bench` binary: Arbor's benchmarks, kept out of the production `arbor` binary.
//! `arbor bench ARGS...` runs `arbor-bench ARGS...` from the same directory, so the documented
//! `arbor bench traversal|mgbench|copy` commands work unchanged.
//!
//! - `traversal`: the traversal-perfs tree, in process (this binary's global allocator is the
//!   counting one, so allocation per run is reported);
//! - `mgbench`: mgBench's Pokec workloads over Bolt, Arbor and Neo4j side by side;
//! - `copy`: the Bolt data-copy benchmark;
//! - `gen-b2b`: the B2B import data set (a fast port of `../shared/bench/gen_b2b.py`).

mod gen_b2b;
mod mgbench;
mod traversal;

use clap::{Parser, Subcommand};

/// Counts allocations (per thread, relaxed) so `traversal` can report bytes per run; off (one
/// relaxed flag load per allocation) until a benchmark turns it on.
#[global_allocator]
static GLOBAL: arbor_bench::CountingAlloc = arbor_bench::CountingAlloc;

#[derive(Parser)]
#[command(
    name = "arbor bench",
    bin_name = "arbor bench",
    version,
    about = "Arbor's benchmarks (run as `arbor bench ...`)"
)]
struct Cli {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// The traversal-perfs tree: count true `:B` nodes depth-first, breadth-first and with Cypher.
    Traversal(traversal::TraversalArgs),
    /// mgBench's Pokec workloads (23 queries; isolated, mixed, realistic) over Bolt, Arbor and
    /// Neo4j side by side.
    Mgbench(mgbench::MgbenchArgs),
    /// Copy nodes between two running servers over Bolt with three client strategies.
    Copy(mgbench::CopyArgs),
    /// Generate the B2B import data set: the same files as `../shared/bench/gen_b2b.py`, fast.
    GenB2b(gen_b2b::GenB2bArgs),
}

fn main() {
    arbor_bench::tune_allocator();
    let cli = Cli::parse();
    let result = match cli.command {
        BenchCommand::Traversal(args) => traversal::run(args),
        BenchCommand::Mgbench(args) => mgbench::mgbench(args),
        BenchCommand::Copy(args) => mgbench::copy(args),
        BenchCommand::GenB2b(args) => gen_b2b::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
