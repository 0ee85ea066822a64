//! Token registry: name <-> id maps for labels, relationship types and property keys.

use std::sync::Arc;

use arbor_model::{Error, Result, Status};
use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use crate::types::TokenKind;

/// Name <-> id maps of one token kind.
#[derive(Default, Clone)]
pub(crate) struct TokenTable {
    pub names: Vec<Arc<str>>,
    pub ids: FxHashMap<Arc<str>, u32>,
}

#[derive(Default, Clone)]
pub(crate) struct Tokens {
    pub t: [TokenTable; 3],
}

/// The global token tables, copy-on-write: tokens are only ever added, so a transaction takes
/// an `Arc` snapshot when it begins and resolves names without touching the shared lock (a read
/// lock per property access made every query thread bounce one cache line). Creating a token
/// copies the tables only while snapshots of the old ones are alive; token creation is rare.
#[derive(Default)]
pub(crate) struct TokenRegistry {
    pub(super) inner: RwLock<Arc<Tokens>>,
}

/// Write access to the token tables (clones them first if a snapshot still shares them).
pub(crate) struct TokensWrite<'a>(parking_lot::RwLockWriteGuard<'a, Arc<Tokens>>);

impl std::ops::Deref for TokensWrite<'_> {
    type Target = Tokens;
    fn deref(&self) -> &Tokens {
        &self.0
    }
}

impl std::ops::DerefMut for TokensWrite<'_> {
    fn deref_mut(&mut self) -> &mut Tokens {
        Arc::make_mut(&mut self.0)
    }
}

impl TokenRegistry {
    pub fn read(&self) -> parking_lot::RwLockReadGuard<'_, Arc<Tokens>> {
        self.inner.read()
    }
    pub fn write(&self) -> TokensWrite<'_> {
        TokensWrite(self.inner.write())
    }
    /// The current tables, for lock-free lookups of tokens that existed at this moment.
    pub fn snapshot(&self) -> Arc<Tokens> {
        self.inner.read().clone()
    }
}

impl Tokens {
    pub fn get(&self, kind: TokenKind, name: &str) -> Option<u32> {
        self.t[kind.index()].ids.get(name).copied()
    }
    pub fn name(&self, kind: TokenKind, id: u32) -> Option<Arc<str>> {
        self.t[kind.index()].names.get(id as usize).cloned()
    }
    pub fn create(&mut self, kind: TokenKind, name: &str) -> Result<u32> {
        let t = &mut self.t[kind.index()];
        if let Some(id) = t.ids.get(name) {
            return Ok(*id);
        }
        let id = u32::try_from(t.names.len())
            .map_err(|_| Error::new(Status::MemoryExhausted, "too many tokens"))?;
        let name: Arc<str> = Arc::from(name);
        t.names.push(name.clone());
        t.ids.insert(name, id);
        Ok(id)
    }
    /// Registers a token read from disk at its recorded id.
    pub fn ensure(&mut self, kind: TokenKind, id: u32, name: &str) -> Result<()> {
        let t = &self.t[kind.index()];
        match t.names.get(id as usize) {
            Some(n) if &**n == name => Ok(()),
            Some(n) => Err(crate::codec::corrupt(format!("token {id} is both `{n}` and `{name}`"))),
            None if id as usize == t.names.len() && !t.ids.contains_key(name) => {
                self.create(kind, name).map(|_| ())
            }
            None => Err(crate::codec::corrupt(format!("token `{name}` recorded out of order"))),
        }
    }
}
