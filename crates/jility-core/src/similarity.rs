//! How alike two tickets are, from their text alone: the score `jility_suggest_related` ranks
//! by and flags duplicates with, and `jility_estimate_effort` weighs done tickets by.
//!
//! The stores find the candidates (SQLite's FTS5 ranked by BM25; PostgreSQL's full-text
//! ranking and `pg_trgm`'s title similarity); this module scores each of them the same way in
//! both modes, so a score and the duplicate flag mean one thing wherever they come from.
//!
//! A score (0 to 1) weighs two things:
//! - **the titles' trigram similarity**, as PostgreSQL's `pg_trgm` computes it (each word,
//!   lowercased and padded with two blanks before and one after, cut into its three-character
//!   runs; the shared runs over all runs of the two), which forgives word forms, typos and
//!   word order;
//! - **the words they share**: the probe's and the candidate's content words (English stop
//!   words dropped, each reduced to its Snowball stem, as the stores' full-text search does),
//!   a title's words counting twice a description's, each weighed by how rare it is among
//!   the candidates ([`Corpus`]: a word most of them have — the product's name, the area
//!   every candidate is about — tells them apart less than one only a few have), compared
//!   by cosine.
//!
//! Measured on the labelled set of `crates/jility/tests/data/related.json` (see
//! `docs/benchmarks.md`): the weights and thresholds below are what that set chose.

use std::collections::{BTreeMap, BTreeSet};

use rust_stemmers::{Algorithm, Stemmer};

/// Characters of a description compared (its start): enough for what a ticket is about,
/// and a bound on the work a long one makes.
pub const COMPARED_CHARS: usize = 4_000;

/// Bytes of a description compared at most (its start): what a probe sent in a GET's query
/// may take, percent-encoded, is bounded whatever its script.
pub const COMPARED_BYTES: usize = 8_000;

/// Characters, and bytes, of a title compared at most (a ticket's title has up to 500).
pub const TITLE_CHARS: usize = 500;
pub const TITLE_BYTES: usize = 2_000;

/// From this score on, a candidate is flagged as a likely duplicate.
pub const DUPLICATE_SCORE: f64 = 0.3;

/// Below this score, a candidate is not related enough to be listed.
pub const RELATED_SCORE: f64 = 0.1;

/// How much of a score is the titles' trigram similarity (the rest: the shared words).
const TITLE_WEIGHT: f64 = 0.3;

/// A word of a title counts this many times one of a description.
const TITLE_WORD_WEIGHT: f64 = 2.0;

/// Words too common to tell tickets apart (English function words, and the words every
/// ticket uses).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "between", "both", "but", "by", "can", "could",
    "did", "do", "does", "doing", "down", "during", "each", "etc", "few", "for", "from", "further",
    "get", "gets", "got", "had", "has", "have", "having", "he", "her", "here", "him", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "just", "me", "more", "most", "my", "no", "nor",
    "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "out", "over", "own",
    "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "us", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your",
];

/// A content word: as written (lowercased) and its stem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub stem: String,
}

/// Words' stems as they are worked out, kept for the next text: the tickets of one answer
/// share most of their words, and a word is stemmed once.
pub struct Stems {
    stemmer: Stemmer,
    /// A word as written (lowercased) and its stem; `None` for a word dropped (a stop word,
    /// a single character).
    known: std::collections::HashMap<String, Option<String>>,
}

impl Default for Stems {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            known: std::collections::HashMap::new(),
        }
    }
}

impl Stems {
    fn of(&mut self, lower: &str) -> Option<&str> {
        if !self.known.contains_key(lower) {
            let stem = (lower.chars().count() >= 2 && STOP_WORDS.binary_search(&lower).is_err())
                .then(|| self.stemmer.stem(lower).into_owned());
            self.known.insert(lower.to_string(), stem);
        }
        self.known.get(lower).and_then(|s| s.as_deref())
    }
}

/// The content words of `text`, each once (by stem), in the order they first appear.
pub fn words(text: &str) -> Vec<Word> {
    words_with(&mut Stems::default(), text)
}

fn words_with(stems: &mut Stems, text: &str) -> Vec<Word> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for raw in text.split(|c: char| !c.is_alphanumeric()) {
        if raw.is_empty() {
            continue;
        }
        let lower = raw.to_lowercase();
        if let Some(stem) = stems.of(&lower)
            && !seen.contains(stem)
        {
            let stem = stem.to_string();
            seen.insert(stem.clone());
            out.push(Word { text: lower, stem });
        }
    }
    out
}

