//! Coverage as duvet 0.4.3 counts it, so that a requirement's status here is the one
//! `duvet report` gives the same project, byte for byte.
//!
//! duvet reads a section as a *view*: its lines, each trimmed, blank ones skipped, joined by
//! single spaces. A quote is found in the view exactly, else after its whitespace
//! normalization ([`normalize_mapped`]), else within one edit of the normalized text (the
//! Levenshtein search of the `triple_accel` crate, the one duvet uses, so that near matches
//! land on the same bytes). The bytes a quote covers are the view's bytes in the found range
//! except the joining spaces, which stand for no byte of the specification.
//!
//! A requirement's bytes are those of its own text found that way; a byte is *covered* when an
//! implementation, implication, exception or test annotation of the same specification covers
//! it (TODOs cover nothing). Then: no byte uncovered is `fully_implemented`, every byte
//! uncovered is `not_started`, anything between is `partially_implemented`, as duvet's
//! `incomplete` count in its JSON report.
//!
//! The same normalization serves the checks of `duvet query` (`--check test`,
//! `--check duplicates`), which compare quotes in the normalized view exactly.

use std::ops::Range;
use std::sync::OnceLock;

use memchr::memmem;

use triple_accel::levenshtein::{LEVENSHTEIN_COSTS, levenshtein_search_simd_with_opts};

/// A section's text as duvet reads it.
#[derive(Debug, Clone, Default)]
pub struct View {
    text: String,
    /// Offsets in `text` of the spaces that join two lines, ascending.
    joiners: Vec<usize>,
    /// The normalized text and its map back to `text`, made once, when first needed.
    normalized: OnceLock<(String, Vec<usize>)>,
}

