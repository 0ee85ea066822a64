//! Vector index rules: their settings, how the settings ride in a schema rule's key list, the
//! per-index state around the ANN structure of `arbor-vector`, and which property values are
//! vectors an index takes.
//!
//! A vector rule is an [`IndexDef`](crate::schema::IndexDef) of kind
//! [`IndexKind::Vector`](crate::schema::IndexKind::Vector) whose `keys` are
//! `[property, dimensions (0: any), similarity (0 cosine, 1 euclidean), m, ef_construction,
//! quantization (0/1)]`: checkpoints and WAL records carry a rule's keys as a counted list of
//! numbers already, so vector rules need no new record layout, and a store written before them
//! still reads. Only [`VectorSettings::from_keys`] and [`VectorSettings::to_keys`] know the
//! layout.
//!
//! The ANN structure ([`Ann`]) is derived data: it is never logged nor checkpointed, but
//! built in the background from a snapshot when a store opens or a rule is created, while
//! commits made meanwhile queue their changes for it. Until it is ready a query scans the
//! snapshot exactly, so answers never depend on the build (see `mvcc/tx_vector.rs`).
//!
//! **ANN files** ([`AnnFiles`]): a file-backed store keeps each built structure in
//! `DIR/vector-ann/<hex of the index name>.ann` (`arbor_vector`'s checksummed format, written to
//! a temporary file, fsynced, renamed, directory fsynced). On open the build reads that file
//! instead of linking every vector again, and reconciles it with the recovered snapshot: a
//! vector that differs (written after the file, replayed from the WAL) is inserted again, an
//! entity that is gone is deleted. A missing, damaged or mismatched file (other settings) means
//! a full build; a stale one only costs the reconcile. The file is rewritten after each build
//! that changed something, outside any lock.

use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_model::Value;
use parking_lot::RwLock;

pub use arbor_vector::Similarity as VectorSimilarity;
use arbor_vector::VectorIndex;

use crate::progress::Progress;
use crate::vfs::Vfs;

/// Settings of a vector index, with Neo4j's defaults (`vector.hnsw.m` 16,
/// `vector.hnsw.ef_construction` 100, quantization on, cosine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VectorSettings {
    /// `vector.dimensions`; `None`: vectors of any length are indexed (as Neo4j does when the
    /// option is left out), and queries scan.
    pub dimensions: Option<u32>,
    pub similarity: VectorSimilarity,
    pub m: u32,
    pub ef_construction: u32,
    /// `vector.quantization.enabled`: answers are ranked and scored by Neo4j's quantized
    /// scores (`arbor_vector::quantize`).
    pub quantization: bool,
}

impl Default for VectorSettings {
    fn default() -> VectorSettings {
        VectorSettings {
            dimensions: None,
            similarity: VectorSimilarity::Cosine,
            m: 16,
            ef_construction: 100,
            quantization: true,
        }
    }
}

impl VectorSettings {
    /// The rule's key list: the property, then the settings (see the module docs).
    pub(crate) fn to_keys(self, property: u32) -> Vec<u32> {
        let similarity = match self.similarity {
            VectorSimilarity::Cosine => 0,
            VectorSimilarity::Euclidean => 1,
        };
        vec![
            property,
            self.dimensions.unwrap_or(0),
            similarity,
            self.m,
            self.ef_construction,
            u32::from(self.quantization),
        ]
    }

    /// The property and settings of a vector rule's key list; `None` when it is malformed.
    pub(crate) fn from_keys(keys: &[u32]) -> Option<(u32, VectorSettings)> {
        let &[property, dims, similarity, m, ef_construction, quantization] = keys else {
            return None;
        };
        let similarity = match similarity {
            0 => VectorSimilarity::Cosine,
            1 => VectorSimilarity::Euclidean,
            _ => return None,
        };
        let dimensions = (dims != 0).then_some(dims);
        let quantization = quantization != 0;
        Some((
            property,
            VectorSettings { dimensions, similarity, m, ef_construction, quantization },
        ))
    }

