//! Row-at-a-time relational operators: filter, project, distinct, skip/limit, unwind,
//! optional, apply, union, eager and procedure calls (ORDER BY's `Sort` and `Top`: [`super::order`]).

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{Error, Result, Status, Value};

use super::batched::TransactionApply;
use super::builder::{build, Builder};
use super::distinct_spill::Distinct;
use super::order::row_count;
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::{eval, CompiledPred};
use crate::graph::Graph;
use crate::procs;

/// Builds a relational operator (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_relational(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Filter { input, pred, .. } => {
            Box::new(Filter { input: build(input, b), pred: CompiledPred::new(pred.clone()) })
        }
        Op::Project { input, items } => {
            let below = match &**input {
                Op::Filter { input, .. } => input,
                other => other,
            };
            if matches!(below, Op::PruningVarExpand { .. } | Op::FrontierExpand { .. }) {
                b.late_reads = items.iter().map(|(_, e)| e.clone()).collect();
            }
            let input = build(input, b);
            b.late_reads.clear();
            Box::new(Project { input, items: items.clone() })
        }
        Op::Distinct { input, slots } => Box::new(Distinct::new(build(input, b), slots.clone())),
        Op::Skip { input, count } => Box::new(SkipLimit {
            input: build(input, b),
            count: count.clone(),
            skip: true,
            exhaust: false,
            drained: false,
            n: None,
            seen: 0,
            arg: Vec::new(),
        }),
        Op::Limit { input, count, exhaust } => Box::new(SkipLimit {
            input: build(input, b),
            count: count.clone(),
            skip: false,
            exhaust: *exhaust,
            drained: false,
            n: None,
            seen: 0,
            arg: Vec::new(),
        }),
        Op::Unwind { input, expr, slot } => Box::new(Unwind {
            take: match expr {
                PExpr::Param(i) if b.take_unwind == Some(op as *const Op as usize) => Some(*i),
                _ => None,
            },
            input: build(input, b),
            expr: expr.clone(),
            slot: *slot,
            cur: None,
            items: Vec::new().into_iter(),
        }),
        Op::Optional { input, inner, slots } => Box::new(Optional {
            input: build(input, b),
            inner: build(inner, b),
            slots: slots.clone(),
            cur: None,
            produced: false,
        }),
        Op::Apply { input, inner, unit, batch: Some(batch) } => Box::new(TransactionApply::new(
            build(input, b),
            build(inner, b),
            *unit,
            (**batch).clone(),
        )),
        Op::Apply { input, inner, unit, batch: None } => Box::new(Apply {
            input: build(input, b),
            inner: build(inner, b),
            unit: *unit,
            cur: None,
        }),
        Op::Union { branches, out } => Box::new(Union {
            branches: branches.iter().map(|(op, slots)| (build(op, b), slots.clone())).collect(),
            out: out.clone(),
            arg: Vec::new(),
            pos: 0,
            opened: false,
        }),
        Op::ProcedureCall { input, name, args, arg_types, void, yields } => Box::new(ProcCall {
            input: build(input, b),
            name: name.clone(),
            args: args.clone(),
            arg_types: arg_types.clone(),
            void: *void,
            yields: yields.clone(),
            cur: None,
            rows: Vec::new().into_iter(),
        }),
        Op::Eager { input } => Box::new(Eager { input: build(input, b), out: None }),
        _ => unreachable!("build_relational called on another operator"),
    }
}

struct Filter {
    input: Box<dyn Operator>,
    pred: CompiledPred,
}

impl Operator for Filter {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        while let Some(mut r) = self.input.next(ctx, g)? {
            if self.pred.test(&mut r, ctx, g)? {
                return Ok(Some(r));
            }
            ctx.recycle(r);
        }
        Ok(None)
    }
}

struct Project {
    input: Box<dyn Operator>,
    items: Vec<(Slot, PExpr)>,
}

impl Operator for Project {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        if self.items.len() == 1 {
            let v = eval(&self.items[0].1, &mut r, ctx, g)?;
            r[self.items[0].0] = v;
            return Ok(Some(r));
        }
        // All items see the input row, not each other's results.
        let mut vals = Vec::with_capacity(self.items.len());
        for (_, e) in &self.items {
            vals.push(eval(e, &mut r, ctx, g)?);
        }
        for ((s, _), v) in self.items.iter().zip(vals) {
            r[*s] = v;
        }
        Ok(Some(r))
    }
}

struct SkipLimit {
    input: Box<dyn Operator>,
    count: PExpr,
    skip: bool,
    /// LIMIT over writes: drain the input once the limit is reached.
    exhaust: bool,
    drained: bool,
    n: Option<u64>,
    seen: u64,
    /// The argument row, so the count expression has a full-width row to evaluate in.
    arg: Row,
}

