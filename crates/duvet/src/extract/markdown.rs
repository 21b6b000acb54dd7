//! A Markdown text's sections as duvet 0.4.3 reads them, with the CommonMark
//! parser it uses (pulldown-cmark, heading attributes on):
//!
//! * each physical line (`str::lines`) is a content line unless it belongs to a heading;
//! * a heading (ATX or setext, any level) starts a section; its id is the heading's `{#id}`
//!   attribute or the slug of its title; its title is the source text from its first to its
//!   last inline (markup included), or the heading's lines when it has no text;
//! * the start of a list item puts a break before the item's first line, its end a break
//!   after the line it ends on, so list items never run into each other;
//! * consecutive breaks count once; a section's leading and trailing blank lines and breaks
//!   are dropped; a repeated id gets `-1`, `-2`, … (the first free one).
//!
//! This is the one reading of a Markdown text: extraction, the reports and the model
//! ([`crate::spec::Section`], which leaves the list breaks out) all start from it; the breaks
//! the list items make decide where an extracted requirement ends.

use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use super::slugify;
use super::{Line, Section};

enum Token {
    Section {
        id: Option<Range<usize>>,
        title: Range<usize>,
    },
    Break,
    Content(Range<usize>),
}

/// The sections of `doc`, in document order.
pub fn sections(doc: &str) -> Vec<Section<'_>> {
    build(doc, tokens(doc))
}

/// The byte range of `part` in `doc` when `part` borrows from it.
fn range_in(doc: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(doc.as_ptr() as usize)?;
    (start + part.len() <= doc.len()).then_some(start..start + part.len())
}

fn borrowed(doc: &str, text: &CowStr<'_>) -> Option<Range<usize>> {
    match text {
        CowStr::Borrowed(part) => range_in(doc, part),
        _ => None,
    }
}

fn tokens(doc: &str) -> Vec<Token> {
    let lines: Vec<Range<usize>> = doc.lines().filter_map(|l| range_in(doc, l)).collect();
    let events: Vec<(Event<'_>, Range<usize>)> =
        Parser::new_ext(doc, Options::ENABLE_HEADING_ATTRIBUTES)
            .into_offset_iter()
            .collect();
    let mut out = Vec::new();
    let (mut next_line, mut next_event) = (0usize, 0usize);
    let mut pending_line: Option<Range<usize>> = None;
    let mut pending_break = false;
    // One pass of the outer loop yields one token, as 0.4.3's tokenizer does per call: a
    // heading's buffers live for one token.
    'token: loop {
        let mut heading: Option<(Range<usize>, Option<Range<usize>>)> = None;
        let mut text: Option<Range<usize>> = None;
        loop {
            if std::mem::take(&mut pending_break) {
                out.push(Token::Break);
                continue 'token;
            }
            let line = match pending_line.take() {
                Some(line) => line,
                None => match lines.get(next_line) {
                    Some(line) => {
                        next_line += 1;
                        line.clone()
                    }
                    None => break 'token,
                },
            };
            while let Some((event, range)) = events.get(next_event) {
                if !(line.contains(&range.start) || range.start < line.start) {
                    break;
                }
                next_event += 1;
                match event {
                    Event::Start(Tag::Heading { id, .. }) => {
                        let id = id.as_ref().and_then(|id| borrowed(doc, id));
                        heading = Some((line.clone(), id));
                    }
                    Event::End(TagEnd::Heading(_)) => {
                        while lines.get(next_line).is_some_and(|l| l.start < range.end) {
                            next_line += 1;
                        }
                        let (id, whole) = match heading.take() {
                            Some((first, id)) => {
                                (id, first.start.min(line.start)..first.end.max(line.end))
                            }
                            None => (None, line.clone()),
                        };
                        let title = text.take().unwrap_or(whole);
                        out.push(Token::Section { id, title });
                        continue 'token;
                    }
                    Event::Start(Tag::Item) => {
                        pending_line = Some(line);
                        out.push(Token::Break);
                        continue 'token;
                    }
                    Event::End(TagEnd::Item) => pending_break = true,
                    Event::Text(t) if heading.is_some() => {
                        if let Some(r) = borrowed(doc, t) {
                            text = Some(match text {
                                Some(buf) => buf.start.min(r.start)..buf.end.max(r.end),
                                None => r,
                            });
                        }
                    }
                    _ => {
                        if let Some(buf) = text.as_mut() {
                            buf.end = range.end;
                        }
                    }
                }
            }
            if heading.is_none() {
                out.push(Token::Content(line));
                continue 'token;
            }
        }
    }
    out
}

fn build(doc: &str, tokens: Vec<Token>) -> Vec<Section<'_>> {
    let text = |r: &Range<usize>| doc.get(r.clone()).unwrap_or_default();
    let blank = |line: &Line<'_>| match line {
        Line::Break => true,
        Line::Str(s) => s.trim().is_empty(),
    };
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut previous_break = false;
    for token in tokens {
        let was_break = std::mem::replace(&mut previous_break, matches!(token, Token::Break));
        let line = match token {
            Token::Section { id, title } => {
                let full_title = text(&title);
                let id = match id {
                    Some(id) => text(&id).to_string(),
                    None => slugify(full_title),
                };
                sections.push(Section {
                    id,
                    title: full_title.replace('\n', " "),
                    full_title,
                    title_at: title.start,
                    lines: Vec::new(),
                    page_breaks: Vec::new(),
                });
                continue;
            }
            Token::Break if was_break => continue,
            Token::Break => Line::Break,
            Token::Content(r) => Line::Str(text(&r)),
        };
        if let Some(section) = sections.last_mut()
            && !(section.lines.is_empty() && blank(&line))
        {
            section.lines.push(line);
        }
    }
    let mut taken = HashSet::new();
    for section in &mut sections {
        while section.lines.last().is_some_and(blank) {
            section.lines.pop();
        }
        let mut counter = 0usize;
        loop {
            let key = if counter > 0 {
                format!("{}-{counter}", section.id)
            } else {
                section.id.clone()
            };
            if taken.insert(key.clone()) {
                section.id = key;
                break;
            }
            counter += 1;
        }
    }
    sections
}