    /// The `arbor-vector` configuration (only for indexes with dimensions).
    pub(crate) fn config(self, dims: u32) -> arbor_vector::IndexConfig {
        let mut c = arbor_vector::IndexConfig::new(dims as usize, self.similarity);
        c.m = self.m as usize;
        c.ef_construction = self.ef_construction as usize;
        // The property store holds the vectors: the index keeps codes and fetches from it.
        c.keep_vectors = false;
        c
    }

    /// The vector an index with these settings takes from `value`: a list of numbers of the
    /// index's length, finite as f32 (and not zero for cosine); anything else is not indexed,
    /// as Neo4j leaves such entities out.
    pub(crate) fn vector_of(&self, value: &Value) -> Option<Vec<f32>> {
        let Value::List(items) = value else { return None };
        if items.is_empty() || self.dimensions.is_some_and(|d| d as usize != items.len()) {
            return None;
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let x = match item {
                Value::Int(i) => *i as f32,
                Value::Float(f) => *f as f32,
                _ => return None,
            };
            out.push(x);
        }
        self.similarity.prepare(&out).ok()?;
        Some(out)
    }
}

/// One change a commit makes to an index: the entity's new vector (`None`: it has none any
/// more) at a commit ts.
pub(crate) type Change = (u64, Option<Vec<f32>>, u64);

/// The ANN structure of one index.
pub(crate) enum Ann {
    /// Not built and not being built (during recovery, or an index without dimensions):
    /// commits skip it and queries scan.
    Idle,
    /// A builder is reading a snapshot; commits since queue their changes here.
    Building { pending: Vec<Change> },
    /// Complete for every snapshot at or after `since`.
    Ready { index: Box<VectorIndex>, since: u64 },
    /// Could not take a change (the index is full): queries scan; the message is listed.
    Failed(String),
}

/// A vector rule and its ANN structure.
pub(crate) struct VectorState {
    pub name: String,
    pub rel: bool,
    /// Label (or relationship type) and property key.
    pub owner: u32,
    pub property: u32,
    pub settings: VectorSettings,
    pub progress: Arc<Progress>,
    pub ann: RwLock<Ann>,
}

impl VectorState {
    /// The message of a failed index, for `SHOW INDEXES`' `failureMessage`.
    pub fn failure(&self) -> Option<String> {
        match &*self.ann.read() {
            Ann::Failed(m) => Some(m.clone()),
            _ => None,
        }
    }
}

/// The vector rules by name.
#[derive(Default)]
pub(crate) struct VectorIndexes {
    by_name: BTreeMap<String, Arc<VectorState>>,
    /// Where built ANN structures are kept (a file-backed store opened for writing).
    pub files: Option<Arc<AnnFiles>>,
}

/// The ANN files of a store (see the module docs).
pub(crate) struct AnnFiles {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
}

impl AnnFiles {
    pub fn new(vfs: Arc<dyn Vfs>, store_dir: &Path) -> AnnFiles {
        AnnFiles { vfs, dir: store_dir.join("vector-ann") }
    }

    fn path(&self, name: &str) -> PathBuf {
        let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.ann"))
    }

    /// The stored structure of index `name`, if there is a readable one built with `settings`
    /// for `dims` dimensions. A damaged file is reported and ignored (the caller rebuilds).
    pub fn load(&self, name: &str, settings: &VectorSettings, dims: u32) -> Option<VectorIndex> {
        let path = self.path(name);
        if !self.vfs.exists(&path) {
            return None;
        }
        let read = self.vfs.open_read(&path).map_err(|e| e.to_string()).and_then(|f| {
            VectorIndex::read_from(&mut BufReader::with_capacity(1 << 20, f))
                .map_err(|e| e.to_string())
        });
        match read {
            Ok(index) => {
                let c = index.config();
                let same = c.dims == dims as usize
                    && c.similarity == settings.similarity
                    && c.m == settings.m as usize
                    && c.ef_construction == settings.ef_construction as usize;
                if !same {
                    tracing::info!("vector index `{name}`: {} has other settings", path.display());
                }
                same.then_some(index)
            }
            Err(e) => {
                tracing::warn!("vector index `{name}`: ignoring {}: {e}", path.display());
                None
            }
        }
    }

