//! The vector index procedures of Neo4j 5: `db.index.vector.queryNodes` /
//! `queryRelationships` (through [`Graph::vector_query`]), `db.create.setNodeVectorProperty` /
//! `setRelationshipVectorProperty`, and the deprecated `db.index.vector.createNodeIndex`
//! (through [`Graph::create_vector_index`]).
//!
//! Failures carry Neo4j's code `Neo.ClientError.Procedure.ProcedureCallFailed` and its wording,
//! `Failed to invoke procedure `name`: Caused by: java.lang.IllegalArgumentException: ...`.

use arbor_cypher_plan::CypherType as T;
use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use crate::graph::{Graph, TokenKind};
use crate::procs::{col, Procedure};

const QUERY_NODES: &str = "db.index.vector.queryNodes";
const QUERY_RELS: &str = "db.index.vector.queryRelationships";
const SET_NODE: &str = "db.create.setNodeVectorProperty";
const SET_REL: &str = "db.create.setRelationshipVectorProperty";
const CREATE_NODE_INDEX: &str = "db.index.vector.createNodeIndex";

/// A failure as Neo4j reports it from inside a procedure (`exception` is the Java class).
fn call_failed(proc_name: &str, exception: &str, message: &str) -> Error {
    Error::new(
        Status::ProcedureCallFailed,
        format!("Failed to invoke procedure `{proc_name}`: Caused by: {exception}: {message}"),
    )
}

fn illegal(proc_name: &str, message: &str) -> Error {
    call_failed(proc_name, "java.lang.IllegalArgumentException", message)
}

pub(super) fn procedures() -> Vec<Procedure> {
    let query_inputs = || {
        vec![
            col("indexName", T::String),
            col("numberOfNearestNeighbours", T::Integer),
            col("query", T::Any),
        ]
    };
    let mut set_node = Procedure::new(
        SET_NODE,
        vec![col("node", T::Node), col("key", T::String), col("vector", T::Any)],
        vec![],
        "Set a vector property on a given node in a more space efficient representation than \
         Cypher's SET.",
        |args, g| set_vector(SET_NODE, args, g),
    );
    set_node.writes = true;
    let mut set_rel = Procedure::new(
        SET_REL,
        vec![col("relationship", T::Relationship), col("key", T::String), col("vector", T::Any)],
        vec![],
        "Set a vector property on a given relationship in a more space efficient \
         representation than Cypher's SET.",
        |args, g| set_vector(SET_REL, args, g),
    );
    set_rel.writes = true;
    let mut create = Procedure::new(
        CREATE_NODE_INDEX,
        vec![
            col("indexName", T::String),
            col("label", T::String),
            col("propertyKey", T::String),
            col("vectorDimension", T::Integer),
            col("vectorSimilarityFunction", T::String),
        ],
        vec![],
        "Create a named node vector index for the specified label and property with the given \
         vector dimensionality using the given similarity function.",
        create_node_index,
    );
    create.writes = true;
    vec![
        Procedure::new(
            QUERY_NODES,
            query_inputs(),
            vec![col("node", T::Node), col("score", T::Float)],
            "Query the given node vector index.",
            |args, g| query(QUERY_NODES, false, args, g),
        ),
        Procedure::new(
            QUERY_RELS,
            query_inputs(),
            vec![col("relationship", T::Relationship), col("score", T::Float)],
            "Query the given relationship vector index.",
            |args, g| query(QUERY_RELS, true, args, g),
        ),
        set_node,
        set_rel,
        create,
    ]
}

/// The numbers of a vector argument; `None` when it is a list holding something else.
fn numbers(v: &Value) -> Option<Vec<f64>> {
    let Value::List(items) = v else { return None };
    items
        .iter()
        .map(|x| match x {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        })
        .collect()
}

/// How Neo4j prints the elements of a rejected query vector.
fn describe(items: &[Value]) -> String {
    let shown: Vec<String> = items
        .iter()
        .map(|x| match x {
            Value::Int(i) => format!("Long({i})"),
            Value::Float(f) => format!("Double({f:e})"),
            Value::String(s) => format!("String(\"{s}\")"),
            other => other.type_name().to_string(),
        })
        .collect();
    shown.join(", ")
}

