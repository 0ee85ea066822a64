//! A small Gherkin parser covering what the openCypher TCK uses: `Feature`, `Background`,
//! `Scenario`, `Scenario Outline` with `Examples` tables, `Given/When/Then/And/But` steps,
//! doc strings (`"""`) and data tables (`| a | b |`, with the `\|`, `\\` and `\n` escapes), tags
//! and `#` comments. Outlines are expanded into one [`TestCase`] per Examples row.

use std::fmt;

/// A step's attached argument.
#[derive(Clone, Debug, PartialEq)]
pub enum StepArg {
    None,
    DocString(String),
    /// Rows of cells, escapes already applied and cells trimmed. A row may have zero cells (the
    /// TCK writes `|` alone for an empty procedure table).
    Table(Vec<Vec<String>>),
}

/// One step: keyword (`Given`, `And`, ...), text after the keyword, and its argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub keyword: String,
    pub text: String,
    pub line: usize,
    pub arg: StepArg,
}

/// An Examples block of an outline: header and rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Examples {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub line: usize,
    pub tags: Vec<String>,
    pub outline: bool,
    pub steps: Vec<Step>,
    pub examples: Vec<Examples>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    pub name: String,
    pub tags: Vec<String>,
    pub background: Vec<Step>,
    pub scenarios: Vec<Scenario>,
}

/// A parse error with its 1-based line.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Splits a table row into cells, applying Gherkin's cell escapes. `line` must start with `|`.
pub fn parse_row(line: &str) -> Vec<String> {
    let body = line.trim();
    let body = body.strip_prefix('|').unwrap_or(body);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = body.chars();
    let mut closed = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('|') => cur.push('|'),
                Some('\\') => cur.push('\\'),
                Some('n') => cur.push('\n'),
                // Not a Gherkin escape: keep it for the value syntax (`\'`).
                Some(other) => {
                    cur.push('\\');
                    cur.push(other);
                }
                None => cur.push('\\'),
            },
            '|' => {
                cells.push(cur.trim().to_string());
                cur.clear();
                closed = true;
                continue;
            }
            c => cur.push(c),
        }
        closed = false;
    }
    // Text after the last `|` is not a cell (well-formed rows end with `|`).
    if !closed && !cur.trim().is_empty() {
        cells.push(cur.trim().to_string());
    }
    cells
}

const STEP_KEYWORDS: [&str; 6] = ["Given", "When", "Then", "And", "But", "*"];

/// Where steps currently go.
enum Target {
    Nothing,
    Background,
    Scenario,
    Examples,
}

/// Parses one feature file.
pub fn parse_feature(text: &str) -> Result<Feature, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut feature: Option<Feature> = None;
    let mut pending_tags: Vec<String> = Vec::new();
    let mut target = Target::Nothing;
    let mut i = 0;
    let err = |line: usize, message: &str| ParseError { line, message: message.to_string() };
    while i < lines.len() {
        let raw = lines[i];
        let lineno = i + 1;
        let line = raw.trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('@') {
            pending_tags.extend(line.split_whitespace().map(str::to_string));
            continue;
        }
        if let Some(name) = line.strip_prefix("Feature:") {
            if feature.is_some() {
                return Err(err(lineno, "second Feature in one file"));
            }
            feature = Some(Feature {
                name: name.trim().to_string(),
                tags: std::mem::take(&mut pending_tags),
                background: Vec::new(),
                scenarios: Vec::new(),
            });
            continue;
        }
        let Some(feat) = feature.as_mut() else {
            // Free text before `Feature:` is not allowed by Gherkin.
            return Err(err(lineno, "text before Feature:"));
        };
        if line.starts_with("Background:") {
            target = Target::Background;
            continue;
        }
        let scenario_head = [
            ("Scenario Outline:", true),
            ("Scenario Template:", true),
            ("Scenario:", false),
            ("Example:", false),
        ]
        .iter()
        .find_map(|(kw, outline)| line.strip_prefix(kw).map(|rest| (rest, *outline)));
        if let Some((name, outline)) = scenario_head {
            feat.scenarios.push(Scenario {
                name: name.trim().to_string(),
                line: lineno,
                tags: std::mem::take(&mut pending_tags),
                outline,
                steps: Vec::new(),
                examples: Vec::new(),
            });
            target = Target::Scenario;
            continue;
        }
        if line.starts_with("Examples:") || line.starts_with("Scenarios:") {
            let Some(sc) = feat.scenarios.last_mut() else {
                return Err(err(lineno, "Examples outside a scenario"));
            };
            sc.examples.push(Examples { header: Vec::new(), rows: Vec::new() });
            pending_tags.clear();
            target = Target::Examples;
            continue;
        }
        if line.starts_with('|') {
            add_table_row(feat, &target, parse_row(line), lineno)?;
            continue;
        }
        if line.starts_with("\"\"\"") || line.starts_with("```") {
            let delim = &line[..3];
            let indent = raw.len() - raw.trim_start().len();
            let mut content: Vec<String> = Vec::new();
            let mut closed = false;
            while i < lines.len() {
                let l = lines[i];
                i += 1;
                if l.trim() == delim {
                    closed = true;
                    break;
                }
                // Remove up to the opening delimiter's indentation, as Gherkin does.
                let strip = l.len() - l.trim_start().len();
                let body = l.get(strip.min(indent)..).unwrap_or_else(|| l.trim_start());
                content.push(body.replace("\\\"\\\"\\\"", "\"\"\""));
            }
            if !closed {
                return Err(err(lineno, "unterminated doc string"));
            }
            let step =
                last_step(feat, &target).ok_or_else(|| err(lineno, "doc string without a step"))?;
            if step.arg != StepArg::None {
                return Err(err(lineno, "step has two arguments"));
            }
            step.arg = StepArg::DocString(content.join("\n"));
            continue;
        }
        let step_kw = STEP_KEYWORDS.iter().find(|kw| {
            line.strip_prefix(**kw).is_some_and(|rest| rest.starts_with(' ') || rest.is_empty())
        });
        if let Some(kw) = step_kw {
            let step = Step {
                keyword: kw.to_string(),
                text: line[kw.len()..].trim().to_string(),
                line: lineno,
                arg: StepArg::None,
            };
            match target {
                Target::Background => feat.background.push(step),
                Target::Scenario => match feat.scenarios.last_mut() {
                    Some(sc) => sc.steps.push(step),
                    None => return Err(err(lineno, "step outside a scenario")),
                },
                Target::Examples => return Err(err(lineno, "step after Examples")),
                Target::Nothing => return Err(err(lineno, "step outside a scenario")),
            }
            continue;
        }
        // Anything else is a free-text description (allowed under Feature/Scenario headers).
    }
    feature.ok_or_else(|| err(1, "no Feature in file"))
}

