//! The file-level `use` graph of one crate, for the tidy check that no two files of a crate
//! import each other in a loop (`tests/tidy.rs`, `no_import_cycles_between_files`).
//!
//! A plain token scanner over [`crate::code_only`] text, not a Rust parser. It finds the module
//! tree from the crate roots (`lib.rs`, `main.rs`, `bin/*.rs`) by following `mod name;`, then
//! every path that starts with `crate::`, `super::`, `self::` or the name of a child module
//! (in `use` trees and in code alike) and resolves it to the file that defines the item. An
//! item a module only re-exports (`pub use`, or a private `use` a child reaches through
//! `super::`) is followed to where it comes from, so a facade `mod.rs` or `lib.rs` that
//! re-exports its children is not a hop in a cycle. `mod name;` itself is not an edge: a parent
//! declaring a child is the tree, not an import.

use std::collections::{BTreeMap, BTreeSet};

/// Edges of one crate's file graph: from file -> to file -> names taken. Paths are relative
/// to the crate's `src/` directory, as given to [`use_graph`].
pub type FileGraph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

type ModPath = Vec<String>;

#[derive(Debug)]
struct Tok {
    text: String,
}

fn tokens(src: &str) -> Vec<Tok> {
    let code: Vec<char> = crate::code_only(src).chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                i += 1;
            }
            let mut text: String = code[start..i].iter().collect();
            if text == "r" && code.get(i) == Some(&'#') {
                let s2 = i + 1;
                i = s2;
                while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                    i += 1;
                }
                text = code[s2..i].iter().collect();
            }
            out.push(Tok { text });
        } else if c == ':' && code.get(i + 1) == Some(&':') {
            out.push(Tok { text: "::".into() });
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Tok { text: c.to_string() });
            }
            i += 1;
        }
    }
    out
}

/// One crate root's module tree: module path -> file, and each file's own module path.
struct Tree {
    file_of: BTreeMap<ModPath, String>,
    module_of: BTreeMap<String, ModPath>,
}

fn dir_of(file: &str) -> &str {
    file.rfind('/').map_or("", |p| &file[..p])
}

