//! Work spread over the machine's cores: the parsing of files and the search of quotes that
//! may take a fuzzy pass.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items` on the machine's cores, results in the order of `items`. Each thread
/// takes the next item when it is done with one (a few large specifications among small
/// ones would leave a thread idle with the items split in equal shares up front).
pub fn par_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let count = items.len();
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = items.get(i) else {
                return done;
            };
            let item = slot.lock().ok().and_then(|mut slot| slot.take());
            if let Some(item) = item {
                done.push((i, f(item)));
            }
        }
    };
    let mut results: Vec<(usize, R)> = Vec::with_capacity(count);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        results.extend(work());
        for handle in handles {
            results.extend(handle.join().unwrap_or_default());
        }
    });
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            par_map(items, |i| i * 2),
            (0..1000).map(|i| i * 2).collect::<Vec<_>>()
        );
        assert!(par_map(Vec::<u8>::new(), |i| i).is_empty());
        assert_eq!(par_map(vec![String::from("one")], |s| s.len()), [3]);
    }
}
