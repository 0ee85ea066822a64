//! [`ExplicitTx`]: the state of a session's explicit transaction (`BEGIN` ... `COMMIT`); its
//! life cycle is in `transaction`.

use arbor_storage::Transaction;

use super::result::OpenResult;
use super::AccessMode;

pub(crate) struct ExplicitTx {
    pub(crate) tx: Option<Transaction>,
    pub(super) results: Vec<OpenResult>,
    /// Set when a statement failed: the transaction was rolled back and only ROLLBACK/RESET
    /// (or a new BEGIN after them) are meaningful.
    pub(super) failed: bool,
    pub(super) mode: AccessMode,
    /// Set when the transaction was rolled back because it ran past its timeout.
    pub(super) timed_out: bool,
}
