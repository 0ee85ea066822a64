//! The POINT index's structure: points ordered along a Z-order (Morton) curve per coordinate
//! system, and the box searches that answer `point.distance(p, c) < r` and
//! `point.withinBBox(p, lo, hi)` through it.
//!
//! A point key ([`IndexKey::Point`]) orders by CRS (srid), then by the Morton code of its
//! coordinates (the top 32 bits of each of x and y interleaved, or the top 21 bits of each of
//! x, y and z), then by the coordinates themselves. Every coordinate is first mapped to an
//! order-preserving integer ([`ordered`]), so the Morton code grows with each coordinate: every
//! point inside a box has a key between the box's corners. A search walks that key range and,
//! on meeting a key whose Morton cell lies outside the box, jumps to the next cell inside it
//! (Tropf and Herzog's BIGMIN), so it reads about the cells the box touches rather than the
//! whole range. The same order serves the shared map (recent writes, a B-tree) and the base
//! (a sorted id array): no separate structure to keep in step with the RANGE data, and
//! equality seeks are unchanged.
//!
//! A search is a superset: candidates are checked against the boxes here, and the exact
//! predicate stays in the filter above the seek. Distance searches cover the circle (or
//! sphere) with boxes: on WGS-84 a latitude band and the longitudes the circle spans (split
//! at the dateline, the whole band when it reaches a pole), plus the regions outside the
//! valid coordinate window, so points stored with out-of-range coordinates are still found.

use std::collections::BTreeMap;

use arbor_model::Point;

use crate::value::IndexKey;
use crate::zorder::{morton, unordered};

const SRID_WGS84: u32 = 4326;
const SRID_WGS84_3D: u32 = 4979;
/// The sphere radius of `point.distance` on WGS-84 (`arbor_model::spatial`).
const EARTH_RADIUS_M: f64 = 6_378_140.0;
/// Relative slack added to every search radius: the boxes must hold every point the exact
/// predicate can accept despite rounding in the distance formula.
const SLACK: f64 = 1e-9;

/// How many interleaved dimensions, and how many bits of the code they use.
fn shape(dims: usize) -> (u32, u32) {
    if dims == 3 {
        (3, 63)
    } else {
        (2, 64)
    }
}

/// The bits of the code that belong to the dimension of bit `pos`, below `pos`.
fn lower_same_dim(pos: u32, d: u32) -> u64 {
    let mut m = 0u64;
    let mut p = pos;
    while p >= d {
        p -= d;
        m |= 1 << p;
    }
    m
}

/// Whether Morton code `z` lies in the box spanned by codes `lo` and `hi`, dimension by
/// dimension.
fn in_zbox(z: u64, lo: u64, hi: u64, dims: usize) -> bool {
    let (d, bits) = shape(dims);
    (0..d).all(|k| {
        let mask = (0..bits).filter(|p| p % d == k).fold(0u64, |m, p| m | 1 << p);
        (lo & mask) <= (z & mask) && (z & mask) <= (hi & mask)
    })
}

/// BIGMIN: the smallest Morton code greater than `z` inside the box spanned by `lo` and `hi`
/// (for a `z` between them but outside the box), `None` when there is none.
fn bigmin(z: u64, lo: u64, hi: u64, dims: usize) -> Option<u64> {
    let (d, bits) = shape(dims);
    let (mut min, mut max) = (lo, hi);
    let mut best = None;
    for pos in (0..bits).rev() {
        let bit = 1u64 << pos;
        let lower = lower_same_dim(pos, d);
        match (z & bit != 0, min & bit != 0, max & bit != 0) {
            (false, false, true) => {
                best = Some((min | bit) & !lower);
                max = (max & !bit) | lower;
            }
            (false, true, true) => return Some(min),
            (true, false, false) => return best,
            (true, false, true) => min = (min | bit) & !lower,
            (_, true, false) => return best,
            _ => {}
        }
    }
    best
}

/// One search box in one CRS: inclusive bounds per coordinate (two or three used).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PointBox {
    pub srid: u32,
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub dims: usize,
}

impl PointBox {
    /// Whether the key is a point of this CRS inside the box.
    pub fn contains(&self, k: &IndexKey) -> bool {
        let IndexKey::Point(srid, x, y, z) = k else { return false };
        if *srid != self.srid {
            return false;
        }
        let c = [f64::from_bits(*x), f64::from_bits(*y), z.map_or(0.0, f64::from_bits)];
        (0..self.dims).all(|i| self.lo[i] <= c[i] && c[i] <= self.hi[i])
    }

