//! Transaction reads through vector indexes: the `k` nearest entities to a query vector as
//! this transaction sees the graph, and creating a vector index from inside a query.
//!
//! With a ready ANN structure that covers the snapshot, the committed index is searched at the
//! snapshot with this transaction's written entities filtered out, those entities' current
//! vectors are scored exactly, and the two lists are merged. Otherwise (the index is still
//! building, failed, has no dimensions, or is newer than the snapshot) the entities the
//! transaction sees are scanned exactly: the answer is the same, only slower.
//!
//! The index keeps only one-byte codes of large sets (`arbor_vector`'s `keep_vectors` off):
//! its candidates are ranked again by exact distances to the vectors read here, at this
//! transaction's snapshot, from the property store ([`SearchParams::fetch`]), so the f32
//! vectors are held once.
//!
//! With `vector.quantization.enabled` (Neo4j's default) the answer is ranked and scored as
//! Neo4j's quantized index does (`arbor_vector::quantize`): the exact nearest `k + max(k, 32)`
//! are ranked again by the quantized scores and the best `k` kept.

use arbor_model::{Error, NodeId, RelId, Result, Value};
use arbor_vector::{exact_top_k, merge_top_k, quantized_top_k, Hit, Quantizer, SearchParams};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use super::tx::Transaction;
use crate::vector::{Ann, VectorSettings, VectorState};

/// With quantization on, how many exact nearest candidates beyond `k` (at least) are ranked
/// again by Neo4j's quantized scores.
const RERANK_POOL: usize = 32;
/// Beam width of an index query: 0, the width the index measured on its own data for a
/// recall@10 of 0.97 (`arbor_vector`'s `tune.rs`). A fixed width (256 until session 14) made
/// recall fall as hard data grew: 0.96 at 10 k, 0.71 at 100 k uniform 128-d vectors.
const QUERY_EF: usize = 0;

/// What a vector index query is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorEntity {
    Node,
    Relationship,
}

