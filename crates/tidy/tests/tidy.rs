//! The codebase's rules as a test (`cargo test -p arbor-tidy`): the crate dependency graph of
//! ARCHITECTURE.md, file and function length limits with allowlists that may only shrink, a
//! `//!` module doc on every `.rs` file, no unused dependency, manifest hygiene, and no import
//! cycle between the files of a crate (an allowlist that may only shrink).
//!
//! `TIDY_PRINT=1 cargo test --release -p arbor-tidy -- --nocapture` prints the files and
//! functions over the limits today, in the allowlists' format; `TIDY_BLESS=1` rewrites
//! `crates/tidy/allow/long-files.txt` and `long-fns.txt` from the current tree (for the lead
//! after a merge; a new entry is a review decision, not a fix).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use arbor_tidy::functions;

/// Longest allowed `.rs` file outside tests, in lines.
const FILE_LINES_MAX: usize = 1200;
/// Longest allowed function, from its `fn` line to its closing brace.
const FN_LINES_MAX: usize = 150;

/// The allowed dependency edges between workspace crates (any kind: normal, dev, build), from
/// ARCHITECTURE.md: `model <- cypher-syntax <- cypher-plan <- exec <- engine <- bolt <- cli`,
/// `model <- storage <- engine`, `model <- storage <- import <- cli`, and the dev/bench crates
/// on top. Adding an edge here is an architecture change: it needs a line in ARCHITECTURE.md.
const ALLOWED_EDGES: &[(&str, &[&str])] = &[
    ("model", &[]),
    // Leaf libraries with no crate of ours below them: the user store, the ANN index, full-text
    // search.
    ("auth", &[]),
    ("vector", &[]),
    ("fulltext", &[]),
    ("cypher-syntax", &["model"]),
    ("cypher-plan", &["model", "cypher-syntax"]),
    ("exec", &["model", "cypher-syntax", "cypher-plan", "vector"]),
    ("storage", &["model", "vector"]),
    ("engine", &["model", "cypher-syntax", "cypher-plan", "exec", "storage", "auth", "fulltext"]),
    ("bolt", &["model", "engine"]),
    ("import", &["model", "storage"]),
    ("http", &["model", "engine", "auth"]),
    ("cli", &["model", "engine", "bolt", "import", "http"]),
    // Dev-only and benchmark crates.
    ("tck", &["model", "engine", "bolt"]),
    ("mgbench", &["model", "engine", "bolt"]),
    ("bench", &["model", "engine", "mgbench"]),
    ("tidy", &[]),
    ("testkit", &["model", "engine", "bolt", "cypher-syntax", "exec"]),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn metadata() -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .expect("running cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata JSON")
}

/// Workspace packages: (name, directory, dependencies).
fn packages() -> Vec<(String, PathBuf, Vec<serde_json::Value>)> {
    let meta = metadata();
    let mut out = Vec::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name").to_string();
        let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
        let dir = manifest.parent().expect("package dir").to_path_buf();
        let deps = p["dependencies"].as_array().cloned().unwrap_or_default();
        out.push((name, dir, deps));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every `.rs` file under `crates/` and `fuzz/`, relative to the root, sorted.
fn rust_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if name != "target" && !name.to_string_lossy().starts_with('.') {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = root();
    let mut files = Vec::new();
    walk(&root.join("crates"), &mut files);
    walk(&root.join("fuzz"), &mut files);
    let mut rel: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/"))
        .collect();
    rel.sort();
    rel
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// Test code: files under a `tests/` or `benches/` directory, and `tests.rs` / `*_tests.rs`
/// modules (`#[cfg(test)] mod tests;`).
fn is_test_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    parts.iter().any(|p| *p == "tests" || *p == "benches")
        || file == "tests.rs"
        || file.ends_with("_tests.rs")
}

/// An allowlist: `key lines` per line, `#` comments. Returns key -> allowed lines.
fn allowlist(name: &str) -> BTreeMap<String, usize> {
    let text = read(&format!("crates/tidy/allow/{name}"));
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, lines) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("allow/{name}:{}: expected `KEY LINES`", n + 1));
        let lines = lines
            .parse()
            .unwrap_or_else(|_| panic!("allow/{name}:{}: `{lines}` is not a line count", n + 1));
        out.insert(key.to_string(), lines);
    }
    out
}

const ALLOW_HEADER: &str =
    "# Over the limit today; this list may only shrink (crates/tidy/tests/tidy.rs).\n\
# Regenerate after a merge: TIDY_BLESS=1 cargo test --release -p arbor-tidy\n";

/// Prints (`TIDY_PRINT`) or writes (`TIDY_BLESS`) the current over-limit entries.
fn print_or_bless(name: &str, current: &BTreeMap<String, usize>) -> bool {
    let body: String = current.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("TIDY_PRINT").is_some() {
        eprintln!("---- crates/tidy/allow/{name}\n{body}");
    }
    if std::env::var_os("TIDY_BLESS").is_some() {
        let path = root().join("crates/tidy/allow").join(name);
        std::fs::write(&path, format!("{ALLOW_HEADER}{body}")).expect("writing the allowlist");
        return true;
    }
    false
}

