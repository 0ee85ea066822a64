//! Aggregation accumulators: count, sum, avg, min, max, collect, stDev, stDevP, percentileCont,
//! percentileDisc, each optionally DISTINCT. Nulls are skipped by every aggregation.

use std::cmp::Ordering;
use std::collections::HashSet;

use arbor_model::temporal_ops;
use arbor_model::{group_key, order, Duration, Error, GroupKey, Result, Value};

use super::{arg, Accumulator, AggKind, IntPartial};

/// Creates an accumulator for one group. With `distinct`, repeated values (by grouping
/// equivalence, so `1` and `1.0` are the same) of the first argument are ignored.
pub fn new_accumulator(kind: AggKind, distinct: bool) -> Box<dyn Accumulator> {
    let inner: Box<dyn Accumulator> = match kind {
        AggKind::Count => Box::new(Count(0)),
        AggKind::Sum => Box::new(Sum::default()),
        AggKind::Avg => Box::new(Avg::default()),
        AggKind::Min => Box::new(Extreme { want: Ordering::Less, best: None }),
        AggKind::Max => Box::new(Extreme { want: Ordering::Greater, best: None }),
        AggKind::Collect => Box::new(Collect(Vec::new())),
        AggKind::StDev => Box::new(StDev { sample: true, values: Vec::new() }),
        AggKind::StDevP => Box::new(StDev { sample: false, values: Vec::new() }),
        AggKind::PercentileCont => Box::new(Percentile { cont: true, values: Vec::new(), p: None }),
        AggKind::PercentileDisc => {
            Box::new(Percentile { cont: false, values: Vec::new(), p: None })
        }
    };
    if distinct {
        Box::new(Distinct {
            seen: HashSet::new(),
            nodes: crate::nodeset::NodeSet::default(),
            inner,
        })
    } else {
        inner
    }
}

/// Filters repeated first arguments before the wrapped accumulator sees them.
struct Distinct {
    seen: HashSet<GroupKey>,
    /// Nodes, the common case (`count(DISTINCT n)`), by id: under grouping equivalence a node
    /// (as an id or materialized) equals only the same node, so no generic value hashing.
    nodes: crate::nodeset::NodeSet,
    inner: Box<dyn Accumulator>,
}

impl Accumulator for Distinct {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = arg(args, 0);
        if v.is_null() {
            return Ok(());
        }
        let new = match v {
            Value::Node(id) => self.nodes.insert(id.0),
            Value::NodeData(n) => self.nodes.insert(n.id.0),
            other => self.seen.insert(group_key(other)),
        };
        if new {
            self.inner.update(args)
        } else {
            Ok(())
        }
    }

    fn finish(&mut self) -> Result<Value> {
        self.inner.finish()
    }
}

struct Count(i64);

impl Accumulator for Count {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        if !arg(args, 0).is_null() {
            self.0 += 1;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Value> {
        Ok(Value::Int(self.0))
    }

    fn update_many(&mut self, vals: &[Value]) -> std::result::Result<(), (usize, Error)> {
        self.0 += vals.iter().filter(|v| !v.is_null()).count() as i64;
        Ok(())
    }

    fn merge_ints(&mut self, p: &IntPartial) -> bool {
        self.0 += p.count;
        true
    }
}

fn agg_type_err(func: &str, v: &Value) -> Error {
    Error::type_error(format!(
        "{func}() can only handle numerical values, duration, and null. Got {}",
        v.type_name()
    ))
    .with_detail("InvalidArgumentType")
}

/// Integers stay exact until a float appears; durations sum separately.
#[derive(Default)]
struct Sum {
    int: i64,
    float: f64,
    saw_float: bool,
    duration: Option<Duration>,
    saw_number: bool,
}

impl Accumulator for Sum {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match arg(args, 0) {
            Value::Null => {}
            Value::Int(i) if self.duration.is_none() => {
                self.saw_number = true;
                match self.int.checked_add(*i) {
                    Some(sum) if !self.saw_float => self.int = sum,
                    // Past the integer range the sum goes on as a float (Neo4j 5.26 does).
                    None if !self.saw_float => {
                        self.saw_float = true;
                        self.float = self.int as f64 + *i as f64;
                    }
                    _ => self.float += *i as f64,
                }
            }
            Value::Float(f) if self.duration.is_none() => {
                self.saw_number = true;
                if !self.saw_float {
                    self.saw_float = true;
                    self.float = self.int as f64;
                }
                self.float += f;
            }
            Value::Duration(d) if !self.saw_number => {
                self.duration = Some(match &self.duration {
                    Some(acc) => temporal_ops::duration_add(acc, d)?,
                    None => *d,
                });
            }
            other => return Err(agg_type_err("sum", other)),
        }
        Ok(())
    }

