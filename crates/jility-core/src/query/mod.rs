//! The query language every place that finds tickets reads (`jility_search_tickets`,
//! `jility_list_tickets`'s `query`, `GET /api/v1/tickets?q=`, `jility ticket list --query`,
//! the web's search box): GitHub's qualifier syntax. Free words and "quoted phrases" are
//! full-text; `name:value` is a qualifier (`status:todo,review` any of, `-label:wontfix`
//! not, `points:3..8`, `updated:<7d`, `sort:updated-desc`…). This module only reads the
//! text: names of tickets, sprints and people stay as written, for the tracker to resolve
//! ([`crate::tracker`]).
//!
//! Hand-written: the language is a flat list of tokens (no operators, no nesting), and no
//! crate reads GitHub's qualifier syntax; a token's only structure is `-`, `name:` and
//! quotes.

mod values;

use mcp_common_core::ToolError;

use crate::errors::{self, clip};
use crate::model::{Kind, Status};
use crate::store::{Sort, SortField, TimeRange};

pub use values::Clock;

/// Longest query read, in characters, and most words and qualifiers in one: a query's cost
/// grows with its terms.
pub const MAX_QUERY_CHARS: usize = 1000;
pub const MAX_QUERY_WORDS: usize = 32;
pub const MAX_QUALIFIERS: usize = 32;

/// Every qualifier, as the errors and the documentation list them.
pub const QUALIFIERS: &str = "status:, label:, assignee:, is:, no:, epic:, sprint:, points:, created:, updated:, parent:, depends-on:, view:, sort:";

/// A query, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Full-text terms: a word or a phrase each, all of which must match (or, negated,
    /// must not).
    pub words: Vec<Word>,
    pub qualifiers: Vec<Qualified>,
    /// `sort:…`, when given.
    pub order: Option<Order>,
    /// The time qualifiers as written (`-updated:<7d`), which a cursor is bound to: an age
    /// resolves against the clock anew on each page.
    pub times: Vec<String>,
}

impl Query {
    /// Whether it asks anything at all (an empty query matches every ticket).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.qualifiers.is_empty()
    }

    /// Whether it runs a saved view.
    pub fn has_views(&self) -> bool {
        self.qualifiers
            .iter()
            .any(|q| matches!(q.qualifier, Qualifier::View(_)))
    }

    /// Whether it has a word or phrase that must match (something to rank by).
    pub fn has_words(&self) -> bool {
        self.words.iter().any(|w| !w.negated)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub negated: bool,
    /// One word, or the words of a quoted phrase, lower case.
    pub phrase: Vec<String>,
}

/// A qualifier, negated with `-` or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qualified {
    pub negated: bool,
    pub qualifier: Qualifier,
}

/// A qualifier's meaning, its names unresolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Qualifier {
    Status(Vec<Status>),
    Label(Vec<String>),
    /// Any of these people (`me`: the caller).
    Assignee(Vec<Person>),
    Is(Is),
    No(No),
    /// A ticket named by `KEY-N`, `#N`, `N` or UUID, as written.
    Epic(String),
    Parent(String),
    DependsOn(String),
    /// A sprint's name or number, `active`, or `none`/`backlog`.
    Sprint(String),
    /// Story points within `min..=max`.
    Points(u8, u8),
    Created(TimeRange),
    Updated(TimeRange),
    /// A saved view's query, by the view's name.
    View(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Person {
    Me,
    Named(String),
}

/// `is:…`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Is {
    Unassigned,
    Assigned,
    Blocked,
    Open,
    Done,
    Kind(Kind),
}

/// `no:…`: the field is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum No {
    Sprint,
    Epic,
    Parent,
    Points,
    Assignee,
    Label,
}

/// `sort:…`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Best matches first (the default of a search with words).
    Relevance,
    By(Sort),
}

