//! `gen-b2b` against the Python generator it ports: byte-identical CSV files and manifest at a
//! tiny scale, and a gzip round trip (multi-member gzip decodes to the plain output).

use std::io::Read;
use std::path::{Path, PathBuf};

use arbor_bench::gen_b2b::{generate, Options};

const FILES: [&str; 5] = ["activities", "individuals", "organizations", "touched", "works_for"];

fn opts(out: &Path, gzip: bool, threads: usize) -> Options {
    Options {
        scale: 0.00002,
        out: out.to_path_buf(),
        seed: 1,
        gzip,
        activities: 10,
        threads,
        progress: false,
        fifo: false,
    }
}

/// `../shared/bench/gen_b2b.py` beside the workspace root; `None` (test passes) only when it is
/// absent and `ARBOR_SHARED_OPTIONAL=1`.
fn python_generator() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("../shared/bench/gen_b2b.py");
    if script.is_file() {
        return Some(script);
    }
    if std::env::var("ARBOR_SHARED_OPTIONAL").as_deref() == Ok("1") {
        eprintln!("{} absent and ARBOR_SHARED_OPTIONAL=1: skipping", script.display());
        return None;
    }
    panic!(
        "the Python generator {} is missing (check out ../shared beside the workspace, or set ARBOR_SHARED_OPTIONAL=1)",
        script.display()
    );
}

#[test]
fn matches_python_generator_byte_for_byte() {
    let Some(script) = python_generator() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let (py, rs) = (dir.path().join("py"), dir.path().join("rs"));
    let status = std::process::Command::new("python3")
        .arg(&script)
        .args(["--scale", "0.00002", "--activities", "10", "--no-gzip", "--seed", "1", "--out"])
        .arg(&py)
        .status()
        .expect("running python3");
    assert!(status.success(), "python3 {} failed: {status}", script.display());
    let summary = generate(&opts(&rs, false, 3)).expect("gen-b2b");
    assert_eq!(summary.rows, 10 + 3920 + 5220 + 37_400 + 6120);
    for name in FILES.iter().map(|f| format!("{f}.csv")).chain(["manifest.json".to_string()]) {
        let want = std::fs::read(py.join(&name)).expect("python output");
        let got = std::fs::read(rs.join(&name)).expect("rust output");
        assert!(want.len() > 10, "{name} is too short to be a real comparison");
        if want != got {
            let at = want
                .iter()
                .zip(&got)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(got.len()));
            panic!(
                "{name} differs at byte {at} (python {} bytes, rust {} bytes): python {:?} rust {:?}",
                want.len(),
                got.len(),
                String::from_utf8_lossy(&want[at.saturating_sub(40)..(at + 40).min(want.len())]),
                String::from_utf8_lossy(&got[at.saturating_sub(40)..(at + 40).min(got.len())])
            );
        }
    }
}

#[test]
fn gzip_output_decodes_to_the_plain_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (plain, gz) = (dir.path().join("plain"), dir.path().join("gz"));
    generate(&opts(&plain, false, 1)).expect("plain");
    let s = generate(&opts(&gz, true, 2)).expect("gzip");
    for f in FILES {
        let want = std::fs::read(plain.join(format!("{f}.csv"))).expect("plain file");
        let raw = std::fs::read(gz.join(format!("{f}.csv.gz"))).expect("gzip file");
        assert!(raw.len() < want.len(), "{f}: gzip output is not smaller");
        let mut got = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut got).expect("valid gzip");
        assert_eq!(got, want, "{f}: decompressed gzip differs from the plain output");
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(gz.join("manifest.json")).expect("manifest"))
            .expect("json");
    assert_eq!(manifest["gzip"], true);
    assert_eq!(manifest["files"]["touched.csv.gz"], 37_400);
    assert_eq!(manifest["bytes"].as_u64(), Some(s.bytes));
    assert_eq!(manifest["neo4j_admin_args"][3], "--relationships=touched.csv.gz");
}

/// `fifo`: the files are named pipes, written (plain, whatever `gzip` says) in the order of
/// [`gen_b2b::FILES`] as a reader opens them; what a reader gets is the plain output.
#[test]
fn fifo_output_is_the_plain_output_in_file_order() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let (plain, pipes) = (dir.path().join("plain"), dir.path().join("pipes"));
    generate(&opts(&plain, false, 1)).expect("plain");
    assert_eq!(arbor_bench::gen_b2b::FILES, FILES);
    let gen = std::thread::spawn({
        let pipes = pipes.clone();
        move || generate(&Options { fifo: true, ..opts(&pipes, true, 2) })
    });
    for f in FILES {
        let path = pipes.join(format!("{f}.csv"));
        // The generator creates every pipe before it writes the first.
        while !path.exists() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let meta = std::fs::symlink_metadata(&path).expect("pipe");
        assert!(meta.file_type().is_fifo(), "{f}.csv is not a named pipe");
        let got = std::fs::read(&path).expect("reading the pipe");
        let want = std::fs::read(plain.join(format!("{f}.csv"))).expect("plain file");
        assert!(got == want, "{f}: the pipe gave other bytes than the plain file");
    }
    let s = gen.join().expect("generator thread").expect("gen-b2b --fifo");
    assert_eq!(s.rows, 10 + 3920 + 5220 + 37_400 + 6120);
    assert!(!pipes.join("touched.csv.gz").exists(), "no file is written beside the pipes");
}
