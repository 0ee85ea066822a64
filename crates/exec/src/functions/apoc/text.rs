//! `apoc.text.*`: string cleaning, regular expressions (Java's `replaceAll`/`split` semantics
//! over Rust's `regex`), case conversion and edit distances, as APOC documents them. A null
//! text gives null (`fuzzyMatch`: false).

use arbor_model::{Error, Result, Value};
use regex::Regex;

use super::super::{arg, type_err};

/// A string argument: `None` for null.
fn text<'a>(func: &str, v: &'a Value) -> Result<Option<&'a str>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(type_err(func, "a String", other)),
    }
}

fn out(s: String) -> Result<Value> {
    Ok(Value::String(s.into()))
}

/// Compiles a pattern, naming the function on a bad one.
fn pattern(func: &str, p: &str) -> Result<Regex> {
    Regex::new(p).map_err(|e| {
        Error::argument(format!("Invalid regular expression `{p}` in function '{func}()': {e}"))
    })
}

/// `apoc.text.clean(text)`: lower case, letters and digits only.
pub fn clean(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.clean", arg(args, 0))? else { return Ok(Value::Null) };
    out(t.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect())
}

/// `apoc.text.replace(text, regex, replacement)`: every match replaced (`$1` names a group).
pub fn replace(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.text.replace";
    let (Some(t), Some(p), Some(r)) =
        (text(F, arg(args, 0))?, text(F, arg(args, 1))?, text(F, arg(args, 2))?)
    else {
        return Ok(Value::Null);
    };
    out(pattern(F, p)?.replace_all(t, r).into_owned())
}

/// `apoc.text.split(text, regex[, limit = 0])`: Java's `String.split`: with limit 0 trailing
/// empty strings are dropped; a positive limit caps the number of parts.
pub fn split(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.text.split";
    let (Some(t), Some(p)) = (text(F, arg(args, 0))?, text(F, arg(args, 1))?) else {
        return Ok(Value::Null);
    };
    let limit = match arg(args, 2) {
        Value::Int(n) => *n,
        Value::Null => 0,
        other => return Err(type_err(F, "an Integer", other)),
    };
    let re = pattern(F, p)?;
    let mut parts: Vec<&str> =
        if limit > 0 { re.splitn(t, limit as usize).collect() } else { re.split(t).collect() };
    // Java drops a leading empty part made by a zero-width match at the start only; a match
    // of positive width at 0 keeps it. `regex` yields the same parts otherwise.
    if limit == 0 {
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        if parts == [""] && !t.is_empty() {
            parts.clear();
        }
    }
    Ok(Value::List(parts.into_iter().map(Value::from).collect()))
}

/// `apoc.text.regexGroups(text, regex)`: for each match, the whole match then each group
/// (null for a group that took no part).
pub fn regex_groups(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.text.regexGroups";
    let (Some(t), Some(p)) = (text(F, arg(args, 0))?, text(F, arg(args, 1))?) else {
        return Ok(Value::Null);
    };
    let re = pattern(F, p)?;
    let rows = re
        .captures_iter(t)
        .map(|c| {
            Value::List(
                c.iter().map(|g| g.map_or(Value::Null, |m| Value::from(m.as_str()))).collect(),
            )
        })
        .collect();
    Ok(Value::List(rows))
}

fn upper_first(w: &str) -> String {
    let mut cs = w.chars();
    match cs.next() {
        Some(c) => c.to_uppercase().chain(cs).collect(),
        None => String::new(),
    }
}

/// `apoc.text.capitalize(text)`: the first character in upper case.
pub fn capitalize(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.capitalize", arg(args, 0))? else { return Ok(Value::Null) };
    out(upper_first(t))
}

/// `apoc.text.capitalizeAll(text)`: every space-separated word capitalized.
pub fn capitalize_all(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.capitalizeAll", arg(args, 0))? else { return Ok(Value::Null) };
    out(t.split(' ').map(upper_first).collect::<Vec<_>>().join(" "))
}