/// The start of `text`: at most `chars` characters and `bytes` bytes.
fn start(text: &str, chars: usize, bytes: usize) -> &str {
    let mut end = match text.char_indices().nth(chars) {
        Some((at, _)) => at,
        None => text.len(),
    };
    if end > bytes {
        end = bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    &text[..end]
}

/// The start of a description that is compared ([`COMPARED_CHARS`] characters, at most
/// [`COMPARED_BYTES`] bytes).
pub fn compared(description: &str) -> &str {
    start(description, COMPARED_CHARS, COMPARED_BYTES)
}

/// The start of a title that is compared ([`TITLE_CHARS`], at most [`TITLE_BYTES`] bytes).
pub fn compared_title(title: &str) -> &str {
    start(title, TITLE_CHARS, TITLE_BYTES)
}

/// The trigrams of `text` as `pg_trgm` makes them: each run of letters and digits,
/// lowercased, padded with two blanks before and one after, cut into every run of three
/// characters; each once.
fn trigrams(text: &str) -> BTreeSet<[char; 3]> {
    let mut out = BTreeSet::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let padded: Vec<char> = "  "
            .chars()
            .chain(word.chars().flat_map(char::to_lowercase))
            .chain(std::iter::once(' '))
            .collect();
        for run in padded.windows(3) {
            out.insert([run[0], run[1], run[2]]);
        }
    }
    out
}

/// `pg_trgm`'s `similarity(a, b)`: the trigrams both have over the trigrams either has (0
/// when neither has any).
pub fn trigram_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (trigrams(a), trigrams(b));
    let shared = a.intersection(&b).count();
    let all = a.len() + b.len() - shared;
    if all == 0 {
        0.0
    } else {
        shared as f64 / all as f64
    }
}

/// A ticket's text, ready to compare: its title and its content words by stem, each with
/// its weight (a title's word [`TITLE_WORD_WEIGHT`], a description's 1).
#[derive(Debug, Clone)]
pub struct Profile {
    pub title: String,
    /// The words as written, by stem, in the order they first appear.
    words: Vec<Word>,
    weights: BTreeMap<String, f64>,
    title_stems: BTreeSet<String>,
}

impl Profile {
    pub fn new(title: &str, description: &str) -> Self {
        Self::with(&mut Stems::default(), title, description)
    }

    /// [`Self::new`] with the stems already worked out.
    pub fn with(stems: &mut Stems, title: &str, description: &str) -> Self {
        let title_words = words_with(stems, title);
        let title_stems: BTreeSet<String> = title_words.iter().map(|w| w.stem.clone()).collect();
        let mut all = title_words;
        for word in words_with(stems, compared(description)) {
            if !title_stems.contains(&word.stem) {
                all.push(word);
            }
        }
        let weights: BTreeMap<String, f64> = all
            .iter()
            .map(|w| {
                let weight = if title_stems.contains(&w.stem) {
                    TITLE_WORD_WEIGHT
                } else {
                    1.0
                };
                (w.stem.clone(), weight)
            })
            .collect();
        Self {
            title: title.to_string(),
            words: all,
            weights,
            title_stems,
        }
    }

    /// The words to look for anywhere (as written), the title's first, at most `most`.
    pub fn probe_words(&self, most: usize) -> Vec<String> {
        self.words
            .iter()
            .take(most)
            .map(|w| w.text.clone())
            .collect()
    }

    /// The title's words (as written), at most `most`.
    pub fn title_words(&self, most: usize) -> Vec<String> {
        self.words
            .iter()
            .filter(|w| self.title_stems.contains(&w.stem))
            .take(most)
            .map(|w| w.text.clone())
            .collect()
    }

    /// Whether there is anything to compare: a content word.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The profile's weights with each word's rarity in `corpus`, and their norm.
    fn weighed(&self, corpus: &Corpus) -> (BTreeMap<&str, f64>, f64) {
        let weights: BTreeMap<&str, f64> = self
            .weights
            .iter()
            .map(|(stem, w)| (stem.as_str(), w * corpus.rarity(stem)))
            .collect();
        let norm = weights.values().map(|w| w * w).sum::<f64>().sqrt();
        (weights, norm)
    }

    /// How alike `self` (the probe) and `other` are, each word weighed by its rarity in
    /// `corpus`.
    pub fn compare(&self, other: &Profile, corpus: &Corpus) -> Likeness {
        let title = trigram_similarity(&self.title, &other.title);
        let (mine, my_norm) = self.weighed(corpus);
        let (theirs, their_norm) = other.weighed(corpus);
        let mut dot = 0.0;
        let mut matched = Vec::new();
        let mut in_title = false;
        let mut in_description = false;
        for word in &self.words {
            if let (Some(mine), Some(theirs)) =
                (mine.get(word.stem.as_str()), theirs.get(word.stem.as_str()))
            {
                dot += mine * theirs;
                matched.push(word.text.clone());
                if other.title_stems.contains(&word.stem) {
                    in_title = true;
                } else {
                    in_description = true;
                }
            }
        }
        let cosine = if my_norm == 0.0 || their_norm == 0.0 {
            0.0
        } else {
            dot / (my_norm * their_norm)
        };
        let score = TITLE_WEIGHT * title + (1.0 - TITLE_WEIGHT) * cosine;
        Likeness {
            score: round(score),
            title_similarity: round(title),
            matched,
            in_title,
            in_description,
        }
    }
}

