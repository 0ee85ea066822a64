//! EXPLAIN-style text of an operator tree, one operator a line, inputs indented below it:
//! the operator's name and the details that tell plans apart (slots as `s<n>`, labels, types,
//! hop bounds, aggregate names). Predicates and other expressions are left out, so a plan's
//! text stays short and reviewable; rule tests compare this text before and after a rewrite.

use std::fmt::Write;

use arbor_cypher_syntax::ast::Direction;

use crate::ops::Op;

impl Op {
    /// The tree as text, this operator first, each input two spaces further in.
    pub fn render(&self) -> String {
        let mut out = String::new();
        render_into(self, 0, &mut out);
        out
    }
}

fn render_into(op: &Op, depth: usize, out: &mut String) {
    let details = details(op);
    let sep = if details.is_empty() { "" } else { " " };
    let _ = writeln!(out, "{:width$}{}{sep}{details}", "", op.name(), width = depth * 2);
    for child in op.children() {
        render_into(child, depth + 1, out);
    }
}

fn slots(ss: &[usize]) -> String {
    ss.iter().map(|s| format!("s{s}")).collect::<Vec<_>>().join(",")
}

fn arrow(from: usize, to: usize, dir: Direction, types: &[crate::ops::Name]) -> String {
    let types = types.iter().map(|t| format!(":{t}")).collect::<Vec<_>>().join("|");
    let (l, r) = match dir {
        Direction::Outgoing => ("-", "->"),
        Direction::Incoming => ("<-", "-"),
        Direction::Both => ("-", "-"),
    };
    format!("(s{from}){l}[{types}]{r}(s{to})")
}

fn hops(min: u64, max: Option<u64>) -> String {
    format!("*{min}..{}", max.map(|m| m.to_string()).unwrap_or_default())
}

fn opt(n: &Option<crate::ops::Name>) -> String {
    n.as_ref().map(|l| format!(":{l}")).unwrap_or_default()
}

fn details(op: &Op) -> String {
    match op {
        Op::NodeScan { slot, label, .. } => format!("s{slot}{}", opt(label)),
        Op::NodeIndexSeek { slot, label, key, .. }
        | Op::NodeIndexRangeSeek { slot, label, key, .. } => format!("s{slot}:{label}({key})"),
        Op::RelIndexSeek { rel, start, end, ty, keys, .. } => {
            let keys = keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
            format!("(s{start})-[s{rel}:{ty}({keys})]-(s{end})")
        }
        Op::NodeByIdSeek { slot, .. } => format!("s{slot}"),
        Op::RelByIdSeek { rel, start, end, dir, .. } => {
            format!("{} rel=s{rel}", arrow(*start, *end, *dir, &[]))
        }
        Op::NodeCountFromCountStore { slot, label, .. } => {
            format!("s{slot} = count(({}))", opt(label))
        }
        Op::RelationshipCountFromCountStore { slot, start, ty, end, .. } => {
            format!("s{slot} = count(({})-[{}]->({}))", opt(start), opt(ty), opt(end))
        }
        Op::Expand { from, to, dir, types, rel, .. } => {
            format!("{} rel=s{rel}", arrow(*from, *to, *dir, types))
        }
        Op::VarExpand { from, to, dir, types, min, max, rel, .. } => {
            format!("{} {} rel=s{rel}", arrow(*from, *to, *dir, types), hops(*min, *max))
        }
        Op::PruningVarExpand { from, to, dir, types, min, max, .. } => {
            format!("{} {}", arrow(*from, *to, *dir, types), hops(*min, *max))
        }
        Op::FrontierExpand { from, to, dir, types, min, max, .. } => {
            format!("{} {}", arrow(*from, *to, *dir, types), hops(*min, Some(*max)))
        }
        Op::VarExpandCount { from, to, dir, types, min, max, out, per_row, .. } => {
            let each = if *per_row { " per row" } else { "" };
            format!("s{out} = count({} {}){each}", arrow(*from, *to, *dir, types), hops(*min, *max))
        }
        Op::Project { items, .. } => slots(&items.iter().map(|(s, _)| *s).collect::<Vec<_>>()),
        Op::Aggregate { keys, aggs, .. } => {
            let keys = slots(&keys.iter().map(|(s, _)| *s).collect::<Vec<_>>());
            let aggs: Vec<String> = aggs
                .iter()
                .map(|(s, a)| {
                    let d = if a.distinct { "DISTINCT " } else { "" };
                    let arg = if a.count_star { "*".to_string() } else { format!("{d}..") };
                    format!("s{s}={}({arg})", a.name)
                })
                .collect();
            format!("keys=[{keys}] aggs=[{}]", aggs.join(","))
        }
        Op::Distinct { slots: ss, .. } => slots(ss),
        _ => String::new(),
    }
}