/// Read `text` as a query; `clock` gives "now" for relative times (`updated:<7d`).
pub fn parse(text: &str, clock: &Clock) -> Result<Query, ToolError> {
    let chars = text.chars().count();
    if chars > MAX_QUERY_CHARS {
        // Never quoted back: it is too long to be worth reading.
        return Err(invalid(
            format!("The query is too long ({chars} characters; at most {MAX_QUERY_CHARS})"),
            "Keep the few most distinctive words and qualifiers.",
        ));
    }
    let mut query = Query::default();
    for token in tokens(text) {
        match &token.name {
            None => {
                let words = words(&token.value);
                if token.quoted {
                    if !words.is_empty() {
                        query.words.push(Word {
                            negated: token.negated,
                            phrase: words,
                        });
                    }
                } else {
                    query.words.extend(words.into_iter().map(|w| Word {
                        negated: token.negated,
                        phrase: vec![w],
                    }));
                }
            }
            Some(name) => qualifier(&mut query, &token, name, clock)?,
        }
    }
    let words: usize = query.words.iter().map(|w| w.phrase.len()).sum();
    if words > MAX_QUERY_WORDS {
        return Err(invalid(
            format!("The query has too many words ({words} words; at most {MAX_QUERY_WORDS})"),
            "Search for the few most distinctive words; all of them must match.",
        ));
    }
    if query.qualifiers.len() > MAX_QUALIFIERS {
        return Err(invalid(
            format!(
                "The query has too many qualifiers ({}; at most {MAX_QUALIFIERS})",
                query.qualifiers.len()
            ),
            "Name several values in one qualifier instead: `status:todo,review`.",
        ));
    }
    Ok(query)
}

/// One token as written: `-`, `name:` and the value, unquoted.
#[derive(Debug, PartialEq, Eq)]
struct Token {
    negated: bool,
    /// The qualifier's name, lower case (`None`: free text).
    name: Option<String>,
    value: String,
    /// Whether the value was a quoted phrase.
    quoted: bool,
    /// The token as written, for errors.
    written: String,
}

/// Split a query into tokens: blank-separated, `"…"` keeping blanks (an unclosed quote runs
/// to the end), `-` before a token negating it, `name:` before a value naming a qualifier
/// when `name` is letters and `-` (anything else with a colon is text: `10:30`).
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let negated = chars[i] == '-' && chars.get(i + 1).is_some_and(|c| !c.is_whitespace());
        if negated {
            i += 1;
        }
        let (name, value, quoted);
        if chars[i] == '"' {
            let (v, end) = quoted_run(&chars, i);
            (name, value, quoted) = (None, v, true);
            i = end;
        } else {
            let word_end = (i..chars.len())
                .find(|&j| chars[j].is_whitespace())
                .unwrap_or(chars.len());
            let colon = (i..word_end).find(|&j| chars[j] == ':');
            let qualifier = colon.filter(|&c| {
                c > i
                    && chars[i].is_ascii_alphabetic()
                    && chars[i..c]
                        .iter()
                        .all(|ch| ch.is_ascii_alphabetic() || *ch == '-')
            });
            match qualifier {
                Some(c) => {
                    name = Some(chars[i..c].iter().collect::<String>().to_ascii_lowercase());
                    if chars.get(c + 1) == Some(&'"') {
                        let (v, end) = quoted_run(&chars, c + 1);
                        (value, quoted) = (v, true);
                        i = end;
                    } else {
                        (value, quoted) = (chars[c + 1..word_end].iter().collect(), false);
                        i = word_end;
                    }
                }
                None => {
                    (name, value, quoted) = (None, chars[i..word_end].iter().collect(), false);
                    i = word_end;
                }
            }
        }
        out.push(Token {
            negated,
            name,
            value,
            quoted,
            written: chars[start..i].iter().collect(),
        });
    }
    out
}