/// Compares what is over the limit with an allowlist that may only shrink.
fn ratchet(name: &str, what: &str, limit: usize, current: &BTreeMap<String, usize>) -> Vec<String> {
    if print_or_bless(name, current) {
        return Vec::new();
    }
    let allowed = allowlist(name);
    let mut problems = Vec::new();
    for (key, &lines) in current {
        match allowed.get(key) {
            None => {
                problems.push(format!("{key}: {what} has {lines} lines (limit {limit}): split it"))
            }
            Some(&max) if lines > max => problems.push(format!(
                "{key}: {what} grew to {lines} lines (allow/{name} allows {max}, limit {limit}): \
                 split it instead"
            )),
            Some(_) => {}
        }
    }
    for (key, max) in &allowed {
        if !current.contains_key(key) {
            problems.push(format!(
                "{key}: listed in crates/tidy/allow/{name} ({max}) but now within {limit} lines \
                 or gone: remove the entry"
            ));
        } else if current[key] < *max {
            problems.push(format!(
                "{key}: shrank to {} lines: lower its entry in crates/tidy/allow/{name} (was {max})",
                current[key]
            ));
        }
    }
    problems
}

fn assert_none(check: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "tidy {check}: {} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn crate_edges_follow_the_architecture() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED_EDGES.iter().copied().collect();
    let mut problems = Vec::new();
    let packages = packages();
    let members: BTreeSet<&str> = packages.iter().map(|p| p.0.as_str()).collect();
    for (name, _, deps) in &packages {
        let short = name.strip_prefix("arbor-").unwrap_or(name);
        let Some(ok) = allowed.get(short) else {
            problems.push(format!(
                "{name}: a crate missing from ALLOWED_EDGES in crates/tidy/tests/tidy.rs: \
                 place it in the architecture (and ARCHITECTURE.md)"
            ));
            continue;
        };
        for d in deps {
            let dep = d["name"].as_str().unwrap_or("");
            if !members.contains(dep) {
                continue;
            }
            let dep_short = dep.strip_prefix("arbor-").unwrap_or(dep);
            if !ok.contains(&dep_short) {
                let kind = d["kind"].as_str().unwrap_or("normal");
                problems.push(format!(
                    "{name} -> {dep} ({kind} dependency): not an edge of the architecture \
                     (ALLOWED_EDGES in crates/tidy/tests/tidy.rs, ARCHITECTURE.md section 3)"
                ));
            }
        }
    }
    assert_none("crate edges", problems);
}

#[test]
fn no_long_files_outside_tests() {
    let mut current = BTreeMap::new();
    for rel in rust_files().into_iter().filter(|f| !is_test_file(f)) {
        let lines = read(&rel).lines().count();
        if lines > FILE_LINES_MAX {
            current.insert(rel, lines);
        }
    }
    assert_none("file length", ratchet("long-files.txt", "the file", FILE_LINES_MAX, &current));
}

#[test]
fn no_long_functions() {
    let mut current: BTreeMap<String, usize> = BTreeMap::new();
    for rel in rust_files() {
        for f in functions(&read(&rel)) {
            if f.lines() > FN_LINES_MAX {
                let e = current.entry(format!("{rel}::{}", f.name)).or_default();
                *e = (*e).max(f.lines());
            }
        }
    }
    assert_none("function length", ratchet("long-fns.txt", "the function", FN_LINES_MAX, &current));
}

#[test]
fn every_file_starts_with_a_module_doc() {
    let problems: Vec<String> = rust_files()
        .into_iter()
        .filter(|rel| !read(rel).trim_start().starts_with("//!"))
        .map(|rel| format!("{rel}: does not begin with a `//!` module doc saying what it holds"))
        .collect();
    assert_none("module docs", problems);
}

/// `.rs` files under `dir/sub` for each `sub`, code only (comments and literals blanked).
fn code_under(dir: &Path, subs: &[&str]) -> String {
    let mut code = String::new();
    let root = root();
    for rel in rust_files() {
        let abs = root.join(&rel);
        if subs.iter().any(|s| abs.starts_with(dir.join(s)))
            || (subs.contains(&"build.rs") && abs == dir.join("build.rs"))
        {
            code.push_str(&arbor_tidy::code_only(&read(&rel)));
            code.push('\n');
        }
    }
    code
}

fn mentions(code: &str, ident: &str) -> bool {
    code.match_indices(ident).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + ident.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        boundary(before) && boundary(after)
    })
}

