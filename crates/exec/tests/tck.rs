//! A compact openCypher TCK runner against `MemGraph` (the executor alone, no storage), used to
//! measure the planner/executor's coverage. Run with
//! `cargo test -p arbor-exec --test tck -- --ignored --nocapture` (set `TCK_FILTER=substring` to
//! select feature files, `TCK_VERBOSE=1` to print failures). It checks result rows and errors;
//! side-effect counts are not checked here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_exec::testing::MemGraph;
use arbor_exec::{Execution, PreparedQuery};
use arbor_model::{
    to_cypher_literal, NodeData, NodeId, PathData, PropertyMap, RelData, RelId, Value,
};

fn tck_dir() -> Option<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    for cand in [base.join("../../../shared/tck"), PathBuf::from("/work/shared/tck")] {
        if cand.join("features").is_dir() {
            return Some(cand);
        }
    }
    None
}

// ------------------------------------------------------------------ TCK value syntax

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] as char).is_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> u8 {
        self.ws();
        self.s.get(self.i).copied().unwrap_or(0)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> String {
        self.ws();
        if self.eat(b'`') {
            let st = self.i;
            while self.i < self.s.len() && self.s[self.i] != b'`' {
                self.i += 1;
            }
            let r = String::from_utf8_lossy(&self.s[st..self.i]).to_string();
            self.i += 1;
            return r;
        }
        let st = self.i;
        while self.i < self.s.len()
            && ((self.s[self.i] as char).is_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).to_string()
    }
    fn props(&mut self) -> PropertyMap {
        let mut m = PropertyMap::new();
        if self.eat(b'{') {
            if self.eat(b'}') {
                return m;
            }
            loop {
                let k = self.ident();
                self.eat(b':');
                let v = self.value();
                m.insert(k, v);
                if !self.eat(b',') {
                    break;
                }
            }
            self.eat(b'}');
        }
        m
    }
    fn node(&mut self, id: u64) -> NodeData {
        self.eat(b'(');
        let mut labels = Vec::new();
        while self.eat(b':') {
            labels.push(self.ident());
        }
        labels.sort();
        let properties = self.props();
        self.eat(b')');
        NodeData { id: NodeId(id), labels, properties }
    }
    fn rel(&mut self) -> RelData {
        self.eat(b'[');
        let mut rel_type = String::new();
        if self.eat(b':') {
            rel_type = self.ident();
        }
        let properties = self.props();
        self.eat(b']');
        RelData { id: RelId(0), start: NodeId(0), end: NodeId(0), rel_type, properties }
    }
    fn value(&mut self) -> Value {
        match self.peek() {
            b'[' => {
                // A list, or a relationship `[:T ...]`.
                let save = self.i;
                self.i += 1;
                if self.peek() == b':' {
                    self.i = save;
                    return Value::RelData(Arc::new(self.rel()));
                }
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Value::List(items);
                }
                loop {
                    items.push(self.value());
                    if !self.eat(b',') {
                        break;
                    }
                }
                self.eat(b']');
                Value::List(items)
            }
            b'{' => Value::Map(self.props()),
            b'(' => Value::NodeData(Arc::new(self.node(0))),
            b'<' => {
                self.i += 1;
                let mut nodes = vec![self.node(1)];
                let mut rels = Vec::new();
                loop {
                    let back = self.eat(b'<');
                    if !self.eat(b'-') {
                        break;
                    }
                    let mut r = self.rel();
                    self.eat(b'-');
                    let fwd = self.eat(b'>');
                    let _ = back;
                    let id = nodes.len() as u64 + 1;
                    let n = self.node(id);
                    if fwd {
                        r.start = NodeId(id - 1);
                        r.end = NodeId(id);
                    } else {
                        r.start = NodeId(id);
                        r.end = NodeId(id - 1);
                    }
                    rels.push(r);
                    nodes.push(n);
                }
                self.eat(b'>');
                Value::PathData(Arc::new(PathData { nodes, rels }))
            }
            b'\'' => {
                self.i += 1;
                let mut out = Vec::new();
                while self.i < self.s.len() && self.s[self.i] != b'\'' {
                    if self.s[self.i] == b'\\' && self.i + 1 < self.s.len() {
                        self.i += 1;
                    }
                    out.push(self.s[self.i]);
                    self.i += 1;
                }
                self.i += 1;
                Value::from(String::from_utf8_lossy(&out).to_string())
            }
            _ => {
                let st = self.i;
                while self.i < self.s.len() && !b",]}) ".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let t = String::from_utf8_lossy(&self.s[st..self.i]).to_string();
                match t.as_str() {
                    "null" => Value::Null,
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "NaN" => Value::Float(f64::NAN),
                    "Infinity" | "inf" => Value::Float(f64::INFINITY),
                    "-Infinity" | "-inf" => Value::Float(f64::NEG_INFINITY),
                    _ => {
                        if let Ok(i) = t.parse::<i64>() {
                            Value::Int(i)
                        } else if let Ok(f) = t.parse::<f64>() {
                            Value::Float(f)
                        } else {
                            Value::from(format!("<unparsed {t}>"))
                        }
                    }
                }
            }
        }
    }
}

