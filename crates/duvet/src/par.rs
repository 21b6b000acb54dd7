//! Work spread over the machine's cores (rayon's pool of a thread a core, started once and
//! kept): the parsing of files, the search of quotes that may take a fuzzy pass, and the
//! steps of a report that need not wait for each other.
//!
//! A pool, not threads started for each step: a report of one RFC (h3) takes 10 ms in a
//! dozen parallel steps, and a thread started for each took 0.1 ms or more to start on a
//! virtual machine whose other core sleeps, then paid its allocator's fresh memory. With the
//! pool's work stealing, a core that is free takes what another has left, and what no other
//! core takes is done by the one that started it.

use std::sync::OnceLock;

/// The cores this process may use, asked once: the standard library reads the cgroup files
/// (`/proc/self/cgroup`, the quota) on every call, a dozen system calls each time.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f` over `items` on the machine's cores, results in the order of `items`. Each item is a
/// task of its own (a few large specifications among small ones must not leave a core idle
/// with the items split in equal shares up front). A panic of `f` is the caller's, as with a
/// sequential map.
pub fn par_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    use rayon::prelude::*;
    if cores() <= 1 || items.len() <= 1 {
        return items.into_iter().map(f).collect();
    }
    items.into_par_iter().with_max_len(1).map(&f).collect()
}

/// `a` and `b` at the same time when a core is free for one of them, else one after the
/// other; a panic of either is the caller's.
pub fn both<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if cores() <= 1 {
        return (a(), b());
    }
    rayon::join(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn both_gives_each_result_its_place() {
        let text = String::from("page");
        assert_eq!(both(|| 1 + 1, || text.len()), (2, 4));
    }

    #[test]
    fn results_keep_the_order_of_the_items() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            par_map(items, |i| i * 2),
            (0..1000).map(|i| i * 2).collect::<Vec<_>>()
        );
        assert!(par_map(Vec::<u8>::new(), |i| i).is_empty());
        assert_eq!(par_map(vec![String::from("one")], |s| s.len()), [3]);
        // Uneven work: the items are taken out of order, the results are put back in it.
        let items: Vec<u64> = (0..200).collect();
        let results = par_map(items, |i| {
            if i % 7 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            i + 1
        });
        assert_eq!(results, (1..201).collect::<Vec<_>>());
    }

    /// Two items run on two cores at once: two items that each wait for the other to start
    /// both finish, and both see the other started.
    #[test]
    fn items_run_on_every_core_at_once() {
        if cores() <= 1 {
            return;
        }
        let started = AtomicUsize::new(0);
        let seen = par_map(vec![0, 1], |i| {
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(20);
            while started.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            (i, started.load(Ordering::SeqCst))
        });
        assert_eq!(seen, [(0, 2), (1, 2)]);
        // The same for the two halves of `both`.
        let started = AtomicUsize::new(0);
        let wait = || {
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(20);
            while started.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            started.load(Ordering::SeqCst)
        };
        assert_eq!(both(wait, wait), (2, 2));
    }

    /// An item's panic reaches the caller (callers index the results by position: fewer
    /// results would put each out of its place).
    #[test]
    fn a_panicking_item_panics_the_caller() {
        let result = std::panic::catch_unwind(|| {
            par_map((0..400).collect::<Vec<usize>>(), |i| {
                if i == 200 {
                    panic!("item {i}");
                }
                i
            })
        });
        let payload = result.expect_err("the panic of an item is re-raised");
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert_eq!(message, "item 200");
        let result = std::panic::catch_unwind(|| both(|| 1, || panic!("the other half")));
        let payload = result.expect_err("the panic of a half is re-raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the other half"));
    }
}