/// The directory that holds the files of the children of `file`'s module.
fn child_dir(file: &str, is_root: bool) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    if is_root || name == "mod.rs" {
        dir_of(file).to_string()
    } else {
        let stem = file.strip_suffix(".rs").unwrap_or(file);
        stem.to_string()
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Marks an inline module under `#[cfg(test)]` in the scope names [`walk_scopes`] reports.
const TEST_SCOPE: &str = "#test#";

/// Walks the inline-module structure of `toks`: calls `f(scope, depth_is_module_level, i)` for
/// every token index, with `scope` the inline modules open at `i` (relative to the file).
fn walk_scopes(toks: &[Tok], mut f: impl FnMut(&[String], bool, usize)) {
    let mut scopes: Vec<(String, usize)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let body_depth = scopes.last().map_or(0, |s| s.1);
        f(&names, depth == body_depth, i);
        match toks[i].text.as_str() {
            "mod" if toks.get(i + 2).is_some_and(|t| t.text == "{") => {
                depth += 1;
                let name = toks[i + 1].text.clone();
                // A `#[cfg(test)]` module is test code: it sits above everything.
                let test = i >= 7 && {
                    let before: Vec<&str> =
                        toks[i - 7..i].iter().map(|t| t.text.as_str()).collect();
                    before == ["#", "[", "cfg", "(", "test", ")", "]"]
                };
                scopes.push((name.clone(), depth));
                names.push(if test { format!("{TEST_SCOPE}{name}") } else { name });
                i += 3;
                continue;
            }
            "{" => depth += 1,
            "}" => {
                if scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                    names.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
}

fn module_tree(root: &str, files: &BTreeMap<String, Vec<Tok>>) -> Tree {
    let mut tree = Tree { file_of: BTreeMap::new(), module_of: BTreeMap::new() };
    let mut queue = vec![(root.to_string(), Vec::<String>::new(), true)];
    while let Some((file, path, is_root)) = queue.pop() {
        if tree.module_of.contains_key(&file) {
            continue;
        }
        tree.file_of.insert(path.clone(), file.clone());
        tree.module_of.insert(file.clone(), path.clone());
        let Some(toks) = files.get(&file) else { continue };
        let base = child_dir(&file, is_root);
        walk_scopes(toks, |scope, _, i| {
            if toks[i].text != "mod" || i > 0 && toks[i - 1].text == "::" {
                return;
            }
            let (Some(name), Some(next)) = (toks.get(i + 1), toks.get(i + 2)) else { return };
            let mut p = path.clone();
            p.extend(scope.iter().map(|s| s.trim_start_matches(TEST_SCOPE).to_string()));
            p.push(name.text.clone());
            if next.text == "{" {
                tree.file_of.insert(p, file.clone());
                return;
            }
            if next.text != ";" {
                return;
            }
            let dir =
                scope.iter().fold(base.clone(), |d, s| join(&d, s.trim_start_matches(TEST_SCOPE)));
            let flat = join(&dir, &format!("{}.rs", name.text));
            let nested = join(&dir, &format!("{}/mod.rs", name.text));
            let child = if files.contains_key(&nested) && !files.contains_key(&flat) {
                nested
            } else {
                flat
            };
            queue.push((child, p, false));
        });
    }
    tree
}

/// A leaf of a `use` tree or a path in code: the absolute module path and the name it binds.
struct Leaf {
    path: ModPath,
    bound: Option<String>,
    glob: bool,
    /// From a `pub use` (any visibility): the module's face, followed but not an edge.
    reexport: bool,
}

/// Parses a path or `use` tree at `toks[i..]` under `prefix`; returns the leaves and the end.
fn use_tree(toks: &[Tok], mut i: usize, mut prefix: ModPath, out: &mut Vec<Leaf>) -> usize {
    loop {
        let Some(t) = toks.get(i) else { return i };
        match t.text.as_str() {
            "{" => {
                i += 1;
                while toks.get(i).is_some_and(|t| t.text != "}") {
                    if toks[i].text == "," {
                        i += 1;
                        continue;
                    }
                    i = use_tree(toks, i, prefix.clone(), out);
                }
                return i + 1;
            }
            "*" => {
                out.push(Leaf { path: prefix, bound: None, glob: true, reexport: false });
                return i + 1;
            }
            "self" if toks.get(i + 1).is_none_or(|t| t.text != "::") => {
                let bound = alias(toks, i + 1).or_else(|| prefix.last().cloned());
                out.push(Leaf { path: prefix, bound, glob: false, reexport: false });
                return skip_alias(toks, i + 1);
            }
            "super" => {
                prefix.pop();
            }
            "self" => {}
            s if s.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                prefix.push(s.to_string())
            }
            _ => {
                if !prefix.is_empty() {
                    out.push(Leaf { path: prefix, bound: None, glob: false, reexport: false });
                }
                return i;
            }
        }
        if toks.get(i + 1).is_some_and(|t| t.text == "::") {
            i += 2;
            continue;
        }
        let bound = alias(toks, i + 1).or_else(|| prefix.last().cloned());
        out.push(Leaf { path: prefix, bound, glob: false, reexport: false });
        return skip_alias(toks, i + 1);
    }
}

fn alias(toks: &[Tok], i: usize) -> Option<String> {
    (toks.get(i)?.text == "as").then(|| toks.get(i + 1).map(|t| t.text.clone()))?
}

fn skip_alias(toks: &[Tok], i: usize) -> usize {
    if toks.get(i).is_some_and(|t| t.text == "as") {
        i + 2
    } else {
        i
    }
}

/// Module-level imports of each module (`name -> path`), for following re-exports.
type Imports = BTreeMap<ModPath, BTreeMap<String, ModPath>>;

/// Every path of `file` that starts at a module of this crate, with the module it is read in.
fn paths_of(file: &str, toks: &[Tok], tree: &Tree, imports: &mut Imports) -> Vec<Leaf> {
    let own = &tree.module_of[file];
    let mut found = Vec::new();
    let mut resume = 0;
    walk_scopes(toks, |scope, module_level, i| {
        if i < resume || toks.get(i + 1).is_none_or(|t| t.text != "::") {
            return;
        }
        if i > 0 && matches!(toks[i - 1].text.as_str(), "::" | ".") {
            return;
        }
        if scope.iter().any(|s| s.starts_with(TEST_SCOPE)) {
            return;
        }
        let mut here = own.clone();
        here.extend(scope.iter().cloned());
        let start: ModPath = match toks[i].text.as_str() {
            "crate" => Vec::new(),
            "super" | "self" => here.clone(),
            name => {
                let mut child = here.clone();
                child.push(name.to_string());
                if !tree.file_of.contains_key(&child) {
                    return;
                }
                here.clone()
            }
        };
        let first = if toks[i].text == "crate" { i + 2 } else { i };
        let mut leaves = Vec::new();
        resume = use_tree(toks, first, start, &mut leaves);
        let is_use = i > 0 && toks[i - 1].text == "use";
        let public = is_use && i > 1 && matches!(toks[i - 2].text.as_str(), "pub" | ")");
        for mut leaf in leaves {
            leaf.reexport = public;
            if is_use && module_level && !leaf.glob {
                if let Some(b) = &leaf.bound {
                    imports.entry(here.clone()).or_default().insert(b.clone(), leaf.path.clone());
                }
            }
            found.push(leaf);
        }
    });
    found
}

/// The file that defines what `path` names, following imports and re-exports.
fn resolve(path: &[String], tree: &Tree, imports: &Imports, hops: usize) -> Option<String> {
    let k = (0..=path.len()).rev().find(|&k| tree.file_of.contains_key(&path[..k]))?;
    let module = &path[..k];
    let here = tree.file_of[module].clone();
    if k == path.len() || hops > 8 {
        return Some(here);
    }
    if let Some(target) = imports.get(module).and_then(|m| m.get(&path[k])) {
        if target.as_slice() != &path[..=k] {
            let mut next = target.clone();
            next.extend(path[k + 1..].iter().cloned());
            if let Some(f) = resolve(&next, tree, imports, hops + 1) {
                return Some(f);
            }
        }
    }
    Some(here)
}

/// The roots of a crate among its `src/` files: `lib.rs`, `main.rs`, `bin/*.rs` and
/// `bin/*/main.rs`.
fn roots(files: &BTreeMap<String, Vec<Tok>>) -> Vec<String> {
    files
        .keys()
        .filter(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            matches!(parts.as_slice(), ["lib.rs"] | ["main.rs"] | ["bin", _])
                || matches!(parts.as_slice(), ["bin", _, "main.rs"])
        })
        .cloned()
        .collect()
}

/// The file-level `use` graph of one crate from its `src/` files (path relative to `src/`
/// -> source). `skip` files are read for the module tree but give no edges (test modules).
pub fn use_graph(sources: &BTreeMap<String, String>, skip: impl Fn(&str) -> bool) -> FileGraph {
    let files: BTreeMap<String, Vec<Tok>> =
        sources.iter().map(|(k, v)| (k.clone(), tokens(v))).collect();
    let mut graph = FileGraph::new();
    for root in roots(&files) {
        let tree = module_tree(&root, &files);
        let mut imports = Imports::new();
        let mut leaves = Vec::new();
        for file in tree.module_of.keys() {
            if let Some(toks) = files.get(file) {
                leaves.push((file.clone(), paths_of(file, toks, &tree, &mut imports)));
            }
        }
        for (file, found) in leaves {
            if skip(&file) {
                continue;
            }
            for leaf in found.into_iter().filter(|l| !l.reexport) {
                let Some(to) = resolve(&leaf.path, &tree, &imports, 0) else { continue };
                if to != file {
                    let name = leaf.path.last().cloned().unwrap_or_default();
                    graph.entry(file.clone()).or_default().entry(to).or_default().insert(name);
                }
            }
        }
    }
    graph
}

/// The strongly connected components of more than one file, each sorted, in sorted order.
pub fn cycles(graph: &FileGraph) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> =
        graph.keys().chain(graph.values().flat_map(|m| m.keys())).collect();
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for next in graph.get(&n).into_iter().flat_map(|m| m.keys()) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for n in &nodes {
        let mut comp: Vec<String> = reaches[n]
            .iter()
            .filter(|m| reaches.get(m).is_some_and(|r| r.contains(*n)))
            .cloned()
            .collect();
        if comp.len() > 1 {
            comp.sort();
            out.insert(comp);
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> FileGraph {
        let m = files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        use_graph(&m, |_| false)
    }

    fn edges(g: &FileGraph) -> Vec<String> {
        g.iter().flat_map(|(a, m)| m.keys().map(move |b| format!("{a} -> {b}"))).collect()
    }

    #[test]
    fn a_loop_of_two_files_is_a_cycle() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            ("b.rs", "pub struct B;\nfn f() { let _ = crate::a::A; }\n"),
        ]);
        assert_eq!(edges(&g), ["a.rs -> b.rs", "b.rs -> a.rs"]);
        assert_eq!(cycles(&g), [vec!["a.rs".to_string(), "b.rs".to_string()]]);
    }

    #[test]
    fn re_exports_are_followed_to_the_defining_file() {
        // lib.rs re-exports a::A (its face: no edge); b's `crate::A` is an edge to a.rs.
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("a.rs", "use crate::b::{self, B as Bee};\npub struct A;\n"),
            ("b.rs", "pub struct B;\nimpl crate::A {}\n"),
        ]);
        assert_eq!(edges(&g), ["a.rs -> b.rs", "b.rs -> a.rs"]);
        assert_eq!(cycles(&g).len(), 1);
    }

    #[test]
    fn children_reaching_up_through_super_and_nested_modules() {
        let g = graph(&[
            ("lib.rs", "mod s;\n"),
            ("s/mod.rs", "mod t;\nmod u;\npub use t::T;\npub struct S;\n"),
            (
                "s/t.rs",
                "use super::u::U;\npub struct T;\n#[cfg(test)]\nmod tests { use super::*; }\n",
            ),
            ("s/u.rs", "use super::{S, T};\npub struct U;\n"),
        ]);
        // u's `super::T` resolves through s/mod.rs's re-export to t.rs.
        assert_eq!(edges(&g), ["s/t.rs -> s/u.rs", "s/u.rs -> s/mod.rs", "s/u.rs -> s/t.rs"]);
        assert_eq!(cycles(&g), [vec!["s/t.rs".to_string(), "s/u.rs".to_string()]]);
    }

    #[test]
    fn comments_strings_and_method_paths_are_not_edges() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "// crate::b::B\nfn f() { let s = \"crate::b::B\"; x.b::<u8>(); }\n"),
            ("b.rs", "pub struct B;\n"),
        ]);
        assert!(g.is_empty(), "{g:?}");
    }
}
