//! Memory the process freed goes back to the system once the server is idle.
//!
//! glibc's allocator keeps what a program frees in its arenas and returns only the free top of
//! each heap: after a large answer the pages between the allocations that stay (caches, parsed state) remain
//! resident for as long as the process lives, and every thread that allocates gets an arena of
//! its own. So:
//! - [`call_started`], held by each tool call while it runs: once no call has run for
//!   [`IDLE`], the server runs the hooks servers registered with [`on_idle`] (to drop caches that serve
//!   a burst of calls), then asks the allocator once to return every free page
//!   (`malloc_trim(0)`), off the runtime's own threads.
//! - [`one_arena`], which a server with one client and little parallel work may ask for: every
//!   thread allocates from one arena, so a blocking thread's work does not leave a second heap
//!   behind. A server that parses on every core must not: its threads would wait for the one
//!   arena's lock (one server's cold start went from 13 to 16 ms).
//!
//! Elsewhere (musl, macOS, Windows) the allocator has no such calls and nothing is done; a
//! program with another global allocator (mimalloc) finds little to return.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// How long the server must have been without a call before freed memory is returned.
pub const IDLE: Duration = Duration::from_millis(250);

/// Calls so far (each call's end moves it on).
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Calls running now: the server is idle only when none is.
static RUNNING: AtomicU64 = AtomicU64::new(0);
/// Whether a task is waiting for the server to be idle.
static WAITING: AtomicBool = AtomicBool::new(false);

type Hook = Box<dyn Fn() + Send + Sync>;

/// What runs when the server becomes idle, before the memory is returned.
fn hooks() -> &'static Mutex<Vec<Hook>> {
    static HOOKS: OnceLock<Mutex<Vec<Hook>>> = OnceLock::new();
    HOOKS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Run `hook` each time the server becomes idle (see [`call_started`]): it drops what
/// only a burst of calls needs. It runs on a blocking thread when no call has run for
/// [`IDLE`]; a call may start while it runs, so a hook must leave its data valid (an
/// emptied cache), never half-torn.
pub fn on_idle(hook: impl Fn() + Send + Sync + 'static) {
    hooks()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Box::new(hook));
}

/// A call in progress, from [`call_started`] until dropped: the server is not idle meanwhile.
#[must_use = "the call counts as running until this is dropped"]
pub struct Running(());

/// A call starts: until the returned guard is dropped, no idle hook runs.
pub fn call_started() -> Running {
    RUNNING.fetch_add(1, Ordering::SeqCst);
    Running(())
}

impl Drop for Running {
    fn drop(&mut self) {
        CALLS.fetch_add(1, Ordering::SeqCst);
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        release_when_idle();
    }
}

/// Once no call has run for [`IDLE`], run the idle hooks and return freed memory to the
/// system. Outside a tokio runtime it does nothing.
fn release_when_idle() {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if WAITING.swap(true, Ordering::SeqCst) {
        return;
    }
    runtime.spawn(async {
        // Whatever ends this task (its runtime shutting down included) lets the next call
        // start another.
        struct Waiting;
        impl Drop for Waiting {
            fn drop(&mut self) {
                WAITING.store(false, Ordering::SeqCst);
            }
        }
        let waiting = Waiting;
        let seen = loop {
            let seen = CALLS.load(Ordering::SeqCst);
            tokio::time::sleep(IDLE).await;
            if CALLS.load(Ordering::SeqCst) == seen && RUNNING.load(Ordering::SeqCst) == 0 {
                break seen;
            }
        };
        let _ = tokio::task::spawn_blocking(|| {
            for hook in hooks()
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
            {
                hook();
            }
            release()
        })
        .await;
        drop(waiting);
        // A call that ended while the hooks ran found this task waiting and left the waiting
        // to it: wait again.
        if CALLS.load(Ordering::SeqCst) != seen {
            release_when_idle();
        }
    });
}

/// Ask the allocator to return its free pages; whether it returned any.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "glibc's malloc_trim: a C function that takes no pointer"
)]
pub fn release() -> bool {
    // SAFETY: `malloc_trim` reads and writes only glibc's own free lists, under the locks of
    // its arenas; the argument is a size (the free space to keep at the top of each heap).
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Ask the allocator to return its free pages: nothing to ask outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release() -> bool {
    false
}

/// Every thread allocates from one arena (call before the threads start); whether the
/// allocator took the setting.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "glibc's mallopt: a C function that takes no pointer"
)]
pub fn one_arena() -> bool {
    // SAFETY: `mallopt` sets one of glibc's allocator parameters under its lock; both
    // arguments are integers.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
}

/// Every thread allocates from one arena: nothing to set outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn one_arena() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[tokio::test]
    async fn the_hooks_run_once_after_a_burst_of_calls() {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        on_idle(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        for _ in 0..6 {
            drop(call_started());
            tokio::time::sleep(IDLE / 3).await;
        }
        assert_eq!(ran.load(Ordering::SeqCst), 0, "never idle for IDLE yet");
        for _ in 0..100 {
            tokio::time::sleep(IDLE / 5).await;
            if ran.load(Ordering::SeqCst) > 0 {
                break;
            }
        }
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        tokio::time::sleep(IDLE * 3).await;
        assert_eq!(ran.load(Ordering::SeqCst), 1, "idle once, run once");
        // A long call: nothing runs while it does.
        let call = call_started();
        tokio::time::sleep(IDLE * 3).await;
        assert_eq!(ran.load(Ordering::SeqCst), 1, "a call was running");
        drop(call);
        for _ in 0..100 {
            tokio::time::sleep(IDLE / 5).await;
            if ran.load(Ordering::SeqCst) > 1 {
                break;
            }
        }
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }
}
