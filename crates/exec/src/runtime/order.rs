//! ORDER BY's operators: [`Sort`] (the whole input in key order) and [`Top`] (ORDER BY with a
//! LIMIT: only the first `skip + limit` rows in key order, kept in a bounded buffer while the
//! input is read, so `ORDER BY c DESC LIMIT 10` over a million groups holds a few hundred rows,
//! not a million). A `Sort` past the query memory sorts in runs on disk (`sort_spill`).

use std::cmp::Ordering;

use arbor_cypher_plan::expr::PExpr;
use arbor_cypher_plan::ops::Op;
use arbor_model::{Error, Result, Value};

use super::builder::{build, Builder};
use super::sort_spill::{Merge, SortSpill, CHECK};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::{eval, order_keys};
use crate::graph::Graph;

/// A `Top` buffer holds at most this many rows, or twice the rows it keeps if more: it is cut
/// back to the rows it keeps whenever full (a linear selection), so each input row costs an
/// amortised constant.
const MIN_BUFFER: usize = 1024;

/// Builds `Sort` and `Top` (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_order(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Top { input, keys, limit, skip } => {
            let exhaust = input.writes();
            Box::new(Top::new(build(input, b), keys, limit.clone(), skip.clone(), exhaust))
        }
        Op::Sort { input, keys } => Box::new(Sort::new(build(input, b), keys)),
        _ => unreachable!("build_order called on another operator"),
    }
}

