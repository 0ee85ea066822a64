//! The closed property types of Neo4j's property-type constraints (`REQUIRE n.p IS :: STRING |
//! LIST<INTEGER NOT NULL>`): a set of the storable scalar types and lists of them, kept as a
//! bit set so that a union is normalised (deduplicated, in Neo4j's order) by construction.

use crate::Value;

/// The scalar types a property-type constraint can name, in Neo4j's normalised order.
pub const SCALARS: [&str; 11] = [
    "BOOLEAN",
    "STRING",
    "INTEGER",
    "FLOAT",
    "DATE",
    "LOCAL TIME",
    "ZONED TIME",
    "LOCAL DATETIME",
    "ZONED DATETIME",
    "DURATION",
    "POINT",
];

/// Bit of `LIST<T NOT NULL>` for scalar `T` is the scalar's bit shifted by this.
const LIST_SHIFT: u32 = 16;

/// A closed union of property types (at least one). Bits `0..11` are [`SCALARS`], bits
/// `16..27` the lists of them (`LIST<T NOT NULL>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PropertyTypes(pub u32);

impl PropertyTypes {
    /// The scalar type at `index` of [`SCALARS`], or its list with `list`.
    pub fn one(index: usize, list: bool) -> PropertyTypes {
        PropertyTypes(1 << (index as u32 + if list { LIST_SHIFT } else { 0 }))
    }

    /// The union of two sets.
    pub fn union(self, other: PropertyTypes) -> PropertyTypes {
        PropertyTypes(self.0 | other.0)
    }

    /// Whether the bits name only known types and at least one.
    pub fn is_valid(self) -> bool {
        let known = (1u32 << SCALARS.len()) - 1;
        self.0 != 0 && self.0 & !(known | known << LIST_SHIFT) == 0
    }

    /// The index in [`SCALARS`] of a scalar type name as Neo4j 5 spells it (synonyms
    /// included: `BOOL`, `VARCHAR`, `INT`, `SIGNED INTEGER`, `TIME WITHOUT TIME ZONE`, ...);
    /// `words` are the uppercase words of the name.
    pub fn scalar_index(words: &[&str]) -> Option<usize> {
        let name = words.join(" ");
        let canonical = match name.as_str() {
            "BOOL" => "BOOLEAN",
            "VARCHAR" => "STRING",
            "INT" | "SIGNED INTEGER" | "INTEGER64" | "INT64" => "INTEGER",
            "FLOAT64" => "FLOAT",
            "TIME WITHOUT TIME ZONE" => "LOCAL TIME",
            "TIME WITH TIME ZONE" => "ZONED TIME",
            "TIMESTAMP WITHOUT TIME ZONE" => "LOCAL DATETIME",
            "TIMESTAMP WITH TIME ZONE" => "ZONED DATETIME",
            other => other,
        };
        SCALARS.iter().position(|s| *s == canonical)
    }

    /// The normalised text: the members in Neo4j's order joined by ` | `
    /// (`STRING | LIST<INTEGER NOT NULL>`).
    pub fn name(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (i, s) in SCALARS.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                parts.push((*s).to_string());
            }
        }
        for (i, s) in SCALARS.iter().enumerate() {
            if self.0 & (1 << (i as u32 + LIST_SHIFT)) != 0 {
                parts.push(format!("LIST<{s} NOT NULL>"));
            }
        }
        parts.join(" | ")
    }

    /// Whether a stored value `v` has one of the types (an empty list has every list type).
    pub fn accepts(self, v: &Value) -> bool {
        match v {
            Value::List(items) if items.is_empty() => self.0 >> LIST_SHIFT != 0,
            _ => value_bit(v).is_some_and(|b| self.0 & b != 0),
        }
    }

    /// The property type of a stored value as Neo4j names it in constraint errors
    /// (`INTEGER`, `LIST<STRING NOT NULL>`, `LIST<NOTHING>` for an empty list).
    pub fn value_type_name(v: &Value) -> String {
        match v {
            Value::List(items) if items.is_empty() => "LIST<NOTHING>".to_string(),
            _ => match value_bit(v) {
                Some(b) => PropertyTypes(b).name(),
                None => v.type_name().to_ascii_uppercase(),
            },
        }
    }
}

/// The index in [`SCALARS`] of a scalar value's type.
fn scalar_of(v: &Value) -> Option<usize> {
    Some(match v {
        Value::Bool(_) => 0,
        Value::String(_) => 1,
        Value::Int(_) => 2,
        Value::Float(_) => 3,
        Value::Date(_) => 4,
        Value::LocalTime(_) => 5,
        Value::Time(_) => 6,
        Value::LocalDateTime(_) => 7,
        Value::DateTime(_) => 8,
        Value::Duration(_) => 9,
        Value::Point(_) => 10,
        _ => return None,
    })
}

/// The one bit of a value's type: a scalar, or a non-empty list whose items share a scalar type.
fn value_bit(v: &Value) -> Option<u32> {
    if let Value::List(items) = v {
        let first = scalar_of(items.first()?)?;
        if items.iter().all(|x| scalar_of(x) == Some(first)) {
            return Some(1 << (first as u32 + LIST_SHIFT));
        }
        return None;
    }
    scalar_of(v).map(|i| 1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_normalise_in_neo4j_order() {
        let t = PropertyTypes::one(2, true)
            .union(PropertyTypes::one(3, false))
            .union(PropertyTypes::one(1, false))
            .union(PropertyTypes::one(1, false));
        assert_eq!(t.name(), "STRING | FLOAT | LIST<INTEGER NOT NULL>");
        assert!(t.is_valid());
        assert!(!PropertyTypes(0).is_valid());
        assert!(!PropertyTypes(1 << 12).is_valid());
    }

    #[test]
    fn synonyms_resolve() {
        assert_eq!(PropertyTypes::scalar_index(&["INT"]), Some(2));
        assert_eq!(PropertyTypes::scalar_index(&["SIGNED", "INTEGER"]), Some(2));
        assert_eq!(PropertyTypes::scalar_index(&["TIMESTAMP", "WITH", "TIME", "ZONE"]), Some(8));
        assert_eq!(PropertyTypes::scalar_index(&["LOCAL", "DATETIME"]), Some(7));
        assert_eq!(PropertyTypes::scalar_index(&["ANY"]), None);
        assert_eq!(PropertyTypes::scalar_index(&["MAP"]), None);
    }

    #[test]
    fn values_are_typed() {
        let s = PropertyTypes::one(1, false);
        assert!(s.accepts(&Value::str("a")));
        assert!(!s.accepts(&Value::Int(1)));
        let li = PropertyTypes::one(2, true);
        assert!(li.accepts(&Value::List(vec![Value::Int(1), Value::Int(2)])));
        assert!(li.accepts(&Value::List(vec![])));
        assert!(!li.accepts(&Value::List(vec![Value::Float(1.0)])));
        assert!(!s.accepts(&Value::List(vec![])));
        assert_eq!(PropertyTypes::value_type_name(&Value::Int(1)), "INTEGER");
        assert_eq!(
            PropertyTypes::value_type_name(&Value::List(vec![Value::str("x")])),
            "LIST<STRING NOT NULL>"
        );
        assert_eq!(PropertyTypes::value_type_name(&Value::List(vec![])), "LIST<NOTHING>");
    }
}
