//! Whether the kernel backs this process's memory with transparent huge pages (2 MiB pages
//! where the allocator asks for them, as mimalloc does on Linux).
//!
//! A huge page is zeroed whole at its first touch (on a virtual machine, about a millisecond
//! for a fresh one): on a small project (h3: one RFC, 51 sources) a report's threads touched a
//! few kilobytes here and there in a dozen fresh 2 MiB regions, and zeroing them was a third
//! of its CPU; with 4 KiB pages from the first allocation on, the report took 8% less time.
//! On a large one (s2n-quic: 43 specifications, 989 sources) memory is touched densely and
//! huge pages save page faults: 4 KiB pages throughout made it 15–18% slower. So the binary
//! turns them off before its first allocation, and `duvet report` turns them on again once
//! the project proves large ([`LARGE_FILES`], [`LARGE_TEXT`]); the other commands (the
//! server) run on what the system gives.

/// The specifications' text (bytes) from which a report is made on huge pages.
pub const LARGE_TEXT: usize = 1 << 20;

/// The files of a project (sources and requirement files) from which a report reads them on
/// huge pages.
pub const LARGE_FILES: usize = 500;

/// Whether the process started with transparent huge pages off (its parent's choice, which
/// [`huge_pages`] then keeps), as [`small_pages_first`] found it.
static STARTED_WITHOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Huge pages off, before anything is allocated (the binary calls this from `.init_array`);
/// whether they were off already is kept.
pub fn small_pages_first() {
    STARTED_WITHOUT.store(off(), std::sync::atomic::Ordering::Relaxed);
    huge_pages(false);
}

/// Turn transparent huge pages on or off for this process (what the system allows and the
/// allocator asks for, from the next page touched on); whether the kernel took it. They stay
/// off when the process started without them.
pub fn huge_pages(on: bool) -> bool {
    if on && STARTED_WITHOUT.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    set(on)
}

/// Whether transparent huge pages are off for this process.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "prctl(PR_GET_THP_DISABLE): a system call that reads a flag"
)]
fn off() -> bool {
    let zero: libc::c_ulong = 0;
    // SAFETY: PR_GET_THP_DISABLE reads a flag of this process's memory map and returns it;
    // the other arguments are integers, zero as the call requires.
    unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, zero, zero, zero, zero) == 1 }
}

/// Whether transparent huge pages are off: there are none outside Linux.
#[cfg(not(target_os = "linux"))]
fn off() -> bool {
    true
}

#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "prctl(PR_SET_THP_DISABLE): a system call whose arguments are integers"
)]
fn set(on: bool) -> bool {
    let disable = libc::c_ulong::from(!on);
    // SAFETY: PR_SET_THP_DISABLE sets a flag of this process's memory map; every argument
    // is an integer (the unused ones zero, as the call requires), no pointer is passed.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            disable,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn set(_on: bool) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The flag the kernel keeps for the process follows each call.
    #[test]
    fn the_kernel_takes_each_setting() {
        let get = || i32::from(off());
        assert!(set(false));
        assert_eq!(get(), 1);
        assert!(set(true));
        assert_eq!(get(), 0);
    }
}