/// The words of `t` for case conversion: runs of letters and digits, split again where a
/// lower-case letter or digit is followed by an upper-case one (`fooBar` is `foo`, `Bar`).
fn words(t: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in t.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// `apoc.text.camelCase(text)`: `FOO_BAR`, `Foo bar`, `foo-bar` are all `fooBar`.
pub fn camel_case(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.camelCase", arg(args, 0))? else { return Ok(Value::Null) };
    let mut s = String::new();
    for (i, w) in words(t).iter().enumerate() {
        let lower = w.to_lowercase();
        s.push_str(&if i == 0 { lower } else { upper_first(&lower) });
    }
    out(s)
}

/// `apoc.text.upperCamelCase(text)`: `foo bar` is `FooBar`.
pub fn upper_camel_case(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.upperCamelCase", arg(args, 0))? else {
        return Ok(Value::Null);
    };
    out(words(t).iter().map(|w| upper_first(&w.to_lowercase())).collect())
}

/// `apoc.text.snakeCase(text)`: lower-case words joined by `-`, as APOC does
/// (`fooBar` and `FOO_BAR` are `foo-bar`).
pub fn snake_case(args: &[Value]) -> Result<Value> {
    let Some(t) = text("apoc.text.snakeCase", arg(args, 0))? else { return Ok(Value::Null) };
    out(words(t).iter().map(|w| w.to_lowercase()).collect::<Vec<_>>().join("-"))
}

/// Levenshtein distance over characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

fn pair<'a>(func: &str, args: &'a [Value]) -> Result<Option<(&'a str, &'a str)>> {
    Ok(match (text(func, arg(args, 0))?, text(func, arg(args, 1))?) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    })
}

/// `apoc.text.distance(a, b)` / `apoc.text.levenshteinDistance(a, b)`.
pub fn levenshtein_distance(args: &[Value]) -> Result<Value> {
    let Some((a, b)) = pair("apoc.text.levenshteinDistance", args)? else {
        return Ok(Value::Null);
    };
    Ok(Value::Int(levenshtein(a, b) as i64))
}

/// `apoc.text.levenshteinSimilarity(a, b)`: 1 - distance / longer length (1.0 for two empty
/// strings).
pub fn levenshtein_similarity(args: &[Value]) -> Result<Value> {
    let Some((a, b)) = pair("apoc.text.levenshteinSimilarity", args)? else {
        return Ok(Value::Null);
    };
    let longer = a.chars().count().max(b.chars().count());
    if longer == 0 {
        return Ok(Value::Float(1.0));
    }
    Ok(Value::Float(1.0 - levenshtein(a, b) as f64 / longer as f64))
}

/// `apoc.text.fuzzyMatch(a, b)`: the distance is within what `a`'s length allows (0 below
/// 3 characters, 1 below 5, else 2).
pub fn fuzzy_match(args: &[Value]) -> Result<Value> {
    let Some((a, b)) = pair("apoc.text.fuzzyMatch", args)? else {
        return Ok(Value::Bool(false));
    };
    let len = a.chars().count();
    let allowed = if len < 3 {
        0
    } else if len < 5 {
        1
    } else {
        2
    };
    Ok(Value::Bool(levenshtein(a, b) <= allowed))
}

/// `apoc.text.hammingDistance(a, b)`: differing positions of two equally long strings.
pub fn hamming_distance(args: &[Value]) -> Result<Value> {
    let Some((a, b)) = pair("apoc.text.hammingDistance", args)? else {
        return Ok(Value::Null);
    };
    if a.chars().count() != b.chars().count() {
        return Err(Error::argument(
            "apoc.text.hammingDistance: the two strings must have the same length",
        ));
    }
    Ok(Value::Int(a.chars().zip(b.chars()).filter(|(x, y)| x != y).count() as i64))
}

