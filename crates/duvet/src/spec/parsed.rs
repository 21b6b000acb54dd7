//! A specification text parsed once (and cached by the loader while the file is unchanged):
//! its sections, each section's view ([`crate::coverage`]) and normalized text, and — made
//! only when first asked for — the requirement sentences of a section with where they lie
//! in its view.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::coverage::View;
use crate::spec::{self, Format, Section, requirements};

#[derive(Debug)]
pub struct ParsedSpec {
    pub title: String,
    /// The format it was read in.
    pub format: Format,
    pub sections: Vec<Section>,
    /// Per section, its text as duvet reads it ([`crate::coverage`]).
    pub views: Vec<Arc<View>>,
    /// Per section, its text whitespace-collapsed, as quotes are matched against it
    /// ([`requirements::normalize`]), made with the parse (on every core) for the model.
    pub normalized: Vec<Arc<str>>,
    /// Per section, its requirement sentences, made once, when first needed
    /// ([`ParsedSpec::sentences`]).
    sentences: Vec<OnceLock<Sentences>>,
}

/// The sentences with RFC 2119 keywords of a section.
#[derive(Debug, Default)]
pub struct Sentences {
    pub sentences: Vec<requirements::RequirementSentence>,
    /// Where each sentence lies in the section's view, as the model finds a requirement's
    /// text (`Model`'s `add_requirement`); `None` for a sentence the model drops (the same
    /// text twice in a section) or does not find.
    pub spans: Vec<Option<Range<usize>>>,
}

impl ParsedSpec {
    pub fn parse(text: &str, format: Format) -> Self {
        Self {
            format,
            ..Self::of_sections(spec::title(text, format), spec::parse(text, format))
        }
    }

    /// The parse of a document with this title and these sections.
    pub fn of_sections(title: String, sections: Vec<Section>) -> Self {
        let count = sections.len();
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
            format: Format::Markdown,
            sections,
            views,
            normalized,
            sentences: (0..count).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The requirement sentences of section `c`, extracted on the first call. Only the
    /// sections of declared specifications (of a config-file project) that no requirement
    /// file covers have their sentences made requirements, so the others never pay for it;
    /// the model asks for those on every core.
    pub fn sentences(&self, c: usize) -> Option<&Sentences> {
        let (section, view) = (self.sections.get(c)?, self.views.get(c)?);
        Some(self.sentences.get(c)?.get_or_init(|| {
            let sentences = requirements::extract(section);
            let mut seen = HashSet::new();
            let mut after = 0;
            let spans = sentences
                .iter()
                .map(|sentence| {
                    if sentence.text.is_empty() || !seen.insert(sentence.text.as_str()) {
                        return None;
                    }
                    let span = view.find_from(&sentence.text, after);
                    after = span.as_ref().map_or(0, |span| span.end);
                    span
                })
                .collect();
            Sentences { sentences, spans }
        }))
    }
}
