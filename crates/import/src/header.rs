//! neo4j-admin CSV headers: `name:type` columns plus the special `:ID(Group)`, `:LABEL`,
//! `:START_ID(Group)`, `:END_ID(Group)`, `:TYPE` and `:IGNORE` columns.
//!
//! A column is `[name][:kind]`; the kind is case-insensitive and, for ids, may carry an id
//! group in parentheses (`:ID(Person)`); without one the group is Neo4j's "global id space".
//! A named id column (`uid:ID`) also stores the id as property `uid`; a bare `:ID` stores nothing.
//! Property types: `int long float double boolean byte short char string date localtime time
//! localdatetime datetime duration point`, each optionally an array (`int[]`).

use std::fmt;

/// The id space of a `:ID` column without a group.
pub const GLOBAL_GROUP: &str = "global id space";

/// The scalar type of a property column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    String,
    Long,
    Int,
    Short,
    Byte,
    Double,
    Float,
    Boolean,
    Char,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
    Point,
}

impl BaseType {
    fn parse(s: &str) -> Option<BaseType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "string" => BaseType::String,
            "long" => BaseType::Long,
            "int" => BaseType::Int,
            "short" => BaseType::Short,
            "byte" => BaseType::Byte,
            "double" => BaseType::Double,
            "float" => BaseType::Float,
            "boolean" => BaseType::Boolean,
            "char" => BaseType::Char,
            "date" => BaseType::Date,
            "localtime" => BaseType::LocalTime,
            "time" => BaseType::Time,
            "localdatetime" => BaseType::LocalDateTime,
            "datetime" => BaseType::DateTime,
            "duration" => BaseType::Duration,
            "point" => BaseType::Point,
            _ => return None,
        })
    }
}

/// A property column's type: a scalar or an array of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueType {
    pub base: BaseType,
    pub array: bool,
}

impl ValueType {
    pub const STRING: ValueType = ValueType { base: BaseType::String, array: false };
    pub const LONG: ValueType = ValueType { base: BaseType::Long, array: false };
}

/// What one CSV column means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// A node id; `prop` = also stored as this property (with `ty`).
    Id {
        group: String,
        prop: Option<String>,
    },
    Label,
    StartId {
        group: String,
    },
    EndId {
        group: String,
    },
    Type,
    Ignore,
    Property {
        name: String,
        ty: ValueType,
    },
}

/// Nodes or relationships: which special columns a header may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entity {
    Nodes,
    Relationships,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Entity::Nodes => "node",
            Entity::Relationships => "relationship",
        })
    }
}

/// A parsed header.
#[derive(Clone, Debug)]
pub struct Header {
    pub columns: Vec<Column>,
}

impl Header {
    /// Index of the `:ID` / `:START_ID` / `:END_ID` column, if any.
    pub fn position(&self, f: impl Fn(&Column) -> bool) -> Option<usize> {
        self.columns.iter().position(f)
    }
}

fn group_of(rest: &str, col: &str) -> Result<String, String> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(GLOBAL_GROUP.to_string());
    }
    match rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        Some(g) if !g.trim().is_empty() => Ok(g.trim().to_string()),
        _ => Err(format!("column `{col}`: expected an id group in parentheses, found `{rest}`")),
    }
}