/// A `| ... |` row: the header or a row of the current Examples, or a row of the last step's
/// data table.
fn add_table_row(
    feat: &mut Feature,
    target: &Target,
    row: Vec<String>,
    lineno: usize,
) -> Result<(), ParseError> {
    let err = |message: &str| ParseError { line: lineno, message: message.to_string() };
    match target {
        Target::Examples => {
            let ex = feat
                .scenarios
                .last_mut()
                .and_then(|s| s.examples.last_mut())
                .ok_or_else(|| err("table row outside Examples"))?;
            if ex.header.is_empty() && ex.rows.is_empty() {
                ex.header = row;
            } else {
                ex.rows.push(row);
            }
        }
        Target::Background | Target::Scenario => {
            let step = last_step(feat, target).ok_or_else(|| err("table row without a step"))?;
            match &mut step.arg {
                StepArg::None => step.arg = StepArg::Table(vec![row]),
                StepArg::Table(rows) => rows.push(row),
                StepArg::DocString(_) => return Err(err("step has both a doc string and a table")),
            }
        }
        Target::Nothing => return Err(err("table row outside a scenario")),
    }
    Ok(())
}

fn last_step<'a>(feat: &'a mut Feature, target: &Target) -> Option<&'a mut Step> {
    match target {
        Target::Background => feat.background.last_mut(),
        Target::Scenario => feat.scenarios.last_mut().and_then(|s| s.steps.last_mut()),
        _ => None,
    }
}

/// A runnable scenario: an ordinary scenario, or one Examples row of an outline.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// `<feature path relative to features/>:<scenario name>[:<example index>]`.
    pub id: String,
    /// Folder of the feature file relative to `features/` (e.g. `clauses/match`).
    pub folder: String,
    pub feature_path: String,
    /// Scenario name with outline placeholders filled in.
    pub name: String,
    pub line: usize,
    pub tags: Vec<String>,
    /// Background steps followed by the scenario's, placeholders substituted.
    pub steps: Vec<Step>,
}

/// The column of the TCK's Examples tables giving a row's index in the original outline.
const EXAMPLE_INDEX_COLUMN: &str = "tck_example_index";

fn substitute(s: &str, header: &[String], row: &[String]) -> String {
    let mut out = s.to_string();
    for (h, v) in header.iter().zip(row) {
        out = out.replace(&format!("<{h}>"), v);
    }
    out
}

fn substitute_step(step: &Step, header: &[String], row: &[String]) -> Step {
    Step {
        keyword: step.keyword.clone(),
        text: substitute(&step.text, header, row),
        line: step.line,
        arg: match &step.arg {
            StepArg::None => StepArg::None,
            StepArg::DocString(d) => StepArg::DocString(substitute(d, header, row)),
            StepArg::Table(rows) => StepArg::Table(
                rows.iter()
                    .map(|r| r.iter().map(|c| substitute(c, header, row)).collect())
                    .collect(),
            ),
        },
    }
}

