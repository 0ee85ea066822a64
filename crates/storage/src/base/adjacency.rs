//! Decoding CSR ranges of the base: chunked streaming (`edge_run`) and the loops specialised
//! per column representation that append a node's relationships to a caller's vector
//! (`push_edges`; the hot path of `NodeHandle::edges_into`).

use super::columns::PackedView;

/// Entries of a CSR range decoded per chunk by [`Base::edges_one_dir`] (small, so the stack
/// buffers cost little for the usual handful of relationships).
pub(super) const EDGE_CHUNK: usize = 8;

/// Calls `f(rel, other)` for the CSR entries `a..b` whose type passes `keep` (tested only with
/// `TYPED`), decoding the columns a chunk at a time.
#[inline(always)]
pub(super) fn edge_run<const TYPED: bool>(
    a: usize,
    b: usize,
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ty: PackedView<'_>,
    keep: impl Fn(u64) -> bool,
    mut f: impl FnMut(u64, u64),
) {
    let (mut os, mut rs, mut ts) = ([0u64; EDGE_CHUNK], [0u64; EDGE_CHUNK], [0u64; EDGE_CHUNK]);
    let mut p = a;
    while p < b {
        let k = (b - p).min(EDGE_CHUNK);
        other.fill(p, &mut os[..k]);
        rel.fill(p, &mut rs[..k]);
        if TYPED {
            ty.fill(p, &mut ts[..k]);
        }
        for i in 0..k {
            if !TYPED || keep(ts[i]) {
                f(rs[i], os[i]);
            }
        }
        p += k;
    }
}

/// Appends `make(rel, other)` for the CSR entries `a..e` whose type is one of `types` (all if
/// empty), with the loop specialised for the columns' usual representations: neighbours and
/// relationships as u32 or u64 slices or an id sequence, types as a constant (decided once) or
/// a u8/u16 slice. Other representations go through [`PackedView::get`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn push_edges<T>(
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ty: PackedView<'_>,
    types: &[u32],
    a: usize,
    e: usize,
    dst: &mut Vec<T>,
    make: impl Fn(u64, u64) -> T + Copy,
) {
    let keep = |t: u64| types.iter().any(|x| u64::from(*x) == t);
    let all = std::iter::repeat(0u64);
    match (types, ty) {
        ([], _) => push_with(other, rel, all, |_| true, a, e, dst, make),
        (_, PackedView::Const(t, len)) if e <= len => {
            if keep(t) {
                push_with(other, rel, all, |_| true, a, e, dst, make)
            }
        }
        ([t], PackedView::U8(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, |x| x == u64::from(*t), a, e, dst, make)
        }
        ([t], PackedView::U16(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, |x| x == u64::from(*t), a, e, dst, make)
        }
        // Several types (`[:HAS_A|HAS_B*]`): the column is still read as a slice, not
        // through a representation match per entry.
        (_, PackedView::U8(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, keep, a, e, dst, make)
        }
        (_, PackedView::U16(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, keep, a, e, dst, make)
        }
        _ => push_with(other, rel, (a..e).map(|p| ty.get(p)), keep, a, e, dst, make),
    }
}

/// [`push_edges`] once the type column is chosen (`ts`, one value per entry of `a..e`, and
/// the test `keep`): specialises the neighbour and relationship columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn push_with<T>(
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ts: impl Iterator<Item = u64>,
    keep: impl Fn(u64) -> bool,
    a: usize,
    e: usize,
    dst: &mut Vec<T>,
    make: impl Fn(u64, u64) -> T + Copy,
) {
    #[inline(always)]
    pub(super) fn run<T>(
        os: impl Iterator<Item = u64>,
        rs: impl Iterator<Item = u64>,
        ts: impl Iterator<Item = u64>,
        keep: impl Fn(u64) -> bool,
        dst: &mut Vec<T>,
        make: impl Fn(u64, u64) -> T,
    ) {
        for ((o, r), t) in os.zip(rs).zip(ts) {
            if keep(t) {
                dst.push(make(r, o));
            }
        }
    }
    pub(super) fn wide(s: &[u32]) -> impl Iterator<Item = u64> + '_ {
        s.iter().map(|x| u64::from(*x))
    }
    let seq = |first: u64| (first + a as u64)..;
    match (other, rel) {
        (PackedView::U32(o), PackedView::U32(r)) if e <= o.len() && e <= r.len() => {
            run(wide(&o[a..e]), wide(&r[a..e]), ts, keep, dst, make)
        }
        (PackedView::U32(o), PackedView::Seq(f, n)) if e <= o.len() && e <= n => {
            run(wide(&o[a..e]), seq(f), ts, keep, dst, make)
        }
        (PackedView::U64(o), PackedView::U64(r)) if e <= o.len() && e <= r.len() => {
            run(o[a..e].iter().copied(), r[a..e].iter().copied(), ts, keep, dst, make)
        }
        (PackedView::U64(o), PackedView::Seq(f, n)) if e <= o.len() && e <= n => {
            run(o[a..e].iter().copied(), seq(f), ts, keep, dst, make)
        }
        _ => run((a..e).map(|p| other.get(p)), (a..e).map(|p| rel.get(p)), ts, keep, dst, make),
    }
}
