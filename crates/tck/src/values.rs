//! The TCK's value syntax (`1`, `1.0`, `'s'`, `[1, 2]`, `{a: 1}`, `(:L {p: 1})`, `[:T {p: 1}]`,
//! `<(:A)-[:T]->(:B)>`) and the comparison rules: every value, expected or actual, is turned into
//! a [`TValue`] and then into a canonical string; two values are equal when their canonical
//! strings are. Canonical strings keep integers and floats apart (`1` vs `1.0`), print floats
//! exactly (shortest round-trip digits; `-0.0` as `0.0`, `NaN` equal to itself), sort map keys
//! and node labels, and sort list elements
//! only when asked to ("ignoring element order for lists", applied to nested lists too).

use std::collections::BTreeMap;

use arbor_model::format::{format_float, quote_string};
use arbor_model::{NodeData, PathData, PropertyMap, RelData, Value};

/// A value as the TCK sees it. Entities carry no identity: the TCK compares them by labels/type
/// and properties only.
#[derive(Clone, Debug, PartialEq)]
pub enum TValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<TValue>),
    Map(BTreeMap<String, TValue>),
    Node(TNode),
    Rel(TRel),
    /// A start node and `(forward, relationship, node)` hops; `forward` is `-[]->`.
    Path(TNode, Vec<(bool, TRel, TNode)>),
    /// An actual value with no TCK syntax (a point, an unmaterialized entity...): printed as is,
    /// so it never equals a parsed value.
    Opaque(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TNode {
    pub labels: Vec<String>,
    pub props: BTreeMap<String, TValue>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TRel {
    pub rel_type: String,
    pub props: BTreeMap<String, TValue>,
}

/// Parses one table cell (or parameter) in the TCK value syntax.
pub fn parse_value(text: &str) -> Result<TValue, String> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected trailing text `{}` in value `{text}`", &text[p.i..]));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, lit: &str) -> bool {
        self.ws();
        if self.src[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{}` at offset {} in `{}`", c as char, self.i, self.src))
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at offset {} in `{}`", self.i, self.src))
    }

    fn value(&mut self) -> Result<TValue, String> {
        match self.peek() {
            None => self.fail("expected a value"),
            Some(b'\'') => Ok(TValue::Str(self.string()?)),
            Some(b'[') => {
                // A list, or a relationship `[:T ...]`.
                let save = self.i;
                self.i += 1;
                if self.peek() == Some(b':') {
                    self.i = save;
                    return Ok(TValue::Rel(self.rel()?));
                }
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(TValue::List(items))
            }
            Some(b'{') => Ok(TValue::Map(self.map()?)),
            Some(b'(') => Ok(TValue::Node(self.node()?)),
            Some(b'<') => self.path(),
            Some(_) => self.scalar(),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'\'')?;
        let mut out = String::new();
        let rest = &self.src[self.i..];
        let mut chars = rest.char_indices();
        while let Some((off, c)) = chars.next() {
            match c {
                '\'' => {
                    self.i += off + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, '\'')) => out.push('\''),
                    Some((_, '\\')) => out.push('\\'),
                    Some((_, '"')) => out.push('"'),
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, other)) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => break,
                },
                c => out.push(c),
            }
        }
        self.fail("unterminated string")
    }

    /// An identifier (key, label, type): bare or backticked.
    fn name(&mut self) -> Result<String, String> {
        self.ws();
        if self.eat(b'`') {
            let start = self.i;
            let Some(len) = self.src[start..].find('`') else {
                return self.fail("unterminated backticked name");
            };
            self.i = start + len + 1;
            return Ok(self.src[start..start + len].to_string());
        }
        let start = self.i;
        let len = self.src[start..]
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
            .map_or(self.src.len() - start, |(o, _)| o);
        if len == 0 {
            return self.fail("expected a name");
        }
        self.i = start + len;
        Ok(self.src[start..start + len].to_string())
    }

    fn map(&mut self) -> Result<BTreeMap<String, TValue>, String> {
        self.expect(b'{')?;
        let mut m = BTreeMap::new();
        if self.eat(b'}') {
            return Ok(m);
        }
        loop {
            let k = self.name()?;
            self.expect(b':')?;
            let v = self.value()?;
            m.insert(k, v);
            if self.eat(b'}') {
                return Ok(m);
            }
            self.expect(b',')?;
        }
    }

    fn node(&mut self) -> Result<TNode, String> {
        self.expect(b'(')?;
        let mut labels = Vec::new();
        while self.eat(b':') {
            labels.push(self.name()?);
        }
        let props = if self.peek() == Some(b'{') { self.map()? } else { BTreeMap::new() };
        self.expect(b')')?;
        Ok(TNode { labels, props })
    }

    fn rel(&mut self) -> Result<TRel, String> {
        self.expect(b'[')?;
        self.expect(b':')?;
        let rel_type = self.name()?;
        let props = if self.peek() == Some(b'{') { self.map()? } else { BTreeMap::new() };
        self.expect(b']')?;
        Ok(TRel { rel_type, props })
    }

    fn path(&mut self) -> Result<TValue, String> {
        self.expect(b'<')?;
        let start = self.node()?;
        let mut hops = Vec::new();
        loop {
            if self.eat(b'>') {
                return Ok(TValue::Path(start, hops));
            }
            let backward = self.eat_str("<-");
            if !backward {
                self.expect(b'-')?;
            }
            let rel = self.rel()?;
            let forward = if self.eat_str("->") {
                if backward {
                    return self.fail("relationship pointing both ways");
                }
                true
            } else {
                self.expect(b'-')?;
                if !backward {
                    return self.fail("undirected relationship in a path");
                }
                false
            };
            hops.push((forward, rel, self.node()?));
        }
    }

    fn scalar(&mut self) -> Result<TValue, String> {
        self.ws();
        let start = self.i;
        let len = self.src[start..]
            .char_indices()
            .find(|(_, c)| matches!(c, ',' | ']' | '}' | ')' | ' ' | '\t' | '\n'))
            .map_or(self.src.len() - start, |(o, _)| o);
        let tok = &self.src[start..start + len];
        self.i = start + len;
        match tok {
            "null" => return Ok(TValue::Null),
            "true" => return Ok(TValue::Bool(true)),
            "false" => return Ok(TValue::Bool(false)),
            "NaN" => return Ok(TValue::Float(f64::NAN)),
            "Inf" | "Infinity" | "+Infinity" => return Ok(TValue::Float(f64::INFINITY)),
            "-Inf" | "-Infinity" => return Ok(TValue::Float(f64::NEG_INFINITY)),
            _ => {}
        }
        let digits = tok.strip_prefix(['-', '+']).unwrap_or(tok);
        let is_int = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if is_int {
            return tok
                .parse::<i64>()
                .map(TValue::Int)
                .or_else(|_| self.fail(&format!("integer `{tok}` out of range")));
        }
        if let Some(hex) = digits.strip_prefix("0x") {
            let neg = tok.starts_with('-');
            if let Ok(v) = i64::from_str_radix(hex, 16) {
                return Ok(TValue::Int(if neg { -v } else { v }));
            }
        }
        let numeric = !digits.is_empty()
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
            && digits.bytes().any(|b| b.is_ascii_digit());
        if numeric {
            if let Ok(f) = tok.parse::<f64>() {
                return Ok(TValue::Float(f));
            }
        }
        self.i = start;
        self.fail(&format!("unrecognised value `{tok}`"))
    }
}