impl Operator for SkipLimit {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.n = None;
        self.seen = 0;
        self.drained = false;
        self.arg = arg.clone();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let n = match self.n {
            Some(n) => n,
            None => {
                let what = if self.skip { "SKIP" } else { "LIMIT" };
                let n = row_count(&self.count, &self.arg, what, ctx, g)?;
                self.n = Some(n);
                n
            }
        };
        if self.skip {
            while self.seen < n {
                if self.input.next(ctx, g)?.is_none() {
                    return Ok(None);
                }
                self.seen += 1;
            }
            self.input.next(ctx, g)
        } else {
            if self.seen >= n {
                if self.exhaust && !self.drained {
                    while self.input.next(ctx, g)?.is_some() {}
                    self.drained = true;
                }
                return Ok(None);
            }
            self.seen += 1;
            self.input.next(ctx, g)
        }
    }
}

struct Unwind {
    input: Box<dyn Operator>,
    /// The parameter to move out of `Ctx::params` instead of evaluating (copying) `expr`.
    take: Option<usize>,
    expr: PExpr,
    slot: Slot,
    cur: Option<Row>,
    items: std::vec::IntoIter<Value>,
}

impl Operator for Unwind {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(v) = self.items.next() {
                    ctx.tick()?;
                    let mut row = ctx.row_like(cur);
                    row[self.slot] = v;
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            let v = match self.take.and_then(|i| ctx.params.get_mut(i)) {
                Some(p) => std::mem::replace(p, Value::Null),
                None => eval(&self.expr, &mut r, ctx, g)?,
            };
            self.items = match v {
                Value::List(items) => items.into_iter(),
                Value::Null => Vec::new().into_iter(),
                other => vec![other].into_iter(),
            };
            self.cur = Some(r);
        }
    }
}

struct Optional {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    slots: Vec<Slot>,
    cur: Option<Row>,
    produced: bool,
}

impl Operator for Optional {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if self.cur.is_some() {
                if let Some(r) = self.inner.next(ctx, g)? {
                    self.produced = true;
                    return Ok(Some(r));
                }
                let Some(mut cur) = self.cur.take() else { continue };
                if !self.produced {
                    for s in &self.slots {
                        cur[*s] = Value::Null;
                    }
                    return Ok(Some(cur));
                }
                ctx.recycle(cur);
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.inner.reset(&r);
            self.produced = false;
            self.cur = Some(r);
        }
    }
}

struct Apply {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    unit: bool,
    cur: Option<Row>,
}

impl Operator for Apply {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if self.cur.is_some() {
                if self.unit {
                    while self.inner.next(ctx, g)?.is_some() {}
                    return Ok(self.cur.take());
                }
                if let Some(r) = self.inner.next(ctx, g)? {
                    return Ok(Some(r));
                }
                self.cur = None;
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.inner.reset(&r);
            self.cur = Some(r);
        }
    }
}

struct Union {
    branches: Vec<(Box<dyn Operator>, Vec<Slot>)>,
    out: Vec<Slot>,
    arg: Row,
    pos: usize,
    /// Whether branch `pos` was reset with `arg` yet.
    opened: bool,
}

impl Operator for Union {
    fn reset(&mut self, arg: &Row) {
        self.arg = arg.clone();
        self.pos = 0;
        self.opened = false;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        while let Some((b, slots)) = self.branches.get_mut(self.pos) {
            // Each branch is opened only when reached: opening all at once held a copy of the
            // argument row (as wide as the whole query's slots) per branch, quadratic in the
            // branches of a long UNION.
            if !self.opened {
                b.reset(&self.arg);
                self.opened = true;
            }
            if let Some(r) = b.next(ctx, g)? {
                let mut row = self.arg.clone();
                for (o, s) in self.out.iter().zip(slots.iter()) {
                    row[*o] = r[*s].clone();
                }
                return Ok(Some(row));
            }
            self.pos += 1;
            self.opened = false;
        }
        Ok(None)
    }
}

struct Eager {
    input: Box<dyn Operator>,
    out: Option<std::vec::IntoIter<Row>>,
}

impl Operator for Eager {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut rows = Vec::new();
            while let Some(r) = self.input.next(ctx, g)? {
                ctx.tick()?;
                rows.push(r);
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct ProcCall {
    input: Box<dyn Operator>,
    name: Name,
    args: Vec<PExpr>,
    arg_types: Vec<arbor_cypher_plan::CypherType>,
    void: bool,
    yields: Vec<(usize, Slot)>,
    cur: Option<Row>,
    rows: std::vec::IntoIter<Vec<Value>>,
}

impl Operator for ProcCall {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(out) = self.rows.next() {
                    let mut row = cur.clone();
                    for (i, s) in &self.yields {
                        row[*s] = out.get(*i).cloned().unwrap_or(Value::Null);
                    }
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            let mut args = Vec::new();
            for a in &self.args {
                args.push(eval(a, &mut r, ctx, g)?);
            }
            let args = procs::check_args(&self.name, &self.arg_types, args)?;
            let Some(p) = ctx.procs.iter().find(|p| *p.sig.name == *self.name) else {
                return Err(Error::new(
                    Status::ProcedureNotFound,
                    format!("There is no procedure with the name `{}` registered", self.name),
                ));
            };
            let body = p.body.clone();
            let rows = body(&args, g)?;
            if self.void {
                // A VOID procedure runs for its effect; the row passes through once.
                return Ok(Some(r));
            }
            self.rows = rows.into_iter();
            self.cur = Some(r);
        }
    }
}

// ------------------------------------------------------------------------------------ writes