/// The text of the quoted run starting at `open` (a `"`), and the index after it.
fn quoted_run(chars: &[char], open: usize) -> (String, usize) {
    match (open + 1..chars.len()).find(|&j| chars[j] == '"') {
        Some(close) => (chars[open + 1..close].iter().collect(), close + 1),
        None => (chars[open + 1..].iter().collect(), chars.len()),
    }
}

/// The qualifier that runs the saved view `name` (`view:"my triage"` when it has blanks).
pub fn view_of(name: &str) -> String {
    if name.contains(char::is_whitespace) {
        format!("view:\"{name}\"")
    } else {
        format!("view:{name}")
    }
}

/// The words of free text, lower case, punctuation dropped (it is never syntax).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn qualifier(query: &mut Query, token: &Token, name: &str, clock: &Clock) -> Result<(), ToolError> {
    let value = token.value.trim();
    if value.is_empty() && values::is_known(name) {
        return Err(invalid(
            format!("'{}' in the query has no value", clip(&token.written)),
            format!(
                "Give a value after the colon, e.g. {}.",
                values::example(name)
            ),
        ));
    }
    let qualifier = match name {
        "sort" => {
            if token.negated {
                return Err(bad(token, "sort cannot be negated"));
            }
            if query.order.is_some() {
                return Err(bad(token, "the query sorts twice"));
            }
            query.order = Some(values::order(value).ok_or_else(|| {
                bad(
                    token,
                    &format!(
                        "sort by relevance or by {}, each -asc or -desc (e.g. sort:updated-desc)",
                        SortField::ALL.map(SortField::as_str).join(", ")
                    ),
                )
            })?);
            return Ok(());
        }
        "view" => {
            if token.negated {
                return Err(bad(token, "a view cannot be negated"));
            }
            Qualifier::View(value.to_string())
        }
        "status" => Qualifier::Status(values::statuses(value).map_err(|e| bad(token, &e))?),
        "label" => Qualifier::Label(values::names(value).map_err(|e| bad(token, &e))?),
        "assignee" => Qualifier::Assignee(
            values::names(value)
                .map_err(|e| bad(token, &e))?
                .into_iter()
                .map(|n| {
                    if n.eq_ignore_ascii_case("me") || n == "@me" {
                        Person::Me
                    } else {
                        Person::Named(n)
                    }
                })
                .collect(),
        ),
        "is" => Qualifier::Is(values::is(value).map_err(|e| bad(token, &e))?),
        "no" => Qualifier::No(values::no(value).map_err(|e| bad(token, &e))?),
        "epic" => Qualifier::Epic(value.to_string()),
        "parent" => Qualifier::Parent(value.to_string()),
        "depends-on" => Qualifier::DependsOn(value.to_string()),
        "sprint" => Qualifier::Sprint(value.to_string()),
        "points" => {
            let (min, max) = values::points(value).map_err(|e| bad(token, &e))?;
            Qualifier::Points(min, max)
        }
        "created" | "updated" => {
            query.times.push(token.written.clone());
            let range = values::times(value, clock).map_err(|e| bad(token, &e))?;
            if name == "created" {
                Qualifier::Created(range)
            } else {
                Qualifier::Updated(range)
            }
        }
        _ => {
            return Err(invalid(
                format!(
                    "Unknown qualifier '{}:' in '{}'. Valid qualifiers: {QUALIFIERS}",
                    clip(name),
                    clip(&token.written)
                ),
                "Write qualifiers as name:value (e.g. status:todo,review label:bug); to search for text with a colon, put it in quotes.",
            ));
        }
    };
    query.qualifiers.push(Qualified {
        negated: token.negated,
        qualifier,
    });
    Ok(())
}

/// A bad value: the error quotes the token and says what the qualifier takes.
fn bad(token: &Token, takes: &str) -> ToolError {
    invalid(
        format!("Bad value in '{}': {takes}", clip(&token.written)),
        format!("Valid qualifiers: {QUALIFIERS}. See the README's query language for examples."),
    )
}

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
}

#[cfg(test)]
mod tests;