fn query(name: &str, rels: bool, args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let index = match args.first() {
        Some(Value::String(s)) => s.to_string(),
        _ => {
            return Err(call_failed(
                name,
                "java.lang.NullPointerException",
                "'indexName' must not be null",
            ))
        }
    };
    let k = match args.get(1) {
        Some(Value::Int(k)) if *k > 0 => usize::try_from(*k).unwrap_or(usize::MAX),
        Some(Value::Int(_)) => {
            return Err(illegal(name, "'numberOfNearestNeighbours' must be positive"))
        }
        _ => {
            return Err(call_failed(
                name,
                "java.lang.NullPointerException",
                "'numberOfNearestNeighbours' must not be null",
            ))
        }
    };
    let query: Vec<f32> = match args.get(2) {
        None | Some(Value::Null) => {
            return Err(call_failed(
                name,
                "java.lang.NullPointerException",
                "'query' must not be null",
            ))
        }
        Some(v @ Value::List(items)) => match numbers(v) {
            Some(xs) => xs.into_iter().map(|x| x as f32).collect(),
            None => {
                return Err(illegal(
                    name,
                    &format!(
                        "Vector must only contain finite values, and have positive and finite \
                         l2-norm. Provided: SequenceValueVectorCandidate[sequence=List{{{}}}]",
                        describe(items)
                    ),
                ))
            }
        },
        Some(_) => return Err(illegal(name, "'query' must be a non-null numerical array")),
    };
    let hits = g.vector_query(&index, rels, k, &query).map_err(|e| match e.status {
        Status::ArgumentError => illegal(name, &e.message),
        _ => e,
    })?;
    Ok(neo4j_tie_order(hits)
        .into_iter()
        .map(|(id, score)| {
            let entity =
                if rels { Value::Relationship(RelId(id)) } else { Value::Node(NodeId(id)) };
            vec![entity, Value::Float(score)]
        })
        .collect())
}

/// The hits in the order Neo4j 5.26 returns them. Its vector index hands its top `k` to a
/// Lucene priority queue in document (insertion) order; the queue compares scores only and is
/// drained worst first into the result from the back. Distinct scores come out best first;
/// a run of equal scores does not keep document order (ties inserted as a, b, c come out
/// b, c, a; measured on 5.26.30, see `tests/libraries/RESULTS.md`). Arbor's ids stand in for
/// document order, which they follow for entities indexed once.
fn neo4j_tie_order(mut hits: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    let less = |a: &(u64, f64), b: &(u64, f64)| a.1 < b.1;
    hits.sort_by_key(|h| h.0);
    // 1-based binary min-heap, sifting exactly as Lucene's `PriorityQueue` does.
    let mut heap: Vec<(u64, f64)> = Vec::with_capacity(hits.len() + 1);
    heap.push((0, 0.0));
    for hit in hits {
        heap.push(hit);
        let mut i = heap.len() - 1;
        while i > 1 && less(&hit, &heap[i / 2]) {
            heap[i] = heap[i / 2];
            i /= 2;
        }
        heap[i] = hit;
    }
    let mut out = Vec::with_capacity(heap.len() - 1);
    while heap.len() > 1 {
        let last = heap.pop().unwrap_or((0, 0.0));
        let size = heap.len() - 1;
        if size == 0 {
            out.push(last);
            break;
        }
        out.push(heap[1]);
        let smaller_child = |heap: &[(u64, f64)], j: usize| {
            if j < size && less(&heap[j + 1], &heap[j]) {
                j + 1
            } else {
                j
            }
        };
        let mut i = 1;
        let mut j = smaller_child(&heap, 2);
        while j <= size && less(&heap[j], &last) {
            heap[i] = heap[j];
            i = j;
            j = smaller_child(&heap, 2 * i);
        }
        heap[i] = last;
    }
    out.reverse();
    out
}