/// How many of a set of tickets (the candidates) have each word: what weighs the words.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    tickets: usize,
    having: BTreeMap<String, usize>,
}

impl Corpus {
    pub fn of<'a>(profiles: impl IntoIterator<Item = &'a Profile>) -> Self {
        let mut corpus = Corpus::default();
        for profile in profiles {
            corpus.tickets += 1;
            for stem in profile.weights.keys() {
                *corpus.having.entry(stem.clone()).or_default() += 1;
            }
        }
        corpus
    }

    /// `ln(1 + (n + 1) / (k + 1))` for a word `k` of the `n` tickets have: highest for a
    /// word none has, lowest (ln 2) for one all have.
    fn rarity(&self, stem: &str) -> f64 {
        let having = self.having.get(stem).copied().unwrap_or(0);
        (1.0 + (self.tickets as f64 + 1.0) / (having as f64 + 1.0)).ln()
    }
}

/// Two decimals: what an answer shows, and what orders and flags (so that equal-looking
/// scores order the same way everywhere).
fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// What [`Profile::compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Likeness {
    /// 0 to 1, two decimals.
    pub score: f64,
    /// The titles' trigram similarity, two decimals.
    pub title_similarity: f64,
    /// The probe's words the other has, as the probe writes them, in its order.
    pub matched: Vec<String>,
    /// Some of them are in the other's title; some only in its description.
    pub in_title: bool,
    pub in_description: bool,
}

impl Likeness {
    pub fn is_duplicate(&self) -> bool {
        self.score >= DUPLICATE_SCORE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn words_are_stemmed_once_without_stop_words() {
        let found: Vec<String> = words("The login FAILS; logins failing when the token expired!")
            .into_iter()
            .map(|w| w.stem)
            .collect();
        assert_eq!(found, ["login", "fail", "token", "expir"]);
    }

    #[test]
    fn trigram_similarity_is_pg_trgm_s() {
        // Values PostgreSQL 15's pg_trgm 1.6 answers for `SELECT similarity(a, b)`.
        let cases = [
            ("word", "word", 1.0),
            ("word", "two words", 0.363_636_4),
            ("Password reset", "Pasword reset", 0.8125),
            ("Ünïcode café", "unicode cafe", 0.3),
            ("a-b c", "abc", 0.111_111_1),
            ("", "", 0.0),
            ("Fix login", "", 0.0),
        ];
        for (a, b, expected) in cases {
            let got = trigram_similarity(a, b);
            assert!((got - expected).abs() < 1e-6, "{a:?} {b:?}: {got}");
        }
    }

    #[test]
    fn a_reworded_duplicate_scores_above_an_unrelated_ticket() {
        let probe = Profile::new(
            "Password reset link expired too quickly",
            "The reset email's link stops working after a few minutes.",
        );
        let same = Profile::new(
            "Password reset links expire after 5 minutes",
            "Users click the link in the reset email and get 'expired'.",
        );
        let other = Profile::new("Dark mode for the dashboard", "Add a dark theme.");
        let corpus = Corpus::of([&same, &other]);
        let (same, other) = (
            probe.compare(&same, &corpus),
            probe.compare(&other, &corpus),
        );
        assert!(same.score > other.score, "{same:?} {other:?}");
        assert!(same.matched.contains(&"password".to_string()));
        assert!(same.in_title);
        assert!(other.matched.is_empty());
        assert_eq!(probe.compare(&probe, &corpus).score, 1.0);
    }

    #[test]
    fn a_description_is_compared_by_its_start() {
        let long = "é".repeat(COMPARED_CHARS + 10);
        assert_eq!(compared(&long).chars().count(), COMPARED_CHARS);
        assert_eq!(compared("short"), "short");
        // Four bytes a character: the bytes bound first, on a character's boundary.
        let emoji = "🎉".repeat(COMPARED_CHARS);
        assert_eq!(compared(&emoji).len(), COMPARED_BYTES);
        assert_eq!(compared_title(&emoji).len(), TITLE_BYTES);
        assert_eq!(compared_title(&"a".repeat(900)).len(), TITLE_CHARS);
    }
}
