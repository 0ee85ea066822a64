//! Unit tests of the base's columns, blobs and builder.

use super::builder::BaseBuilder;
use super::columns::{Bits, Packed, PackedBuilder};
use super::graph::Base;

use std::sync::Arc;

use arbor_model::Value;

#[cfg(test)]
use crate::value::index_key;

fn dbg_v(v: Option<Value>) -> String {
    format!("{v:?}")
}

#[test]
fn packed_picks_the_narrowest_shape() {
    assert!(matches!(Packed::from_u32(vec![7; 10]), Packed::Const { v: 7, n: 10 }));
    assert!(matches!(Packed::from_u32(vec![3, 4, 5]), Packed::Seq { first: 3, n: 3 }));
    assert!(matches!(Packed::from_u32(vec![1, 300, 2]), Packed::U16(_)));
    assert!(matches!(Packed::from_u32(vec![1, 200, 2]), Packed::U8(_)));
    let p = Packed::from_u64(vec![1, u64::MAX, 2]);
    assert!(matches!(p, Packed::U64(_)));
    assert_eq!(p.get(1), u64::MAX);
    assert_eq!(p.get(9), 0);
    let mut b = PackedBuilder::default();
    b.push(1);
    b.push(1 << 40);
    assert_eq!(b.get(1), 1 << 40);
    assert!(matches!(b.finish(), Packed::U64(_)));
}

#[test]
fn builder_runs_cost_nothing_until_broken() {
    let mut b = PackedBuilder::default();
    for i in 5..9 {
        b.push(i);
    }
    assert!(b.small.is_empty() && b.big.is_none());
    assert_eq!((b.len(), b.get(3), b.last()), (4, 8, Some(8)));
    b.push(3);
    assert_eq!((b.len(), b.get(0), b.get(3), b.get(4)), (5, 5, 8, 3));
    let p = b.finish();
    assert!(matches!(p, Packed::U8(_)));
    assert_eq!((p.len(), p.get(4)), (5, 3));
    let mut c = PackedBuilder::default();
    c.push(7);
    c.push(7);
    assert!(matches!(c.finish(), Packed::Const { v: 7, n: 2 }));
    let mut d = PackedBuilder::default();
    d.push(7);
    assert!(matches!(d.finish(), Packed::Const { v: 7, n: 1 }));
    assert!(matches!(PackedBuilder::default().finish(), Packed::Const { n: 0, .. }));
}

#[test]
fn bits_find_next() {
    let mut b = Bits::default();
    for i in [3u64, 64, 200] {
        b.set(i);
    }
    assert_eq!(b.next_from(0), Some(3));
    assert_eq!(b.next_from(4), Some(64));
    assert_eq!(b.next_from(65), Some(200));
    assert_eq!(b.next_from(201), None);
    assert!(b.get(64) && !b.get(65));
}

fn sample(sorted: bool) -> Base {
    let mut b = BaseBuilder::new(5);
    let man: Arc<str> = Arc::from("a fairly long repeated string value for interning");
    for id in [0u64, 1, 3] {
        b.node(
            id,
            &[1],
            &[
                (0, Value::Int(id as i64 * 1000)),
                (2, Value::String(man.clone())),
                (3, Value::String(Arc::from(format!("u{id}")))),
                (4, Value::Float(1.5)),
                (5, Value::List(vec![Value::Bool(true)])),
            ],
        );
    }
    assert!(!b.node(2, &[], &[]));
    b.node(4, &[1, 2], &[]);
    let rels: Vec<(u64, u64, u64, u32)> = if sorted {
        vec![(0, 0, 1, 7), (1, 0, 3, 7), (2, 1, 0, 7), (4, 3, 3, 7)]
    } else {
        vec![(0, 3, 1, 7), (1, 0, 3, 8), (2, 1, 0, 7), (4, 0, 3, 7)]
    };
    for (id, s, e, t) in rels {
        b.rel(id, s, e, t, if id == 2 { &[(9, Value::Bool(false))] } else { &[] });
    }
    b.finish(&[(1, vec![0]), (1, vec![3])])
}