/// `db.create.set{Node,Relationship}VectorProperty(entity, key, vector)`: stores the vector
/// as a list of floats.
fn set_vector(name: &str, args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let key = match args.get(1) {
        Some(Value::String(s)) => s.to_string(),
        _ => {
            return Err(call_failed(
                name,
                "java.lang.NullPointerException",
                "'key' must not be null",
            ))
        }
    };
    let vector = match args.get(2) {
        Some(v) => numbers(v)
            .ok_or_else(|| illegal(name, "'vector' must be a non-null numerical array"))?,
        None => return Err(illegal(name, "'vector' must be a non-null numerical array")),
    };
    if vector.iter().any(|x| !x.is_finite() || x.abs() > f64::from(f32::MAX)) {
        return Err(illegal(name, "Vector must only contain finite values."));
    }
    let value =
        Value::List(vector.into_iter().map(|x| Value::Float(f64::from(x as f32))).collect());
    let key = g.get_or_create_token(TokenKind::PropertyKey, &key)?;
    match args.first() {
        Some(Value::Node(id)) => g.set_node_property(*id, key, value)?,
        Some(Value::NodeData(n)) => g.set_node_property(n.id, key, value)?,
        Some(Value::Relationship(id)) => g.set_rel_property(*id, key, value)?,
        Some(Value::RelData(r)) => g.set_rel_property(r.id, key, value)?,
        _ => {
            return Err(call_failed(
                name,
                "java.lang.NullPointerException",
                "the entity must not be null",
            ))
        }
    }
    Ok(Vec::new())
}

fn create_node_index(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let text = |i: usize, what: &str| match args.get(i) {
        Some(Value::String(s)) => Ok(s.to_string()),
        _ => Err(illegal(CREATE_NODE_INDEX, &format!("'{what}' must not be null"))),
    };
    let (index, label, property) =
        (text(0, "indexName")?, text(1, "label")?, text(2, "propertyKey")?);
    let dims = match args.get(3) {
        Some(Value::Int(d)) => *d,
        _ => return Err(illegal(CREATE_NODE_INDEX, "'vectorDimension' must not be null")),
    };
    let similarity = text(4, "vectorSimilarityFunction")?;
    g.create_vector_index(&index, &label, &property, dims, &similarity)?;
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::neo4j_tie_order;

    fn ids(hits: &[(u64, f64)]) -> Vec<u64> {
        neo4j_tie_order(hits.to_vec()).iter().map(|h| h.0).collect()
    }

    #[test]
    fn distinct_scores_come_out_best_first() {
        assert_eq!(ids(&[(4, 0.9), (1, 0.8), (7, 0.7), (2, 0.1)]), [4, 1, 7, 2]);
        assert_eq!(ids(&[]), Vec::<u64>::new());
        assert_eq!(ids(&[(3, 0.5)]), [3]);
    }

    /// Orders measured on Neo4j 5.26.30 (cosine index, 8 dimensions, the scores rounded here).
    #[test]
    fn ties_come_out_in_neo4j_5_26_order() {
        // langchain's test_neo4jvector_prefer_indexname_insert: the later of two equal vectors first.
        assert_eq!(ids(&[(0, 0.99), (1, 0.99)]), [1, 0]);
        assert_eq!(ids(&[(0, 0.99), (1, 0.99), (2, 0.99)]), [1, 2, 0]);
        assert_eq!(
            ids(&[(0, 1.0), (1, 1.0), (2, 1.0), (3, 1.0), (4, 1.0), (5, 1.0)]),
            [1, 2, 3, 4, 5, 0]
        );
        let mixed = [(0, 1.0), (1, 0.95), (2, 1.0), (3, 0.95), (4, 1.0), (5, 0.9), (6, 1.0)];
        assert_eq!(ids(&mixed), [6, 2, 0, 4, 1, 3, 5]);
        let mixed = [(2, 1.0), (3, 1.0), (5, 1.0), (0, 0.95), (1, 0.95), (4, 0.95)];
        assert_eq!(ids(&mixed), [5, 2, 3, 4, 1, 0]);
        let mixed =
            [(0, 1.0), (1, 1.0), (2, 1.0), (6, 1.0), (7, 1.0), (3, 0.99), (4, 0.99), (5, 0.99)];
        assert_eq!(ids(&mixed), [7, 6, 1, 0, 2, 5, 4, 3]);
    }
}