    fn key(&self, c: &[f64; 3]) -> IndexKey {
        let b = |v: f64| if v == 0.0 { 0 } else { v.to_bits() };
        let z = (self.dims == 3).then(|| b(c[2]));
        IndexKey::Point(self.srid, b(c[0]), b(c[1]), z)
    }

    /// The smallest key of a point in the box.
    pub fn start(&self) -> IndexKey {
        self.key(&self.lo)
    }

    /// The largest key of a point in the box.
    pub fn end(&self) -> IndexKey {
        self.key(&self.hi)
    }

    fn codes(&self) -> (u64, u64) {
        let code = |k: &IndexKey| match k {
            IndexKey::Point(_, x, y, z) => morton(*x, *y, *z),
            _ => 0,
        };
        (code(&self.start()), code(&self.end()))
    }

    /// Where to continue after `k`, a key in the box's range whose cell lies outside the box:
    /// the first key of the next cell inside it (`None`: no cell left), or `k` itself when its
    /// cell is inside (check the next key).
    fn skip_to(&self, k: &IndexKey) -> Option<Option<IndexKey>> {
        let IndexKey::Point(_, x, y, z) = k else { return Some(None) };
        let (lo, hi) = self.codes();
        let code = morton(*x, *y, *z);
        if in_zbox(code, lo, hi, self.dims) {
            return Some(None);
        }
        let next = bigmin(code, lo, hi, self.dims)?;
        (next > code).then(|| Some(self.cell_start(next)))
    }

    /// The smallest key whose Morton code is `code`.
    fn cell_start(&self, code: u64) -> IndexKey {
        let (d, bits) = shape(self.dims);
        let mut parts = [0u64; 3];
        for pos in 0..bits {
            if code >> pos & 1 == 1 {
                let dim = (d - 1 - pos % d) as usize;
                parts[dim] |= 1 << (pos / d);
            }
        }
        let shift = if self.dims == 3 { 43 } else { 32 };
        let bits_of = |p: u64| unordered(p << shift);
        let z = (self.dims == 3).then(|| bits_of(parts[2]));
        IndexKey::Point(self.srid, bits_of(parts[0]), bits_of(parts[1]), z)
    }
}

/// What a spatial seek asks for.
#[derive(Clone, Debug)]
pub enum PointQuery {
    /// Points within `distance` of `center` (`point.distance(p, center) <[=] distance`).
    Distance { center: Point, distance: f64 },
    /// `point.withinBBox(p, lo, hi)`.
    BBox { lo: Point, hi: Point },
}

impl PointQuery {
    /// The boxes that hold every point the predicate can accept (empty: none can).
    pub(crate) fn boxes(&self) -> Vec<PointBox> {
        match self {
            PointQuery::Distance { center, distance } => distance_boxes(center, *distance),
            PointQuery::BBox { lo, hi } => bbox_boxes(lo, hi),
        }
    }
}

fn coords(p: &Point) -> [f64; 3] {
    [p.x, p.y, p.z.unwrap_or(0.0)]
}

fn bbox_boxes(lo: &Point, hi: &Point) -> Vec<PointBox> {
    if lo.srid != hi.srid || lo.z.is_some() != hi.z.is_some() || lo.y > hi.y {
        return Vec::new();
    }
    let dims = if lo.z.is_some() { 3 } else { 2 };
    let (l, h) = (coords(lo), coords(hi));
    if dims == 3 && l[2] > h[2] {
        return Vec::new();
    }
    let one = |x0: f64, x1: f64| PointBox {
        srid: lo.srid,
        lo: [x0, l[1], l[2]],
        hi: [x1, h[1], h[2]],
        dims,
    };
    if l[0] <= h[0] {
        vec![one(l[0], h[0])]
    } else if matches!(lo.srid, SRID_WGS84 | SRID_WGS84_3D) {
        // The box crosses the dateline.
        vec![one(l[0], f64::INFINITY), one(f64::NEG_INFINITY, h[0])]
    } else {
        Vec::new()
    }
}

