//! `arbor bench ...`: the benchmarks are a separate binary, `arbor-bench`, built next to
//! `arbor` by the workspace, so benchmark code (and its counting allocator) does not ship in
//! the server. This subcommand runs it with the same arguments, replacing this process.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context};

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct BenchArgs {
    /// Arguments for `arbor-bench` (`traversal`, `mgbench`, `copy`; `--help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<OsString>,
}

/// `arbor-bench` in the directory of the running `arbor`.
fn bench_binary() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("locating the arbor binary")?;
    Ok(me.with_file_name(format!("arbor-bench{}", std::env::consts::EXE_SUFFIX)))
}

pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    let bin = bench_binary()?;
    if !bin.is_file() {
        bail!(
            "`arbor bench` runs the separate benchmark binary, which is not installed at {}: \
             build it with `cargo build --release -p arbor-bench` (it belongs next to arbor)",
            bin.display()
        );
    }
    let mut cmd = std::process::Command::new(&bin);
    cmd.args(&a.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(err).with_context(|| format!("running {}", bin.display()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().with_context(|| format!("running {}", bin.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}
