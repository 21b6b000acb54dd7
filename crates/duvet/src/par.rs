//! Work spread over the machine's cores: the parsing of files and the search of quotes that
//! may take a fuzzy pass.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The cores this process may use, asked once: the standard library reads the cgroup files
/// (`/proc/self/cgroup`, the quota) on every call, a dozen system calls each time, and a
/// report asks before every parallel step.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`both`] when `parallel`, else one after the other on this thread (a helper thread, its
/// start and its allocator's fresh memory, costs more than small work saves).
pub fn both_if<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if parallel { both(a, b) } else { (a(), b()) }
}

/// `f` over `items` on the machine's cores, results in the order of `items`. Each thread
/// takes the next item when it is done with one (a few large specifications among small
/// ones would leave a thread idle with the items split in equal shares up front). A panic of
/// `f` is the caller's, as with a sequential map.
///
/// The calling thread starts at once; the other cores join in when the items are few (each
/// likely large: specifications, patterns) or once the work has taken [`JOIN_AFTER`] with
/// items left. Small work (a small project's files, a few quotes) so ends on the calling
/// thread alone: a helper thread takes 0.1 ms or more to start on a virtual machine whose
/// other core sleeps, and the caller would wait for it at the end.
pub fn par_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = cores().min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let count = items.len();
    let few = count <= 2 * threads;
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let next = AtomicUsize::new(0);
    let take = |done: &mut Vec<(usize, R)>| -> bool {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = items.get(i) else {
            return false;
        };
        let item = slot.lock().ok().and_then(|mut slot| slot.take());
        if let Some(item) = item {
            done.push((i, f(item)));
        }
        true
    };
    let work = || {
        let mut done = Vec::new();
        while take(&mut done) {}
        done
    };
    let mut results: Vec<(usize, R)> = Vec::with_capacity(count);
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let spawn = || (1..threads).map(|_| scope.spawn(work)).collect::<Vec<_>>();
        if few {
            handles = spawn();
        }
        let started = Instant::now();
        let mut done = Vec::new();
        while take(&mut done) {
            if handles.is_empty()
                && next.load(Ordering::Relaxed) < count
                && started.elapsed() >= JOIN_AFTER
            {
                handles = spawn();
            }
        }
        results.extend(done);
        for handle in handles {
            // A worker that panicked took its results with it: the caller panics too, rather
            // than get fewer results than items, each out of its place.
            match handle.join() {
                Ok(done) => results.extend(done),
                Err(payload) => std::panic::resume_unwind(payload),
            }
        }
    });
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// How long [`par_map`]'s calling thread works alone on many items before the other cores
/// join in.
pub const JOIN_AFTER: Duration = Duration::from_micros(150);

/// `a` here and `b` on another thread at the same time (the report's HTML page made while
/// its JSON is written); a panic of either is the caller's.
pub fn both<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if cores() <= 1 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let helper = scope.spawn(b);
        let a = a();
        match helper.join() {
            Ok(b) => (a, b),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A few items (each likely large) start on every core at once: two items that each wait
    /// for the other to start both finish.
    #[test]
    fn few_items_start_on_every_core_at_once() {
        if cores() <= 1 {
            return;
        }
        let started = AtomicUsize::new(0);
        let both = par_map(vec![0, 1], |i| {
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(20);
            while started.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            (i, started.load(Ordering::SeqCst))
        });
        assert_eq!(both, [(0, 2), (1, 2)]);
    }

    /// Many items that take a while: the other cores join in and take some of them.
    #[test]
    fn long_work_on_many_items_is_shared() {
        if cores() <= 1 {
            return;
        }
        let caller = std::thread::current().id();
        let elsewhere = par_map((0..200).collect::<Vec<usize>>(), |_| {
            std::thread::sleep(Duration::from_millis(1));
            std::thread::current().id() != caller
        });
        assert!(
            elsewhere.iter().any(|e| *e),
            "no item left the calling thread"
        );
        assert!(!elsewhere[0], "the calling thread starts on the first item");
    }

    /// A worker's panic reaches the caller: its results are not dropped, leaving the others
    /// shorter than the items and out of place (callers index the results by position).
    #[test]
    fn a_panicking_item_panics_the_caller() {
        use std::sync::atomic::AtomicBool;
        let caller = std::thread::current().id();
        let single = cores() <= 1;
        let worker_took = AtomicBool::new(false);
        // Every item a spawned worker takes panics; the caller's own items do not, and each
        // takes a while (the workers join in after JOIN_AFTER), the caller waiting until a
        // worker has taken one (so that the panic is a worker's whatever the load). With one
        // core the caller does all: one item panics.
        let result = std::panic::catch_unwind(|| {
            par_map((0..400).collect::<Vec<usize>>(), |i| {
                if std::thread::current().id() != caller || (single && i == 200) {
                    worker_took.store(true, Ordering::SeqCst);
                    panic!("item {i}");
                }
                std::thread::sleep(JOIN_AFTER);
                let deadline = Instant::now() + Duration::from_secs(20);
                while i > 0
                    && !single
                    && !worker_took.load(Ordering::SeqCst)
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                i
            })
        });
        let payload = result.expect_err("the panic of an item is re-raised");
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(message.starts_with("item "), "{message}");
    }
}
