//! Constraint-violation errors with Neo4j's status codes and messages naming the entities.

use arbor_model::{Error, Status};

use super::state::Core;
use crate::records::{NodeData, RelData};
use crate::schema::{IndexKind, Target};
use crate::types::TokenKind;
use crate::value::fmt_value;

impl Core {
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