/// `apoc.text.lpad(text, count[, delim = ' '])` / `rpad`: padded to `count` characters.
fn pad(func: &str, args: &[Value], left: bool) -> Result<Value> {
    let Some(t) = text(func, arg(args, 0))? else { return Ok(Value::Null) };
    let count = match arg(args, 1) {
        Value::Int(n) => (*n).max(0) as usize,
        other => return Err(type_err(func, "an Integer", other)),
    };
    let fill = text(func, arg(args, 2))?.and_then(|d| d.chars().next()).unwrap_or(' ');
    let n = t.chars().count();
    if n >= count {
        return out(t.to_string());
    }
    let padding: String = std::iter::repeat_n(fill, count - n).collect();
    out(if left { padding + t } else { t.to_string() + &padding })
}

pub fn lpad(args: &[Value]) -> Result<Value> {
    pad("apoc.text.lpad", args, true)
}

pub fn rpad(args: &[Value]) -> Result<Value> {
    pad("apoc.text.rpad", args, false)
}

/// `apoc.text.indexOf(text, lookup[, from = 0])`: the character index of the first
/// occurrence at or after `from`, -1 if none.
pub fn index_of(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.text.indexOf";
    let (Some(t), Some(l)) = (text(F, arg(args, 0))?, text(F, arg(args, 1))?) else {
        return Ok(Value::Null);
    };
    let from = match arg(args, 2) {
        Value::Int(n) => (*n).max(0) as usize,
        _ => 0,
    };
    let byte_from = t.char_indices().nth(from).map_or(t.len(), |(b, _)| b);
    Ok(Value::Int(match t[byte_from..].find(l) {
        Some(b) => t[..byte_from + b].chars().count() as i64,
        None => -1,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    fn call(f: fn(&[Value]) -> Result<Value>, args: &[Value]) -> String {
        arbor_model::to_cypher_literal(&f(args).unwrap())
    }

    #[test]
    fn cases_follow_the_apoc_examples() {
        for (input, camel, snake) in [
            ("FOO_BAR", "'fooBar'", "'foo-bar'"),
            ("Foo bar", "'fooBar'", "'foo-bar'"),
            ("Foo22 bar", "'foo22Bar'", "'foo22-bar'"),
            ("foo-bar", "'fooBar'", "'foo-bar'"),
            ("Foobar", "'foobar'", "'foobar'"),
            ("Foo$$Bar", "'fooBar'", "'foo-bar'"),
            ("fooBar", "'foobar'", "'foo-bar'"),
        ] {
            if input != "fooBar" {
                assert_eq!(call(camel_case, &[s(input)]), camel, "camelCase {input}");
            }
            assert_eq!(call(snake_case, &[s(input)]), snake, "snakeCase {input}");
        }
        assert_eq!(call(upper_camel_case, &[s("foo-bar")]), "'FooBar'");
        assert_eq!(call(capitalize_all, &[s("hello big world")]), "'Hello Big World'");
    }

    #[test]
    fn regexes_and_distances() {
        assert_eq!(call(split, &[s("a1b22c333"), s("[0-9]+")]), "['a', 'b', 'c']");
        assert_eq!(call(split, &[s("a,b,,"), s(","), Value::Int(0)]), "['a', 'b']");
        assert_eq!(call(replace, &[s("Hello World!"), s("[^a-zA-Z]"), s("")]), "'HelloWorld'");
        assert_eq!(
            call(regex_groups, &[s("abc <link xyz1>"), s("<link (\\w+)>")]),
            "[['<link xyz1>', 'xyz1']]"
        );
        assert_eq!(call(levenshtein_distance, &[s("kitten"), s("sitting")]), "3");
        assert_eq!(call(fuzzy_match, &[s("Neo4j"), s("Neo4j!!")]), "true");
        assert_eq!(call(fuzzy_match, &[s("ab"), s("ac")]), "false");
        assert_eq!(call(clean, &[s("Hello, World!")]), "'helloworld'");
        assert!(replace(&[s("x"), s("("), s("")]).is_err());
    }
}