    fn update_many(&mut self, vals: &[Value]) -> std::result::Result<(), (usize, Error)> {
        for (i, v) in vals.iter().enumerate() {
            match v {
                Value::Int(x) if !self.saw_float && self.duration.is_none() => {
                    match self.int.checked_add(*x) {
                        Some(sum) => {
                            self.saw_number = true;
                            self.int = sum;
                        }
                        None => self.update(std::slice::from_ref(v)).map_err(|e| (i, e))?,
                    }
                }
                v => self.update(std::slice::from_ref(v)).map_err(|e| (i, e))?,
            }
        }
        Ok(())
    }

    fn merge_ints(&mut self, p: &IntPartial) -> bool {
        if p.count == 0 {
            return true;
        }
        if self.saw_float || self.duration.is_some() {
            return false;
        }
        // When even the magnitudes of all the values added to the current sum stay in the
        // integer range, no running sum leaves it: adding the total is adding one by one.
        let mag = i128::from(p.min).abs().max(i128::from(p.max).abs());
        let bound = i128::from(self.int).abs() + mag * i128::from(p.count);
        match i64::try_from(i128::from(self.int) + p.sum) {
            Ok(sum) if bound <= i128::from(i64::MAX) => {
                self.int = sum;
                self.saw_number = true;
                true
            }
            _ => false,
        }
    }

    fn finish(&mut self) -> Result<Value> {
        Ok(if let Some(d) = self.duration {
            Value::Duration(d)
        } else if self.saw_float {
            Value::Float(self.float)
        } else {
            Value::Int(self.int)
        })
    }
}

#[derive(Default)]
struct Avg {
    count: i64,
    int_sum: i128,
    float_sum: f64,
    duration: Option<Duration>,
}

impl Accumulator for Avg {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match arg(args, 0) {
            Value::Null => return Ok(()),
            Value::Int(i) if self.duration.is_none() => self.int_sum += i128::from(*i),
            Value::Float(f) if self.duration.is_none() => self.float_sum += f,
            Value::Duration(d) if self.count == 0 || self.duration.is_some() => {
                self.duration = Some(match &self.duration {
                    Some(acc) => temporal_ops::duration_add(acc, d)?,
                    None => *d,
                });
            }
            other => return Err(agg_type_err("avg", other)),
        }
        self.count += 1;
        Ok(())
    }

    fn update_many(&mut self, vals: &[Value]) -> std::result::Result<(), (usize, Error)> {
        for (i, v) in vals.iter().enumerate() {
            match v {
                Value::Int(x) if self.duration.is_none() => {
                    self.int_sum += i128::from(*x);
                    self.count += 1;
                }
                Value::Null => {}
                v => self.update(std::slice::from_ref(v)).map_err(|e| (i, e))?,
            }
        }
        Ok(())
    }

    fn merge_ints(&mut self, p: &IntPartial) -> bool {
        if p.count == 0 {
            return true;
        }
        if self.duration.is_some() {
            return false;
        }
        self.int_sum += p.sum;
        self.count += p.count;
        true
    }

    fn finish(&mut self) -> Result<Value> {
        if self.count == 0 {
            return Ok(Value::Null);
        }
        if let Some(d) = &self.duration {
            return Ok(Value::Duration(temporal_ops::duration_mul_float(
                d,
                1.0 / self.count as f64,
            )?));
        }
        Ok(Value::Float((self.int_sum as f64 + self.float_sum) / self.count as f64))
    }
}

/// min/max over the global sort order, which agrees with comparison within a type and puts
/// numbers above strings, lists, etc. for mixed input.
struct Extreme {
    want: Ordering,
    best: Option<Value>,
}

