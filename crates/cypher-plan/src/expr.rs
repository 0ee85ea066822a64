//! Bound expressions: the AST's expressions with names resolved to row slots, parameters to
//! indices and functions to function pointers, ready for the executor to evaluate.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{CompareOp, Quantifier};
use arbor_model::{Result, Value};

use crate::ops::Op;

/// Index of a value in a row. Every variable binding in a query (including comprehension
/// locals and hidden intermediate values) gets its own slot, so rows are plain `Vec<Value>`.
pub type Slot = usize;

/// A scalar function over evaluated arguments (same shape as the exec function library's).
pub type ScalarFn = fn(&[Value]) -> Result<Value>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringOp {
    StartsWith,
    EndsWith,
    Contains,
    Regex,
}

/// Functions the evaluator implements itself because they need the graph (or laziness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Id,
    ElementId,
    Labels,
    Type,
    Properties,
    Keys,
    StartNode,
    EndNode,
    Nodes,
    Relationships,
    Length,
    /// `exists(n.prop)`: true iff the argument is not null.
    Exists,
    Coalesce,
    /// `n:%`: the node has some label (a relationship always has a type). Not callable by name.
    AnyLabel,
    /// `n:$(names)` / `n:$all(names)`: `(entity, names)`, the entity has all of them (a string
    /// or a list of strings). Not callable by name.
    DynLabelsAll,
    /// `n:$any(names)`: the entity has one of them. Not callable by name.
    DynLabelsAny,
}

impl Builtin {
    /// Recognizes a builtin by (lower-cased) name.
    pub fn lookup(lower: &str) -> Option<Builtin> {
        Some(match lower {
            "id" => Builtin::Id,
            "elementid" => Builtin::ElementId,
            "labels" => Builtin::Labels,
            "type" => Builtin::Type,
            "properties" | "apoc.any.properties" => Builtin::Properties,
            "keys" => Builtin::Keys,
            "startnode" => Builtin::StartNode,
            "endnode" => Builtin::EndNode,
            "nodes" => Builtin::Nodes,
            "relationships" => Builtin::Relationships,
            "length" => Builtin::Length,
            "exists" => Builtin::Exists,
            "coalesce" => Builtin::Coalesce,
            _ => return None,
        })
    }

    /// Expected argument count (`None` = variadic).
    pub fn arity(self) -> Option<usize> {
        match self {
            Builtin::Coalesce => None,
            _ => Some(1),
        }
    }
}

/// What a subquery expression computes from its sub-plan's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubqueryKind {
    /// `EXISTS {..}` and pattern predicates: whether there is any row.
    Exists,
    /// `COUNT {..}`: the number of rows.
    Count,
    /// `COLLECT {..}` and pattern comprehensions: the list of the slot's values.
    Collect(Slot),
}

#[derive(Clone, Debug)]
pub enum MapProjItem {
    Property(Arc<str>),
    Literal(Arc<str>, PExpr),
    AllProperties,
}

/// One step of a path expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStep {
    Node(Slot),
    Rel(Slot),
    /// A list of relationships from a variable-length segment, in pattern order.
    VarRel(Slot),
}

/// An aggregation call, e.g. `count(DISTINCT n.x)`.
#[derive(Clone, Debug)]
pub struct AggCall {
    /// Lower-cased function name (`count`, `sum`, `percentilecont`, ...).
    pub name: Arc<str>,
    pub distinct: bool,
    /// Empty for `count(*)`.
    pub args: Vec<PExpr>,
    pub count_star: bool,
}

/// A bound expression.
#[derive(Clone, Debug)]
pub enum PExpr {
    Const(Value),
    /// Index into the query's parameter list ([`crate::Plan::params`]).
    Param(usize),
    Slot(Slot),
    Property(Box<PExpr>, Arc<str>),
    List(Vec<PExpr>),
    Map(Vec<(Arc<str>, PExpr)>),
    Not(Box<PExpr>),
    Neg(Box<PExpr>),
    /// Unary plus: checks the operand is a number.
    Plus(Box<PExpr>),
    And(Box<PExpr>, Box<PExpr>),
    Or(Box<PExpr>, Box<PExpr>),
    Xor(Box<PExpr>, Box<PExpr>),
    Arith(ArithOp, Box<PExpr>, Box<PExpr>),
    In(Box<PExpr>, Box<PExpr>),
    Str(StringOp, Box<PExpr>, Box<PExpr>),
    /// A comparison chain; each middle operand is evaluated once.
    Compare(Box<PExpr>, Vec<(CompareOp, PExpr)>),
    IsNull(Box<PExpr>, bool),
    HasLabels(Box<PExpr>, Vec<Arc<str>>),
    Index(Box<PExpr>, Box<PExpr>),
    Slice(Box<PExpr>, Option<Box<PExpr>>, Option<Box<PExpr>>),
    Scalar {
        name: Arc<str>,
        func: ScalarFn,
        args: Vec<PExpr>,
    },
    Builtin(Builtin, Vec<PExpr>),
    Case {
        operand: Option<Box<PExpr>>,
        whens: Vec<(PExpr, PExpr)>,
        else_: Option<Box<PExpr>>,
    },
    ListComp {
        slot: Slot,
        list: Box<PExpr>,
        filter: Option<Box<PExpr>>,
        map: Option<Box<PExpr>>,
    },
    Quantified {
        quantifier: Quantifier,
        slot: Slot,
        list: Box<PExpr>,
        filter: Box<PExpr>,
    },
    Reduce {
        acc: Slot,
        init: Box<PExpr>,
        slot: Slot,
        list: Box<PExpr>,
        expr: Box<PExpr>,
    },
    /// A sub-plan run with the current row as its argument.
    Subquery {
        kind: SubqueryKind,
        plan: Arc<Op>,
    },
    MapProjection {
        base: Box<PExpr>,
        items: Vec<MapProjItem>,
    },
    Path(Vec<PathStep>),
}