fn parse_value(s: &str) -> Value {
    P { s: s.as_bytes(), i: 0 }.value()
}

/// Canonical text; with `unordered`, lists are sorted (recursively).
fn canon(v: &Value, unordered: bool) -> String {
    match v {
        Value::List(items) if unordered => {
            let mut parts: Vec<String> = items.iter().map(|x| canon(x, true)).collect();
            parts.sort();
            format!("[{}]", parts.join(", "))
        }
        Value::PathData(p) => {
            // Renumber ids so only the shape matters.
            let mut nodes = Vec::new();
            let mut rels = Vec::new();
            for (i, n) in p.nodes.iter().enumerate() {
                let mut n = n.clone();
                n.id = NodeId(i as u64 + 1);
                nodes.push(n);
            }
            for (i, r) in p.rels.iter().enumerate() {
                let mut r = r.clone();
                let fwd = p.nodes.get(i).map(|n| n.id) == Some(r.start)
                    && (p.nodes.get(i + 1).map(|n| n.id) == Some(r.end) || r.start != r.end);
                let (a, b) = (NodeId(i as u64 + 1), NodeId(i as u64 + 2));
                if fwd {
                    r.start = a;
                    r.end = b;
                } else {
                    r.start = b;
                    r.end = a;
                }
                r.id = RelId(0);
                rels.push(r);
            }
            to_cypher_literal(&Value::PathData(Arc::new(PathData { nodes, rels })))
        }
        _ => to_cypher_literal(v),
    }
}

// ------------------------------------------------------------------ feature files

#[derive(Default, Debug)]
struct Scenario {
    name: String,
    setup: Vec<String>,
    graph: Option<String>,
    params: Vec<(String, String)>,
    query: String,
    expect_rows: Option<(Vec<String>, Vec<Vec<String>>, bool, bool)>,
    expect_error: Option<String>,
    skip: bool,
}

fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('|') => {
                    cur.push('|');
                    chars.next();
                }
                Some('\\') => {
                    cur.push('\\');
                    chars.next();
                }
                Some('n') => {
                    cur.push('\n');
                    chars.next();
                }
                _ => cur.push(c),
            }
        } else if c == '|' {
            cells.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

fn parse_feature(text: &str) -> Vec<Scenario> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut cur: Option<Scenario> = None;
    let mut outline_examples: Vec<Vec<String>> = Vec::new();
    let mut outline_header: Vec<String> = Vec::new();
    let mut is_outline = false;
    let mut last_step = String::new();
    let mut background: Vec<String> = Vec::new();
    let flush = |cur: &mut Option<Scenario>,
                 out: &mut Vec<Scenario>,
                 is_outline: bool,
                 header: &[String],
                 examples: &[Vec<String>]| {
        if let Some(s) = cur.take() {
            if is_outline {
                for ex in examples {
                    let sub = |t: &str| {
                        let mut t = t.to_string();
                        for (h, v) in header.iter().zip(ex) {
                            t = t.replace(&format!("<{h}>"), v);
                        }
                        t
                    };
                    out.push(Scenario {
                        name: format!("{} {:?}", s.name, ex.last()),
                        setup: s.setup.iter().map(|x| sub(x)).collect(),
                        graph: s.graph.clone(),
                        params: s.params.iter().map(|(a, b)| (sub(a), sub(b))).collect(),
                        query: sub(&s.query),
                        expect_rows: s.expect_rows.as_ref().map(|(h, rows, o, u)| {
                            (
                                h.iter().map(|x| sub(x)).collect(),
                                rows.iter().map(|r| r.iter().map(|x| sub(x)).collect()).collect(),
                                *o,
                                *u,
                            )
                        }),
                        expect_error: s.expect_error.clone(),
                        skip: s.skip,
                    });
                }
            } else {
                out.push(s);
            }
        }
    };
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with("Background") {
            cur = Some(Scenario { name: "background".into(), ..Default::default() });
            i += 1;
            continue;
        }
        if l.starts_with("Scenario") {
            if cur.as_ref().is_some_and(|c| c.name == "background") {
                background = cur.take().map(|b| b.setup).unwrap_or_default();
            }
            flush(&mut cur, &mut out, is_outline, &outline_header, &outline_examples);
            is_outline = l.starts_with("Scenario Outline");
            outline_examples.clear();
            outline_header.clear();
            cur = Some(Scenario {
                name: l.to_string(),
                setup: background.clone(),
                ..Default::default()
            });
            i += 1;
            continue;
        }
        if l.starts_with("Examples") {
            i += 1;
            let mut first = true;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                let cells = split_row(lines[i]);
                if first {
                    if outline_header.is_empty() {
                        outline_header = cells;
                    }
                    first = false;
                } else {
                    outline_examples.push(cells);
                }
                i += 1;
            }
            continue;
        }
        let Some(s) = cur.as_mut() else {
            i += 1;
            continue;
        };
        if l.starts_with("\"\"\"") {
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].trim().starts_with("\"\"\"") {
                body.push(lines[i]);
                i += 1;
            }
            let text = body.join("\n");
            if last_step.contains("having executed") {
                s.setup.push(text);
            } else if last_step.contains("executing query") {
                s.query = text;
            } else if last_step.contains("control query") {
                s.skip = true;
            } else if last_step.contains("should be raised") {
            }
            i += 1;
            continue;
        }
        if l.starts_with('|') {
            let mut rows = Vec::new();
            while i < lines.len() && lines[i].trim().starts_with('|') {
                rows.push(split_row(lines[i]));
                i += 1;
            }
            if last_step.contains("parameters are") {
                for r in rows {
                    if r.len() >= 2 {
                        s.params.push((r[0].clone(), r[1].clone()));
                    }
                }
            } else if last_step.contains("result should be") {
                let header = rows.first().cloned().unwrap_or_default();
                let body = rows.into_iter().skip(1).collect();
                let ordered = last_step.contains("in order");
                let unordered_lists = last_step.contains("ignoring element order");
                s.expect_rows = Some((header, body, ordered, unordered_lists));
            } else if last_step.contains("side effects") {
                // Not checked here.
            } else if last_step.contains("procedure") {
                s.skip = true;
            }
            continue;
        }
        for kw in ["Given", "And", "When", "Then", "But"] {
            if let Some(rest) = l.strip_prefix(kw) {
                last_step = rest.trim().to_string();
                if last_step.starts_with("the ") && last_step.ends_with(" graph") && kw == "Given" {
                    s.graph = Some(last_step[4..last_step.len() - 6].to_string());
                }
                if last_step.contains("result should be empty") {
                    s.expect_rows = Some((Vec::new(), Vec::new(), false, false));
                }
                if last_step.contains("should be raised") {
                    s.expect_error = Some(last_step.clone());
                }
                if last_step.contains("there exists a procedure") {
                    s.skip = true;
                }
            }
        }
        i += 1;
    }
    flush(&mut cur, &mut out, is_outline, &outline_header, &outline_examples);
    out
}

