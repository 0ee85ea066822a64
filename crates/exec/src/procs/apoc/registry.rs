//! The list of APOC procedures: built above the packages, which in turn look down only to the
//! argument helpers in `mod.rs`.

use crate::procs::Procedure;

/// Every APOC procedure Arbor implements.
pub(crate) fn procedures() -> Vec<Procedure> {
    let mut out = super::meta::procedures();
    out.extend(super::meta_graph::procedures());
    out.extend(super::write::procedures());
    out.extend(super::refactor::procedures());
    out.extend(super::util::procedures());
    out.extend(super::periodic::procedures());
    out.extend(super::meta_schema::procedures());
    out.extend(super::path::procedures());
    out.extend(super::cypher::procedures());
    out.extend(super::create::procedures());
    out
}