#[test]
fn no_unused_dependencies() {
    let mut problems = Vec::new();
    for (name, dir, deps) in packages() {
        let src = code_under(&dir, &["src"]);
        let all = code_under(&dir, &["src", "tests", "benches", "examples"]);
        let build = code_under(&dir, &["build.rs"]);
        for d in deps {
            let dep = d["rename"].as_str().or(d["name"].as_str()).unwrap_or("").replace('-', "_");
            let (kind, code, where_) = match d["kind"].as_str() {
                None => ("dependencies", &src, "src/"),
                Some("dev") => ("dev-dependencies", &all, "src/, tests/, benches/ or examples/"),
                Some(_) => ("build-dependencies", &build, "build.rs"),
            };
            if !mentions(code, &dep) {
                problems.push(format!(
                    "{name}: [{kind}] `{dep}` is not referenced in {where_}: remove it"
                ));
            }
        }
    }
    assert_none("unused dependencies", problems);
}

#[test]
fn manifests_use_workspace_settings() {
    let mut problems = Vec::new();
    for (name, dir, _) in packages() {
        let path = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&path).expect("reading Cargo.toml");
        let manifest: toml::Table =
            text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let at = format!("{name} ({})", path.strip_prefix(root()).unwrap_or(&path).display());
        if manifest.get("lints").and_then(|l| l.get("workspace")).and_then(|w| w.as_bool())
            != Some(true)
        {
            problems.push(format!("{at}: missing `[lints] workspace = true`"));
        }
        let package =
            manifest.get("package").and_then(|p| p.as_table()).cloned().unwrap_or_default();
        for key in ["version", "edition", "rust-version", "license"] {
            let inherited =
                package.get(key).and_then(|v| v.get("workspace")).and_then(|w| w.as_bool());
            if inherited != Some(true) {
                problems.push(format!("{at}: `{key}` should be `{key}.workspace = true`"));
            }
        }
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else { continue };
            for (dep, spec) in deps {
                if spec.get("workspace").and_then(|w| w.as_bool()) != Some(true) {
                    problems.push(format!(
                        "{at}: [{section}] `{dep}` should be `{dep}.workspace = true` (versions \
                         live in the root [workspace.dependencies])"
                    ));
                }
            }
        }
    }
    assert_none("manifests", problems);
}

/// A cycle as one allowlist line: its files, space-separated, sorted.
fn cycle_key(files: &[String]) -> String {
    files.join(" ")
}

/// Every import cycle between files of a crate today, with the edges that tie each (for the
/// message), from `crates/*/src`. Test modules give no edges.
fn file_cycles() -> BTreeMap<String, Vec<String>> {
    let root = root();
    let mut by_crate: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for rel in rust_files() {
        let parts: Vec<&str> = rel.splitn(4, '/').collect();
        if let ["crates", krate, "src", file] = parts.as_slice() {
            let src = std::fs::read_to_string(root.join(&rel)).expect("reading a source file");
            by_crate.entry(krate.to_string()).or_default().insert(file.to_string(), src);
        }
    }
    let mut out = BTreeMap::new();
    for (krate, sources) in by_crate {
        let graph = arbor_tidy::uses::use_graph(&sources, |f| is_test_file(&format!("src/{f}")));
        for cycle in arbor_tidy::uses::cycles(&graph) {
            let full: Vec<String> =
                cycle.iter().map(|f| format!("crates/{krate}/src/{f}")).collect();
            let mut ties = Vec::new();
            for a in &cycle {
                for (b, names) in graph.get(a).into_iter().flatten() {
                    if cycle.contains(b) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        ties.push(format!("    {a} -> {b}: {}", names.join(", ")));
                    }
                }
            }
            out.insert(cycle_key(&full), ties);
        }
    }
    out
}

#[test]
fn no_import_cycles_between_files() {
    let current = file_cycles();
    let body: String = current.keys().map(|k| format!("{k}\n")).collect();
    if std::env::var_os("TIDY_PRINT").is_some() {
        for (k, ties) in &current {
            eprintln!("cycle: {k}\n{}", ties.join("\n"));
        }
    }
    let path = root().join("crates/tidy/allow/file-cycles.txt");
    if std::env::var_os("TIDY_BLESS").is_some() {
        let header =
            "# Import cycles between files of one crate, one a line (its files, sorted); this\n\
# list may only shrink (crates/tidy/tests/tidy.rs, no_import_cycles_between_files).\n";
        std::fs::write(&path, format!("{header}{body}")).expect("writing the allowlist");
        return;
    }
    let text = std::fs::read_to_string(&path).expect("reading allow/file-cycles.txt");
    let allowed: Vec<BTreeSet<&str>> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let mut problems = Vec::new();
    for (key, ties) in &current {
        let files: BTreeSet<&str> = key.split(' ').collect();
        if !allowed.iter().any(|a| files.is_subset(a)) {
            problems.push(format!(
                "files that import each other in a loop: {key}\n{}\n  make one of them look \
                 only down (move what both need into a lower file)",
                ties.join("\n")
            ));
        }
    }
    for a in &allowed {
        let key = a.iter().copied().collect::<Vec<_>>().join(" ");
        if !current.contains_key(&key) {
            problems.push(format!(
                "{key}: listed in crates/tidy/allow/file-cycles.txt but no longer a cycle as \
                 listed: remove or narrow the line"
            ));
        }
    }
    assert_none("file import cycles", problems);
}
