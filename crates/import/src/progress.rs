//! Progress of one import stage: a live bar (rows/s, MB/s, ETA) when stderr is a terminal,
//! otherwise a plain line every few seconds; a closing line per stage either way.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Bar on a terminal, else periodic lines.
    Auto,
    /// Periodic lines only.
    Plain,
    /// Nothing but the closing line.
    Quiet,
}

/// One stage's progress. `bytes` may be advanced by other threads (input readers).
pub struct Stage {
    name: String,
    total: u64,
    pub bytes: Arc<AtomicU64>,
    /// Total is in bytes (input stages) or in items (rows).
    by_bytes: bool,
    rows: u64,
    start: Instant,
    bar: Option<ProgressBar>,
    last_line: Instant,
    every: Duration,
    quiet: bool,
}

pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

pub fn human_count(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.2} G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2} M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    let (h, m, s, ms) = (ms / 3_600_000, (ms / 60_000) % 60, (ms / 1000) % 60, ms % 1000);
    if h > 0 {
        format!("{h}h {m}m {s}s {ms}ms")
    } else if m > 0 {
        format!("{m}m {s}s {ms}ms")
    } else {
        format!("{s}s {ms}ms")
    }
}

impl Stage {
    /// Starts a stage whose progress is measured in bytes read (`by_bytes`) or in rows.
    pub fn start(name: &str, total: u64, by_bytes: bool, mode: Mode) -> Stage {
        let tty = mode == Mode::Auto && std::io::stderr().is_terminal();
        let bar = tty.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{prefix:>14} [{bar:30}] {percent:>3}% {msg} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(name.to_string());
            bar
        });
        if mode != Mode::Quiet && bar.is_none() {
            println!("{name}: started");
        }
        Stage {
            name: name.to_string(),
            total,
            bytes: Arc::new(AtomicU64::new(0)),
            by_bytes,
            rows: 0,
            start: Instant::now(),
            bar,
            last_line: Instant::now(),
            every: Duration::from_secs(5),
            quiet: mode == Mode::Quiet,
        }
    }

    fn rates(&self) -> (f64, f64, f64) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let bytes = self.bytes.load(Ordering::Relaxed) as f64;
        (self.rows as f64 / secs, bytes / secs / 1e6, secs)
    }

    /// Adds processed rows and refreshes the display.
    pub fn advance(&mut self, rows: u64) {
        self.rows += rows;
        let done = if self.by_bytes { self.bytes.load(Ordering::Relaxed) } else { self.rows };
        let (rps, mbps, secs) = self.rates();
        if let Some(bar) = &self.bar {
            bar.set_position(done.min(self.total));
            bar.set_message(format!(
                "{} rows, {}/s, {mbps:.1} MB/s",
                human_count(self.rows as f64),
                human_count(rps)
            ));
        } else if !self.quiet && self.last_line.elapsed() >= self.every {
            self.last_line = Instant::now();
            let frac = if self.total == 0 { 1.0 } else { done as f64 / self.total as f64 };
            let eta = if frac > 0.0 { secs / frac - secs } else { 0.0 };
            println!(
                "{}: {:>3.0}% {} rows, {} rows/s, {mbps:.1} MB/s, ETA {}",
                self.name,
                (frac * 100.0).min(100.0),
                human_count(self.rows as f64),
                human_count(rps),
                human_duration(Duration::from_secs_f64(eta.max(0.0)))
            );
            let _ = std::io::stdout().flush();
        }
    }

    /// Ends the stage with a summary line; returns its duration.
    pub fn finish(self, what: &str) -> Duration {
        let (rps, mbps, _) = self.rates();
        let took = self.start.elapsed();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if !self.quiet || self.bar.is_some() {
            let rate = if self.by_bytes {
                format!("; {} rows/s, {mbps:.1} MB/s", human_count(rps))
            } else if self.rows > 0 {
                format!("; {}/s", human_count(rps))
            } else {
                String::new() // a stage without rows (writing the segment)
            };
            let mem = match (rss(), peak_rss()) {
                (Some(now), Some(peak)) => {
                    format!("; RSS {}, peak {}", human_bytes(now as f64), human_bytes(peak as f64))
                }
                _ => String::new(),
            };
            println!("{}: done in {} ({what}{rate}{mem})", self.name, human_duration(took));
        }
        took
    }
}

/// Peak resident memory of this process (VmHWM), if the platform reports it.
pub fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Resident memory of this process now (VmRSS), if the platform reports it.
pub fn rss() -> Option<u64> {
    status_bytes("VmRSS:")
}

fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory available to a new process now (the kernel's `MemAvailable`: free memory plus what
/// the page cache can give back), if the platform reports it.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The default `--max-off-heap-memory`: 90 % (neo4j-admin's default fraction) of the memory
/// available when the import starts; `None` (no limit) if the platform does not say.
pub fn default_memory_budget() -> Option<u64> {
    available_memory().map(|m| m / 10 * 9)
}

/// Total memory of the machine, if the platform reports it.
pub fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_count(2_500_000.0), "2.50 M");
        assert_eq!(human_duration(Duration::from_millis(61_005)), "1m 1s 5ms");
    }
}