impl Accumulator for Extreme {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = arg(args, 0);
        // Integers against an integer (the common case): the global order is the numeric one.
        if let (Value::Int(x), Some(Value::Int(b))) = (v, &mut self.best) {
            if x.cmp(b) == self.want {
                *b = *x;
            }
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        let replace = match &self.best {
            None => true,
            Some(b) => order(v, b) == self.want,
        };
        if replace {
            self.best = Some(v.clone());
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Value> {
        Ok(self.best.clone().unwrap_or(Value::Null))
    }

    fn update_many(&mut self, vals: &[Value]) -> std::result::Result<(), (usize, Error)> {
        for (i, v) in vals.iter().enumerate() {
            match (v, &mut self.best) {
                (Value::Int(x), Some(Value::Int(b))) => {
                    if x.cmp(b) == self.want {
                        *b = *x;
                    }
                }
                (v, _) => self.update(std::slice::from_ref(v)).map_err(|e| (i, e))?,
            }
        }
        Ok(())
    }

    fn merge_ints(&mut self, p: &IntPartial) -> bool {
        if p.count == 0 {
            return true;
        }
        // Under the global order the best of the batch is the one of its integers that one
        // update per value would have kept (equal integers are the same value).
        let v = Value::Int(if self.want == Ordering::Less { p.min } else { p.max });
        self.update(std::slice::from_ref(&v)).is_ok()
    }
}

struct Collect(Vec<Value>);

impl Accumulator for Collect {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = arg(args, 0);
        if !v.is_null() {
            self.0.push(v.clone());
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Value> {
        Ok(Value::List(std::mem::take(&mut self.0)))
    }
}

fn number(func: &str, v: &Value) -> Result<Option<f64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i as f64)),
        Value::Float(f) => Ok(Some(*f)),
        other => Err(Error::type_error(format!(
            "{func}() can only handle numerical values and null. Got {}",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

struct StDev {
    sample: bool,
    values: Vec<f64>,
}

impl Accumulator for StDev {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        if let Some(x) = number(if self.sample { "stDev" } else { "stDevP" }, arg(args, 0))? {
            self.values.push(x);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Value> {
        let n = self.values.len();
        let denom = if self.sample { n.saturating_sub(1) } else { n };
        if denom == 0 {
            return Ok(Value::Float(0.0));
        }
        let mean = self.values.iter().sum::<f64>() / n as f64;
        let ss: f64 = self.values.iter().map(|x| (x - mean) * (x - mean)).sum();
        Ok(Value::Float((ss / denom as f64).sqrt()))
    }
}

struct Percentile {
    cont: bool,
    /// The original values (so percentileDisc returns an integer for integer input) with their
    /// numeric value for sorting.
    values: Vec<(f64, Value)>,
    p: Option<f64>,
}

impl Accumulator for Percentile {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let func = if self.cont { "percentileCont" } else { "percentileDisc" };
        let p = match arg(args, 1) {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Null => {
                return Err(Error::argument(format!("{func}(): the percentile must not be null"))
                    .with_detail("InvalidArgumentValue"))
            }
            other => {
                return Err(Error::type_error(format!(
                    "{func}(): the percentile must be a number, got {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        };
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::argument(format!(
                "Invalid input '{}' is not a valid argument, must be a number in the range 0.0 to 1.0",
                arbor_model::format::format_float(p)
            ))
            .with_detail("NumberOutOfRange"));
        }
        self.p = Some(p);
        let v = arg(args, 0);
        if let Some(x) = number(func, v)? {
            self.values.push((x, v.clone()));
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Value> {
        let (Some(p), false) = (self.p, self.values.is_empty()) else { return Ok(Value::Null) };
        self.values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = self.values.len();
        if self.cont {
            let pos = p * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            let (a, b) = (self.values[lo.min(n - 1)].0, self.values[hi.min(n - 1)].0);
            Ok(Value::Float(a + (b - a) * (pos - lo as f64)))
        } else {
            let idx = ((p * n as f64).ceil() as usize).saturating_sub(1).min(n - 1);
            Ok(self.values[idx].1.clone())
        }
    }
}