fn run(
    g: &mut MemGraph,
    q: &str,
    params: &PropertyMap,
) -> Result<(Vec<String>, Vec<Vec<Value>>), String> {
    let stmt = arbor_cypher_syntax::parse(q).map_err(|e| e.to_string())?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q).map_err(|e| e.to_string())?);
    let mut ex = Execution::start(pq.clone(), params.clone()).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    while let Some(r) = ex.next(g).map_err(|e| e.to_string())? {
        rows.push(r);
    }
    g.commit();
    Ok((pq.columns().to_vec(), rows))
}

fn run_scenario(s: &Scenario, tck: &Path) -> Result<(), String> {
    let mut g = MemGraph::new();
    if let Some(name) = &s.graph {
        let path = tck.join("graphs").join(name).join(format!("{name}.cypher"));
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        for stmt in text.split(';') {
            if !stmt.trim().is_empty() {
                run(&mut g, stmt, &PropertyMap::new()).map_err(|e| format!("graph setup: {e}"))?;
            }
        }
    }
    for q in &s.setup {
        run(&mut g, q, &PropertyMap::new()).map_err(|e| format!("setup failed: {e}"))?;
    }
    let params: PropertyMap = s.params.iter().map(|(k, v)| (k.clone(), parse_value(v))).collect();
    let r = run(&mut g, &s.query, &params);
    if let Some(err) = &s.expect_error {
        return match r {
            Err(_) => Ok(()),
            Ok((_, rows)) => Err(format!("expected error `{err}`, got {} rows", rows.len())),
        };
    }
    let (cols, rows) = r?;
    let Some((header, exp, ordered, unordered)) = &s.expect_rows else { return Ok(()) };
    if !header.is_empty() && *header != cols {
        return Err(format!("columns {cols:?}, expected {header:?}"));
    }
    let mut got: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(|v| canon(v, *unordered)).collect::<Vec<_>>().join(" | "))
        .collect();
    let mut want: Vec<String> = exp
        .iter()
        .map(|r| {
            r.iter().map(|c| canon(&parse_value(c), *unordered)).collect::<Vec<_>>().join(" | ")
        })
        .collect();
    if !ordered {
        got.sort();
        want.sort();
    }
    if got != want {
        return Err(format!("rows\n   got:  {got:?}\n   want: {want:?}"));
    }
    Ok(())
}

fn features(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            features(&p, out);
        } else if p.extension().is_some_and(|e| e == "feature") {
            out.push(p);
        }
    }
}

#[test]
#[ignore]
fn tck() {
    let Some(tck) = tck_dir() else {
        eprintln!("TCK not found; skipping");
        return;
    };
    let filter = std::env::var("TCK_FILTER").unwrap_or_default();
    let verbose = std::env::var("TCK_VERBOSE").is_ok();
    let mut files = Vec::new();
    features(&tck.join("features"), &mut files);
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    for f in files {
        let name = f.strip_prefix(&tck).unwrap_or(&f).display().to_string();
        if !name.contains(&filter) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let (mut fp, mut ff) = (0, 0);
        for s in parse_feature(&text) {
            if s.skip {
                skip += 1;
                continue;
            }
            let r = std::panic::catch_unwind(|| run_scenario(&s, &tck))
                .unwrap_or_else(|_| Err("PANIC".to_string()));
            match r {
                Ok(()) => fp += 1,
                Err(e) => {
                    ff += 1;
                    if verbose {
                        println!(
                            "FAIL {name} {}\n  query: {}\n  {e}",
                            s.name,
                            s.query.replace('\n', " ")
                        );
                    }
                }
            }
        }
        println!("{name}: {fp}/{}", fp + ff);
        pass += fp;
        fail += ff;
    }
    println!("TCK: {pass} passed, {fail} failed, {skip} skipped");
}