#[test]
fn base_round_trips_nodes_rels_and_indexes() {
    for sorted in [true, false] {
        let b = sample(sorted);
        assert!(b.has_node(0) && b.has_node(1) && !b.has_node(2) && b.has_node(4));
        assert!(!b.has_node(99));
        let n = b.node(3).unwrap();
        assert_eq!(n.labels(), &[1]);
        assert_eq!(dbg_v(n.prop(0)), "Some(Int(3000))");
        assert_eq!(dbg_v(n.prop(3)), dbg_v(Some(Value::str("u3"))));
        assert!(n.prop(1).is_none());
        assert!(n.has_prop(4) && !n.has_prop(1));
        assert_eq!(n.props().len(), 5);
        assert_eq!(b.node(4).unwrap().labels(), &[1, 2]);
        assert_eq!(b.strings.len(), 1, "only the repeated long string is interned");
        assert!(b.has_rel(0) && !b.has_rel(3) && b.has_rel(4) && !b.has_rel(5));
        let r = b.rel(2).unwrap();
        assert_eq!((r.start(), r.end(), r.ty()), (1, 0, 7));
        assert_eq!(dbg_v(r.prop(9)), "Some(Bool(false))");
        let r = b.rel(0).unwrap();
        let want = if sorted { (0, 1) } else { (3, 1) };
        assert_eq!((r.start(), r.end()), want);
        let mut out = Vec::new();
        b.edges(0, true, true, |rel, other, ty, o| out.push((rel, other, ty, o))).unwrap();
        let mut in3 = Vec::new();
        b.edges(3, false, true, |rel, other, _, _| in3.push((rel, other))).unwrap();
        if sorted {
            assert_eq!(out, vec![(0, 1, 7, true), (1, 3, 7, true), (2, 1, 7, false)]);
            assert_eq!(in3, vec![(1, 0), (4, 3)]);
        } else {
            assert_eq!(out, vec![(1, 3, 8, true), (4, 3, 7, true), (2, 1, 7, false)]);
            assert_eq!(in3, vec![(1, 0), (4, 0)]);
        }
        assert_eq!(b.next_with_label(2, 0), Some(4));
        assert_eq!(b.next_with_label(1, 2), Some(3));
        let mut c = Vec::new();
        b.index_lookup(&(1, vec![0]), &index_key(&Value::Float(1000.0)).unwrap(), &mut c);
        assert_eq!(c, vec![1]);
        c.clear();
        b.index_lookup(&(1, vec![3]), &index_key(&Value::str("u0")).unwrap(), &mut c);
        assert_eq!(c, vec![0]);
    }
}

#[test]
fn dirty_bits() {
    let b = sample(true);
    assert!(!b.node_dirty(1));
    b.mark_node(1);
    assert!(b.node_dirty(1) && !b.node_dirty(0));
    assert!(b.node_dirty(100), "ids beyond the base always consult the delta");
    assert!(!b.rel_dirty(4));
    b.mark_rel(4);
    assert!(b.rel_dirty(4));
}

/// A relationship's ends must be nodes: past the last node, or on an id skipped between
/// two nodes (read from the code column only once there is such a hole), it is refused.
#[test]
fn relationships_need_both_ends_with_or_without_holes() {
    let mut dense = BaseBuilder::new(1);
    for id in 0..3 {
        assert!(dense.node(id, &[], &[]));
    }
    assert!(dense.rel(0, 0, 2, 0, &[]));
    assert!(!dense.rel(1, 0, 3, 0, &[]), "an end past the last node");
    assert!(!dense.rel(1, 3, 0, 0, &[]), "a start past the last node");
    assert!(dense.rel(1, 2, 1, 0, &[]));

    let mut holes = BaseBuilder::new(1);
    assert!(holes.node(0, &[], &[]) && holes.node(2, &[], &[]));
    assert!(!holes.rel(0, 0, 1, 0, &[]), "an end on a skipped id");
    assert!(!holes.rel(0, 1, 2, 0, &[]), "a start on a skipped id");
    assert!(holes.rel(0, 0, 2, 0, &[]));
}
