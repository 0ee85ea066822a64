//! Per-node columns of a bulk build kept small or out of memory while nodes are fed:
//! [`LabelCodes`], the label-set codes at one byte per node while every code fits one (the width
//! the finished column has then; a `PackedBuilder` held four), and [`NodeOffsets`], the node
//! property blob offsets, which beside spilled blobs (`blob_spill.rs`) go to a scratch file as
//! row lengths (four bytes each, the running total in memory) once they stop being a run, and
//! come back to the segment writer as the offsets column (segment column 11, a
//! [`ColumnData::Stream`]) from one sequential read ([`SpilledOffsets`]).
//!
//! Byte-identical to the columns a `PackedBuilder` builds: a run (every row empty, or every row
//! one byte) never reaches the file; otherwise the segment width is the one `Packed::from_u64`
//! picks from the largest (last) offset. A row longer than `u32::MAX` bytes brings the offsets
//! back into memory. A write error is kept and returned when the column is read (the segment
//! write fails); the scratch file is removed when dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::columns::{Packed, PackedBuilder};
use super::fwd_spill::{ColReader, ColSpill, Placed, SpilledCol};
use super::segments::NODE_PROPS;
use crate::pager::segment::{ColumnData, Sink, Values};
use crate::vfs::Vfs;

/// Label-set codes while nodes are fed: bytes while every code fits one, then a
/// [`PackedBuilder`] (more than 255 label sets).
pub(super) enum LabelCodes {
    Bytes(Vec<u8>),
    Wide(PackedBuilder),
}

impl Default for LabelCodes {
    fn default() -> Self {
        LabelCodes::Bytes(Vec::new())
    }
}

impl LabelCodes {
    pub(super) fn push(&mut self, code: u64) {
        match self {
            LabelCodes::Bytes(v) => match u8::try_from(code) {
                Ok(c) => v.push(c),
                Err(_) => {
                    let mut w = PackedBuilder::default();
                    v.iter().for_each(|c| w.push(u64::from(*c)));
                    w.push(code);
                    *self = LabelCodes::Wide(w);
                }
            },
            LabelCodes::Wide(w) => w.push(code),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            LabelCodes::Bytes(v) => v.len(),
            LabelCodes::Wide(w) => w.len(),
        }
    }

    /// Code `i`; 0 (no node) past the end.
    pub(super) fn get(&self, i: usize) -> u64 {
        match self {
            LabelCodes::Bytes(v) => v.get(i).map_or(0, |c| u64::from(*c)),
            LabelCodes::Wide(w) => w.get(i),
        }
    }

    /// The column `PackedBuilder::finish` gives for the same codes: a constant or a `+1`
    /// sequence when they are one, else bytes.
    pub(super) fn finish(self) -> Packed {
        let v = match self {
            LabelCodes::Bytes(v) => v,
            LabelCodes::Wide(w) => return w.finish(),
        };
        let Some(&first) = v.first() else { return Packed::default() };
        let first = u64::from(first);
        let (konst, seq, _) = Packed::shape(v.len(), first, v.iter().map(|c| u64::from(*c)));
        match (konst, seq) {
            (true, _) => Packed::Const { v: first, n: v.len() },
            (false, true) => Packed::Seq { first, n: v.len() },
            _ => Packed::U8(v.into_boxed_slice()),
        }
    }
}

/// The node blob offsets while nodes are fed: a [`PackedBuilder`], and once a scratch file is
/// given and the offsets stop being a run, the file of row lengths ([`ColSpill`], 4 bytes each).
#[derive(Default)]
pub(super) struct NodeOffsets {
    mem: PackedBuilder,
    spill: Option<ColSpill>,
    /// The values are in `spill` as differences (none in `mem`); `last` is the last value.
    spilled: bool,
    last: u64,
    /// The first error reading the file back ([`NodeOffsets::unspill`]).
    error: Option<(PathBuf, io::Error)>,
}

impl NodeOffsets {
    /// Writes the offsets to a new scratch file at `path` once they stop being a run, `chunk`
    /// bytes at a time.
    pub(super) fn spill_to(
        &mut self,
        vfs: Arc<dyn Vfs>,
        path: PathBuf,
        chunk: usize,
    ) -> io::Result<()> {
        if self.spill.is_some() {
            return Err(io::Error::other("the node offsets spill already"));
        }
        self.spill = Some(ColSpill::create(vfs, path, 4, chunk)?);
        Ok(())
    }

