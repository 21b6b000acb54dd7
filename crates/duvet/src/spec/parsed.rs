//! A specification text parsed once (and cached by the loader while the file is unchanged):
//! its sections, each section's view ([`crate::coverage`]), and — made only when first asked
//! for — the requirement sentences of each section with where they lie in its view.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::coverage::View;
use crate::spec::{self, Format, Section, requirements};

#[derive(Debug)]
pub struct ParsedSpec {
    pub title: String,
    pub sections: Vec<Section>,
    /// Per section, its text as duvet reads it ([`crate::coverage`]).
    pub views: Vec<Arc<View>>,
    /// Per section, its text whitespace-collapsed, as quotes are matched against it
    /// ([`requirements::normalize`]), made with the parse (on every core) for the model.
    pub normalized: Vec<Arc<str>>,
    /// The requirement sentences, made once, when first needed ([`ParsedSpec::extracted`]).
    extracted: OnceLock<Extracted>,
}

/// The sentences with RFC 2119 keywords of each section of a specification.
#[derive(Debug, Default)]
pub struct Extracted {
    /// Per section, the sentences with RFC 2119 keywords.
    pub sentences: Vec<Vec<requirements::RequirementSentence>>,
    /// Per section and sentence, where the sentence lies in the view, as the model finds a
    /// requirement's text (`Model`'s `add_requirement`); `None` for a sentence the model
    /// drops (the same text twice in a section) or does not find.
    pub spans: Vec<Vec<Option<Range<usize>>>>,
}

impl ParsedSpec {
    pub fn parse(text: &str, format: Format) -> Self {
        Self::of_sections(spec::title(text, format), spec::parse(text, format))
    }

    /// The parse of a document with this title and these sections.
    pub fn of_sections(title: String, sections: Vec<Section>) -> Self {
        let views: Vec<Arc<View>> = sections
            .iter()
            .map(|section| Arc::new(View::new(&section.lines)))
            .collect();
        let normalized = sections
            .iter()
            .map(|section| Arc::from(requirements::normalize(&section.content())))
            .collect();
        Self {
            title,
            sections,
            views,
            normalized,
            extracted: OnceLock::new(),
        }
    }

    /// The requirement sentences of each section, extracted on the first call. Only the
    /// specifications a config file declares have their sentences made requirements, so
    /// the others (every one of a project described by flags) never pay for it; the loader
    /// asks for the declared ones while it parses, on every core, so that the model's
    /// (serial) build finds them made.
    pub fn extracted(&self) -> &Extracted {
        self.extracted.get_or_init(|| {
            let sentences: Vec<Vec<requirements::RequirementSentence>> =
                self.sections.iter().map(requirements::extract).collect();
            let spans = sentences
                .iter()
                .zip(&self.views)
                .map(|(sentences, view)| {
                    let mut seen = HashSet::new();
                    let mut after = 0;
                    sentences
                        .iter()
                        .map(|sentence| {
                            if sentence.text.is_empty() || !seen.insert(sentence.text.as_str()) {
                                return None;
                            }
                            let span = view.find_from(&sentence.text, after);
                            after = span.as_ref().map_or(0, |span| span.end);
                            span
                        })
                        .collect()
                })
                .collect();
            Extracted { sentences, spans }
        })
    }
}
