//! [`Cursor`]: the loop of the operators that turn one input row into a list of items and
//! hand out a copy of the row per item (`Expand`'s edges, `IndexSeek`'s nodes,
//! `ShortestPath`'s paths). The output rows are taken from the context's spare rows, and an
//! exhausted input row goes back there, so a steady stream of results allocates no row. The
//! last item kept gets the input row itself, not a copy: a seek or expansion with one result
//! per row (an index seek on a unique id) then copies no row at all, which matters when the
//! row carries a map or list (a `LOAD CSV` record).

use arbor_model::Result;

use crate::ctx::{Ctx, Operator, Row};
use crate::graph::Graph;

/// One open input row, its items and the position of the next item.
pub(super) struct Cursor<T> {
    row: Option<Row>,
    items: Vec<T>,
    pos: usize,
}

impl<T> Cursor<T> {
    pub(super) fn new() -> Self {
        Cursor { row: None, items: Vec::new(), pos: 0 }
    }

    /// Forgets the open row (the rest of [`Operator::reset`]).
    pub(super) fn close(&mut self) {
        self.row = None;
    }

    /// The next row: the open row with its next item kept by `keep` (`false`: skipped) written
    /// in by `fill`; when the items are used up, the next input row, whose items `open`
    /// computes (returning `false` to drop the row). `fill` gets a copy of the open row from
    /// the context's spare rows, or, for the last item, the open row itself; it may take what
    /// it needs out of the item (the items are cleared before the next row opens).
    #[inline]
    pub(super) fn next<O, K, F>(
        &mut self,
        input: &mut dyn Operator,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
        mut open: O,
        mut keep: K,
        mut fill: F,
    ) -> Result<Option<Row>>
    where
        O: FnMut(&mut Row, &mut Vec<T>, &mut Ctx, &mut dyn Graph) -> Result<bool>,
        K: FnMut(&Row, &T) -> bool,
        F: FnMut(&mut Row, &mut T),
    {
        loop {
            if let Some(cur) = &self.row {
                let n = self.items.len();
                while let Some(item) = self.items.get_mut(self.pos) {
                    self.pos += 1;
                    if !keep(cur, item) {
                        continue;
                    }
                    // The open row itself for the last item; nothing reads it afterwards.
                    let last = self.pos == n;
                    let mut row = match self.row.take() {
                        Some(r) if last => r,
                        Some(r) => {
                            let copy = ctx.row_like(&r);
                            self.row = Some(r);
                            copy
                        }
                        None => break,
                    };
                    fill(&mut row, item);
                    return Ok(Some(row));
                }
                if let Some(r) = self.row.take() {
                    ctx.recycle(r);
                }
            }
            let Some(mut r) = input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            self.items.clear();
            self.pos = 0;
            if open(&mut r, &mut self.items, ctx, g)? {
                self.row = Some(r);
            } else {
                ctx.recycle(r);
            }
        }
    }
}
