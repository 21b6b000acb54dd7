//! Finding a citation's quote in a section's text, the way Duvet accepts it: exactly, after
//! whitespace normalization, or within one edit (one character inserted, deleted or changed).
//!
//! Texts here are already normalized (`spec::requirements::normalize`), so the first two
//! cases are one search. Offsets are byte offsets into the haystack.

/// Where `needle` occurs in `haystack`, exactly or within one edit; the exact match wins.
pub fn find_quote(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() {
        return None;
    }
    if let Some(start) = haystack.find(needle) {
        return Some((start, start + needle.len()));
    }
    find_within_one_edit(haystack, needle)
}

/// A substring of `haystack` at edit distance one from `needle`.
///
/// One edit changes at most one of the needle's two halves, so the other half occurs exactly:
/// each exact occurrence of either half anchors a few candidate windows, which are checked
/// with a bounded comparison. Linear in practice, unlike a full dynamic-programming scan.
fn find_within_one_edit(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    let n: Vec<char> = needle.chars().collect();
    if n.len() < 4 {
        // Too short to tell a near-match from a coincidence.
        return None;
    }
    let mid = n.len() / 2;
    let left: String = n[..mid].iter().collect();
    let right: String = n[mid..].iter().collect();
    let boundaries: Vec<usize> = haystack
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(haystack.len()))
        .collect();
    let index_of = |byte: usize| boundaries.binary_search(&byte).ok();

    // Windows anchored at an occurrence of the left half: the window starts there.
    for start in occurrences(haystack, &left) {
        let Some(s) = index_of(start) else { continue };
        for len in [n.len(), n.len() + 1, n.len().saturating_sub(1)] {
            if let Some(found) = check(haystack, &boundaries, &n, s, len) {
                return Some(found);
            }
        }
    }
    // Windows anchored at an occurrence of the right half: the window ends with it.
    for start in occurrences(haystack, &right) {
        let Some(e) = index_of(start + right.len()) else {
            continue;
        };
        for len in [n.len(), n.len() + 1, n.len().saturating_sub(1)] {
            if len <= e
                && let Some(found) = check(haystack, &boundaries, &n, e - len, len)
            {
                return Some(found);
            }
        }
    }
    None
}

/// Every start of `needle` in `haystack`, overlapping occurrences included.
fn occurrences<'a>(haystack: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let found = from + haystack.get(from..)?.find(needle)?;
        // Continue one character later.
        from = found + haystack.get(found..)?.chars().next()?.len_utf8();
        Some(found)
    })
}

/// Whether the `len` characters of `haystack` starting at character `s` are within one edit
/// of `needle`; returns their byte range.
fn check(
    haystack: &str,
    boundaries: &[usize],
    needle: &[char],
    s: usize,
    len: usize,
) -> Option<(usize, usize)> {
    let start = *boundaries.get(s)?;
    let end = *boundaries.get(s + len)?;
    let window: Vec<char> = haystack.get(start..end)?.chars().collect();
    within_one_edit(&window, needle).then_some((start, end))
}

/// Edit distance ≤ 1 between two character sequences.
fn within_one_edit(a: &[char], b: &[char]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        0 => short.iter().zip(long).filter(|(x, y)| x != y).count() <= 1,
        1 => {
            let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
            short[prefix..] == long[prefix + 1..]
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "An endpoint MUST NOT send data on any stream without ensuring that it is within the flow control limits set by its peer.";

    #[test]
    fn exact_match() {
        let (s, e) = find_quote(TEXT, "within the flow control limits").unwrap();
        assert_eq!(&TEXT[s..e], "within the flow control limits");
    }

    #[test]
    fn one_substitution_insertion_or_deletion() {
        for quote in [
            "within the flaw control limits",  // substitution
            "within the flow controll limits", // insertion
            "within the flow contol limits",   // deletion
            "Xn endpoint MUST NOT send",       // at the very start
            "set by its peer!",                // at the very end
        ] {
            assert!(find_quote(TEXT, quote).is_some(), "{quote}");
        }
    }

    #[test]
    fn overlapping_anchors_are_all_tried() {
        assert!(find_quote("aaaYb", "aaXb").is_some());
        assert!(find_quote("xxaaaab", "aaab").is_some());
    }

    #[test]
    fn two_edits_do_not_match() {
        assert_eq!(find_quote(TEXT, "within the flaw contrl limits"), None);
        assert_eq!(find_quote(TEXT, "entirely different words here"), None);
        assert_eq!(find_quote(TEXT, ""), None);
    }

    #[test]
    fn multibyte_text_is_safe() {
        let text = "Le client DOIT envoyer « bonjour » à l’hôte — toujours.";
        assert!(find_quote(text, "envoyer « bonjour » à l’hote").is_some());
        assert!(find_quote(text, "« bonjour »").is_some());
        assert_eq!(find_quote("é", "éé"), None);
    }
}
