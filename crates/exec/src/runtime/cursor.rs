//! [`Cursor`]: the loop of the operators that turn one input row into a list of items and
//! hand out a copy of the row per item (`Expand`'s edges, `IndexSeek`'s nodes,
//! `ShortestPath`'s paths). The output rows are taken from the context's spare rows, and an
//! exhausted input row goes back there, so a steady stream of results allocates no row.

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

    /// The next row: what `emit` makes of the open row and its next item (`None`: the item is
    /// skipped; a kept item's row is best made with [`Ctx::row_like`]); when the items are used
    /// up, the next input row, whose items `open` computes (returning `false` to drop the row).
    #[inline]
    pub(super) fn next<O, E>(
        &mut self,
        input: &mut dyn Operator,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
        mut open: O,
        mut emit: E,
    ) -> Result<Option<Row>>
    where
        O: FnMut(&mut Row, &mut Vec<T>, &mut Ctx, &mut dyn Graph) -> Result<bool>,
        E: FnMut(&Row, &T, &mut Ctx) -> Option<Row>,
    {
        loop {
            if let Some(cur) = &self.row {
                while let Some(item) = self.items.get(self.pos) {
                    self.pos += 1;
                    if let Some(row) = emit(cur, item, ctx) {
                        return Ok(Some(row));
                    }
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
