//! Rendering of the result files: `serde_json`'s pretty printer (two-space indent) over values
//! whose floating-point numbers are rounded to 6 decimals first (plenty for timings, and it
//! keeps the files readable); non-finite numbers are `null`, as JSON has no NaN.

use serde_json::Value;

/// `v` with every float rounded to 6 decimals (integers are left alone).
fn rounded(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .and_then(|f| serde_json::Number::from_f64((f * 1e6).round() / 1e6))
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(rounded).collect()),
        Value::Object(fields) => {
            Value::Object(fields.iter().map(|(k, v)| (k.clone(), rounded(v))).collect())
        }
        other => other.clone(),
    }
}

/// The document as pretty-printed JSON text with a final newline.
pub fn render(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(&rounded(v)).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_nested_values_in_insertion_order() {
        let j = json!({"z": 1, "s": "x\"y\n", "l": [0.123_456_789], "n": f64::NAN});
        assert_eq!(
            render(&j),
            "{\n  \"z\": 1,\n  \"s\": \"x\\\"y\\n\",\n  \"l\": [\n    0.123457\n  ],\n  \"n\": null\n}\n"
        );
    }
}
