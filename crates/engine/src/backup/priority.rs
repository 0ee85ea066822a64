//! The lowest CPU and I/O priority for backup work, so that it only takes what the live
//! workload leaves: [`lower_current_thread`] moves the calling thread to Linux's `SCHED_IDLE`
//! scheduling class (it runs only when no normal thread wants the core; nice 19 where the
//! class is refused) and to the idle I/O class (`ioprio_set`, served when the disk is
//! otherwise idle). Neo4j's online backup leaves the choice to the operator; Arbor applies it to
//! both ends of a backup: the server thread that streams a pinned snapshot and the
//! `arbor backup` process.
//!
//! The change is one-way on purpose: an unprivileged thread may not leave `SCHED_IDLE` or raise
//! its nice value again, so it is applied only to threads that do nothing but backup work.
//! [`current_thread`] reads back what is in force (for the log and the tests).
//!
//! The module calls `sched_setscheduler`, `setpriority` and the `ioprio_set`/`ioprio_get`
//! system calls: they are foreign functions, so calling them is `unsafe`. Each gets only
//! integers or a pointer to a local it does not keep.
#![allow(unsafe_code)]

/// The priority a thread runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    /// The thread is in the `SCHED_IDLE` class.
    pub sched_idle: bool,
    /// Its nice value (the CPU share it gets among normal threads).
    pub nice: i32,
    /// Its I/O class is the idle one.
    pub io_idle: bool,
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cpu = if self.sched_idle { "SCHED_IDLE" } else { "normal" };
        let io = if self.io_idle { "idle" } else { "best-effort" };
        write!(f, "CPU {cpu} (nice {}), I/O {io}", self.nice)
    }
}

/// The nice value used when `SCHED_IDLE` is refused.
pub const LOWEST_NICE: i32 = 19;

#[cfg(target_os = "linux")]
mod sys {
    use super::Priority;

    /// `IOPRIO_WHO_PROCESS`: the target is one thread (0: the calling one).
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    /// The calling thread, as a system call's `long` argument.
    const SELF: libc::c_long = 0;
    /// `IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT`.
    const IOPRIO_IDLE: libc::c_long = 3 << 13;

    pub fn lower() {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; `param` is a local read during the call.
        let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0;
        if !idle {
            // SAFETY: integers only; on Linux `PRIO_PROCESS` with 0 is the calling thread.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, super::LOWEST_NICE) };
        }
        // SAFETY: integers only.
        unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, SELF, IOPRIO_IDLE) };
    }

    pub fn current() -> Priority {
        // SAFETY: integers only; 0 is the calling thread.
        let policy = unsafe { libc::sched_getscheduler(0) };
        // getpriority returns -1 both for nice -1 and an error; an error cannot happen for
        // the calling thread.
        // SAFETY: integers only.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        // SAFETY: integers only.
        let io = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, SELF) };
        Priority { sched_idle: policy == libc::SCHED_IDLE, nice, io_idle: io >> 13 == 3 }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use super::Priority;

    pub fn lower() {}

    pub fn current() -> Priority {
        Priority { sched_idle: false, nice: 0, io_idle: false }
    }
}

/// Moves the calling thread (and the threads it starts later) to the lowest CPU and I/O
/// priority; returns what is then in force. Never fails: where the system refuses, the thread
/// keeps the priority it has. Linux only; elsewhere nothing changes.
pub fn lower_current_thread() -> Priority {
    sys::lower();
    sys::current()
}

/// The calling thread's priority.
pub fn current_thread() -> Priority {
    sys::current()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The scheduling policy the kernel reports for thread `tid` of this process.
    fn policy_in_proc(tid: i64) -> i64 {
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).unwrap();
        let line = text.lines().find(|l| l.starts_with("policy")).unwrap();
        line.rsplit(' ').next().unwrap().trim().parse().unwrap()
    }

    #[test]
    fn a_lowered_thread_is_idle_for_the_kernel_and_others_are_not() {
        let before = current_thread();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let p = lower_current_thread();
            // SAFETY: no arguments.
            tx.send((p, i64::from(unsafe { libc::gettid() }))).unwrap();
            let _ = done_rx.recv();
        });
        let (got, tid) = rx.recv().unwrap();
        // Where a filter refuses SCHED_IDLE, nice 19 is the fallback; either is the lowest CPU
        // priority.
        assert!(got.sched_idle || got.nice == LOWEST_NICE, "{got}");
        assert!(got.io_idle, "{got}");
        // The kernel's own view of the lowered thread, read while it is alive.
        if got.sched_idle {
            assert_eq!(policy_in_proc(tid), i64::from(libc::SCHED_IDLE));
        }
        assert_eq!(current_thread(), before, "only the lowered thread changes");
        if !before.sched_idle {
            // SAFETY: no arguments.
            let me = i64::from(unsafe { libc::gettid() });
            assert_ne!(policy_in_proc(me), i64::from(libc::SCHED_IDLE));
        }
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