    /// Stores `index` as the structure of index `name` (atomically: temporary file, fsync,
    /// rename, directory fsync).
    pub fn save(&self, name: &str, index: &VectorIndex) -> Result<(), String> {
        let path = self.path(name);
        let tmp = path.with_extension("ann.tmp");
        let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what} {}: {e}", tmp.display());
        self.vfs
            .create_dir_all(&self.dir)
            .map_err(|e| fail("cannot create the directory of", &e))?;
        let mut file = self.vfs.create(&tmp).map_err(|e| fail("cannot create", &e))?;
        {
            let mut w = BufWriter::with_capacity(1 << 20, &mut file);
            index.write_to(&mut w).map_err(|e| fail("cannot write", &e))?;
            w.flush().map_err(|e| fail("cannot write", &e))?;
        }
        file.sync_all().map_err(|e| fail("cannot fsync", &e))?;
        drop(file);
        self.vfs.rename(&tmp, &path).map_err(|e| fail("cannot rename", &e))?;
        self.vfs.sync_dir(&self.dir).map_err(|e| fail("cannot fsync the directory of", &e))
    }

    /// Removes the files of indexes not in `names` (dropped while the store was open) and
    /// leftover temporary files.
    pub fn remove_others(&self, names: &[String]) {
        let Ok(entries) = self.vfs.list_dir(&self.dir) else { return };
        let keep: Vec<PathBuf> = names.iter().map(|n| self.path(n)).collect();
        for entry in entries {
            let path = self.dir.join(&entry);
            if !keep.contains(&path) && (entry.ends_with(".ann") || entry.ends_with(".tmp")) {
                if let Err(e) = self.vfs.remove_file(&path) {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        }
    }
}

impl VectorIndexes {
    pub fn get(&self, name: &str) -> Option<&Arc<VectorState>> {
        self.by_name.get(name)
    }
    pub fn insert(&mut self, state: Arc<VectorState>) {
        self.by_name.insert(state.name.clone(), state);
    }
    pub fn remove(&mut self, name: &str) {
        self.by_name.remove(name);
    }
    pub fn all(&self) -> Vec<Arc<VectorState>> {
        self.by_name.values().cloned().collect()
    }
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_roundtrip_through_keys() {
        let s = VectorSettings {
            dimensions: Some(1536),
            similarity: VectorSimilarity::Euclidean,
            m: 32,
            ef_construction: 200,
            quantization: false,
        };
        assert_eq!(VectorSettings::from_keys(&s.to_keys(7)), Some((7, s)));
        let d = VectorSettings::default();
        assert_eq!(VectorSettings::from_keys(&d.to_keys(0)), Some((0, d)));
        assert_eq!(VectorSettings::from_keys(&[1, 2, 3]), None);
        assert_eq!(VectorSettings::from_keys(&[1, 2, 9, 16, 100, 1]), None);
    }

    #[test]
    fn only_lists_of_numbers_of_the_length_are_vectors() {
        let s = VectorSettings { dimensions: Some(2), ..VectorSettings::default() };
        let v = |items: Vec<Value>| Value::List(items);
        assert_eq!(s.vector_of(&v(vec![Value::Int(1), Value::Float(2.5)])), Some(vec![1.0, 2.5]));
        assert_eq!(s.vector_of(&v(vec![Value::Int(1)])), None);
        assert_eq!(s.vector_of(&v(vec![Value::Int(0), Value::Int(0)])), None, "zero for cosine");
        assert_eq!(s.vector_of(&v(vec![Value::Float(f64::NAN), Value::Int(1)])), None);
        assert_eq!(s.vector_of(&v(vec![Value::Float(1e300), Value::Int(1)])), None, "f32 range");
        assert_eq!(s.vector_of(&v(vec![Value::str("a"), Value::Int(1)])), None);
        assert_eq!(s.vector_of(&Value::str("x")), None);
        let any = VectorSettings::default();
        assert!(any.vector_of(&v(vec![Value::Int(1); 3])).is_some());
    }
}