impl PExpr {
    /// Splits a predicate into its top-level AND conjuncts, in source order.
    pub fn conjuncts_into(self, out: &mut Vec<PExpr>) {
        match self {
            PExpr::And(a, b) => {
                a.conjuncts_into(out);
                b.conjuncts_into(out);
            }
            other => out.push(other),
        }
    }

    /// Slots this expression reads from its row (excluding the locals it binds itself).
    /// Sub-plans report `None`: they may read anything, so they are placed conservatively.
    pub fn deps(&self, out: &mut Vec<Slot>) -> bool {
        let mut ok = true;
        self.walk_deps(out, &mut ok);
        ok
    }

    fn walk_deps(&self, out: &mut Vec<Slot>, ok: &mut bool) {
        let locals_before = |list: &PExpr, out: &mut Vec<Slot>, ok: &mut bool| {
            list.walk_deps(out, ok);
        };
        match self {
            PExpr::Const(_) | PExpr::Param(_) => {}
            PExpr::Slot(s) => out.push(*s),
            PExpr::Property(e, _)
            | PExpr::Not(e)
            | PExpr::Neg(e)
            | PExpr::Plus(e)
            | PExpr::IsNull(e, _)
            | PExpr::HasLabels(e, _) => e.walk_deps(out, ok),
            PExpr::List(es) | PExpr::Scalar { args: es, .. } | PExpr::Builtin(_, es) => {
                es.iter().for_each(|e| e.walk_deps(out, ok))
            }
            PExpr::Map(es) => es.iter().for_each(|(_, e)| e.walk_deps(out, ok)),
            PExpr::And(a, b)
            | PExpr::Or(a, b)
            | PExpr::Xor(a, b)
            | PExpr::Arith(_, a, b)
            | PExpr::In(a, b)
            | PExpr::Str(_, a, b)
            | PExpr::Index(a, b) => {
                a.walk_deps(out, ok);
                b.walk_deps(out, ok);
            }
            PExpr::Compare(a, rest) => {
                a.walk_deps(out, ok);
                rest.iter().for_each(|(_, e)| e.walk_deps(out, ok));
            }
            PExpr::Slice(a, b, c) => {
                a.walk_deps(out, ok);
                if let Some(b) = b {
                    b.walk_deps(out, ok);
                }
                if let Some(c) = c {
                    c.walk_deps(out, ok);
                }
            }
            PExpr::Case { operand, whens, else_ } => {
                if let Some(o) = operand {
                    o.walk_deps(out, ok);
                }
                for (w, t) in whens {
                    w.walk_deps(out, ok);
                    t.walk_deps(out, ok);
                }
                if let Some(e) = else_ {
                    e.walk_deps(out, ok);
                }
            }
            PExpr::ListComp { slot, list, filter, map } => {
                locals_before(list, out, ok);
                let mut inner = Vec::new();
                if let Some(f) = filter {
                    f.walk_deps(&mut inner, ok);
                }
                if let Some(m) = map {
                    m.walk_deps(&mut inner, ok);
                }
                out.extend(inner.into_iter().filter(|s| s != slot));
            }
            PExpr::Quantified { slot, list, filter, .. } => {
                list.walk_deps(out, ok);
                let mut inner = Vec::new();
                filter.walk_deps(&mut inner, ok);
                out.extend(inner.into_iter().filter(|s| s != slot));
            }
            PExpr::Reduce { acc, init, slot, list, expr } => {
                init.walk_deps(out, ok);
                list.walk_deps(out, ok);
                let mut inner = Vec::new();
                expr.walk_deps(&mut inner, ok);
                out.extend(inner.into_iter().filter(|s| s != slot && s != acc));
            }
            PExpr::Subquery { .. } => *ok = false,
            PExpr::MapProjection { base, items } => {
                base.walk_deps(out, ok);
                for it in items {
                    if let MapProjItem::Literal(_, e) = it {
                        e.walk_deps(out, ok);
                    }
                }
            }
            PExpr::Path(steps) => {
                for s in steps {
                    match s {
                        PathStep::Node(x) | PathStep::Rel(x) | PathStep::VarRel(x) => out.push(*x),
                    }
                }
            }
        }
    }
}
