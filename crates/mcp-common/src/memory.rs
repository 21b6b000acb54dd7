//! Memory the process freed goes back to the system once the server is idle.
//!
//! glibc's allocator keeps what a program frees in its arenas and returns only the free top of
//! each heap: after a large answer (a tree of 10,000 branches, a health check of a whole
//! repository) the pages between the allocations that stay (caches, parsed state) remain
//! resident for as long as the process lives. [`release_when_idle`], called after each tool
//! call, waits until no call has come for [`IDLE`], then asks the allocator once to return
//! every free page (`malloc_trim(0)`), off the runtime's own threads. Elsewhere (musl, macOS,
//! Windows, or a program with another global allocator) the call finds nothing to return.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How long the server must have been without a call before freed memory is returned.
pub const IDLE: Duration = Duration::from_millis(200);

/// Calls so far (each call moves it on).
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Whether a task is waiting for the server to be idle.
static WAITING: AtomicBool = AtomicBool::new(false);

/// After a call: return freed memory once no call has come for [`IDLE`]. Outside a tokio
/// runtime it does nothing.
pub fn release_when_idle() {
    CALLS.fetch_add(1, Ordering::SeqCst);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if WAITING.swap(true, Ordering::SeqCst) {
        return;
    }
    runtime.spawn(async {
        loop {
            let seen = CALLS.load(Ordering::SeqCst);
            tokio::time::sleep(IDLE).await;
            if CALLS.load(Ordering::SeqCst) != seen {
                continue;
            }
            let _ = tokio::task::spawn_blocking(release).await;
            WAITING.store(false, Ordering::SeqCst);
            // A call that came while the memory was returned found a task waiting and left
            // the waiting to it: wait again unless another task took over meanwhile.
            if CALLS.load(Ordering::SeqCst) == seen || WAITING.swap(true, Ordering::SeqCst) {
                return;
            }
        }
    });
}

/// Ask the allocator to return its free pages; whether it returned any.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "malloc_trim is a C function; it takes no pointer")]
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
