//! Constraint-violation errors with Neo4j's status codes and messages naming the entities, and
//! the property-type constraint checks (at commit, and over existing data at creation).

use arbor_model::{Error, Result, Status, Value};

use super::state::Core;
use super::tx::Transaction;
use crate::records::{NodeData, RelData};
use crate::schema::{IndexKind, PropertyTypes, Target};
use crate::types::TokenKind;
use crate::value::fmt_value;

impl Transaction {
    /// Property-type constraints: every property this transaction leaves on a constrained
    /// node or relationship has one of the allowed types. Caller holds the commit mutex.
    pub(super) fn validate_types(&self) -> Result<()> {
        let rules = self.core.schema.read().type_rules();
        if rules.is_empty() {
            return Ok(());
        }
        for (id, w) in &self.nodes {
            let Some(d) = &w.data else { continue };
            for &(_, label, key, types) in rules.iter().filter(|r| !r.0) {
                if !d.has_label(label) {
                    continue;
                }
                if let Some(v) = d.prop(key).filter(|v| !types.accepts(v)) {
                    return Err(self.core.type_violation(false, *id, label, key, types, v));
                }
            }
        }
        for (id, w) in &self.rels {
            let Some(r) = &w.data else { continue };
            for &(_, ty, key, types) in rules.iter().filter(|x| x.0 && x.1 == r.ty) {
                let v = crate::records::prop_of(&r.props, key).filter(|v| !types.accepts(v));
                if let Some(v) = v {
                    return Err(self.core.type_violation(true, *id, ty, key, types, v));
                }
            }
        }
        Ok(())
    }
}

impl Core {
    /// The error Neo4j (Enterprise) reports for a property of the wrong type.
    fn type_violation(
        &self,
        rel: bool,
        id: u64,
        owner: u32,
        key: u32,
        types: PropertyTypes,
        v: &Value,
    ) -> Error {
        Error::new(
            Status::ConstraintValidationFailed,
            self.type_violation_text(rel, id, owner, key, types, v),
        )
    }

    fn type_violation_text(
        &self,
        rel: bool,
        id: u64,
        owner: u32,
        key: u32,
        types: PropertyTypes,
        v: &Value,
    ) -> String {
        let t = self.tokens.read();
        let kind = if rel { TokenKind::RelType } else { TokenKind::Label };
        let o = t.name(kind, owner).unwrap_or_default();
        let k = t.name(TokenKind::PropertyKey, key).unwrap_or_default();
        let (entity, what) = if rel { ("Relationship", "type") } else { ("Node", "label") };
        format!(
            "{entity}({id}) with {what} `{o}` required the property `{k}` to be of type `{}`, \
             but was of type `{}`.",
            types.name(),
            PropertyTypes::value_type_name(v)
        )
    }