fn distance_boxes(c: &Point, d: f64) -> Vec<PointBox> {
    if d.is_nan() || d < 0.0 {
        return Vec::new();
    }
    let dims = if c.z.is_some() { 3 } else { 2 };
    let r = d * (1.0 + SLACK) + SLACK;
    let cc = coords(c);
    let (zlo, zhi) = (cc[2] - r, cc[2] + r);
    let boxed = |x0: f64, x1: f64, y0: f64, y1: f64| PointBox {
        srid: c.srid,
        lo: [x0, y0, zlo],
        hi: [x1, y1, zhi],
        dims,
    };
    if !matches!(c.srid, SRID_WGS84 | SRID_WGS84_3D) {
        return vec![boxed(cc[0] - r, cc[0] + r, cc[1] - r, cc[1] + r)];
    }
    let (inf, ninf) = (f64::INFINITY, f64::NEG_INFINITY);
    // Points outside the valid window (never created by Neo4j) are always candidates.
    let mut out = vec![
        boxed(ninf, inf, 90.0f64.next_up(), inf),
        boxed(ninf, inf, ninf, (-90.0f64).next_down()),
        boxed(180.0f64.next_up(), inf, -90.0, 90.0),
        boxed(ninf, (-180.0f64).next_down(), -90.0, 90.0),
    ];
    let theta = (r / EARTH_RADIUS_M).to_degrees() * (1.0 + SLACK) + SLACK;
    let (lat0, lat1) = (cc[1] - theta, cc[1] + theta);
    if theta >= 90.0 || lat0 <= -90.0 || lat1 >= 90.0 || !(-90.0..=90.0).contains(&cc[1]) {
        // The circle reaches a pole (or the centre is off the map): every longitude.
        out.push(boxed(-180.0, 180.0, lat0.max(-90.0), lat1.min(90.0)));
        return out;
    }
    // The widest longitude a spherical cap of angular radius theta spans at latitude lat.
    let s = theta.to_radians().sin() / cc[1].to_radians().cos();
    let dlon = if s >= 1.0 { 180.0 } else { s.asin().to_degrees() * (1.0 + SLACK) + SLACK };
    let (lon0, lon1) = (cc[0] - dlon, cc[0] + dlon);
    if dlon >= 180.0 || !(-180.0..=180.0).contains(&cc[0]) {
        out.push(boxed(-180.0, 180.0, lat0, lat1));
    } else if lon0 < -180.0 {
        out.push(boxed(lon0 + 360.0, 180.0, lat0, lat1));
        out.push(boxed(-180.0, lon1, lat0, lat1));
    } else if lon1 > 180.0 {
        out.push(boxed(lon0, 180.0, lat0, lat1));
        out.push(boxed(-180.0, lon1 - 360.0, lat0, lat1));
    } else {
        out.push(boxed(lon0, lon1, lat0, lat1));
    }
    out
}

/// Appends the ids of every entry of `m` inside `b`.
pub(crate) fn map_ids<S>(
    m: &BTreeMap<IndexKey, S>,
    b: &PointBox,
    ids: impl Fn(&S, &mut Vec<u64>),
    out: &mut Vec<u64>,
) {
    let end = b.end();
    let mut from = b.start();
    'outer: loop {
        for (k, set) in m.range(from.clone()..) {
            if *k > end {
                return;
            }
            if b.contains(k) {
                ids(set, out);
                continue;
            }
            match b.skip_to(k) {
                None => return,
                Some(None) => {}
                Some(Some(next)) if next > *k => {
                    from = next;
                    continue 'outer;
                }
                Some(Some(_)) => {}
            }
        }
        return;
    }
}

