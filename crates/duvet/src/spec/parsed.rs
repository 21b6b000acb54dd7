//! A specification text parsed once (and cached by the loader while the file is unchanged):
//! the text itself and duvet 0.4.3's reading of it ([`crate::extract::sections`]), which the
//! extraction and the reports read; and, made from that reading when first asked for, what
//! the model reads: its sections ([`Section`]), each section's view ([`crate::coverage`]) and
//! normalized text, and the requirement sentences of a section with where they lie in its
//! view.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::coverage::View;
use crate::extract::Kept;
use crate::spec::{self, Format, Section, requirements};

#[derive(Debug)]
pub struct ParsedSpec {
    pub title: String,
    /// The format it was read in.
    pub format: Format,
    /// The text as read (UTF-8, invalid sequences replaced).
    pub text: Arc<str>,
    /// duvet 0.4.3's sections of `text`, in document order.
    read: Vec<Kept>,
    /// The model's sections, made from `read` ([`Section::of`]).
    sections: OnceLock<Vec<Section>>,
    /// Per section, its text as duvet reads it ([`crate::coverage`]).
    views: OnceLock<Vec<Arc<View>>>,
    /// Per section, its text whitespace-collapsed, as quotes are matched against it
    /// ([`requirements::normalize`]).
    normalized: OnceLock<Vec<Arc<str>>>,
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
    /// `text` read in `format`, with everything the model reads made (`duvet mcp`).
    pub fn parse(text: Arc<str>, format: Format) -> Self {
        let parsed = Self::read(text, format);
        parsed.views();
        parsed.normalized();
        parsed
    }

    /// `text` read in `format` (duvet 0.4.3's sections); what the model reads is made when
    /// first asked for (a report reads it only to place quote lines without a target line).
    pub fn read(text: Arc<str>, format: Format) -> Self {
        let read: Vec<Kept> = crate::extract::sections(&text, format)
            .iter()
            .map(|section| Kept::of(&text, section))
            .collect();
        Self {
            title: spec::title(&text, format),
            format,
            sentences: (0..read.len()).map(|_| OnceLock::new()).collect(),
            read,
            text,
            sections: OnceLock::new(),
            views: OnceLock::new(),
            normalized: OnceLock::new(),
        }
    }

    /// The parse of a document with this title and these sections (and no text).
    pub fn of_sections(title: String, sections: Vec<Section>) -> Self {
        Self {
            title,
            format: Format::Markdown,
            text: Arc::from(""),
            read: Vec::new(),
            sentences: (0..sections.len()).map(|_| OnceLock::new()).collect(),
            sections: OnceLock::from(sections),
            views: OnceLock::new(),
            normalized: OnceLock::new(),
        }
    }

    /// duvet 0.4.3's sections, kept as byte ranges of [`ParsedSpec::text`].
    pub fn kept(&self) -> &[Kept] {
        &self.read
    }

    /// duvet 0.4.3's sections of the text ([`crate::extract::sections`]).
    pub fn read_sections(&self) -> Vec<crate::extract::Section<'_>> {
        self.read
            .iter()
            .map(|kept| kept.section(&self.text))
            .collect()
    }

    /// The model's sections.
    pub fn sections(&self) -> &[Section] {
        self.sections.get_or_init(|| {
            self.read
                .iter()
                .map(|kept| Section::of(&self.text, &kept.section(&self.text), self.format))
                .collect()
        })
    }

    /// Per section, its view.
    pub fn views(&self) -> &[Arc<View>] {
        self.views.get_or_init(|| {
            self.sections()
                .iter()
                .map(|section| Arc::new(View::new(&section.lines)))
                .collect()
        })
    }

    /// Per section, its normalized text: the same words as its lines (made from duvet
    /// 0.4.3's lines when the model's are not made, which differ only in whitespace).
    pub fn normalized(&self) -> &[Arc<str>] {
        self.normalized.get_or_init(|| match self.sections.get() {
            Some(sections) => sections
                .iter()
                .map(|section| Arc::from(requirements::normalize(&section.content())))
                .collect(),
            None => self
                .read
                .iter()
                .map(|kept| {
                    let lines = kept.lines.iter().flatten();
                    Arc::from(requirements::normalize_lines(
                        lines.map(|range| self.text.get(range.clone()).unwrap_or_default()),
                    ))
                })
                .collect(),
        })
    }

    /// The requirement sentences of section `c`, extracted on the first call. Only the
    /// sections of declared specifications (of a config-file project) that no requirement
    /// file covers have their sentences made requirements, so the others never pay for it;
    /// the model asks for those on every core.
    pub fn sentences(&self, c: usize) -> Option<&Sentences> {
        let (section, view) = (self.sections().get(c)?, self.views().get(c)?);
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
