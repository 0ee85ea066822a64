//! What may precede a statement: `CYPHER` query options (`CYPHER 5`, `CYPHER runtime=slotted`,
//! `CYPHER 5 planner=cost ...`) and a leading `USE <graph>` clause.
//!
//! Arbor has one planner and one runtime, so options are only validated (with Neo4j's
//! `ArgumentError` messages) and then dropped. The graph named by `USE` is returned to the
//! caller, which decides whether it exists.

use arbor_model::{Error, Status};

use super::{PResult, Parser};
use crate::lexer::Tok;

/// Options Neo4j 5 accepts, with the values it allows (`None`: any value).
const OPTIONS: &[(&str, Option<&[&str]>)] = &[
    ("runtime", Some(&["interpreted", "legacy", "parallel", "pipelined", "slotted"])),
    ("planner", Some(&["cost", "dp", "idp"])),
    ("expressionEngine", Some(&["compiled", "interpreted", "only_when_hot"])),
    ("operatorEngine", Some(&["compiled", "interpreted"])),
    ("interpretedPipesFallback", Some(&["all", "default", "disabled", "whitelisted_plans_only"])),
    ("replan", Some(&["default", "force", "skip"])),
    ("connectComponentsPlanner", Some(&["greedy", "idp"])),
    ("updateStrategy", Some(&["default", "eager"])),
    ("eagerAnalyzer", Some(&["ir", "lp"])),
    ("inferSchemaParts", Some(&["most_selective_label", "off"])),
    (
        "statefulShortestPlanningMode",
        Some(&["all_if_possible", "cardinality_heuristic", "into_only"]),
    ),
    ("parallelRuntimeSupport", Some(&["all", "disabled"])),
    ("debug", None),
];

/// Cypher versions accepted after `CYPHER`: 5, and 25 (the next language version; Arbor
/// answers it as 5 so clients written for newer servers keep working).
const VERSIONS: &[&str] = &["5", "25"];

fn argument_error(msg: String) -> Error {
    Error::new(Status::ArgumentError, msg)
}

impl Parser<'_> {
    /// Consumes any number of `CYPHER [version] [key=value ...]` prefixes.
    pub(crate) fn query_options(&mut self) -> PResult<()> {
        let mut seen: Vec<(String, String)> = Vec::new();
        while self.eat_kw("CYPHER") {
            if let Tok::Int(_) | Tok::Float(_) = self.peek() {
                let span = self.cur_span();
                let version = self.text.get(span.start..span.end).unwrap_or("").to_string();
                if !VERSIONS.contains(&version.as_str()) {
                    return Err(argument_error(format!(
                        "{version} is not a valid option for cypher version. Valid options are: 5"
                    )));
                }
                self.bump();
            }
            while matches!(self.peek(), Tok::Word(_)) && self.is_sym_n(1, "=") {
                let key = self.ident("an option name")?.name.to_string();
                self.bump(); // '='
                let value = match self.peek() {
                    Tok::Word(w) | Tok::Quoted(w) => w.clone(),
                    Tok::Int(_) | Tok::Str(_) => {
                        let span = self.cur_span();
                        self.text.get(span.start..span.end).unwrap_or("").to_string()
                    }
                    _ => return Err(self.unexpected("an option value")),
                };
                self.bump();
                check_option(&key, &value, &seen)?;
                seen.push((key, value));
            }
        }
        Ok(())
    }

    /// `USE <graph>` (a name, possibly dotted or backtick-quoted) at the start of a query.
    pub(crate) fn use_clause(&mut self) -> PResult<Option<String>> {
        if !self.is_kw("USE") || !self.is_name_n(1) {
            return Ok(None);
        }
        self.bump();
        let mut name = self.ident("a graph name")?.name.to_string();
        while self.is_sym(".") && self.is_name_n(1) {
            self.bump();
            name.push('.');
            name.push_str(&self.ident("a graph name")?.name);
        }
        Ok(Some(name))
    }
}

/// Neo4j's checks of one `key=value` option: known key, allowed value, no conflicting repeat.
fn check_option(key: &str, value: &str, seen: &[(String, String)]) -> PResult<()> {
    let Some((name, allowed)) = OPTIONS.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)) else {
        return Err(argument_error(format!("Unsupported options: {key}")));
    };
    if let Some(allowed) = allowed {
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(value)) {
            return Err(argument_error(format!(
                "{value} is not a valid option for {name}. Valid options are: {}",
                allowed.join(", ")
            )));
        }
    }
    let conflict =
        seen.iter().any(|(k, v)| k.eq_ignore_ascii_case(key) && !v.eq_ignore_ascii_case(value));
    if conflict && *name != "debug" {
        return Err(argument_error(format!(
            "Can't specify multiple conflicting values for {name}"
        )));
    }
    Ok(())
}