impl Transaction {
    /// The `k` entities nearest to `query` in the vector index `name`, best first, with
    /// Neo4j's scores. Errors carry Neo4j's message texts (an unknown index, an index on the
    /// other entity kind, a query of the wrong length or not a valid vector).
    pub fn vector_query(
        &self,
        name: &str,
        entity: VectorEntity,
        k: usize,
        query: &[f32],
    ) -> Result<Vec<(u64, f64)>> {
        let state = self.core.schema.read().vectors.get(name).cloned();
        let Some(state) = state else {
            return Err(Error::argument(format!("There is no such vector schema index: {name}")));
        };
        if state.rel != (entity == VectorEntity::Relationship) {
            return Err(Error::argument(self.wrong_entity(&state)));
        }
        let settings = state.settings;
        if let Some(d) = settings.dimensions {
            if query.len() != d as usize {
                return Err(Error::argument(format!(
                    "Index query vector has {} dimensions, but indexed vectors have {d}.",
                    query.len()
                )));
            }
        }
        if query.is_empty() || settings.similarity.prepare(query).is_err() {
            return Err(Error::argument(invalid_query(&settings, query)));
        }
        let hits = {
            let ann = state.ann.read();
            match &*ann {
                Ann::Ready { index, since } if self.start_ts >= *since => {
                    let quantizer = settings.quantization.then(|| index.quantizer()).flatten();
                    let pool = match quantizer {
                        Some(_) => k.saturating_add(k.max(RERANK_POOL)),
                        None => k,
                    };
                    let own = self.own_vectors(&state);
                    let hide = |id: u64| !self.written(&state, id);
                    // A transaction that wrote no entity of the index's kind hides nothing: no
                    // filter lets the library take its unfiltered path.
                    let wrote =
                        if state.rel { !self.rels.is_empty() } else { !self.nodes.is_empty() };
                    let filter: Option<&(dyn Fn(u64) -> bool + Sync)> =
                        if wrote { Some(&hide) } else { None };
                    // Exact vectors of committed entries, read once and kept for the quantized
                    // re-rank below.
                    let fetched: Mutex<FxHashMap<u64, Vec<f32>>> = Mutex::default();
                    let fetch = |id: u64, out: &mut Vec<f32>| {
                        let Some(v) = self.committed_vector(&state, id) else { return false };
                        out.extend_from_slice(&v);
                        fetched.lock().insert(id, v);
                        true
                    };
                    let params = SearchParams {
                        snapshot: self.start_ts,
                        ef: QUERY_EF,
                        filter,
                        fetch: Some(&fetch),
                    };
                    let committed = index.search(query, pool, &params).map_err(vector_err)?;
                    let mine = exact_top_k(
                        settings.similarity,
                        query,
                        own.iter().map(|(id, v)| (*id, v.as_slice())),
                        pool,
                    )
                    .map_err(vector_err)?;
                    let merged = merge_top_k(&committed, &mine, pool);
                    match quantizer {
                        None => merged,
                        Some(q) => {
                            let sim = settings.similarity;
                            let fetched = fetched.into_inner();
                            let vectors: Vec<(u64, Vec<f32>)> = merged
                                .iter()
                                .filter_map(|h| {
                                    let v = match own.iter().find(|(id, _)| *id == h.id) {
                                        Some((_, v)) => sim.prepare(v).ok()?,
                                        None => match index.prepared_vector(h.id) {
                                            Some(v) => v.to_vec(),
                                            None => match fetched.get(&h.id) {
                                                Some(v) => sim.prepare(v).ok()?,
                                                None => {
                                                    let v = self.committed_vector(&state, h.id)?;
                                                    sim.prepare(&v).ok()?
                                                }
                                            },
                                        },
                                    };
                                    Some((h.id, v))
                                })
                                .collect();
                            let cands = vectors.iter().map(|(id, v)| (*id, v.as_slice()));
                            quantized_top_k(sim, &q, query, cands, k).map_err(vector_err)?
                        }
                    }
                }
                _ => {
                    drop(ann);
                    self.scan_vectors(&state, query, k)?
                }
            }
        };
        Ok(hits.into_iter().map(|h| (h.id, f64::from(h.score))).collect())
    }

    /// The vector (as stored, not prepared) that entity `id` holds for the index at this
    /// transaction's snapshot: the exact vectors behind an index that keeps only codes.
    fn committed_vector(&self, state: &VectorState, id: u64) -> Option<Vec<f32>> {
        let value = if state.rel {
            self.rel_property(RelId(id), state.property)
        } else {
            self.node_property(NodeId(id), state.property)
        };
        state.settings.vector_of(&value?)
    }

    /// Whether this transaction wrote entity `id` of the index's kind.
    fn written(&self, state: &VectorState, id: u64) -> bool {
        if state.rel {
            self.rels.contains_key(&id)
        } else {
            self.nodes.contains_key(&id)
        }
    }

    /// The current vectors of the entities this transaction wrote that the index takes.
    fn own_vectors(&self, state: &VectorState) -> Vec<(u64, Vec<f32>)> {
        let s = &state.settings;
        if state.rel {
            self.rels
                .iter()
                .filter_map(|(id, w)| {
                    let r = w.data.as_ref().filter(|r| r.ty == state.owner)?;
                    Some((*id, s.vector_of(crate::records::prop_of(&r.props, state.property)?)?))
                })
                .collect()
        } else {
            self.nodes
                .iter()
                .filter_map(|(id, w)| {
                    let n = w.data.as_ref().filter(|n| n.has_label(state.owner))?;
                    Some((*id, s.vector_of(n.prop(state.property)?)?))
                })
                .collect()
        }
    }

