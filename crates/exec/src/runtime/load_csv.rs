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
    /// The header, shared by every row's map as its display order.
    keys: Option<Arc<KeyOrder>>,
    file: Value,
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
                header.into_iter().map(|h| Key::from(h.unwrap_or_default())).collect();
            Some(Arc::new(KeyOrder::from(keys)))
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
                    let mut row = open.row.clone();
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
/// header's order as Neo4j returns it.
fn record_value(record: Vec<Field>, keys: Option<&Arc<KeyOrder>>) -> Value {
    let text = |f: Option<String>| f.map_or(Value::Null, |s| Value::String(Arc::from(s)));
    match keys {
        None => Value::List(record.into_iter().map(text).collect()),
        Some(keys) => {
            let mut fields = record.into_iter();
            let entries =
                keys.shown.iter().map(|k| (k.clone(), text(fields.next().flatten()))).collect();
            Value::Map(PropertyMap::from_entries(entries).with_order(keys.clone()))
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