/// Parses one header (already split into fields) for `entity` files.
pub fn parse(fields: &[String], entity: Entity) -> Result<Header, String> {
    let mut columns = Vec::with_capacity(fields.len());
    for raw in fields {
        let col = raw.trim();
        let (name, kind) = match col.find(':') {
            Some(i) => (col[..i].trim(), Some(col[i + 1..].trim())),
            None => (col, None),
        };
        let column = match kind {
            None => {
                if name.is_empty() {
                    return Err("empty column name in header".to_string());
                }
                Column::Property { name: name.to_string(), ty: ValueType::STRING }
            }
            Some(kind) => {
                let upper = kind.to_ascii_uppercase();
                let word_end = upper.find(['(', '{', '[']).unwrap_or(upper.len());
                let (word, rest) = (upper[..word_end].trim(), &kind[word_end..]);
                let named = (!name.is_empty()).then(|| name.to_string());
                match word {
                    "ID" => Column::Id { group: group_of(rest, col)?, prop: named },
                    "START_ID" => Column::StartId { group: group_of(rest, col)? },
                    "END_ID" => Column::EndId { group: group_of(rest, col)? },
                    "LABEL" if rest.is_empty() => Column::Label,
                    "TYPE" if rest.is_empty() => Column::Type,
                    "IGNORE" if rest.is_empty() => Column::Ignore,
                    _ => {
                        let (base, array) = match kind.strip_suffix("[]") {
                            Some(b) => (b.trim(), true),
                            None => (kind, false),
                        };
                        if base.contains('{') {
                            return Err(format!(
                                "column `{col}`: type options in braces are not supported"
                            ));
                        }
                        let Some(base) = BaseType::parse(base) else {
                            return Err(format!("column `{col}`: unknown type `{kind}`"));
                        };
                        if name.is_empty() {
                            return Err(format!("column `{col}`: a property column needs a name"));
                        }
                        Column::Property { name: name.to_string(), ty: ValueType { base, array } }
                    }
                }
            }
        };
        columns.push(column);
    }
    let count = |f: &dyn Fn(&Column) -> bool| columns.iter().filter(|c| f(c)).count();
    let ids = count(&|c| matches!(c, Column::Id { .. }));
    let starts = count(&|c| matches!(c, Column::StartId { .. }));
    let ends = count(&|c| matches!(c, Column::EndId { .. }));
    let types = count(&|c| matches!(c, Column::Type));
    let labels = count(&|c| matches!(c, Column::Label));
    match entity {
        Entity::Nodes => {
            if ids > 1 {
                return Err("a node header may have only one :ID column".to_string());
            }
            if starts + ends + types > 0 {
                return Err(
                    "a node header may not have :START_ID, :END_ID or :TYPE columns".to_string()
                );
            }
        }
        Entity::Relationships => {
            if starts != 1 || ends != 1 {
                return Err(
                    "a relationship header needs exactly one :START_ID and one :END_ID column"
                        .to_string(),
                );
            }
            if ids + labels > 0 {
                return Err("a relationship header may not have :ID or :LABEL columns".to_string());
            }
            if types > 1 {
                return Err("a relationship header may have only one :TYPE column".to_string());
            }
        }
    }
    let mut names: Vec<&str> = columns
        .iter()
        .filter_map(|c| match c {
            Column::Property { name, .. } => Some(name.as_str()),
            Column::Id { prop: Some(name), .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("property `{}` appears twice in the header", w[0]));
    }
    Ok(Header { columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str, e: Entity) -> Result<Header, String> {
        let fields: Vec<String> = s.split(',').map(str::to_string).collect();
        parse(&fields, e)
    }

    #[test]
    fn node_header_with_everything() {
        let hd = h(
            "uid:ID(Person),name,age:int,tags:string[],:LABEL,skip:IGNORE,born:date",
            Entity::Nodes,
        )
        .unwrap();
        assert_eq!(hd.columns[0], Column::Id { group: "Person".into(), prop: Some("uid".into()) });
        assert_eq!(hd.columns[1], Column::Property { name: "name".into(), ty: ValueType::STRING });
        assert_eq!(
            hd.columns[2],
            Column::Property {
                name: "age".into(),
                ty: ValueType { base: BaseType::Int, array: false }
            }
        );
        assert_eq!(
            hd.columns[3],
            Column::Property {
                name: "tags".into(),
                ty: ValueType { base: BaseType::String, array: true }
            }
        );
        assert_eq!(hd.columns[4], Column::Label);
        assert_eq!(hd.columns[5], Column::Ignore);
        assert!(matches!(
            hd.columns[6],
            Column::Property { ty: ValueType { base: BaseType::Date, array: false }, .. }
        ));
    }

    #[test]
    fn bare_id_and_global_group() {
        let hd = h(":ID,name:STRING", Entity::Nodes).unwrap();
        assert_eq!(hd.columns[0], Column::Id { group: GLOBAL_GROUP.into(), prop: None });
    }

    #[test]
    fn relationship_header() {
        let hd = h(":START_ID(A),since:long,:END_ID(B),:TYPE", Entity::Relationships).unwrap();
        assert_eq!(hd.columns[0], Column::StartId { group: "A".into() });
        assert_eq!(hd.columns[2], Column::EndId { group: "B".into() });
        assert_eq!(hd.columns[3], Column::Type);
    }

    #[test]
    fn every_type_name_parses() {
        for t in [
            "int",
            "long",
            "float",
            "double",
            "boolean",
            "byte",
            "short",
            "char",
            "string",
            "date",
            "localtime",
            "time",
            "localdatetime",
            "datetime",
            "duration",
            "point",
        ] {
            h(&format!(":ID,x:{t},y:{t}[]"), Entity::Nodes).unwrap();
        }
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(h(":ID,:ID", Entity::Nodes).unwrap_err().contains("only one :ID"));
        assert!(h("x:integer", Entity::Nodes).unwrap_err().contains("unknown type"));
        assert!(h(":START_ID", Entity::Relationships).unwrap_err().contains(":END_ID"));
        assert!(h(":ID,:START_ID,:END_ID", Entity::Nodes).is_err());
        assert!(h(":START_ID,:END_ID,:LABEL", Entity::Relationships).is_err());
        assert!(h("a,a:int", Entity::Nodes).unwrap_err().contains("twice"));
        assert!(h(":ID(", Entity::Nodes).unwrap_err().contains("id group"));
        assert!(h(":int", Entity::Nodes).unwrap_err().contains("needs a name"));
    }
}
