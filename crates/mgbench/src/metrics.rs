//! Measurements: mgBench's throughput, latency percentiles, and process resource use read from
//! `/proc` (peak RSS = `VmHWM`, CPU = `utime + stime`), for the server and for the client
//! itself so that a client-bound run is visible.

use std::path::Path;
use std::sync::OnceLock;

/// Clock ticks per second for `/proc/*/stat` (`getconf CLK_TCK`, 100 on Linux in practice).
fn clk_tck() -> f64 {
    static TCK: OnceLock<f64> = OnceLock::new();
    *TCK.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<f64>().ok())
            .filter(|t| *t > 0.0)
            .unwrap_or(100.0)
    })
}

/// User + system CPU seconds of a process (`/proc/PID/stat` fields 14 and 15).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    cpu_seconds_at(&Path::new("/proc").join(pid.to_string()).join("stat"))
}

/// CPU seconds of this process (all threads).
pub fn self_cpu_seconds() -> Option<f64> {
    cpu_seconds_at(Path::new("/proc/self/stat"))
}

fn cpu_seconds_at(path: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14 => index 11, stime index 12.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / clk_tck())
}

fn status_kib(pid: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.strip_prefix(':')?;
        v.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// Peak resident set size (`VmHWM`) in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(&pid.to_string(), "VmHWM")
}

/// Current resident set size in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(&pid.to_string(), "VmRSS")
}

pub fn self_peak_rss_kib() -> Option<u64> {
    status_kib("self", "VmHWM")
}

/// Resets this process's `VmHWM` to the current RSS (Linux: write 5 to `clear_refs`).
pub fn reset_self_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The 1-minute load average.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

pub fn cpu_count() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Latency summary in milliseconds. Percentile `p` is `sorted[floor(n p)]` (benchgraph v2+),
/// clamped to the last element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn from_seconds(samples: &[f64]) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        let mut s: Vec<f64> = samples.iter().map(|x| x * 1000.0).collect();
        s.sort_by(|a, b| a.total_cmp(b));
        let n = s.len();
        let pct = |p: f64| s[((n as f64 * p).floor() as usize).min(n - 1)];
        Latency {
            min: s[0],
            mean: s.iter().sum::<f64>() / n as f64,
            p50: pct(0.50),
            p90: pct(0.90),
            p95: pct(0.95),
            p99: pct(0.99),
            max: s[n - 1],
        }
    }
}

/// mgBench's throughput: `count / mean(worker durations)`.
pub fn throughput(count: usize, worker_durations: &[f64]) -> f64 {
    if worker_durations.is_empty() {
        return 0.0;
    }
    let mean = worker_durations.iter().sum::<f64>() / worker_durations.len() as f64;
    if mean > 0.0 {
        count as f64 / mean
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_benchgraph() {
        let s: Vec<f64> = (1..=100).map(|i| f64::from(i) / 1000.0).collect();
        let l = Latency::from_seconds(&s);
        assert_eq!(l.p50, 51.0);
        assert_eq!(l.p99, 100.0);
        assert_eq!(l.min, 1.0);
        assert!((l.mean - 50.5).abs() < 1e-9);
        assert_eq!(throughput(10, &[1.0, 3.0]), 5.0);
    }

    #[test]
    fn proc_readings_of_self() {
        assert!(self_cpu_seconds().is_some());
        assert!(peak_rss_kib(std::process::id()).unwrap_or(0) > 0);
        assert!(rss_kib(std::process::id()).unwrap_or(0) > 0);
    }
}