fn props_of(m: &PropertyMap) -> BTreeMap<String, TValue> {
    m.iter().map(|(k, v)| (k.to_string(), from_actual(v))).collect()
}

fn node_of(n: &NodeData) -> TNode {
    TNode { labels: n.labels.clone(), props: props_of(&n.properties) }
}

fn rel_of(r: &RelData) -> TRel {
    TRel { rel_type: r.rel_type.clone(), props: props_of(&r.properties) }
}

fn path_of(p: &PathData) -> TValue {
    let Some(first) = p.nodes.first() else {
        return TValue::Opaque("<empty path>".into());
    };
    let mut hops = Vec::new();
    for (i, r) in p.rels.iter().enumerate() {
        let (Some(prev), Some(next)) = (p.nodes.get(i), p.nodes.get(i + 1)) else {
            return TValue::Opaque(format!(
                "<malformed path {}>",
                arbor_model::to_cypher_literal(&Value::PathData(std::sync::Arc::new(p.clone())),)
            ));
        };
        // Forward when the relationship starts at the previous node (self-loops: forward).
        let forward = r.start == prev.id;
        hops.push((forward, rel_of(r), node_of(next)));
    }
    TValue::Path(node_of(first), hops)
}

/// Converts a value returned by the engine. Temporal values become their `toString()` text, as
/// the TCK writes them as strings.
pub fn from_actual(v: &Value) -> TValue {
    match v {
        Value::Null => TValue::Null,
        Value::Bool(b) => TValue::Bool(*b),
        Value::Int(i) => TValue::Int(*i),
        Value::Float(f) => TValue::Float(*f),
        Value::String(s) => TValue::Str(s.to_string()),
        Value::List(l) => TValue::List(l.iter().map(from_actual).collect()),
        Value::Map(m) => TValue::Map(props_of(m)),
        Value::NodeData(n) => TValue::Node(node_of(n)),
        Value::RelData(r) => TValue::Rel(rel_of(r)),
        Value::PathData(p) => path_of(p),
        Value::Date(_)
        | Value::Time(_)
        | Value::LocalTime(_)
        | Value::DateTime(_)
        | Value::LocalDateTime(_)
        | Value::Duration(_) => match arbor_model::to_string_value(v) {
            Some(s) => TValue::Str(s),
            None => TValue::Opaque(arbor_model::to_cypher_literal(v)),
        },
        other => TValue::Opaque(format!(
            "<{}: {}>",
            other.type_name(),
            arbor_model::to_cypher_literal(other)
        )),
    }
}