    /// Appends offset `x` (offsets never decrease).
    pub(super) fn push(&mut self, x: u64) {
        if self.spilled {
            if let Some(s) = &mut self.spill {
                if x >= self.last && s.fits(x - self.last) {
                    s.push(x - self.last);
                    self.last = x;
                    return;
                }
            }
            self.unspill();
        }
        self.mem.push(x);
        if self.mem.run.is_some() || self.spilled {
            return;
        }
        let Some(s) = &mut self.spill else { return };
        let n = self.mem.len();
        let mut prev = 0u64;
        let fits = (0..n).all(|i| {
            let v = self.mem.get(i);
            let ok = v >= prev && s.fits(v - prev);
            prev = v;
            ok
        });
        if !fits {
            self.spill = None;
            return;
        }
        prev = 0;
        for i in 0..n {
            let v = self.mem.get(i);
            s.push(v - prev);
            prev = v;
        }
        self.mem = PackedBuilder::default();
        self.last = prev;
        self.spilled = true;
    }

    /// The write error of the scratch file, or the read error that brought it back.
    pub(super) fn error(&self) -> Option<(&Path, &io::Error)> {
        (self.spill.as_ref().and_then(ColSpill::error))
            .or(self.error.as_ref().map(|(p, e)| (p.as_path(), e)))
    }

    /// Brings the offsets back into memory and stops spilling (the file is removed); a read
    /// error is kept ([`NodeOffsets::error`]) and leaves zeros of the same count.
    fn unspill(&mut self) {
        let Some(s) = self.spill.take() else { return };
        if !std::mem::take(&mut self.spilled) {
            return;
        }
        let (n, path) = (s.len() as usize, s.path().to_path_buf());
        let mut mem = PackedBuilder::default();
        match s.read_all() {
            Ok(d) => {
                let mut acc = 0u64;
                for x in d {
                    acc += x;
                    mem.push(acc);
                }
            }
            Err(e) => {
                (0..n).for_each(|_| mem.push(0));
                self.error = Some((path, e));
            }
        }
        self.mem = mem;
    }

    /// The offsets in memory, or in the closed scratch file.
    pub(super) fn finish(self) -> Result<PackedBuilder, SpilledOffsets> {
        match (self.spill, self.spilled) {
            (Some(s), true) => {
                let col = s.close();
                let width = match self.last {
                    m if m <= u64::from(u8::MAX) => 1,
                    m if m <= u64::from(u16::MAX) => 2,
                    m if m <= u64::from(u32::MAX) => 4,
                    _ => 8,
                };
                Err(SpilledOffsets::new(col, width, NODE_PROPS[0]))
            }
            _ => Ok(self.mem),
        }
    }
}

/// An offset column in a closed scratch file as the lengths between offsets (the node blob
/// offsets; the CSR offsets of `degree_spill.rs`), for the segment writer.
pub(crate) struct SpilledOffsets {
    col: SpilledCol,
    /// Bytes per value in the segment.
    width: usize,
    /// The segment column.
    id: u8,
    /// `col` holds the offsets themselves (read from the segment), not the lengths.
    summed: bool,
}

impl SpilledOffsets {
    /// Segment column `id` of `width` bytes per offset, from the lengths in `col`.
    pub(super) fn new(col: SpilledCol, width: usize, id: u8) -> SpilledOffsets {
        SpilledOffsets { col, width, id, summed: false }
    }

    /// A sequential reader of the lengths, or of the offsets once [`Self::summed`].
    pub(super) fn lengths(&self) -> io::Result<ColReader> {
        self.col.reader()
    }

    /// Whether [`Self::lengths`] gives the offsets (the column was placed in the segment).
    pub(super) fn summed(&self) -> bool {
        self.summed
    }

    /// The column is written to the segment at `at`: read there (the offsets) from now on,
    /// and its scratch file goes.
    pub(super) fn placed(self, at: Placed) -> SpilledOffsets {
        let (width, id) = (self.width, self.id);
        SpilledOffsets { col: self.col.placed(at, width), width, id, summed: true }
    }

    /// The heap bytes the column would take in memory (the base's statistics).
    pub(super) fn bytes(&self) -> u64 {
        (self.col.len() * self.width) as u64
    }

    /// The offsets read back into memory (the file is removed), or as many zeros and the error
    /// that struck reading them.
    pub(super) fn into_mem(self) -> (PackedBuilder, Option<io::Error>) {
        let mut mem = PackedBuilder::default();
        let read = |mem: &mut PackedBuilder| -> io::Result<()> {
            let mut r = self.col.reader()?;
            let (mut block, mut acc) = (Vec::new(), 0u64);
            while r.fill(&mut block)? > 0 {
                for d in &block {
                    acc += d;
                    mem.push(acc);
                }
            }
            Ok(())
        };
        let err = read(&mut mem).err();
        if err.is_some() {
            mem = PackedBuilder::default();
            (0..self.col.len()).for_each(|_| mem.push(0));
        }
        (mem, err)
    }

