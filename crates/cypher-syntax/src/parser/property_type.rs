//! The closed property types of property-type constraints (`REQUIRE n.p IS :: STRING |
//! LIST<INTEGER NOT NULL>`, `IS TYPED ANY<INT | BOOL>`, `n.p :: FLOAT`), with Neo4j 5.26's
//! synonyms and its errors for types a property cannot have (`ANY`, `MAP`, `STRING NOT NULL`,
//! `LIST<STRING>`, lists of lists).

use arbor_model::property_type::PropertyTypes;

use crate::lexer::Tok;

use super::{PResult, Parser};

/// One member of a written union, as parsed (checked afterwards, so that the error can quote
/// the whole type).
struct Member {
    ty: Ty,
    not_null: bool,
}

enum Ty {
    /// The uppercase words of a scalar type name (`LOCAL`, `DATETIME`).
    Scalar(Vec<String>),
    /// `LIST<...>` / `ARRAY<...>` of a union.
    List(Vec<Member>),
}

/// The written type in Neo4j's spelling: known scalars by their normalised names.
fn render(members: &[Member]) -> String {
    let one = |m: &Member| {
        let base = match &m.ty {
            Ty::Scalar(words) => {
                let refs: Vec<&str> = words.iter().map(String::as_str).collect();
                match PropertyTypes::scalar_index(&refs) {
                    Some(i) => arbor_model::property_type::SCALARS[i].to_string(),
                    None => words.join(" "),
                }
            }
            Ty::List(inner) => format!("LIST<{}>", render(inner)),
        };
        if m.not_null {
            format!("{base} NOT NULL")
        } else {
            base
        }
    };
    members.iter().map(one).collect::<Vec<_>>().join(" | ")
}

impl<'a> Parser<'a> {
    /// At `::` (two `:` tokens)?
    pub(crate) fn is_double_colon(&self) -> bool {
        self.is_sym(":") && self.is_sym_n(1, ":")
    }

    /// The type after `IS ::` / `IS TYPED` / `::` of a property-type constraint on nodes or
    /// (`rel`) relationships.
    pub(crate) fn constraint_property_type(&mut self, rel: bool) -> PResult<PropertyTypes> {
        let at = self.cur_span().start;
        let members = self.type_union()?;
        let entity = if rel { "relationship" } else { "node" };
        let fail = |p: &Self, extra: &str| {
            p.error_at(
                at,
                &format!(
                    "Failed to create {entity} property type constraint: Invalid property type \
                     `{}`.{extra}",
                    render(&members)
                ),
            )
        };
        let scalar = |words: &[String]| {
            let refs: Vec<&str> = words.iter().map(String::as_str).collect();
            PropertyTypes::scalar_index(&refs)
        };
        let mut out = PropertyTypes(0);
        for m in &members {
            if m.not_null {
                return Err(fail(self, ""));
            }
            match &m.ty {
                Ty::Scalar(words) => match scalar(words) {
                    Some(i) => out = out.union(PropertyTypes::one(i, false)),
                    None => return Err(fail(self, "")),
                },
                Ty::List(inner) => {
                    for i in inner {
                        match &i.ty {
                            Ty::List(_) => {
                                return Err(fail(
                                    self,
                                    " Lists cannot have lists as an inner type.",
                                ))
                            }
                            _ if !i.not_null => {
                                return Err(fail(self, " Lists cannot have nullable inner types."))
                            }
                            Ty::Scalar(words) => match scalar(words) {
                                Some(x) => out = out.union(PropertyTypes::one(x, true)),
                                None => return Err(fail(self, "")),
                            },
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// `member (| member)*`, `ANY<...>` flattened into its members.
    fn type_union(&mut self) -> PResult<Vec<Member>> {
        self.nested(|p| {
            let mut out = Vec::new();
            loop {
                out.extend(p.type_member()?);
                if !p.eat_sym("|") {
                    return Ok(out);
                }
            }
        })
    }

    fn type_member(&mut self) -> PResult<Vec<Member>> {
        let generic = |p: &Self, w: &str| p.is_kw(w) && p.is_sym_n(1, "<");
        if generic(self, "ANY") {
            self.bump();
            self.bump();
            let mut inner = self.type_union()?;
            self.expect_sym(">")?;
            if self.not_null() {
                inner.iter_mut().for_each(|m| m.not_null = true);
            }
            return Ok(inner);
        }
        if generic(self, "LIST") || generic(self, "ARRAY") {
            self.bump();
            self.bump();
            let inner = self.type_union()?;
            self.expect_sym(">")?;
            let not_null = self.not_null();
            return Ok(vec![Member { ty: Ty::List(inner), not_null }]);
        }
        let mut words = Vec::new();
        while let Tok::Word(w) = self.peek() {
            if (self.is_kw("NOT") && self.is_kw_n(1, "NULL")) || self.is_kw("OPTIONS") {
                break;
            }
            words.push(w.to_ascii_uppercase());
            self.bump();
        }
        if words.is_empty() {
            return Err(self.unexpected("a property type"));
        }
        let not_null = self.not_null();
        Ok(vec![Member { ty: Ty::Scalar(words), not_null }])
    }

    fn not_null(&mut self) -> bool {
        if self.is_kw("NOT") && self.is_kw_n(1, "NULL") {
            self.bump();
            self.bump();
            return true;
        }
        false
    }
}