/// Expands a feature into test cases. `path` is the feature file path relative to `features/`,
/// with `/` separators.
pub fn expand(feature: &Feature, path: &str) -> Vec<TestCase> {
    let folder = match path.rfind('/') {
        Some(i) => path[..i].to_string(),
        None => String::new(),
    };
    let mut out = Vec::new();
    for sc in &feature.scenarios {
        let mut tags = feature.tags.clone();
        tags.extend(sc.tags.iter().cloned());
        let base_id = format!("{path}:{}", sc.name);
        if !sc.outline {
            let mut steps = feature.background.clone();
            steps.extend(sc.steps.iter().cloned());
            out.push(TestCase {
                id: base_id,
                folder: folder.clone(),
                feature_path: path.to_string(),
                name: sc.name.clone(),
                line: sc.line,
                tags,
                steps,
            });
            continue;
        }
        let mut running = 0usize;
        for ex in &sc.examples {
            let idx_col = ex.header.iter().position(|h| h == EXAMPLE_INDEX_COLUMN);
            for row in &ex.rows {
                let index = idx_col
                    .and_then(|c| row.get(c))
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(running);
                running += 1;
                let mut steps: Vec<Step> = feature.background.clone();
                steps.extend(sc.steps.iter().map(|s| substitute_step(s, &ex.header, row)));
                out.push(TestCase {
                    id: format!("{base_id}:{index}"),
                    folder: folder.clone(),
                    feature_path: path.to_string(),
                    name: substitute(&sc.name, &ex.header, row),
                    line: sc.line,
                    tags: tags.clone(),
                    steps,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"#
# licence
#encoding: utf-8

Feature: Sample - things

  Background:
    Given an empty graph

  Scenario: [1] Plain
    And having executed:
      """
      CREATE (:A)
        CREATE (:B)
      """
    When executing query:
      """
      MATCH (n) RETURN n
      """
    Then the result should be, in any order:
      | n      |
      | (:A)   |
      | 'a\|b' |
    And no side effects

  @ignore
  Scenario Outline: [2] Outline <name>
    When executing query:
      """
      RETURN <expr> AS x
      """
    Then the result should be, in any order:
      | x        |
      | <result> |

    Examples:
      | name | expr | result | tck_example_index |
      | one  | 1    | 1      | 0                 |
      | two  | 2    | 2      | 3                 |

  Scenario: [3] Empty table
    And there exists a procedure test.doNothing() :: ():
      |
"#;

    #[test]
    fn parses_and_expands() {
        let f = parse_feature(SAMPLE).unwrap();
        assert_eq!(f.name, "Sample - things");
        assert_eq!(f.background.len(), 1);
        assert_eq!(f.scenarios.len(), 3);
        let s1 = &f.scenarios[0];
        assert_eq!(s1.steps.len(), 4);
        assert_eq!(s1.steps[0].arg, StepArg::DocString("CREATE (:A)\n  CREATE (:B)".into()));
        match &s1.steps[2].arg {
            StepArg::Table(rows) => {
                assert_eq!(rows.len(), 3);
                assert_eq!(rows[2], vec!["'a|b'".to_string()]);
            }
            other => panic!("expected a table, got {other:?}"),
        }
        assert_eq!(f.scenarios[1].tags, vec!["@ignore".to_string()]);
        let cases = expand(&f, "clauses/sample/Sample1.feature");
        assert_eq!(cases.len(), 4);
        assert_eq!(cases[0].id, "clauses/sample/Sample1.feature:[1] Plain");
        assert_eq!(cases[0].folder, "clauses/sample");
        assert_eq!(cases[0].steps.len(), 5);
        assert_eq!(cases[2].id, "clauses/sample/Sample1.feature:[2] Outline <name>:3");
        assert_eq!(cases[2].name, "[2] Outline two");
        assert_eq!(cases[2].steps[1].arg, StepArg::DocString("RETURN 2 AS x".into()));
        match &cases[3].steps[1].arg {
            StepArg::Table(rows) => assert_eq!(rows, &vec![Vec::<String>::new()]),
            other => panic!("expected a table, got {other:?}"),
        }
    }

    #[test]
    fn row_escapes() {
        assert_eq!(parse_row(r"| a \| b | \\ | x\ny | \' |"), vec!["a | b", "\\", "x\ny", "\\'"]);
        assert_eq!(parse_row("|"), Vec::<String>::new());
        assert_eq!(parse_row("| |"), vec![String::new()]);
    }

    #[test]
    fn rejects_steps_outside_scenarios() {
        assert!(parse_feature("Given x").is_err());
        assert!(parse_feature("Feature: f\n  Given x\n").is_err());
        assert!(parse_feature("Feature: f\n Scenario: s\n  Given x\n  \"\"\"\n  open").is_err());
    }
}