    /// Exact top `k` over every entity of the index's label or type this transaction sees.
    fn scan_vectors(&self, state: &VectorState, query: &[f32], k: usize) -> Result<Vec<Hit>> {
        let mut all: Vec<(u64, Vec<f32>)> = Vec::new();
        let mut keep = |id: u64, v: Option<Value>| {
            if let Some(v) = v.as_ref().and_then(|v| state.settings.vector_of(v)) {
                all.push((id, v));
            }
        };
        let mut cur = 0;
        if state.rel {
            while let Some(r) = self.next_rel(&[state.owner], RelId(cur)) {
                keep(r.0, self.rel_property(r, state.property));
                cur = r.0 + 1;
            }
        } else {
            while let Some(n) = self.next_node(Some(state.owner), NodeId(cur)) {
                keep(n.0, self.node_property(n, state.property));
                cur = n.0 + 1;
            }
        }
        let sim = state.settings.similarity;
        if state.settings.quantization {
            // Neo4j's quantized scores: the quantizer is fitted on every vector seen, in id
            // order (the order the ANN structure's bulk build stores them in).
            let prepared: Vec<(u64, Vec<f32>)> =
                all.iter().filter_map(|(id, v)| Some((*id, sim.prepare(v).ok()?))).collect();
            let dims = query.len();
            let same: Vec<&(u64, Vec<f32>)> =
                prepared.iter().filter(|(_, v)| v.len() == query.len()).collect();
            if let Some(q) = Quantizer::fit(dims, same.len(), |i| &same[i].1) {
                let candidates = same.iter().map(|(id, v)| (*id, v.as_slice()));
                return quantized_top_k(sim, &q, query, candidates, k).map_err(vector_err);
            }
        }
        let candidates = all.iter().map(|(id, v)| (*id, v.as_slice()));
        exact_top_k(sim, query, candidates, k).map_err(vector_err)
    }

    /// Neo4j's message for a query through the other procedure (its text says "nodes" for
    /// both kinds).
    fn wrong_entity(&self, state: &VectorState) -> String {
        let token = |kind, id| self.token_name(kind, id).unwrap_or_default();
        let key = token(crate::types::TokenKind::PropertyKey, state.property);
        let (kind, schema) = if state.rel {
            let ty = token(crate::types::TokenKind::RelType, state.owner);
            ("RELATIONSHIP", format!("()-[:{ty} {{{key}}}]-()"))
        } else {
            let label = token(crate::types::TokenKind::Label, state.owner);
            ("NODE", format!("(:{label} {{{key}}})"))
        };
        format!(
            "The '{0}' index (Index( name='{0}', type='VECTOR', schema={schema}, \
             indexProvider='vector-2.0' )) is an index on {kind}, so it cannot be queried for \
             nodes.",
            state.name
        )
    }

    /// Creates a vector index on `owner` (a label, or a relationship type with `rel`) and
    /// `property`; it commits on its own, as every schema change does. See
    /// [`crate::Store::create_vector_index`].
    pub fn create_vector_index(
        &self,
        name: Option<&str>,
        rel: bool,
        owner: u32,
        property: u32,
        settings: VectorSettings,
    ) -> Result<bool> {
        self.core.create_vector_rule(name, rel, owner, property, settings)
    }
}

/// Neo4j's message for a query vector the index cannot use.
fn invalid_query(settings: &VectorSettings, query: &[f32]) -> String {
    let shown: Vec<String> = query.iter().map(|x| format!("Double({})", java_e(*x))).collect();
    let norm = match settings.similarity {
        arbor_vector::Similarity::Cosine => ", and have positive and finite l2-norm",
        arbor_vector::Similarity::Euclidean => "",
    };
    format!(
        "Vector must only contain finite values{norm}. Provided: \
         SequenceValueVectorCandidate[sequence=List{{{}}}]",
        shown.join(", ")
    )
}

/// A number as Java's `%e` prints it (`1.500000e+00`).
fn java_e(x: f32) -> String {
    let s = format!("{:.6e}", f64::from(x));
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

fn vector_err(e: arbor_vector::VectorError) -> Error {
    Error::argument(e.to_string())
}