    /// Fails with `ConstraintCreationFailed` if the newest committed state of an entity with
    /// label (type, with `rel`) `owner` has property `keys[0]` of a type outside `keys[1]`'s
    /// bits, as Neo4j Enterprise words it.
    pub(crate) fn check_type_data(
        &self,
        rel: bool,
        owner: u32,
        keys: &[u32],
        name: &str,
    ) -> Result<()> {
        let (key, types) = match keys {
            [k, bits] => (*k, PropertyTypes(*bits)),
            _ => return Err(Error::internal("a property-type rule without its types")),
        };
        let mut ids: Vec<u64> = if rel { self.type_sets.read() } else { self.label_sets.read() }
            .get(&owner)
            .map(|s| s.iter().collect())
            .unwrap_or_default();
        let base = self.base();
        let mut cur = 0;
        loop {
            let next = if rel {
                base.next_rel_of_types(&[owner], cur)
            } else {
                base.next_with_label(owner, cur)
            };
            let Some(id) = next else { break };
            ids.push(id);
            cur = id + 1;
        }
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let value = if rel {
                self.rel_newest_data(id)
                    .filter(|r| r.ty == owner)
                    .and_then(|r| crate::records::prop_of(&r.props, key).cloned())
            } else {
                self.node_newest(id)
                    .1
                    .filter(|d| d.has_label(owner))
                    .and_then(|d| d.prop(key).cloned())
            };
            let Some(v) = value.filter(|v| !types.accepts(v)) else { continue };
            let detail = self.type_violation_text(rel, id, owner, key, types, &v);
            let type_text = if rel { "RELATIONSHIP PROPERTY TYPE" } else { "NODE PROPERTY TYPE" };
            return Err(Error::new(
                Status::ConstraintCreationFailed,
                format!(
                    "Unable to create Constraint( name='{name}', type='{type_text}', schema={}, \
                     propertyType={} ):\n{detail} Note that only the first found violation is \
                     shown.",
                    self.schema_text(rel, owner, &[key]),
                    types.name()
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn names(&self, label: u32, keys: &[u32]) -> (String, Vec<String>) {
        let t = self.tokens.read();
        let l = t.name(TokenKind::Label, label).map(|s| s.to_string()).unwrap_or_default();
        let ks = keys
            .iter()
            .map(|k| t.name(TokenKind::PropertyKey, *k).map(|s| s.to_string()).unwrap_or_default())
            .collect();
        (l, ks)
    }

    /// The constraint error Neo4j reports for a duplicate key (`d`: the offending node).
    pub(crate) fn unique_violation(&self, existing: u64, t: &Target, d: &NodeData) -> Error {
        let (l, ks) = self.names(t.0, &t.1);
        let v = |k: u32| d.prop(k).map_or_else(|| "NULL".to_string(), fmt_value);
        let what = if ks.len() == 1 {
            format!("property `{}` = {}", ks[0], v(t.1[0]))
        } else {
            let parts: Vec<String> =
                ks.iter().zip(&t.1).map(|(n, k)| format!("`{n}` = {}", v(*k))).collect();
            format!("properties {}", parts.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Node({existing}) already exists with label `{l}` and {what}"),
        )
    }

    /// The constraint error Neo4j reports for a duplicate relationship key (`r`: the
    /// offending relationship).
    pub(crate) fn rel_unique_violation(&self, existing: u64, t: &Target, r: &RelData) -> Error {
        let tn = {
            let tokens = self.tokens.read();
            tokens.name(TokenKind::RelType, t.0).map(|s| s.to_string()).unwrap_or_default()
        };
        let (_, ks) = self.names(t.0, &t.1);
        let v = |k: u32| {
            crate::records::prop_of(&r.props, k).map_or_else(|| "NULL".to_string(), fmt_value)
        };
        let what = if ks.len() == 1 {
            format!("property `{}` = {}", ks[0], v(t.1[0]))
        } else {
            let parts: Vec<String> =
                ks.iter().zip(&t.1).map(|(n, k)| format!("`{n}` = {}", v(*k))).collect();
            format!("properties {}", parts.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Relationship({existing}) already exists with type `{tn}` and {what}"),
        )
    }

    /// The constraint error Neo4j reports for a relationship lacking a required property
    /// (`keys`: the constraint's keys; a key constraint names them all).
    pub(crate) fn missing_rel_property(
        &self,
        id: u64,
        ty: u32,
        keys: &[u32],
        kind: IndexKind,
    ) -> Error {
        let tn = {
            let tokens = self.tokens.read();
            tokens.name(TokenKind::RelType, ty).map(|s| s.to_string()).unwrap_or_default()
        };
        let (_, ks) = self.names(ty, keys);
        let what = if kind == IndexKind::Existence && ks.len() == 1 {
            format!("property `{}`", ks[0])
        } else {
            let q: Vec<String> = ks.iter().map(|k| format!("`{k}`")).collect();
            format!("properties ({})", q.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Relationship({id}) with type `{tn}` must have the {what}"),
        )
    }

    /// The constraint error Neo4j reports for a node lacking a required property.
    pub(crate) fn missing_property(
        &self,
        id: u64,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
    ) -> Error {
        let (l, ks) = self.names(label, keys);
        let what = if kind == IndexKind::Existence && ks.len() == 1 {
            format!("property `{}`", ks[0])
        } else {
            let q: Vec<String> = ks.iter().map(|k| format!("`{k}`")).collect();
            format!("properties ({})", q.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Node({id}) with label `{l}` must have the {what}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use arbor_model::{NodeId, Status, Value};

    use crate::schema::{IndexKind, PropertyTypes};
    use crate::{Store, StoreConfig, TokenKind};

    fn cfg() -> StoreConfig {
        StoreConfig {
            checkpoint_interval: Duration::from_secs(3600),
            checkpoint_wal_bytes: u64::MAX,
            ..StoreConfig::default()
        }
    }

    fn tok(s: &Store, kind: TokenKind, n: &str) -> u32 {
        s.get_or_create_token(kind, n).unwrap()
    }

    const STRING: u32 = 1 << 1;
    const INTEGER: u32 = 1 << 2;

    // Goal: a property-type constraint is checked against existing data at creation and
    // enforced at commit for nodes and relationships, with Neo4j's codes.
    #[test]
    fn property_types_enforced_at_creation_and_commit() {
        let s = Store::in_memory();
        let (l, p) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "p"));
        let t = tok(&s, TokenKind::RelType, "T");
        let mut w = s.begin(false);
        let n = w.create_node(&[l], vec![(p, Value::Int(1))]).unwrap();
        w.create_rel(n, n, t, vec![(p, Value::str("x"))]).unwrap();
        w.commit().unwrap();
        let e = s.create_rule(IndexKind::PropertyType, l, &[p, STRING], Some("c")).unwrap_err();
        assert_eq!(e.status, Status::ConstraintCreationFailed);
        assert!(e.message.contains("but was of type `INTEGER`"), "{}", e.message);
        assert!(s.indexes().is_empty(), "a failed constraint leaves nothing behind");
        assert!(s.create_rule(IndexKind::PropertyType, l, &[p, INTEGER], Some("c")).unwrap());
        assert!(s
            .create_rel_constraint(IndexKind::PropertyType, t, &[p, STRING], Some("r"))
            .unwrap());
        let listed = s.indexes();
        assert_eq!(listed[0].property_type, Some(PropertyTypes(INTEGER)));
        assert_eq!(listed[0].properties, vec![p]);
        let mut w = s.begin(false);
        w.create_node(&[l], vec![(p, Value::str("no"))]).unwrap();
        let e = w.commit().unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed);
        assert!(e.message.contains("to be of type `INTEGER`, but was of type `STRING`"));
        let mut w = s.begin(false);
        w.create_rel(n, n, t, vec![(p, Value::Int(3))]).unwrap();
        let e = w.commit().unwrap_err();
        assert!(e.message.starts_with("Relationship("), "{}", e.message);
        // Allowed: the right type, or no property at all.
        let mut w = s.begin(false);
        w.create_node(&[l], vec![(p, Value::Int(2))]).unwrap();
        w.create_node(&[l], vec![]).unwrap();
        w.commit().unwrap();
    }

    // Goal: a transaction that started before the constraint existed is still checked at its
    // commit (the rule is read under the commit mutex), so no wrong type slips in.
    #[test]
    fn concurrent_transaction_is_checked_at_commit() {
        let s = Store::in_memory();
        let (l, p) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "p"));
        let mut early = s.begin(false);
        early.create_node(&[l], vec![(p, Value::Int(5))]).unwrap();
        assert!(s.create_rule(IndexKind::PropertyType, l, &[p, STRING], None).unwrap());
        let e = early.commit().unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed);
        let r = s.begin(true);
        assert_eq!(r.next_node(Some(l), NodeId(0)), None);
    }

    // Goal: property-type constraints and TEXT/POINT indexes are durable across a clean
    // restart (checkpoint) and a crash (WAL replay), and still enforced afterwards.
    #[test]
    fn schema_kinds_survive_restart_and_crash() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path(), cfg()).unwrap();
            let (l, p) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "p"));
            assert!(s.create_rule(IndexKind::PropertyType, l, &[p, STRING], Some("c")).unwrap());
            assert!(s.create_rule(IndexKind::Text, l, &[p], Some("t")).unwrap());
            s.checkpoint().unwrap();
            assert!(s.create_rule(IndexKind::Point, l, &[p], Some("pt")).unwrap());
            s.crash_for_test();
        }
        let s = Store::open(dir.path(), cfg()).unwrap();
        let kinds: Vec<(String, IndexKind)> =
            s.indexes().into_iter().map(|i| (i.name, i.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("c".to_string(), IndexKind::PropertyType),
                ("pt".to_string(), IndexKind::Point),
                ("t".to_string(), IndexKind::Text)
            ]
        );
        let (l, p) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "p"));
        let mut w = s.begin(false);
        w.create_node(&[l], vec![(p, Value::Int(1))]).unwrap();
        assert_eq!(w.commit().unwrap_err().status, Status::ConstraintValidationFailed);
        // The TEXT index answers seeks and counts them.
        let mut w = s.begin(false);
        let id = w.create_node(&[l], vec![(p, Value::str("abc"))]).unwrap();
        w.commit().unwrap();
        s.await_indexes(None, Duration::from_secs(30)).unwrap();
        let r = s.begin(true);
        assert_eq!(r.index_prefix(l, p, "ab"), Some(vec![id]));
        assert_eq!(r.index_seek(l, p, &Value::str("abc")), Some(vec![id]));
        let t = s.indexes().into_iter().find(|i| i.name == "t").unwrap();
        assert_eq!(t.read_count, 2, "both seeks used the TEXT index (no RANGE index here)");
        assert!(t.last_read_ms.is_some() && t.tracked_since_ms <= t.last_read_ms);
    }
}