impl View {
    /// The view of a section's lines.
    pub fn new<S: AsRef<str>>(lines: &[S]) -> Self {
        let mut view = Self::default();
        for line in lines {
            let trimmed = line.as_ref().trim();
            if trimmed.is_empty() {
                continue;
            }
            if !view.text.is_empty() {
                view.joiners.push(view.text.len());
                view.text.push(' ');
            }
            view.text.push_str(trimmed);
        }
        view
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text normalized ([`normalize_mapped`]), made once per view.
    pub fn normalized_mapped(&self) -> &(String, Vec<usize>) {
        self.normalized.get_or_init(|| normalize_mapped(&self.text))
    }

    /// The text normalized ([`normalize`]), made once per view.
    pub fn normalized(&self) -> &str {
        &self.normalized_mapped().0
    }

    /// Where duvet finds `needle` in this view: exactly, after whitespace normalization, or
    /// within one edit of the normalized text. `None` for an empty needle.
    pub fn find(&self, needle: &str) -> Option<Range<usize>> {
        self.find_from(needle, 0)
    }

    /// [`View::find`], looking first at or after `from` (where the previous requirement of a
    /// section ends: requirements come in document order, so each search reads on from the
    /// last instead of reading the section again from its start), then anywhere. duvet takes
    /// the first occurrence in the section; the two differ only for a text that also occurs
    /// inside an earlier requirement.
    pub fn find_from(&self, needle: &str, from: usize) -> Option<Range<usize>> {
        if needle.is_empty() {
            return None;
        }
        let exact = |at: usize| {
            let start = at + search(self.text.as_bytes().get(at..)?, needle.as_bytes())?;
            Some(start..start + needle.len())
        };
        if let Some(found) = exact(from).or_else(|| (from > 0).then(|| exact(0)).flatten()) {
            return Some(found);
        }
        let needle = normalize(needle);
        let (haystack, map) = self.normalized_mapped();
        let normalized = |at: usize| {
            let start = at + search(haystack.as_bytes().get(at..)?, needle.as_bytes())?;
            Some(start..start + needle.len())
        };
        let at = map.partition_point(|&o| o < from);
        let found = normalized(at)
            .or_else(|| (at > 0).then(|| normalized(0)).flatten())
            .or_else(|| fuzzy(needle.as_bytes(), haystack.as_bytes()))?;
        let start = *map.get(found.start)?;
        let end = *map.get(found.end)?;
        let original = self.text.get(start..end)?;
        Some(start..start + original.trim_end().len())
    }

    /// How many bytes of the specification `range` of the view stands for (its length
    /// without the joining spaces).
    pub fn bytes(&self, range: &Range<usize>) -> usize {
        let joiners = self.joiners.partition_point(|&j| j < range.end)
            - self.joiners.partition_point(|&j| j < range.start);
        range.len().saturating_sub(joiners)
    }

    /// The lines of the section (numbered among its non-blank lines) that `range` of the
    /// view touches, as duvet 0.4.3 places a quote's references: one per line a part of it
    /// lies on (a joining space alone touches none). Empty for an empty range.
    pub fn lines(&self, range: &Range<usize>) -> Range<usize> {
        if range.start >= range.end {
            return 0..0;
        }
        // A byte's line is the number of joining spaces before it; a range that starts on a
        // joining space starts on the next line, one that ends on one ends on the line before.
        let first = self.joiners.partition_point(|&j| j <= range.start);
        let last = self.joiners.partition_point(|&j| j < range.end - 1);
        first..(last + 1).max(first)
    }

    /// How many bytes of `target` no range of `covering` covers.
    pub fn uncovered(&self, target: &Range<usize>, covering: &[Range<usize>]) -> usize {
        let mut clipped: Vec<Range<usize>> = covering
            .iter()
            .map(|c| c.start.max(target.start)..c.end.min(target.end))
            .filter(|c| c.start < c.end)
            .collect();
        clipped.sort_by_key(|c| c.start);
        let mut covered = 0;
        let mut current: Option<Range<usize>> = None;
        for range in clipped {
            match &mut current {
                Some(open) if range.start <= open.end => open.end = open.end.max(range.end),
                _ => {
                    if let Some(done) = current.replace(range) {
                        covered += self.bytes(&done);
                    }
                }
            }
        }
        if let Some(done) = current {
            covered += self.bytes(&done);
        }
        self.bytes(target).saturating_sub(covered)
    }
}

/// The first match of `needle` in the whole of `haystack` within one edit, as duvet searches.
fn fuzzy_everywhere(needle: &[u8], haystack: &[u8]) -> Option<Range<usize>> {
    levenshtein_search_simd_with_opts(
        needle,
        haystack,
        1,
        triple_accel::SearchType::Best,
        LEVENSHTEIN_COSTS,
        false,
    )
    .next()
    .map(|m| m.start..m.end)
}

/// duvet's fuzzy pass, for a needle that does not occur exactly: the first best match within
/// one edit, as the Levenshtein search of `triple_accel` over the whole haystack finds it.
/// One edit leaves one half of the needle intact, so every such match holds an occurrence of
/// either half and lies within the needle's length (plus the edit) of it: only the stretches
/// around those occurrences (all of them, overlapping ones too) are searched, each wide
/// enough to hold every match around it, in order, merged where they meet, so the first
/// match found is the whole search's first.
/// (Searching the whole of each section for every quote with a typo was the costliest part
/// of a cold start on a project with many: 139 on aws/s2n-quic.)
fn fuzzy(needle: &[u8], haystack: &[u8]) -> Option<Range<usize>> {
    let levenshtein = |haystack: &[u8]| fuzzy_everywhere(needle, haystack);
    if needle.len() < FUZZY_WINDOWED {
        return levenshtein(haystack);
    }
    let m = needle.len();
    let (first, second) = needle.split_at(m / 2);
    // With the first half intact at `at`, a match starts there and ends within one byte of
    // `at + m`; with the second half intact, it ends where that half does and starts within
    // one byte of `m` before. Every alignment of one edit ending there, whichever start the
    // search settles on, lies in the window; a byte more on each side for good measure.
    let mut windows = around(haystack, first, 3, m + 3);
    windows.extend(around(
        haystack,
        second,
        m - second.len() + 3,
        second.len() + 3,
    ));
    windows.sort_by_key(|w| w.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(windows.len());
    for window in windows {
        match merged.last_mut() {
            Some(last) if window.start <= last.end => last.end = last.end.max(window.end),
            _ => merged.push(window),
        }
    }
    merged.into_iter().find_map(|window| {
        let found = levenshtein(&haystack[window.clone()])?;
        Some(window.start + found.start..window.start + found.end)
    })
}

/// The stretches of `haystack` from `before` bytes before each occurrence of `part` to `after`
/// bytes after its start, merged where they meet, in order. Every occurrence counts, those
/// that overlap another too (a match may hold the second of two overlapping occurrences and
/// not the first). Within a run of stretches that meet, only the last occurrence in reach of
/// the previous one is looked for (backwards, from the end of the reach), so that text
/// repeating `part` at every byte or two (the "+-+-+-" of an RFC's diagram) costs about one
/// reading of the run, not one search per occurrence.
fn around(haystack: &[u8], part: &[u8], before: usize, after: usize) -> Vec<Range<usize>> {
    let forward = memmem::Finder::new(part);
    let backward = memmem::FinderRev::new(part);
    // An occurrence at most this far after another's start has a stretch that meets its.
    let reach = before + after;
    let mut runs = Vec::new();
    let mut from = 0;
    while let Some(start) = haystack
        .get(from..)
        .and_then(|rest| forward.find(rest))
        .map(|at| from + at)
    {
        let mut last = start;
        while let Some(at) = haystack
            .get(last + 1..(last + reach + part.len()).min(haystack.len()))
            .and_then(|reachable| backward.rfind(reachable))
        {
            last += 1 + at;
        }
        runs.push(start.saturating_sub(before)..(last + after).min(haystack.len()));
        from = last + reach + 1;
    }
    runs
}

/// The shortest needle [`fuzzy`] searches around the occurrences of its halves (a shorter
/// one's halves occur too often to gain anything).
const FUZZY_WINDOWED: usize = 16;

/// How far [`search`] looks with no set-up before it builds a searcher.
const NEAR: usize = 4096;

/// The first occurrence of `needle` in `haystack`. A requirement is usually found a few
/// bytes after the previous one, so the first [`NEAR`] bytes are tried by comparing at each
/// occurrence of the needle's first byte (no searcher to build, which costs more than the
/// search itself for a sentence); the rest, if needed, with a two-way searcher.
fn search(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let near = &haystack[..haystack.len().min(NEAR + needle.len())];
    memchr::memchr_iter(first, near)
        .find(|&at| near[at..].starts_with(needle))
        .or_else(|| {
            let from = near.len().saturating_sub(needle.len() - 1);
            (from < haystack.len())
                .then(|| memmem::find(&haystack[from..], needle).map(|at| from + at))
                .flatten()
        })
}

/// duvet's whitespace normalization: letters and digits are kept; a run of whitespace
/// becomes its first character, unless it follows or precedes punctuation (or starts or ends
/// the text), where it disappears.
pub fn normalize(value: &str) -> String {
    normalize_into(value, None)
}

/// [`normalize`], with the offset in `value` of each byte of the result and, last, the end of
/// the last character kept.
pub fn normalize_mapped(value: &str) -> (String, Vec<usize>) {
    let mut map = Vec::with_capacity(value.len() + 1);
    let out = normalize_into(value, Some(&mut map));
    (out, map)
}

/// The normalization, recording the map only when asked for one.
fn normalize_into(value: &str, mut map: Option<&mut Vec<usize>>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut last_end = 0;
    // A character held back: whitespace (dropped unless a letter or digit follows) or
    // punctuation (kept, but swallowing whitespace around it).
    let mut held: Option<(usize, char, bool)> = None;
    let mut push = |out: &mut String, map: &mut Option<&mut Vec<usize>>, at: usize, c: char| {
        out.push(c);
        if let Some(map) = map {
            map.extend(std::iter::repeat_n(at, c.len_utf8()));
        }
        last_end = at + c.len_utf8();
    };
    for (at, c) in value.char_indices() {
        if c.is_alphanumeric() {
            if let Some((h_at, h, _)) = held.take() {
                push(&mut out, &mut map, h_at, h);
            }
            push(&mut out, &mut map, at, c);
        } else if c.is_whitespace() {
            if held.is_none() && !out.is_empty() {
                held = Some((at, c, true));
            }
        } else {
            if let Some((h_at, h, false)) = held {
                push(&mut out, &mut map, h_at, h);
            }
            held = Some((at, c, false));
        }
    }
    if let Some((h_at, h, false)) = held {
        push(&mut out, &mut map, h_at, h);
    }
    if let Some(map) = map {
        map.push(last_end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found<'a>(view: &'a View, needle: &str) -> Option<&'a str> {
        view.find(needle).map(|r| &view.text()[r])
    }

    #[test]
    fn lines_are_trimmed_and_joined() {
        let view = View::new(&["  An endpoint MUST", "", "   send data.  "]);
        assert_eq!(view.text(), "An endpoint MUST send data.");
        assert_eq!(view.bytes(&(0..view.text().len())), view.text().len() - 1);
    }

    #[test]
    fn normalization_drops_space_around_punctuation() {
        let a = normalize("This is a test.Foo.[F]");
        assert_eq!(a, normalize("  This is    a    test.  Foo  . [F]"));
        assert_eq!(a, normalize("This    is    a    test.  Foo  . [    F ]  "));
        assert_eq!(normalize("a\tb  c"), "a\tb c");
        assert_eq!(normalize("new-\nline"), "new-line");
    }

    #[test]
    fn quotes_are_found_as_duvet_finds_them() {
        let view = View::new(&[" First    sentence.   Second Sentence.   Third  Sentence.   "]);
        assert_eq!(
            found(&view, "  Second   Sentence.  "),
            Some("Second Sentence.")
        );
        let view = View::new(&["this is a new-", "line"]);
        assert_eq!(
            found(&view, "this is a new-line"),
            Some("this is a new- line")
        );
        let view = View::new(&["within the flow control limits set by its peer"]);
        assert_eq!(
            found(&view, "within the flaw control limits"),
            Some("within the flow control limits")
        );
        assert_eq!(found(&view, "nothing like it at all"), None);
        assert_eq!(found(&view, ""), None);
    }

    #[test]
    fn a_search_reads_on_from_the_previous_requirement() {
        let view = View::new(&["A MUST b.  A MUST b.", "C  MUST d.  C  MUST d."]);
        assert_eq!(view.find_from("A MUST b.", 0), Some(0..9));
        assert_eq!(view.find_from("A MUST b.", 9), Some(11..20));
        assert_eq!(view.find_from("A MUST b.", 30), Some(0..9), "then anywhere");
        // Normalized (the double spaces), from the hint, then anywhere.
        let first = view.find_from("C MUST d.", 0).unwrap();
        let second = view.find_from("C MUST d.", first.end).unwrap();
        assert_eq!(&view.text()[second.clone()], "C  MUST d.");
        assert!(second.start > first.start);
        assert_eq!(view.find_from("C MUST d.", view.text().len()), Some(first));
    }

    #[test]
    fn the_search_finds_the_first_occurrence_near_or_far() {
        assert_eq!(search(b"abcabc", b"bc"), Some(1));
        assert_eq!(search(b"abc", b""), None);
        assert_eq!(search(b"abc", b"abcd"), None);
        let mut far = vec![b'x'; NEAR * 3];
        far.extend_from_slice(b"needle");
        assert_eq!(search(&far, b"needle"), Some(NEAR * 3));
        // Across the end of the near part.
        let mut across = vec![b'x'; NEAR + 3];
        across.extend_from_slice(b"needle needle");
        assert_eq!(search(&across, b"needle"), Some(NEAR + 3));
        let mut near = vec![b'x'; 10];
        near.extend_from_slice(b"needle");
        assert_eq!(search(&near, b"needle"), Some(10));
    }

    #[test]
    fn a_gap_of_one_byte_is_uncovered() {
        let view = View::new(&["One MUST a. Two MUST b."]);
        let all = view.find("One MUST a. Two MUST b.").unwrap();
        let first = view.find("One MUST a.").unwrap();
        let second = view.find("Two MUST b.").unwrap();
        assert_eq!(view.uncovered(&all, &[first.clone(), second.clone()]), 1);
        assert_eq!(view.uncovered(&all, &[first, second, all.clone()]), 0);
        assert_eq!(view.uncovered(&all, &[]), view.bytes(&all));
    }

    #[test]
    fn joining_spaces_are_not_bytes_of_the_specification() {
        let view = View::new(&["One MUST a.", "Two MUST b."]);
        let all = view.find("One MUST a. Two MUST b.").unwrap();
        let first = view.find("One MUST a.").unwrap();
        let second = view.find("Two MUST b.").unwrap();
        assert_eq!(view.uncovered(&all, &[first, second]), 0);
    }

    #[test]
    fn an_overlapping_occurrence_of_a_half_is_searched_around() {
        // The first half, "abcdabcd", occurs at 0 and, overlapping it, at 4, where the match
        // is (the second half, "efghijkl", occurs nowhere: the "X").
        let needle = b"abcdabcdefghijkl";
        let haystack = b"abcdabcdabcdefgXijkl";
        assert_eq!(fuzzy_everywhere(needle, haystack), Some(4..20));
        assert_eq!(fuzzy(needle, haystack), Some(4..20));
        // Likewise for the second half.
        let needle = b"abcdefghijklijkl";
        let haystack = b"abcdefgXijklijklijkl";
        assert_eq!(fuzzy(needle, haystack), fuzzy_everywhere(needle, haystack));
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of stretches, one long
    fn periodic_text_is_one_stretch() {
        // A diagram's border: the part occurs at every other byte, in one stretch.
        let border = b"+-".repeat(50_000);
        assert_eq!(around(&border, b"+-+-+-+-", 3, 19), [0..border.len()]);
        // Stretches apart, and the overlapping occurrence (at 4) reaching further.
        assert_eq!(around(b"abcdabcdabcdefgXijkl", b"abcdabcd", 3, 19), [0..20]);
        assert_eq!(
            around(
                b"abcdabcdabcd........................ab",
                b"abcdabcd",
                3,
                10
            ),
            [0..14]
        );
        assert_eq!(
            around(b"xx abcd ........ abcd", b"abcd", 1, 6),
            [2..9, 16..21]
        );
        assert!(around(b"abc", b"abcd", 1, 6).is_empty());
        // The fuzzy search over such text, as the whole search finds it.
        let mut border = b"+-".repeat(2_000);
        border.extend_from_slice(b"+|+-");
        let needle = b"+-+-+-+-+-+-+-+-+-+-+-+-+-+|+-+";
        assert_eq!(fuzzy(needle, &border), fuzzy_everywhere(needle, &border));
    }

    #[test]
    fn the_windowed_fuzzy_search_finds_what_the_whole_search_finds() {
        // Pseudo-random texts (many near matches), needles taken from them with one edit (or
        // two, or none found), compared with the whole search. The texts: over a small
        // alphabet, over two letters, and periodic ones (a short unit repeated, as in the
        // diagrams of RFCs, "+-+-+-"), with a few bytes changed, where the occurrences of a
        // half overlap.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        let mut compared = [0; 3];
        for round in 0..6000 {
            let kind = round % 3;
            let len = 80 + next(400);
            let haystack: Vec<u8> = match kind {
                0 => (0..len).map(|_| b"ab c."[next(5)]).collect(),
                1 => (0..len).map(|_| b"ab"[next(2)]).collect(),
                _ => {
                    let unit: Vec<u8> = (0..1 + next(6)).map(|_| b"ab+-"[next(4)]).collect();
                    let mut text: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
                    for _ in 0..next(4) {
                        let i = next(len as u64);
                        text[i] = b"ab+-|"[next(5)];
                    }
                    text
                }
            };
            let m = FUZZY_WINDOWED + next(40);
            let at = next((len - m) as u64);
            let mut needle = haystack[at..at + m].to_vec();
            for _ in 0..1 + (round / 3) % 2 {
                let i = next(needle.len() as u64);
                match next(3) {
                    0 => needle[i] = b"xa-"[next(3)],
                    1 => {
                        needle.remove(i);
                    }
                    _ => needle.insert(i, b"yb+"[next(3)]),
                }
            }
            if memmem::find(&haystack, &needle).is_some() {
                continue;
            }
            compared[kind] += 1;
            assert_eq!(
                fuzzy(&needle, &haystack),
                fuzzy_everywhere(&needle, &haystack),
                "{:?} in {:?}",
                String::from_utf8_lossy(&needle),
                String::from_utf8_lossy(&haystack)
            );
        }
        assert!(compared.iter().all(|&c| c > 1500), "{compared:?}");
        // A repeated text: the first of several matches.
        let haystack =
            b"the flow control limit; the flow control limits; the flaw control limit".repeat(3);
        let needle = b"the flow control limitz";
        assert_eq!(
            fuzzy(needle, &haystack),
            fuzzy_everywhere(needle, &haystack)
        );
    }

    #[test]
    fn a_range_touches_the_lines_its_bytes_lie_on() {
        let view = View::new(&["One MUST a.", "", "Two MUST b.", "Three."]);
        let all = view.find("One MUST a. Two MUST b.").unwrap();
        assert_eq!(view.lines(&all), 0..2);
        let two = view.find("MUST b").unwrap();
        assert_eq!(view.lines(&two), 1..2);
        // The joining space alone, or at either end, is on no line.
        let joiner = 11..12;
        assert_eq!(&view.text()[joiner.clone()], " ");
        assert!(view.lines(&joiner).is_empty());
        assert_eq!(view.lines(&(11..15)), 1..2);
        assert_eq!(view.lines(&(8..12)), 0..1);
        assert!(view.lines(&(5..5)).is_empty());
        let tail = view.find("Three.").unwrap();
        assert_eq!(view.lines(&tail), 2..3);
    }

    #[test]
    fn multibyte_text_maps_back_to_whole_characters() {
        let view = View::new(&["Le client DOIT envoyer « bonjour »", "à l’hôte."]);
        let range = view.find("envoyer «   bonjour » à l’hôte").unwrap();
        assert_eq!(&view.text()[range], "envoyer « bonjour » à l’hôte");
    }
}