/// Converts a parsed parameter value into an engine value. Entities and paths cannot be
/// parameters in the TCK.
pub fn to_param(v: &TValue) -> Result<Value, String> {
    Ok(match v {
        TValue::Null => Value::Null,
        TValue::Bool(b) => Value::Bool(*b),
        TValue::Int(i) => Value::Int(*i),
        TValue::Float(f) => Value::Float(*f),
        TValue::Str(s) => Value::str(s),
        TValue::List(l) => Value::List(l.iter().map(to_param).collect::<Result<_, _>>()?),
        TValue::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), to_param(v)?)))
                .collect::<Result<PropertyMap, String>>()?,
        ),
        other => return Err(format!("unsupported parameter value {}", canonical(other, false))),
    })
}

fn write_props(out: &mut String, props: &BTreeMap<String, TValue>, sort_lists: bool) {
    out.push('{');
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push_str(": ");
        out.push_str(&canonical(v, sort_lists));
    }
    out.push('}');
}

fn write_node(out: &mut String, n: &TNode, sort_lists: bool) {
    out.push('(');
    let mut labels = n.labels.clone();
    labels.sort();
    for l in &labels {
        out.push(':');
        out.push_str(l);
    }
    if !n.props.is_empty() {
        if !labels.is_empty() {
            out.push(' ');
        }
        write_props(out, &n.props, sort_lists);
    }
    out.push(')');
}

fn write_rel(out: &mut String, r: &TRel, sort_lists: bool) {
    out.push_str("[:");
    out.push_str(&r.rel_type);
    if !r.props.is_empty() {
        out.push(' ');
        write_props(out, &r.props, sort_lists);
    }
    out.push(']');
}