    /// The segment column this stream produces.
    pub(crate) fn column(&self) -> (u8, ColumnData<'static>) {
        (self.id, ColumnData::Stream { width: self.width, len: self.col.len() })
    }

    /// Gives the offsets to `emit`, in order, a block at a time.
    pub(crate) fn produce(&self, emit: &mut Sink<'_>) -> io::Result<()> {
        let mut r = self.col.reader()?;
        let (mut block, mut acc) = (Vec::new(), 0u64);
        while r.fill(&mut block)? > 0 {
            for d in block.iter_mut() {
                acc += *d;
                *d = acc;
            }
            emit(Values::U64(&block))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::RealFs;

    fn values(p: &Packed) -> Vec<u64> {
        (0..p.len()).map(|i| p.view().get(i)).collect()
    }

    #[test]
    fn label_codes_finish_as_a_packed_builder_does() {
        let seqs: [Vec<u64>; 9] = [
            vec![],
            vec![4],
            vec![4, 4, 4],
            vec![4, 5, 6, 7],
            vec![0, 1, 1],
            vec![1, 3, 2, 255],
            vec![1, 3, 256, 2],
            vec![300, 301, 302],
            (0..600).map(|i| i % 7 + (i / 300) * 250).collect(),
        ];
        for seq in seqs {
            let (mut c, mut p) = (LabelCodes::default(), PackedBuilder::default());
            for x in &seq {
                c.push(*x);
                p.push(*x);
            }
            assert_eq!(c.len(), seq.len());
            assert!((0..=seq.len()).all(|i| c.get(i) == p.get(i)), "{seq:?}");
            let (got, want) = (c.finish(), p.finish());
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{seq:?}");
            assert_eq!(values(&got), seq);
        }
    }

    /// The offsets of `rows` (row lengths) spilled in chunks of `chunk`: what the segment gets,
    /// and whether they stayed spilled.
    fn spilled(dir: &Path, rows: &[u64], chunk: usize) -> (Vec<u64>, usize, bool) {
        let mut o = NodeOffsets::default();
        let vfs: Arc<dyn Vfs> = Arc::new(RealFs);
        o.spill_to(vfs, dir.join("offsets.scratch"), chunk).unwrap();
        let mut acc = 0;
        o.push(0);
        for r in rows {
            acc += r;
            o.push(acc);
        }
        assert!(o.error().is_none());
        match o.finish() {
            Ok(mem) => ((0..mem.len()).map(|i| mem.get(i)).collect(), 0, false),
            Err(s) => {
                let (_, data) = s.column();
                let ColumnData::Stream { width, len } = data else { panic!("not a stream") };
                let mut got = Vec::new();
                s.produce(&mut |v| {
                    if let Values::U64(v) = v {
                        got.extend_from_slice(v);
                    }
                    Ok(())
                })
                .unwrap();
                assert_eq!(got.len(), len);
                assert_eq!(s.bytes(), (len * width) as u64);
                let (back, err) = s.into_mem();
                assert!(err.is_none());
                assert_eq!((0..back.len()).map(|i| back.get(i)).collect::<Vec<_>>(), got);
                (got, width, true)
            }
        }
    }

    #[test]
    fn spilled_offsets_read_back_as_pushed() {
        let big = u64::from(u32::MAX) + 10;
        let cases: [(Vec<u64>, bool); 7] = [
            (vec![], false),
            (vec![0, 0, 0], false),
            (vec![1, 1, 1, 1], false),
            (vec![3, 0, 9, 1], true),
            ((0..70_000).map(|i| i % 13).collect(), true),
            (vec![5, 1 << 20, 7, 1 << 31], true),
            // A row past four bytes: back in memory.
            (vec![5, 6, big, 1], false),
        ];
        let tmp = tempfile::tempdir().unwrap();
        for (rows, spills) in cases {
            let want: Vec<u64> = std::iter::once(0)
                .chain(rows.iter().scan(0, |a, r| {
                    *a += r;
                    Some(*a)
                }))
                .collect();
            for chunk in [1, 100, 1 << 20] {
                let (got, width, was) = spilled(tmp.path(), &rows, chunk);
                assert_eq!(got, want, "{rows:?}");
                assert_eq!(was, spills, "{rows:?}");
                let last = *want.last().unwrap_or(&0);
                if was {
                    let p = Packed::from_u64(want.clone());
                    assert_eq!(width, p.bytes() / p.len(), "{rows:?}: width for {last}");
                }
            }
        }
        // The scratch files are gone with the columns.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
