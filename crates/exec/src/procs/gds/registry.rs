//! The list of GDS procedures over one fresh catalog: built above the catalog procedures
//! (`mod.rs`) and the algorithms (`algo.rs`), which look down only to the catalog's types.

use std::sync::Arc;

use super::{catalog_procedures, Catalog};
use crate::procs::Procedure;

/// The GDS procedures over one fresh catalog (one per database registry).
pub(crate) fn procedures() -> Vec<Procedure> {
    let catalog: Catalog = Arc::default();
    let mut out = catalog_procedures(&catalog);
    out.extend(super::algo::procedures(&catalog));
    out
}