/// The value of a SKIP or LIMIT count (`what`) evaluated in the argument row `arg`: a
/// non-negative integer, or Neo4j's error for anything else.
pub(super) fn row_count(
    count: &PExpr,
    arg: &Row,
    what: &str,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<u64> {
    let mut row = arg.clone();
    match eval(count, &mut row, ctx, g)? {
        Value::Int(i) if i >= 0 => Ok(i as u64),
        Value::Int(i) => Err(Error::syntax(format!(
            "Invalid input. '{i}' is not a valid value. Must be a non-negative integer. ({what})"
        ))
        .with_detail("NegativeIntegerArgument")),
        other => Err(Error::syntax(format!(
            "Invalid input. '{}' is not a valid value. Must be a non-negative integer. ({what})",
            arbor_model::to_cypher_literal(&other)
        ))
        .with_detail("InvalidArgumentType")),
    }
}

/// Evaluates the sort keys of one row.
fn keys_of(
    keys: &[(PExpr, bool)],
    r: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Vec<Value>> {
    let mut k = Vec::with_capacity(keys.len());
    for (e, _) in keys {
        k.push(eval(e, r, ctx, g)?);
    }
    Ok(k)
}

/// Sorts `rows` by `cmp`; an interrupt raised meanwhile makes every remaining comparison
/// trivial and fails the sort.
fn sort_interruptibly<T>(
    rows: &mut [T],
    mut cmp: impl FnMut(&T, &T) -> Ordering,
    ctx: &Ctx,
) -> Result<()> {
    let (mut n, mut stopped) = (0u32, false);
    rows.sort_by(|a, b| {
        n = n.wrapping_add(1);
        if n % crate::interrupt::EVERY == 0 && !stopped {
            stopped = ctx.check_interrupt().is_err();
        }
        if stopped {
            return Ordering::Equal;
        }
        cmp(a, b)
    });
    ctx.check_interrupt()
}

pub(super) struct Sort {
    input: Box<dyn Operator>,
    keys: Vec<(PExpr, bool)>,
    out: Option<Sorted>,
}

/// A `Sort`'s rows in order: sorted in memory, or merged from runs on disk (`sort_spill`).
enum Sorted {
    Memory(std::vec::IntoIter<(Vec<Value>, Row)>),
    Merged(Merge),
}

impl Sort {
    pub(super) fn new(input: Box<dyn Operator>, keys: &[(PExpr, bool)]) -> Sort {
        Sort { input, keys: keys.to_vec(), out: None }
    }

    /// Reads the whole input and sorts it, in memory or, past the memory left, in runs.
    fn sort(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Sorted> {
        let desc: Vec<bool> = self.keys.iter().map(|k| k.1).collect();
        let mut rows: Vec<(Vec<Value>, Row)> = Vec::new();
        let mut spill = SortSpill::default();
        spill.start();
        while let Some(mut r) = self.input.next(ctx, g)? {
            ctx.tick()?;
            let k = keys_of(&self.keys, &mut r, ctx, g)?;
            rows.push((k, r));
            if rows.len().is_multiple_of(CHECK) {
                if let Some(f) = spill.run_file(rows.len(), g) {
                    sort_interruptibly(&mut rows, |a, b| order_keys(&a.0, &b.0, &desc), ctx)?;
                    spill.write_run(&mut rows, f)?;
                }
            }
        }
        // A stable sort: rows with equal keys keep their input order.
        sort_interruptibly(&mut rows, |a, b| order_keys(&a.0, &b.0, &desc), ctx)?;
        if spill.spilled() {
            return Ok(Sorted::Merged(spill.merge(rows, desc, ctx, g)?));
        }
        Ok(Sorted::Memory(rows.into_iter()))
    }
}

impl Operator for Sort {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            self.out = Some(self.sort(ctx, g)?);
        }
        match &mut self.out {
            Some(Sorted::Memory(rows)) => Ok(rows.next().map(|(_, r)| r)),
            Some(Sorted::Merged(m)) => {
                ctx.tick()?;
                Ok(m.next()?.map(|(_, r)| r))
            }
            None => Ok(None),
        }
    }
}

/// A row in a `Top` buffer: its sort keys, its input position (ties come out in input order,
/// as from [`Sort`]'s stable sort) and the row.
type Keyed = (Vec<Value>, u64, Row);

pub(super) struct Top {
    input: Box<dyn Operator>,
    keys: Vec<(PExpr, bool)>,
    desc: Vec<bool>,
    limit: PExpr,
    skip: Option<PExpr>,
    /// The input writes: with LIMIT 0 it is still pulled to its end (as under `Limit`).
    exhaust: bool,
    /// The argument row, so the counts have a full-width row to evaluate in.
    arg: Row,
    out: Option<std::vec::IntoIter<Keyed>>,
}

impl Top {
    pub(super) fn new(
        input: Box<dyn Operator>,
        keys: &[(PExpr, bool)],
        limit: PExpr,
        skip: Option<PExpr>,
        exhaust: bool,
    ) -> Top {
        let desc = keys.iter().map(|k| k.1).collect();
        let keys = keys.to_vec();
        Top { input, keys, desc, limit, skip, exhaust, arg: Vec::new(), out: None }
    }

    /// The order of two buffered rows: by keys, then by input position (a total order).
    fn cmp(desc: &[bool], a: &Keyed, b: &Keyed) -> Ordering {
        order_keys(&a.0, &b.0, desc).then(a.1.cmp(&b.1))
    }

    /// Reads the whole input and returns its first `keep` rows in order.
    fn first_rows(&mut self, keep: usize, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Vec<Keyed>> {
        let cap = keep.saturating_mul(2).max(MIN_BUFFER);
        let mut buf: Vec<Keyed> = Vec::new();
        // Once the buffer has been cut back: the keys of its last kept row. A later row whose
        // keys are not below them sorts after `keep` rows already seen (on equal keys its later
        // position decides), so it is dropped on arrival.
        let mut bound: Option<Vec<Value>> = None;
        let mut seq = 0u64;
        while let Some(mut r) = self.input.next(ctx, g)? {
            ctx.tick()?;
            // Every row's keys are evaluated, kept or not: their errors surface as under `Sort`.
            let k = keys_of(&self.keys, &mut r, ctx, g)?;
            seq += 1;
            if keep == 0 {
                continue;
            }
            if let Some(b) = &bound {
                if order_keys(&k, b, &self.desc) != Ordering::Less {
                    continue;
                }
            }
            buf.push((k, seq, r));
            if buf.len() >= cap {
                let desc = &self.desc;
                buf.select_nth_unstable_by(keep - 1, |a, b| Self::cmp(desc, a, b));
                buf.truncate(keep);
                bound = buf.get(keep - 1).map(|x| x.0.clone());
            }
        }
        let desc = &self.desc;
        sort_interruptibly(&mut buf, |a, b| Self::cmp(desc, a, b), ctx)?;
        buf.truncate(keep);
        Ok(buf)
    }
}

impl Operator for Top {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.arg = arg.clone();
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            // LIMIT's count is checked before SKIP's, as when a `Limit` sat above a `Skip`.
            let limit = row_count(&self.limit, &self.arg, "LIMIT", ctx, g)?;
            let skip = match &self.skip {
                Some(s) => row_count(s, &self.arg, "SKIP", ctx, g)?,
                None => 0,
            };
            if limit == 0 && !self.exhaust {
                // Nothing to return and nothing to write: the input is never read (as `Limit`).
                self.out = Some(Vec::new().into_iter());
                return Ok(None);
            }
            let keep = usize::try_from(limit.saturating_add(skip)).unwrap_or(usize::MAX);
            let mut rows = self.first_rows(keep, ctx, g)?.into_iter();
            let skip = usize::try_from(skip).unwrap_or(usize::MAX);
            if skip > 0 {
                rows.nth(skip - 1);
            }
            self.out = Some(rows);
        }
        Ok(self.out.as_mut().and_then(|o| o.next()).map(|(_, _, r)| r))
    }
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
