//! `vector.similarity.cosine(a, b)` and `vector.similarity.euclidean(a, b)`: Cypher values to
//! f32 vectors, scored by `arbor-vector` with Neo4j 5.26's formulas and error texts.

use arbor_model::{Error, Result, Value};

use super::{arg, type_err};

/// A Cypher argument as an f32 vector: `None` for null; a list element that is not a number
/// or is out of the f32 range becomes NaN, which the scorers reject as Neo4j does.
fn to_vector(func: &str, v: &Value) -> Result<Option<Vec<f32>>> {
    let Value::List(items) = v else {
        return match v {
            Value::Null => Ok(None),
            other => Err(type_err(func, "a List<Float | Integer>", other)),
        };
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let x = match item {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            // Neo4j: a list holding anything but numbers is "not a valid vector".
            _ => f64::NAN,
        };
        let f = x as f32;
        out.push(if x.is_finite() && !f.is_finite() { f32::NAN } else { f });
    }
    Ok(Some(out))
}

/// A similarity function of `arbor-vector`.
type Scorer = fn(Option<&[f32]>, Option<&[f32]>) -> arbor_vector::Result<Option<f64>>;

fn score(func: &str, args: &[Value], scorer: Scorer) -> Result<Value> {
    let a = to_vector(func, arg(args, 0))?;
    let b = to_vector(func, arg(args, 1))?;
    scorer(a.as_deref(), b.as_deref())
        .map(|s| s.map_or(Value::Null, Value::Float))
        .map_err(|e| Error::argument(format!("Invalid input for '{func}()': {e}")))
}

/// `vector.similarity.cosine(a, b)`: `(1 + cos) / 2`.
pub fn cosine(args: &[Value]) -> Result<Value> {
    score("vector.similarity.cosine", args, arbor_vector::cosine_score)
}

/// `vector.similarity.euclidean(a, b)`: `1 / (1 + d²)`.
pub fn euclidean(args: &[Value]) -> Result<Value> {
    score("vector.similarity.euclidean", args, arbor_vector::euclidean_score)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::Status;

    fn float(v: Value) -> Option<f64> {
        match v {
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    fn list(xs: &[f64]) -> Value {
        Value::List(xs.iter().map(|x| Value::Float(*x)).collect())
    }

    #[test]
    fn scores_match_neo4j_digits() {
        let s = cosine(&[list(&[0.1, 0.2, 0.3]), list(&[0.3, 0.2, 0.1])]).unwrap();
        assert_eq!(float(s), Some(0.8571428656578064));
        let s = euclidean(&[list(&[1.0, 2.0]), list(&[2.0, 4.0])]).unwrap();
        assert_eq!(float(s), Some(0.1666666716337204));
        let ints = Value::List(vec![Value::Int(1), Value::Int(0)]);
        assert_eq!(float(cosine(&[ints, list(&[0.0, 1.0])]).unwrap()), Some(0.5));
    }

    #[test]
    fn null_argument_gives_null() {
        assert!(matches!(cosine(&[Value::Null, list(&[1.0])]).unwrap(), Value::Null));
        assert!(matches!(euclidean(&[list(&[1.0]), Value::Null]).unwrap(), Value::Null));
    }

    #[test]
    fn invalid_vectors_are_argument_errors_naming_the_argument() {
        let e = cosine(&[list(&[1.0, 2.0]), list(&[1.0])]).unwrap_err();
        assert_eq!(e.status, Status::ArgumentError);
        assert!(e.message.contains("same number of dimensions"), "{}", e.message);
        let e = cosine(&[list(&[0.0, 0.0]), list(&[1.0, 1.0])]).unwrap_err();
        assert!(e.message.contains("Argument a is not a valid vector"), "{}", e.message);
        let bad = Value::List(vec![Value::String("x".into()), Value::Int(1)]);
        let e = euclidean(&[list(&[1.0, 2.0]), bad]).unwrap_err();
        assert!(e.message.contains("Argument b is not a valid vector"), "{}", e.message);
        let e = euclidean(&[list(&[1e300]), list(&[1.0])]).unwrap_err();
        assert_eq!(e.status, Status::ArgumentError);
    }

    #[test]
    fn non_list_is_a_type_error() {
        let e = cosine(&[Value::String("a".into()), list(&[1.0])]).unwrap_err();
        assert_eq!(e.status, Status::TypeError);
    }
}