/// Appends the ids of `sorted` (ordered by their keys, `key_of`) whose key is inside `b`.
pub(crate) fn sorted_ids(
    sorted: &[u64],
    key_of: impl Fn(u64) -> Option<IndexKey>,
    b: &PointBox,
    out: &mut Vec<u64>,
) {
    let end = b.end();
    let start = b.start();
    let mut i = sorted.partition_point(|id| key_of(*id).is_some_and(|k| k < start));
    while i < sorted.len() {
        let Some(k) = key_of(sorted[i]) else {
            i += 1;
            continue;
        };
        if k > end {
            return;
        }
        if b.contains(&k) {
            out.push(sorted[i]);
            i += 1;
            continue;
        }
        match b.skip_to(&k) {
            None => return,
            Some(Some(next)) if next > k => {
                let rest = &sorted[i..];
                i += rest.partition_point(|id| key_of(*id).is_some_and(|k| k < next)).max(1);
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zorder::ordered;

    fn key(srid: u32, x: f64, y: f64, z: Option<f64>) -> IndexKey {
        crate::value::index_key(&arbor_model::Value::Point(Point { srid, x, y, z }))
            .expect("a point key")
    }

    #[test]
    fn ordered_keeps_float_order() {
        let xs = [f64::NEG_INFINITY, -1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, f64::INFINITY];
        for w in xs.windows(2) {
            let (a, b) = (ordered(w[0].to_bits()), ordered(w[1].to_bits()));
            assert!(a <= b, "{} {}", w[0], w[1]);
            assert_eq!(unordered(a), w[0].to_bits());
        }
    }

    #[test]
    fn morton_grows_with_each_coordinate() {
        let vals = [-1e6, -3.5, -1.0, 0.0, 0.25, 1.0, 7.0, 1e6];
        for &x in &vals {
            for w in vals.windows(2) {
                let b = |v: f64| v.to_bits();
                assert!(morton(b(x), b(w[0]), None) <= morton(b(x), b(w[1]), None));
                assert!(morton(b(w[0]), b(x), None) <= morton(b(w[1]), b(x), None));
                let (z0, z1) = (Some(b(w[0])), Some(b(w[1])));
                assert!(morton(b(x), b(x), z0) <= morton(b(x), b(x), z1));
            }
        }
    }

    #[test]
    fn cell_start_has_the_code() {
        for dims in [2usize, 3] {
            let b = PointBox { srid: 7203, lo: [0.0; 3], hi: [0.0; 3], dims };
            for code in [0u64, 1, 5, 0x1234_5678_9abc_def0 >> (64 - shape(dims).1)] {
                let IndexKey::Point(_, x, y, z) = b.cell_start(code) else { panic!() };
                assert_eq!(morton(x, y, z), code, "dims {dims}");
            }
        }
    }

    #[test]
    fn box_search_equals_a_filter() {
        let mut m: BTreeMap<IndexKey, u64> = BTreeMap::new();
        let mut id = 0;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 20_001) as f64 / 100.0 - 100.0
        };
        for _ in 0..3000 {
            let (x, y, z) = (rnd(), rnd(), rnd());
            m.insert(key(7203, x, y, None), id);
            m.insert(key(9157, x, y, Some(z)), id + 1);
            id += 2;
        }
        for _ in 0..200 {
            let (a, b, c, d, e, f) = (rnd(), rnd(), rnd(), rnd(), rnd(), rnd());
            for (srid, dims) in [(7203, 2), (9157, 3)] {
                let bx = PointBox {
                    srid,
                    lo: [a.min(b), c.min(d), e.min(f)],
                    hi: [a.max(b), c.max(d), e.max(f)],
                    dims,
                };
                let mut got = Vec::new();
                map_ids(&m, &bx, |v, out| out.push(*v), &mut got);
                let mut want: Vec<u64> =
                    m.iter().filter(|(k, _)| bx.contains(k)).map(|(_, v)| *v).collect();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "{bx:?}");
                let sorted: Vec<u64> = m.values().copied().collect();
                let keys: std::collections::HashMap<u64, IndexKey> =
                    m.iter().map(|(k, v)| (*v, k.clone())).collect();
                let mut got2 = Vec::new();
                sorted_ids(&sorted, |i| keys.get(&i).cloned(), &bx, &mut got2);
                got2.sort_unstable();
                assert_eq!(got2, want, "{bx:?}");
            }
        }
    }

    #[test]
    fn distance_boxes_cover_the_circle() {
        let p = |x, y| Point { srid: SRID_WGS84, x, y, z: None };
        let centers =
            [p(179.9, 10.0), p(-179.9, -10.0), p(0.0, 89.99), p(45.0, -89.9), p(0.0, 0.0)];
        for c in centers {
            for d in [1.0, 1_000.0, 50_000.0, 3_000_000.0, 30_000_000.0] {
                let boxes = PointQuery::Distance { center: c, distance: d }.boxes();
                for i in 0..360 {
                    for j in 0..180 {
                        let q = p(i as f64 - 180.0 + 0.5, j as f64 - 90.0 + 0.5);
                        let within = arbor_model::spatial::distance(&c, &q).is_some_and(|x| x <= d);
                        let k = key(SRID_WGS84, q.x, q.y, None);
                        if within {
                            assert!(boxes.iter().any(|b| b.contains(&k)), "{c:?} {d} {q:?}");
                        }
                    }
                }
            }
        }
    }
}
