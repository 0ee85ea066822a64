//! Cypher types as procedure signatures declare them (`STRING?`, `LIST? OF INTEGER?`, ...):
//! parsing, display, and the assignability rules the binder and executor apply to arguments.

use std::fmt;

use arbor_model::Value;

/// A declared Cypher type. Every type is nullable here (`?`): procedure arguments and outputs
/// may always be null, which is what Neo4j's `?` suffix says for all built-in signatures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CypherType {
    Any,
    Boolean,
    String,
    Number,
    Integer,
    Float,
    Map,
    List(Box<CypherType>),
    Node,
    Relationship,
    Path,
    Point,
    Date,
    Time,
    LocalTime,
    DateTime,
    LocalDateTime,
    Duration,
}

impl CypherType {
    /// Parses `STRING?`, `INTEGER`, `LIST? OF STRING?`, `LIST<STRING>`, `ANY?`... (case
    /// insensitive); `None` for an unknown type name.
    pub fn parse(text: &str) -> Option<CypherType> {
        let t = text.trim().trim_end_matches('?').trim();
        let upper = t.to_ascii_uppercase();
        if let Some(rest) = upper.strip_prefix("LIST") {
            let rest = rest.trim_start().trim_start_matches('?').trim();
            if rest.is_empty() {
                return Some(CypherType::List(Box::new(CypherType::Any)));
            }
            let inner = match rest.strip_prefix("OF ") {
                Some(r) => r,
                None => rest.strip_prefix('<')?.strip_suffix('>')?,
            };
            return Some(CypherType::List(Box::new(CypherType::parse(inner)?)));
        }
        Some(match upper.as_str() {
            "ANY" => CypherType::Any,
            "BOOLEAN" | "BOOL" => CypherType::Boolean,
            "STRING" => CypherType::String,
            "NUMBER" => CypherType::Number,
            "INTEGER" | "INT" => CypherType::Integer,
            "FLOAT" => CypherType::Float,
            "MAP" => CypherType::Map,
            "NODE" => CypherType::Node,
            "RELATIONSHIP" => CypherType::Relationship,
            "PATH" => CypherType::Path,
            "POINT" => CypherType::Point,
            "DATE" => CypherType::Date,
            "TIME" => CypherType::Time,
            "LOCALTIME" | "LOCAL TIME" => CypherType::LocalTime,
            "DATETIME" => CypherType::DateTime,
            "LOCALDATETIME" | "LOCAL DATETIME" => CypherType::LocalDateTime,
            "DURATION" => CypherType::Duration,
            _ => return None,
        })
    }

    /// Whether `v` may be passed where this type is declared. Null always may; an integer may
    /// be passed as a FLOAT (it is converted, see [`CypherType::coerce`]).
    pub fn accepts(&self, v: &Value) -> bool {
        match (self, v) {
            (_, Value::Null) | (CypherType::Any, _) => true,
            (CypherType::Boolean, Value::Bool(_)) => true,
            (CypherType::String, Value::String(_)) => true,
            (CypherType::Number, Value::Int(_) | Value::Float(_)) => true,
            (CypherType::Integer, Value::Int(_)) => true,
            (CypherType::Float, Value::Float(_) | Value::Int(_)) => true,
            (CypherType::Map, Value::Map(_) | Value::Node(_) | Value::Relationship(_)) => true,
            (CypherType::Map, Value::NodeData(_) | Value::RelData(_)) => true,
            (CypherType::List(inner), Value::List(items)) => items.iter().all(|i| inner.accepts(i)),
            (CypherType::Node, Value::Node(_) | Value::NodeData(_)) => true,
            (CypherType::Relationship, Value::Relationship(_) | Value::RelData(_)) => true,
            (CypherType::Path, Value::Path(_) | Value::PathData(_)) => true,
            (t, v) => t.name_matches(v.type_name()),
        }
    }

    /// Temporal and spatial values are recognized by their type name.
    fn name_matches(&self, type_name: &str) -> bool {
        let want = match self {
            CypherType::Point => "Point",
            CypherType::Date => "Date",
            CypherType::Time => "Time",
            CypherType::LocalTime => "LocalTime",
            CypherType::DateTime => "DateTime",
            CypherType::LocalDateTime => "LocalDateTime",
            CypherType::Duration => "Duration",
            _ => return false,
        };
        type_name.eq_ignore_ascii_case(want)
    }

    /// Converts an accepted value to the declared type (INTEGER to FLOAT, element-wise in
    /// lists); other values are returned unchanged.
    pub fn coerce(&self, v: Value) -> Value {
        match (self, v) {
            (CypherType::Float, Value::Int(i)) => Value::Float(i as f64),
            (CypherType::List(inner), Value::List(items)) => {
                Value::List(items.into_iter().map(|i| inner.coerce(i)).collect())
            }
            (_, v) => v,
        }
    }
}

impl fmt::Display for CypherType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            CypherType::List(inner) => return write!(f, "LIST<{inner}>"),
            CypherType::Any => "ANY",
            CypherType::Boolean => "BOOLEAN",
            CypherType::String => "STRING",
            CypherType::Number => "NUMBER",
            CypherType::Integer => "INTEGER",
            CypherType::Float => "FLOAT",
            CypherType::Map => "MAP",
            CypherType::Node => "NODE",
            CypherType::Relationship => "RELATIONSHIP",
            CypherType::Path => "PATH",
            CypherType::Point => "POINT",
            CypherType::Date => "DATE",
            CypherType::Time => "TIME",
            CypherType::LocalTime => "LOCAL TIME",
            CypherType::DateTime => "DATETIME",
            CypherType::LocalDateTime => "LOCAL DATETIME",
            CypherType::Duration => "DURATION",
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tck_and_neo4j_spellings() {
        assert_eq!(CypherType::parse("STRING?"), Some(CypherType::String));
        assert_eq!(CypherType::parse("integer"), Some(CypherType::Integer));
        assert_eq!(
            CypherType::parse("LIST? OF STRING?"),
            Some(CypherType::List(Box::new(CypherType::String)))
        );
        assert_eq!(
            CypherType::parse("LIST<INTEGER>"),
            Some(CypherType::List(Box::new(CypherType::Integer)))
        );
        assert_eq!(CypherType::parse("WIDGET?"), None);
        for t in [CypherType::LocalTime, CypherType::LocalDateTime, CypherType::Duration] {
            assert_eq!(CypherType::parse(&t.to_string()), Some(t));
        }
        assert_eq!(CypherType::List(Box::new(CypherType::Float)).to_string(), "LIST<FLOAT>");
    }

    #[test]
    fn assignability_and_coercion() {
        assert!(CypherType::Number.accepts(&Value::Int(1)));
        assert!(CypherType::Number.accepts(&Value::Float(1.5)));
        assert!(!CypherType::Integer.accepts(&Value::Bool(true)));
        assert!(!CypherType::Integer.accepts(&Value::Float(1.0)));
        assert!(CypherType::Integer.accepts(&Value::Null));
        assert!(CypherType::Float.accepts(&Value::Int(42)));
        assert!(matches!(CypherType::Float.coerce(Value::Int(42)), Value::Float(f) if f == 42.0));
        assert!(matches!(CypherType::Number.coerce(Value::Int(42)), Value::Int(42)));
        assert!(!CypherType::List(Box::new(CypherType::String))
            .accepts(&Value::List(vec![Value::Int(1)])));
    }
}
