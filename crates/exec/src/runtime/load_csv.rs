//! The `LoadCsv` operator: per input row, opens the URL through the graph seam
//! (`Graph::open_csv`) and yields one row per CSV record, as a list of strings, or with
//! `WITH HEADERS` as a map keyed by the first record (missing fields null, extra ones
//! ignored, as in Neo4j). Records are read as the rows are pulled: the file is never held
//! whole.

use std::sync::Arc;

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_model::{Error, Key, KeyOrder, PropertyMap, Result, Status, Value};

use super::builder::{build, Builder};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::eval;
use crate::graph::Graph;
use crate::load_csv::{CsvReader, Field};

/// The operator (see the module doc).
pub(super) struct LoadCsv {
    pub(super) input: Box<dyn Operator>,
    pub(super) url: PExpr,
    pub(super) slot: Slot,
    pub(super) headers: bool,
    pub(super) terminator: u8,
    pub(super) line: Slot,
    pub(super) file: Slot,
    pub(super) cur: Option<Open>,
}

/// The file being read for one input row.
pub(super) struct Open {
    row: Row,
    reader: CsvReader,
    /// The header of `WITH HEADERS`.
    keys: Option<Header>,
    file: Value,
}

/// A file's header: the display order every row's map shares, and the keys sorted (each with
/// the column it takes; of equal names the last column, as Neo4j does).
pub(super) struct Header {
    order: Arc<KeyOrder>,
    sorted: Vec<(Key, usize)>,
}

impl LoadCsv {
    /// Opens the URL the input row names.
    fn open(&mut self, mut row: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Open> {
        let url = match eval(&self.url, &mut row, ctx, g)? {
            Value::String(s) => s,
            other => {
                return Err(Error::new(
                    Status::TypeError,
                    format!(
                        "LOAD CSV: expected the URL to be a String but was {}",
                        arbor_model::to_cypher_literal(&other)
                    ),
                ))
            }
        };
        let source = g.open_csv(&url)?;
        let mut reader = CsvReader::new(source.reader, self.terminator, url.to_string());
        let keys = if self.headers {
            let header = reader.next_record()?.unwrap_or_default();
            let keys: Vec<Key> =
                header.into_iter().map(|h| h.map_or_else(|| Key::from(""), Key::from)).collect();
            let mut sorted: Vec<(Key, usize)> =
                keys.iter().enumerate().map(|(i, k)| (k.clone(), i)).collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            sorted.dedup_by(|later, kept| later.0 == kept.0);
            Some(Header { order: Arc::new(KeyOrder::from(keys)), sorted })
        } else {
            None
        };
        Ok(Open { row, reader, keys, file: Value::String(Arc::from(source.file)) })
    }
}

impl Operator for LoadCsv {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(open) = &mut self.cur {
                ctx.tick()?;
                if let Some(record) = open.reader.next_record()? {
                    // In the memory of a row consumed downstream (no allocation per record).
                    let mut row = ctx.row_like(&open.row);
                    row[self.slot] = record_value(record, open.keys.as_ref());
                    row[self.line] = Value::Int(open.reader.records);
                    row[self.file] = open.file.clone();
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(row) = self.input.next(ctx, g)? else { return Ok(None) };
            self.cur = Some(self.open(row, ctx, g)?);
        }
    }
}

/// A record as Cypher sees it: a list, or a map under `keys` (the header), displayed in the
/// header's order as Neo4j returns it. The map's entries are built in key order, so the map
/// needs no sorting per row.
fn record_value(mut record: Vec<Field>, keys: Option<&Header>) -> Value {
    let text = |f: Field| f.map_or(Value::Null, Value::String);
    match keys {
        None => Value::List(record.into_iter().map(text).collect()),
        Some(Header { order, sorted }) => {
            let entries = sorted
                .iter()
                .map(|(k, i)| (k.clone(), text(record.get_mut(*i).and_then(Option::take))))
                .collect();
            Value::Map(PropertyMap::from_sorted(entries).with_order(order.clone()))
        }
    }
}

/// Builds the operator of an `Op::LoadCsv`.
pub(super) fn build_load_csv(op: &arbor_cypher_plan::Op, b: &mut Builder) -> Box<dyn Operator> {
    let arbor_cypher_plan::Op::LoadCsv { input, url, slot, headers, terminator, line, file } = op
    else {
        unreachable!("build_load_csv called on another operator")
    };
    Box::new(LoadCsv {
        input: build(input, b),
        url: url.clone(),
        slot: *slot,
        headers: *headers,
        terminator: *terminator,
        line: *line,
        file: *file,
        cur: None,
    })
}
