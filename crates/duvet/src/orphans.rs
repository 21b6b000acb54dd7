//! Quote lines without a target line above them (`//# …` with no `//= …`): a slip when
//! they quote a specification, an ordinary comment otherwise.
//!
//! The rule: such a run is reported as a malformed annotation when its text, whitespace
//! normalized, has at least [`crate::orphan_rule::MIN_WORDS`] words and is found in a section of one of the
//! project's specifications: exactly, or within one edit as a citation's quote is found when
//! it is long enough to anchor a near match (16 characters or more). Commented-out code can
//! be plentiful (`//#include …` in C), so all runs are looked for in one pass over the
//! specifications' text (Aho–Corasick), never one scan each.
//! The report names that section, so the fix is one line. Anything else that merely starts
//! with the quote prefix — a commented-out Rust attribute such as `//#[traced_test]`, a
//! `//#region` marker — is not an annotation and is not reported (Duvet ignores all of
//! them, slips included).

use std::collections::{BTreeSet, HashMap};

use aho_corasick::{AhoCorasick, AhoCorasickKind};

use crate::orphan_rule::MIN_WORDS;
use crate::{matching::find_quote, model::Model, spec::requirements};

/// A near match (one edit) is looked for only when both halves of the text have at least
/// this many characters: one half then occurs exactly, and is rare enough to anchor on.
const HALF_MIN: usize = 8;

/// The most patterns (texts and their halves) searched for with a DFA.
const DFA_PATTERNS: usize = 100;

/// What a pattern of the search stands for: the whole text of an orphan, or a half of it.
#[derive(Clone, Copy)]
enum Part {
    Whole(usize),
    Half(usize),
}

impl Model {
    /// For each text of orphaned quote lines, where it occurs: the target that would cite it
    /// (`<specification>#<section>`, the first in document order), or `None` when it is not a
    /// specification's text. One pass over the specifications' text for all of them.
    pub fn orphan_targets(&self, quotes: &[&str]) -> Vec<Option<String>> {
        let texts: Vec<String> = quotes.iter().map(|q| requirements::normalize(q)).collect();
        let mut patterns: Vec<String> = Vec::new();
        let mut parts: Vec<Part> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            if text.split(' ').count() < MIN_WORDS {
                continue;
            }
            patterns.push(text.clone());
            parts.push(Part::Whole(i));
            let chars: Vec<char> = text.chars().collect();
            let mid = chars.len() / 2;
            if mid >= HALF_MIN && chars.len() - mid >= HALF_MIN {
                for half in [&chars[..mid], &chars[mid..]] {
                    patterns.push(half.iter().collect());
                    parts.push(Part::Half(i));
                }
            }
        }
        let mut found: Vec<Option<(usize, usize)>> = vec![None; texts.len()];
        if patterns.is_empty() {
            return vec![None; texts.len()];
        }
        // A DFA for a few patterns (the usual case: a pass with one over megabytes of
        // specifications took a third of the time a contiguous NFA did), else a contiguous
        // NFA, built in time linear in the patterns (a DFA of thousands of patterns takes
        // far longer to build than the one pass it would speed up).
        let kind = if patterns.len() <= DFA_PATTERNS {
            AhoCorasickKind::DFA
        } else {
            AhoCorasickKind::ContiguousNFA
        };
        let Ok(search) = AhoCorasick::builder().kind(Some(kind)).build(&patterns) else {
            return vec![None; texts.len()];
        };
        // The patterns each section holds, one specification a task, on every core.
        let specs: Vec<usize> = (0..self.specs.len()).collect();
        let hits = crate::par::par_map(specs, |s| {
            let mut hits = Vec::new();
            for (c, section) in self.specs[s].sections.iter().enumerate() {
                for hit in search.find_overlapping_iter(section.normalized()) {
                    hits.push((hit.pattern().as_usize(), c));
                }
            }
            hits
        });
        // Sections where a half occurs: candidates for a match within one edit.
        let mut near: HashMap<usize, BTreeSet<(usize, usize)>> = HashMap::new();
        for (s, hits) in hits.into_iter().enumerate() {
            for (pattern, c) in hits {
                match parts[pattern] {
                    Part::Whole(i) => {
                        found[i].get_or_insert((s, c));
                    }
                    Part::Half(i) => {
                        near.entry(i).or_default().insert((s, c));
                    }
                }
            }
        }
        for (i, places) in near {
            if found[i].is_some() {
                continue;
            }
            found[i] = places.into_iter().find(|&(s, c)| {
                find_quote(self.specs[s].sections[c].normalized(), &texts[i]).is_some()
            });
        }
        found
            .into_iter()
            .map(|place| {
                place
                    .map(|(s, c)| format!("{}#{}", self.specs[s].url, self.specs[s].sections[c].id))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::annotation::{AnnotationType, CommentStyle, source};
    use crate::model::{Inputs, Model, ParsedSpec, SpecInput};
    use crate::spec::Format;
    use std::{path::PathBuf, sync::Arc};

    fn model_with(source_text: &str) -> Model {
        let spec = "# Proto\n\n## Logs\n\nThe server MUST log each request. The server SHOULD rotate logs daily.\n";
        let (annotations, malformed) = source::extract(
            source_text,
            std::path::Path::new("src/lib.rs"),
            &CommentStyle::default(),
            AnnotationType::Implementation,
        );
        Model::build(Inputs {
            specs: vec![SpecInput {
                source: "specs/proto.md".into(),
                file: PathBuf::from("specs/proto.md"),
                parsed: Ok(Arc::new(ParsedSpec::parse(
                    Arc::from(spec),
                    Format::Markdown,
                ))),
                declared: true,
            }],
            annotations,
            malformed,
            extract_requirements: true,
        })
    }

    #[test]
    fn a_commented_out_attribute_is_not_an_annotation() {
        let model = model_with("//#[traced_test]\n#[test]\nfn t() {}\n//# region: helpers\n");
        assert!(model.invalid.is_empty(), "{:?}", model.invalid);
    }

    #[test]
    fn quote_lines_from_a_specification_without_a_target_are_a_slip() {
        let model =
            model_with("fn f() {\n    //# The server SHOULD rotate\n    //# logs daily.\n}\n");
        assert_eq!(model.invalid.len(), 1, "{:?}", model.invalid);
        let slip = &model.invalid[0];
        assert_eq!(slip.line_number, 2);
        assert!(slip.error.contains("without a meta line"), "{}", slip.error);
        assert!(slip.error.contains("specs/proto.md#logs"), "{}", slip.error);
    }

    #[test]
    fn a_slip_with_one_typo_is_still_found_but_two_words_are_not_enough() {
        let model =
            model_with("//# The server SHOLD rotate logs daily.\n\nfn f() {}\n//# MUST log\n");
        assert_eq!(model.invalid.len(), 1, "{:?}", model.invalid);
        assert_eq!(model.invalid[0].line_number, 1);
    }

    #[test]
    fn thousands_of_commented_out_lines_and_one_slip() {
        let mut source = String::new();
        for i in 0..1000 {
            source.push_str(&format!(
                "//#include <gen{i}.h>\nint x{i};\n//# if (x{i} == 0) return;\nint y{i};\n"
            ));
        }
        source.push_str("//# The server MUST log each request.\n");
        let model = model_with(&source);
        assert_eq!(model.invalid.len(), 1, "{:?}", &model.invalid[..1]);
        assert_eq!(model.invalid[0].line_number, 4001);
    }
}