/// The canonical text of a value; equal values have equal text. With `sort_lists`, every list
/// (at any depth) is compared as a multiset.
pub fn canonical(v: &TValue, sort_lists: bool) -> String {
    let mut out = String::new();
    match v {
        TValue::Null => out.push_str("null"),
        TValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        TValue::Int(i) => out.push_str(&i.to_string()),
        // Shortest round-trip digits, so this is exact; always has `.`, `E` or a letter, so it
        // never collides with an integer.
        // Negative zero equals zero, as IEEE `==` (and the TCK's own `RETURN -0.0` → `0.0`) says.
        TValue::Float(f) if *f == 0.0 => out.push_str("0.0"),
        TValue::Float(f) => out.push_str(&format_float(*f)),
        TValue::Str(s) => out.push_str(&quote_string(s)),
        TValue::List(items) => {
            let mut parts: Vec<String> = items.iter().map(|x| canonical(x, sort_lists)).collect();
            if sort_lists {
                parts.sort();
            }
            out.push('[');
            out.push_str(&parts.join(", "));
            out.push(']');
        }
        TValue::Map(m) => write_props(&mut out, m, sort_lists),
        TValue::Node(n) => write_node(&mut out, n, sort_lists),
        TValue::Rel(r) => write_rel(&mut out, r, sort_lists),
        TValue::Path(start, hops) => {
            out.push('<');
            write_node(&mut out, start, sort_lists);
            for (forward, r, n) in hops {
                out.push_str(if *forward { "-" } else { "<-" });
                write_rel(&mut out, r, sort_lists);
                out.push_str(if *forward { "->" } else { "-" });
                write_node(&mut out, n, sort_lists);
            }
            out.push('>');
        }
        TValue::Opaque(s) => out.push_str(s),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::{NodeId, RelId};
    use std::sync::Arc;

    fn c(s: &str) -> String {
        canonical(&parse_value(s).unwrap(), false)
    }

    #[test]
    fn scalars() {
        assert_eq!(parse_value("1").unwrap(), TValue::Int(1));
        assert_eq!(parse_value("-9223372036854775808").unwrap(), TValue::Int(i64::MIN));
        assert_eq!(parse_value("1.0").unwrap(), TValue::Float(1.0));
        assert_eq!(parse_value(".5").unwrap(), TValue::Float(0.5));
        assert_eq!(parse_value("1e-3").unwrap(), TValue::Float(0.001));
        assert_eq!(parse_value("-1.5E10").unwrap(), TValue::Float(-1.5e10));
        assert_eq!(c("NaN"), "NaN");
        assert_eq!(c("-Infinity"), "-Infinity");
        assert_eq!(parse_value("'it\\'s'").unwrap(), TValue::Str("it's".into()));
        assert_eq!(parse_value(" null ").unwrap(), TValue::Null);
        assert!(parse_value("nope").is_err());
        assert!(parse_value("'open").is_err());
        assert!(parse_value("1 2").is_err());
        // Integers and floats stay apart.
        assert_ne!(c("1"), c("1.0"));
        assert_eq!(c("1.0"), c("1.00"));
        assert_eq!(c("-0.0"), c("0.0"));
    }

    #[test]
    fn structures() {
        assert_eq!(c("[1, [2, 'a'], {}]"), "[1, [2, 'a'], {}]");
        assert_eq!(c("{b: 1, a: [null]}"), "{a: [null], b: 1}");
        assert_eq!(c("(:B:A {p: 1})"), c("(:A:B {p: 1})"));
        assert_eq!(c("()"), "()");
        assert_eq!(c("[:T {p: 'x'}]"), "[:T {p: 'x'}]");
        assert_eq!(c("<(:A)-[:T]->(:B)<-[:U {k: 2}]-()>"), "<(:A)-[:T]->(:B)<-[:U {k: 2}]-()>");
        assert_ne!(c("<(:A)-[:T]->(:B)>"), c("<(:A)<-[:T]-(:B)>"));
        assert_eq!(c("(:`a b` {`k k`: 1})"), "(:a b {k k: 1})");
        assert!(parse_value("<(:A)-[:T]-(:B)>").is_err());
        // Ignoring list order sorts nested lists too.
        let v = parse_value("[[2, 1], [0]]").unwrap();
        assert_eq!(canonical(&v, true), "[[0], [1, 2]]");
        assert_eq!(canonical(&v, false), "[[2, 1], [0]]");
    }

    #[test]
    fn actual_values() {
        let mut props = PropertyMap::new();
        props.insert("p".into(), Value::Int(1));
        let a = NodeData { id: NodeId(1), labels: vec!["A".into()], properties: props };
        let b = NodeData { id: NodeId(2), labels: vec![], properties: PropertyMap::new() };
        let r = RelData {
            id: RelId(7),
            start: NodeId(2),
            end: NodeId(1),
            rel_type: "T".into(),
            properties: PropertyMap::new(),
        };
        let path = Value::PathData(Arc::new(PathData { nodes: vec![a.clone(), b], rels: vec![r] }));
        assert_eq!(canonical(&from_actual(&path), false), c("<(:A {p: 1})<-[:T]-()>"));
        assert_eq!(canonical(&from_actual(&Value::NodeData(Arc::new(a))), false), c("(:A {p: 1})"));
        assert_eq!(canonical(&from_actual(&Value::Float(2.0)), false), c("2.0"));
        // An unmaterialized reference never matches a parsed node.
        assert_ne!(canonical(&from_actual(&Value::Node(NodeId(1))), false), c("()"));
        let param = to_param(&parse_value("{a: [1, 'x']}").unwrap()).unwrap();
        assert_eq!(arbor_model::to_cypher_literal(&param), "{a: [1, 'x']}");
        assert!(to_param(&parse_value("(:A)").unwrap()).is_err());
    }
}
