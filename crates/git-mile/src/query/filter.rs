//! The filter language of `git mile list --filter` and of the MCP tool `git_mile.list`.
//!
//! ```text
//! filter     := expr EOF
//! expr       := and_expr ( ("or" | "||") and_expr )*
//! and_expr   := unary ( ("and" | "&&") unary )*
//! unary      := ("not" | "!") unary | "(" expr ")" | condition
//! condition  := FIELD op value
//!             | FIELD ["not"] "in" "[" value ("," value)* [","] "]"
//!             | FIELD "contains" value
//!             | FIELD                      (Bool fields only: FIELD == true)
//! op         := "==" | "!=" | "<" | "<=" | ">" | ">="
//! value      := STRING | NUMBER | "true" | "false" | "null" | DATE
//! ```
//!
//! Keywords are case-insensitive; field names are not. A filter is parsed and type-checked
//! once ([`Filter::parse`]); every error names the column (1-based, in characters) of the
//! offending token, what was expected there and what was found.
//!
//! The lexer and the recursive-descent parser are written by hand on purpose: the grammar is a
//! handful of rules, and no parser crate (none is a dependency of this crate anyway) would give
//! columns counted in characters and "expected X, found Y" messages for less code than this.
//! Nesting is limited to [`MAX_DEPTH`] levels and input to [`MAX_INPUT_CHARS`] characters, so
//! no input can overflow the stack; the lexer and parser index nothing unchecked, so no input
//! can make them panic.

use std::cmp::Ordering;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

use super::{Field, FieldType, Fields, Value, Vocabulary};

/// The longest filter accepted, in characters.
pub const MAX_INPUT_CHARS: usize = 4096;
/// The deepest nesting of parentheses and negations accepted.
pub const MAX_DEPTH: usize = 64;

const VALUE_EXPECTED: &str = "a value (string, number, true, false, null or date)";
const DATE_FORMS: &str = "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)";
const COMPARISONS: &str = "==, !=, <, <=, >, >=, in, not in, contains";
/// How much of an offending token an error quotes.
const MAX_FOUND_CHARS: usize = 40;

/// A parsed, type-checked filter.
#[derive(Debug, Clone)]
pub struct Filter {
    root: Node,
}

/// Why a filter does not parse, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "filter error at column {column}: expected {expected}, found {found}{}",
    suggestion.as_deref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
)]
pub struct FilterError {
    /// 1-based, in characters; the input's length + 1 at the end of the filter.
    pub column: usize,
    pub expected: String,
    pub found: String,
    /// What was probably meant, when the mistake is a common one: a bare word where a
    /// string was expected (`status == open`) gets the condition with the word quoted.
    pub suggestion: Option<String>,
}

impl Filter {
    /// Parses and type-checks a filter over the fields of issues and milestones; the error
    /// points at the first offending token.
    pub fn parse(input: &str) -> Result<Filter, FilterError> {
        Self::parse_in(input, Vocabulary::Entities)
    }

    /// [`Filter::parse`] over the fields of `vocabulary`.
    pub fn parse_in(input: &str, vocabulary: Vocabulary) -> Result<Filter, FilterError> {
        let length = input.chars().count();
        if length > MAX_INPUT_CHARS {
            return Err(FilterError {
                column: MAX_INPUT_CHARS + 1,
                expected: format!("a filter of at most {MAX_INPUT_CHARS} characters"),
                found: format!("{length} characters"),
                suggestion: None,
            });
        }
        let chars: Vec<char> = input.chars().collect();
        let mut parser = Parser::new(lex(&chars), chars.len(), vocabulary);
        let root = parser.expr(0)?;
        let end = parser.peek()?;
        if end.kind != Kind::Eof {
            return Err(end.error("`and`, `or` or end of filter"));
        }
        Ok(Filter { root })
    }

    /// Whether `entity` passes the filter. A condition whose field has a value of the wrong
    /// shape (which a well-behaved [`Fields`] never returns) is false.
    pub fn matches(&self, entity: &dyn Fields) -> bool {
        self.root.eval(entity)
    }

    /// Whether the filter tests `field` anywhere (the caller uses it for `status`).
    pub fn mentions(&self, field: Field) -> bool {
        self.root.mentions(field)
    }
}

// ---------------------------------------------------------------------------------------------
// The AST and its evaluation.

#[derive(Debug, Clone)]
enum Node {
    Or(Vec<Node>),
    And(Vec<Node>),
    Not(Box<Node>),
    Cond { field: Field, pred: Pred },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// Whether `a op b` holds, given `a.cmp(b)`.
    fn holds(self, ordering: Ordering) -> bool {
        match self {
            Op::Eq => ordering == Ordering::Equal,
            Op::Ne => ordering != Ordering::Equal,
            Op::Lt => ordering == Ordering::Less,
            Op::Le => ordering != Ordering::Greater,
            Op::Gt => ordering == Ordering::Greater,
            Op::Ge => ordering != Ordering::Less,
        }
    }

    fn is_equality(self) -> bool {
        matches!(self, Op::Eq | Op::Ne)
    }
}

/// A date literal: a whole UTC day, or an exact instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DateValue {
    Day(NaiveDate),
    Instant(DateTime<Utc>),
}

impl DateValue {
    fn compare(self, op: Op, time: DateTime<Utc>) -> bool {
        match self {
            DateValue::Instant(instant) => op.holds(time.cmp(&instant)),
            DateValue::Day(day) => {
                let start = day.and_time(NaiveTime::MIN).and_utc();
                let next = day.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, |d| {
                    d.and_time(NaiveTime::MIN).and_utc()
                });
                let within = start <= time && time < next;
                match op {
                    Op::Eq => within,
                    Op::Ne => !within,
                    Op::Lt => time < start,
                    Op::Le => time < next,
                    Op::Gt => time >= next,
                    Op::Ge => time >= start,
                }
            }
        }
    }
}

/// One type-checked test of one field. `negated` flips the result only when the entity's
/// value has the expected shape, so that a mismatched value never matches.
#[derive(Debug, Clone)]
enum Pred {
    Text {
        op: Op,
        value: String,
    },
    TextIn {
        values: Vec<String>,
        negated: bool,
    },
    /// The needle is lowercased.
    TextContains(String),
    /// Lowercased `open` / `closed`.
    Status {
        any_of: Vec<String>,
        negated: bool,
    },
    Labels {
        any_of: Vec<String>,
        negated: bool,
    },
    /// `None` is `null` (no milestone).
    Milestone {
        any_of: Vec<Option<String>>,
        negated: bool,
    },
    /// The needle is lowercased.
    MilestoneContains(String),
    Date {
        op: Op,
        value: DateValue,
    },
    /// `value` is `None` only with `==` / `!=`.
    Number {
        op: Op,
        value: Option<u64>,
    },
    NumberIn {
        values: Vec<Option<u64>>,
        negated: bool,
    },
    Bool(bool),
}

fn milestone_is(wanted: Option<&str>, id: Option<&str>, title: Option<&str>) -> bool {
    match wanted {
        None => id.is_none() && title.is_none(),
        Some(x) => {
            id == Some(x)
                || title == Some(x)
                || (x.chars().count() >= 4 && id.is_some_and(|id| id.starts_with(x)))
        }
    }
}

impl Pred {
    /// `None` when the entity's value does not fit the predicate's type.
    fn eval(&self, value: &Value<'_>) -> Option<bool> {
        let result = match (self, value) {
            (Pred::Text { op, value }, Value::Text(text)) => op.holds((*text).cmp(value.as_str())),
            (Pred::TextIn { values, negated }, Value::Text(text)) => {
                values.iter().any(|v| v == text) != *negated
            }
            (Pred::TextContains(needle), Value::Text(text)) => {
                text.to_lowercase().contains(needle.as_str())
            }
            (Pred::Status { any_of, negated }, Value::Text(text)) => {
                any_of.iter().any(|s| text.eq_ignore_ascii_case(s)) != *negated
            }
            (Pred::Labels { any_of, negated }, Value::Labels(labels)) => {
                any_of.iter().any(|l| labels.contains(l)) != *negated
            }
            (Pred::Milestone { any_of, negated }, Value::Milestone { id, title }) => {
                any_of
                    .iter()
                    .any(|wanted| milestone_is(wanted.as_deref(), *id, *title))
                    != *negated
            }
            (Pred::MilestoneContains(needle), Value::Milestone { title, .. }) => {
                title.is_some_and(|t| t.to_lowercase().contains(needle.as_str()))
            }
            (Pred::Date { op, value }, Value::Date(time)) => value.compare(*op, *time),
            (Pred::Number { op, value }, Value::Number(actual)) => match (actual, value) {
                (None, None) => *op == Op::Eq,
                (Some(_), None) => *op == Op::Ne,
                (None, Some(_)) => false,
                (Some(a), Some(b)) => op.holds(a.cmp(b)),
            },
            (Pred::NumberIn { values, negated }, Value::Number(actual)) => match actual {
                // "Not applicable" only ever matches an explicit `null` in an `in` list.
                None => !*negated && values.contains(&None),
                Some(_) => values.contains(actual) != *negated,
            },
            (Pred::Bool(wanted), Value::Bool(actual)) => wanted == actual,
            _ => return None,
        };
        Some(result)
    }
}

impl Node {
    fn eval(&self, entity: &dyn Fields) -> bool {
        match self {
            Node::Or(nodes) => nodes.iter().any(|n| n.eval(entity)),
            Node::And(nodes) => nodes.iter().all(|n| n.eval(entity)),
            Node::Not(node) => !node.eval(entity),
            // A row that keeps the text lowercased spares lowercasing it on every listing.
            Node::Cond {
                field,
                pred: Pred::TextContains(needle),
            } if let Some(lower) = entity.lowercase(*field) => lower.contains(needle.as_str()),
            Node::Cond { field, pred } => pred.eval(&entity.value(*field)).unwrap_or(false),
        }
    }

    fn mentions(&self, wanted: Field) -> bool {
        match self {
            Node::Or(nodes) | Node::And(nodes) => nodes.iter().any(|n| n.mentions(wanted)),
            Node::Not(node) => node.mentions(wanted),
            Node::Cond { field, .. } => *field == wanted,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The lexer.

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A word: a field name or a keyword (matched case-insensitively by the parser).
    Ident,
    Str(String),
    Number(u64),
    Date(DateValue),
    Op(Op),
    /// A lone `=`.
    Assign,
    AndAnd,
    OrOr,
    Bang,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    /// Anything else; the parser reports it as unexpected wherever it appears.
    Unknown,
    /// A lexical error, reported when the parser reaches it.
    Bad {
        expected: String,
        found: String,
    },
    Eof,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    /// 1-based, in characters.
    column: usize,
    /// As written.
    text: String,
}

impl Token {
    fn found(&self) -> String {
        match &self.kind {
            Kind::Eof => "end of filter".to_string(),
            Kind::Bad { found, .. } => found.clone(),
            _ => quote(&self.text),
        }
    }

    fn error(&self, expected: impl Into<String>) -> FilterError {
        FilterError {
            column: self.column,
            expected: expected.into(),
            found: self.found(),
            suggestion: None,
        }
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        self.kind == Kind::Ident && self.text.eq_ignore_ascii_case(keyword)
    }
}

fn quote(text: &str) -> String {
    format!("`{}`", mcp_common::clip(text, MAX_FOUND_CHARS))
}

/// Parses `YYYY-MM-DD` (a whole day) or `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn parse_date(text: &str) -> Option<DateValue> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    let day_shape = digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10);
    if !day_shape {
        return None;
    }
    if bytes.len() == 10 {
        let year = text.get(0..4)?.parse().ok()?;
        let month = text.get(5..7)?.parse().ok()?;
        let day = text.get(8..10)?.parse().ok()?;
        return NaiveDate::from_ymd_opt(year, month, day).map(DateValue::Day);
    }
    if !matches!(bytes.get(10), Some(b'T' | b't')) {
        return None;
    }
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| DateValue::Instant(t.with_timezone(&Utc)))
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    tokens: Vec<Token>,
}

fn lex(chars: &[char]) -> Vec<Token> {
    let mut lexer = Lexer {
        chars,
        pos: 0,
        tokens: Vec::new(),
    };
    lexer.run();
    lexer.tokens
}

impl Lexer<'_> {
    fn at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn text_from(&self, start: usize) -> String {
        self.chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    fn push(&mut self, kind: Kind, start: usize) {
        let text = self.text_from(start);
        self.tokens.push(Token {
            kind,
            column: start + 1,
            text,
        });
    }

    /// Emits `kind` for the next `len` characters.
    fn punct(&mut self, kind: Kind, len: usize) {
        let start = self.pos;
        self.pos += len;
        self.push(kind, start);
    }

    fn run(&mut self) {
        loop {
            while self.at(0).is_some_and(char::is_whitespace) {
                self.pos += 1;
            }
            let Some(c) = self.at(0) else {
                self.push(Kind::Eof, self.pos);
                return;
            };
            let next = self.at(1);
            match c {
                '(' => self.punct(Kind::LParen, 1),
                ')' => self.punct(Kind::RParen, 1),
                '[' => self.punct(Kind::LBracket, 1),
                ']' => self.punct(Kind::RBracket, 1),
                ',' => self.punct(Kind::Comma, 1),
                '=' if next == Some('=') => self.punct(Kind::Op(Op::Eq), 2),
                '=' => self.punct(Kind::Assign, 1),
                '!' if next == Some('=') => self.punct(Kind::Op(Op::Ne), 2),
                '!' => self.punct(Kind::Bang, 1),
                '<' if next == Some('=') => self.punct(Kind::Op(Op::Le), 2),
                '<' => self.punct(Kind::Op(Op::Lt), 1),
                '>' if next == Some('=') => self.punct(Kind::Op(Op::Ge), 2),
                '>' => self.punct(Kind::Op(Op::Gt), 1),
                '&' if next == Some('&') => self.punct(Kind::AndAnd, 2),
                '|' if next == Some('|') => self.punct(Kind::OrOr, 2),
                '"' | '\'' => {
                    if !self.string(c) {
                        // An unterminated string or a bad escape ends the token stream.
                        self.push(Kind::Eof, self.chars.len());
                        return;
                    }
                }
                c if c.is_ascii_digit() => self.number_or_date(),
                c if c.is_alphabetic() || c == '_' => {
                    let start = self.pos;
                    while self.at(0).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        self.pos += 1;
                    }
                    self.push(Kind::Ident, start);
                }
                _ => self.punct(Kind::Unknown, 1),
            }
        }
    }

    /// Lexes a quoted string; false (after pushing a `Bad` token) when it is malformed.
    fn string(&mut self, quote_char: char) -> bool {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            match self.at(0) {
                None => {
                    self.tokens.push(Token {
                        kind: Kind::Bad {
                            expected: format!("a closing {quote_char} to end the string"),
                            found: "end of filter".to_string(),
                        },
                        column: start + 1,
                        text: self.text_from(start),
                    });
                    return false;
                }
                Some(c) if c == quote_char => {
                    self.pos += 1;
                    self.push(Kind::Str(value), start);
                    return true;
                }
                Some('\\') => {
                    let escaped = match self.at(1) {
                        Some('"') => '"',
                        Some('\'') => '\'',
                        Some('\\') => '\\',
                        Some('n') => '\n',
                        Some('t') => '\t',
                        other => {
                            self.tokens.push(Token {
                                kind: Kind::Bad {
                                    expected: r#"an escape (\", \', \\, \n or \t)"#.to_string(),
                                    found: other.map_or_else(
                                        || "end of filter".to_string(),
                                        |c| quote(&format!("\\{c}")),
                                    ),
                                },
                                column: self.pos + 1,
                                text: "\\".to_string(),
                            });
                            return false;
                        }
                    };
                    value.push(escaped);
                    self.pos += 2;
                }
                Some(c) => {
                    value.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// A bare word starting with a digit: a number, a date, or an unknown token.
    fn number_or_date(&mut self) {
        let start = self.pos;
        while self
            .at(0)
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.' | '+'))
        {
            self.pos += 1;
        }
        let text = self.text_from(start);
        let kind = if text.chars().all(|c| c.is_ascii_digit()) {
            match text.parse::<u64>() {
                Ok(n) => Kind::Number(n),
                Err(_) => Kind::Bad {
                    expected: format!("a number no greater than {}", u64::MAX),
                    found: quote(&text),
                },
            }
        } else if text.as_bytes().get(4) == Some(&b'-')
            && text
                .get(0..4)
                .is_some_and(|y| y.bytes().all(|b| b.is_ascii_digit()))
        {
            match parse_date(&text) {
                Some(date) => Kind::Date(date),
                None => Kind::Bad {
                    expected: format!("a valid date ({DATE_FORMS})"),
                    found: quote(&text),
                },
            }
        } else {
            Kind::Unknown
        };
        self.tokens.push(Token {
            kind,
            column: start + 1,
            text,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The parser and type checker.

/// A literal value, before it is checked against its field.
enum Lit {
    Str(String),
    Number(u64),
    Bool(bool),
    Null,
    Date(DateValue),
}

/// The operator of a condition, for the per-type check.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OpKind {
    Cmp(Op),
    In,
    Contains,
}

fn allows(field_type: FieldType, op: OpKind) -> bool {
    match field_type {
        FieldType::Text => true,
        FieldType::Status => matches!(op, OpKind::Cmp(Op::Eq | Op::Ne) | OpKind::In),
        FieldType::Labels | FieldType::Milestone => {
            matches!(
                op,
                OpKind::Cmp(Op::Eq | Op::Ne) | OpKind::In | OpKind::Contains
            )
        }
        FieldType::Date => matches!(op, OpKind::Cmp(_)),
        FieldType::Number => matches!(op, OpKind::Cmp(_) | OpKind::In),
        FieldType::Bool => matches!(op, OpKind::Cmp(Op::Eq | Op::Ne)),
    }
}

fn allowed_ops(field_type: FieldType) -> &'static str {
    match field_type {
        FieldType::Text => COMPARISONS,
        FieldType::Status => "==, !=, in, not in",
        FieldType::Labels | FieldType::Milestone => "==, !=, in, not in, contains",
        FieldType::Date => "==, !=, <, <=, >, >=",
        FieldType::Number => "==, !=, <, <=, >, >=, in, not in",
        FieldType::Bool => "==, !=",
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    eof: Token,
    vocabulary: Vocabulary,
}

impl Parser {
    fn new(tokens: Vec<Token>, length: usize, vocabulary: Vocabulary) -> Self {
        Parser {
            tokens,
            pos: 0,
            vocabulary,
            eof: Token {
                kind: Kind::Eof,
                column: length + 1,
                text: String::new(),
            },
        }
    }

    /// The next token; a lexical error once the parser reaches it.
    fn peek(&self) -> Result<&Token, FilterError> {
        let token = self.tokens.get(self.pos).unwrap_or(&self.eof);
        match &token.kind {
            Kind::Bad { expected, found } => Err(FilterError {
                column: token.column,
                expected: expected.clone(),
                found: found.clone(),
                suggestion: None,
            }),
            _ => Ok(token),
        }
    }

    fn advance(&mut self) {
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Node, FilterError> {
        let first = self.and_expr(depth)?;
        let mut rest = Vec::new();
        loop {
            let token = self.peek()?;
            if !(token.kind == Kind::OrOr || token.is_keyword("or")) {
                break;
            }
            self.advance();
            rest.push(self.and_expr(depth)?);
        }
        Ok(if rest.is_empty() {
            first
        } else {
            rest.insert(0, first);
            Node::Or(rest)
        })
    }

    fn and_expr(&mut self, depth: usize) -> Result<Node, FilterError> {
        let first = self.unary(depth)?;
        let mut rest = Vec::new();
        loop {
            let token = self.peek()?;
            if !(token.kind == Kind::AndAnd || token.is_keyword("and")) {
                break;
            }
            self.advance();
            rest.push(self.unary(depth)?);
        }
        Ok(if rest.is_empty() {
            first
        } else {
            rest.insert(0, first);
            Node::And(rest)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Node, FilterError> {
        let token = self.peek()?.clone();
        let nests =
            token.kind == Kind::Bang || token.kind == Kind::LParen || token.is_keyword("not");
        if nests && depth >= MAX_DEPTH {
            return Err(token.error(format!(
                "at most {MAX_DEPTH} levels of nesting (parentheses and negations)"
            )));
        }
        match token.kind {
            Kind::LParen => {
                self.advance();
                let inner = self.expr(depth + 1)?;
                let close = self.peek()?;
                if close.kind != Kind::RParen {
                    return Err(close.error("`and`, `or` or `)`"));
                }
                self.advance();
                Ok(inner)
            }
            _ if nests => {
                self.advance();
                Ok(Node::Not(Box::new(self.unary(depth + 1)?)))
            }
            Kind::Ident => self.condition(&token),
            _ => Err(token.error("a condition (a field name, `not` or `(`)")),
        }
    }

    fn condition(&mut self, field_token: &Token) -> Result<Node, FilterError> {
        let Some(field) = self.vocabulary.parse(&field_token.text) else {
            return Err(
                field_token.error(format!("a field name (one of {})", self.vocabulary.names()))
            );
        };
        let field_type = field.field_type();
        self.advance();
        let op_token = self.peek()?.clone();
        let check = |op: OpKind, shown: &Token, found: Option<&str>| {
            if allows(field_type, op) {
                Ok(())
            } else {
                let mut error = op_error(field, shown);
                if let Some(found) = found {
                    error.found = found.to_string();
                }
                Err(error)
            }
        };
        let pred = match op_token.kind {
            Kind::Op(op) => {
                check(OpKind::Cmp(op), &op_token, None)?;
                self.advance();
                let value = self
                    .value()
                    .map_err(|e| suggest_condition(e, field, field_token, &op_token))?;
                compare(field, op, value)?
            }
            Kind::Assign => return Err(op_token.error("== (comparison)")),
            Kind::Ident if op_token.is_keyword("in") => {
                check(OpKind::In, &op_token, None)?;
                self.advance();
                let values = self.list().map_err(|e| suggest_in_list(e, field))?;
                within(field, values, false, &op_token)?
            }
            Kind::Ident if op_token.is_keyword("not") => {
                self.advance();
                let in_token = self.peek()?.clone();
                if !in_token.is_keyword("in") {
                    return Err(in_token.error("`in` after `not`"));
                }
                let written = quote(&format!("{} {}", op_token.text, in_token.text));
                check(OpKind::In, &op_token, Some(&written))?;
                self.advance();
                let values = self.list().map_err(|e| suggest_in_list(e, field))?;
                within(field, values, true, &op_token)?
            }
            Kind::Ident if op_token.is_keyword("contains") => {
                check(OpKind::Contains, &op_token, None)?;
                self.advance();
                let value = self
                    .value()
                    .map_err(|e| suggest_condition(e, field, field_token, &op_token))?;
                contains(field, value, &op_token)?
            }
            _ if field_type == FieldType::Bool => Pred::Bool(true),
            _ => {
                return Err(op_token.error(format!(
                    "a comparison ({COMPARISONS}) after `{}`",
                    field.name()
                )));
            }
        };
        Ok(Node::Cond { field, pred })
    }

    fn value(&mut self) -> Result<(Lit, Token), FilterError> {
        let token = self.peek()?.clone();
        let lit = match &token.kind {
            Kind::Str(s) => Lit::Str(s.clone()),
            Kind::Number(n) => Lit::Number(*n),
            Kind::Date(d) => Lit::Date(*d),
            Kind::Ident if token.is_keyword("true") => Lit::Bool(true),
            Kind::Ident if token.is_keyword("false") => Lit::Bool(false),
            Kind::Ident if token.is_keyword("null") => Lit::Null,
            Kind::Ident => {
                // A bare word where a value goes: most likely a string without its quotes.
                let mut error = token.error(VALUE_EXPECTED);
                error.suggestion = self.bare_word().map(|word| quoted(&word));
                return Err(error);
            }
            _ => return Err(token.error(VALUE_EXPECTED)),
        };
        self.advance();
        Ok((lit, token))
    }

    /// The bare word starting at the next token (a word, with the characters written right
    /// after it without a space: `in-progress`, `v1.2`), if short enough to quote back.
    fn bare_word(&self) -> Option<String> {
        let first = self.tokens.get(self.pos)?;
        let mut word = first.text.clone();
        let mut end = first.column + first.text.chars().count();
        for token in self.tokens.get(self.pos + 1..).unwrap_or_default() {
            let joins = matches!(
                token.kind,
                Kind::Ident | Kind::Number(_) | Kind::Date(_) | Kind::Unknown
            );
            if !joins || token.column != end {
                break;
            }
            word.push_str(&token.text);
            end += token.text.chars().count();
        }
        (word.chars().count() <= MAX_FOUND_CHARS).then_some(word)
    }

    /// `[ value ("," value)* ","? ]`
    fn list(&mut self) -> Result<Vec<(Lit, Token)>, FilterError> {
        let open = self.peek()?;
        if open.kind != Kind::LBracket {
            return Err(open.error("`[` after `in`"));
        }
        self.advance();
        let mut values = vec![self.value()?];
        loop {
            let token = self.peek()?;
            match token.kind {
                Kind::RBracket => {
                    self.advance();
                    return Ok(values);
                }
                Kind::Comma => {
                    self.advance();
                    if self.peek()?.kind == Kind::RBracket {
                        self.advance();
                        return Ok(values);
                    }
                    values.push(self.value()?);
                }
                _ => return Err(token.error("`]` or `,`")),
            }
        }
    }
}

/// `word` as a string literal of the language.
fn quoted(word: &str) -> String {
    format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Whether a string literal can be a value of `field` (so quoting a bare word may fix it).
fn takes_strings(field: Field) -> bool {
    !matches!(field.field_type(), FieldType::Number | FieldType::Bool)
}

/// A value error of `field op value`: a quoted word suggested becomes the whole condition
/// (`status == "open"`), where the field takes strings.
fn suggest_condition(
    mut error: FilterError,
    field: Field,
    field_token: &Token,
    op_token: &Token,
) -> FilterError {
    error.suggestion = error
        .suggestion
        .take()
        .filter(|_| takes_strings(field))
        .map(|value| format!("{} {} {value}", field_token.text, op_token.text));
    error
}

/// A value error inside `field in [...]`: a quoted word is suggested where the field takes
/// strings.
fn suggest_in_list(mut error: FilterError, field: Field) -> FilterError {
    if !takes_strings(field) {
        error.suggestion = None;
    }
    error
}

// ---------------------------------------------------------------------------------------------
// Type checking: literal values against their field.

fn text_value(field: Field, (lit, token): (Lit, Token)) -> Result<String, FilterError> {
    match lit {
        Lit::Str(s) => Ok(s),
        _ => Err(token.error(format!("a string for `{}`", field.name()))),
    }
}

fn status_value((lit, token): (Lit, Token)) -> Result<String, FilterError> {
    match lit {
        Lit::Str(s) if s.eq_ignore_ascii_case("open") || s.eq_ignore_ascii_case("closed") => {
            Ok(s.to_ascii_lowercase())
        }
        _ => Err(token.error(r#""open" or "closed" for `status`"#)),
    }
}

fn milestone_value((lit, token): (Lit, Token)) -> Result<Option<String>, FilterError> {
    match lit {
        Lit::Str(s) => Ok(Some(s)),
        Lit::Null => Ok(None),
        _ => Err(token.error("a string or null for `milestone`")),
    }
}

fn date_value(field: Field, (lit, token): (Lit, Token)) -> Result<DateValue, FilterError> {
    let date = match &lit {
        Lit::Date(d) => Some(*d),
        Lit::Str(s) => parse_date(s),
        _ => None,
    };
    date.ok_or_else(|| token.error(format!("a date ({DATE_FORMS}) for `{}`", field.name())))
}

/// `null` is accepted only where `allow_null` (equality and `in`).
fn number_value(
    field: Field,
    (lit, token): (Lit, Token),
    allow_null: bool,
) -> Result<Option<u64>, FilterError> {
    match lit {
        Lit::Number(n) => Ok(Some(n)),
        Lit::Null if allow_null => Ok(None),
        Lit::Null => Err(token.error(format!(
            "a number for `{}` (null only works with ==, != and in)",
            field.name()
        ))),
        _ => Err(token.error(format!("a number or null for `{}`", field.name()))),
    }
}

fn bool_value(field: Field, (lit, token): (Lit, Token)) -> Result<bool, FilterError> {
    match lit {
        Lit::Bool(b) => Ok(b),
        _ => Err(token.error(format!("true or false for `{}`", field.name()))),
    }
}

/// `field op value`; `op` is already known to suit the field.
fn compare(field: Field, op: Op, value: (Lit, Token)) -> Result<Pred, FilterError> {
    let negated = op == Op::Ne;
    Ok(match field.field_type() {
        FieldType::Text => Pred::Text {
            op,
            value: text_value(field, value)?,
        },
        FieldType::Status => Pred::Status {
            any_of: vec![status_value(value)?],
            negated,
        },
        FieldType::Labels => Pred::Labels {
            any_of: vec![text_value(field, value)?],
            negated,
        },
        FieldType::Milestone => Pred::Milestone {
            any_of: vec![milestone_value(value)?],
            negated,
        },
        FieldType::Date => Pred::Date {
            op,
            value: date_value(field, value)?,
        },
        FieldType::Number => Pred::Number {
            op,
            value: number_value(field, value, op.is_equality())?,
        },
        FieldType::Bool => Pred::Bool(bool_value(field, value)? != negated),
    })
}

/// The operator written at `token` does not suit `field`.
fn op_error(field: Field, token: &Token) -> FilterError {
    token.error(format!(
        "one of {} for `{}`",
        allowed_ops(field.field_type()),
        field.name()
    ))
}

/// `field [not] in [values]`, `in` written at `op`.
fn within(
    field: Field,
    values: Vec<(Lit, Token)>,
    negated: bool,
    op: &Token,
) -> Result<Pred, FilterError> {
    let items = values.into_iter();
    Ok(match field.field_type() {
        FieldType::Text => Pred::TextIn {
            values: items
                .map(|v| text_value(field, v))
                .collect::<Result<_, _>>()?,
            negated,
        },
        FieldType::Status => Pred::Status {
            any_of: items.map(status_value).collect::<Result<_, _>>()?,
            negated,
        },
        FieldType::Labels => Pred::Labels {
            any_of: items
                .map(|v| text_value(field, v))
                .collect::<Result<_, _>>()?,
            negated,
        },
        FieldType::Milestone => Pred::Milestone {
            any_of: items.map(milestone_value).collect::<Result<_, _>>()?,
            negated,
        },
        FieldType::Number => Pred::NumberIn {
            values: items
                .map(|v| number_value(field, v, true))
                .collect::<Result<_, _>>()?,
            negated,
        },
        // The parser checks the operator first; this only keeps the function total.
        FieldType::Date | FieldType::Bool => return Err(op_error(field, op)),
    })
}

/// `field contains value`, `contains` written at `op`.
fn contains(field: Field, value: (Lit, Token), op: &Token) -> Result<Pred, FilterError> {
    Ok(match field.field_type() {
        FieldType::Text => Pred::TextContains(text_value(field, value)?.to_lowercase()),
        FieldType::Labels => Pred::Labels {
            any_of: vec![text_value(field, value)?],
            negated: false,
        },
        FieldType::Milestone => Pred::MilestoneContains(text_value(field, value)?.to_lowercase()),
        // The parser checks the operator first; this only keeps the function total.
        FieldType::Status | FieldType::Date | FieldType::Number | FieldType::Bool => {
            return Err(op_error(field, op));
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::{DateTime, TimeZone, Utc};

    use super::*;

    #[derive(Clone)]
    struct Item {
        id: String,
        title: String,
        description: String,
        status: String,
        labels: BTreeSet<String>,
        milestone: Option<(String, String)>,
        author: String,
        created: DateTime<Utc>,
        updated: DateTime<Utc>,
        comment_count: Option<u64>,
        open_issues: Option<u64>,
        has_comments: bool,
    }

    impl Fields for Item {
        fn value(&self, field: Field) -> Value<'_> {
            match field {
                Field::Id => Value::Text(&self.id),
                Field::Title => Value::Text(&self.title),
                Field::Description => Value::Text(&self.description),
                Field::Status => Value::Text(&self.status),
                Field::Labels => Value::Labels(&self.labels),
                Field::Milestone => Value::Milestone {
                    id: self.milestone.as_ref().map(|m| m.0.as_str()),
                    title: self.milestone.as_ref().map(|m| m.1.as_str()),
                },
                Field::Author => Value::Text(&self.author),
                Field::Created => Value::Date(self.created),
                Field::Updated => Value::Date(self.updated),
                Field::CommentCount => Value::Number(self.comment_count),
                Field::OpenIssues => Value::Number(self.open_issues),
                Field::HasComments => Value::Bool(self.has_comments),
                Field::HasMilestone => Value::Bool(self.milestone.is_some()),
                _ => Value::Bool(false),
            }
        }
    }

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    /// An open issue with a milestone, two labels and three comments.
    fn issue() -> Item {
        Item {
            id: "a1b2c3d4e5".into(),
            title: "Crash on Startup".into(),
            description: "The app crashes when the config is missing.".into(),
            status: "open".into(),
            labels: ["bug", "ui"].iter().map(|s| s.to_string()).collect(),
            milestone: Some(("f00dbabe42".into(), "v1.0".into())),
            author: "alice".into(),
            created: at(2026, 1, 31, 23, 59, 59),
            updated: at(2026, 2, 1, 0, 0, 0),
            comment_count: Some(3),
            open_issues: None,
            has_comments: true,
        }
    }

    /// A closed issue without milestone, labels or comments.
    fn bare() -> Item {
        Item {
            id: "0123456789".into(),
            title: "Docs".into(),
            description: String::new(),
            status: "closed".into(),
            labels: BTreeSet::new(),
            milestone: None,
            author: "bob".into(),
            created: at(2025, 12, 1, 12, 0, 0),
            updated: at(2025, 12, 2, 12, 0, 0),
            comment_count: Some(0),
            open_issues: None,
            has_comments: false,
        }
    }

    /// A milestone: `open_issues` applies, `comment_count` does not.
    fn milestone() -> Item {
        Item {
            id: "f00dbabe42".into(),
            title: "v1.0".into(),
            description: "First release".into(),
            status: "open".into(),
            labels: BTreeSet::new(),
            milestone: None,
            author: "carol".into(),
            created: at(2026, 1, 1, 0, 0, 0),
            updated: at(2026, 1, 1, 0, 0, 0),
            comment_count: None,
            open_issues: Some(2),
            has_comments: false,
        }
    }

    fn parse(filter: &str) -> Filter {
        Filter::parse(filter).unwrap_or_else(|e| panic!("`{filter}` should parse: {e}"))
    }

    fn matches(filter: &str, item: &Item) -> bool {
        parse(filter).matches(item)
    }

    /// Checks `filter` against (issue, bare, milestone).
    fn check(filter: &str, expected: [bool; 3]) {
        let got = [
            matches(filter, &issue()),
            matches(filter, &bare()),
            matches(filter, &milestone()),
        ];
        assert_eq!(got, expected, "`{filter}` on [issue, bare, milestone]");
    }

    fn error(filter: &str) -> FilterError {
        match Filter::parse(filter) {
            Ok(parsed) => panic!("`{filter}` should not parse, got {parsed:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn text_operators() {
        check(r#"title == "Docs""#, [false, true, false]);
        check(r#"title == "docs""#, [false, false, false]);
        check(r#"title != "Docs""#, [true, false, true]);
        check(r#"author < "bob""#, [true, false, false]);
        check(r#"author <= "bob""#, [true, true, false]);
        check(r#"author > "bob""#, [false, false, true]);
        check(r#"author >= "bob""#, [false, true, true]);
        check(r#"author in ["alice", "carol"]"#, [true, false, true]);
        check(r#"author not in ["alice", "carol"]"#, [false, true, false]);
        check(r#"title contains "STARTUP""#, [true, false, false]);
        check(r#"description contains "release""#, [false, false, true]);
        check(r#"description == """#, [false, true, false]);
        check(r#"id == "0123456789""#, [false, true, false]);
        check(r#"title contains 'crash on'"#, [true, false, false]);
    }

    #[test]
    fn string_escapes() {
        let item = Item {
            title: "say \"hi\"\tand 'bye'\\\n".into(),
            ..issue()
        };
        assert!(matches(r#"title == "say \"hi\"\tand 'bye'\\\n""#, &item));
        assert!(matches(r#"title == 'say "hi"\tand \'bye\'\\\n'"#, &item));
        let unicode = Item {
            title: "Überprüfung — ÉTÉ".into(),
            ..issue()
        };
        assert!(matches(r#"title contains "été""#, &unicode));
        assert!(matches(r#"title contains "überprüfung""#, &unicode));
    }

    #[test]
    fn status_operators() {
        check(r#"status == "open""#, [true, false, true]);
        check(r#"status == "OPEN""#, [true, false, true]);
        check(r#"status != "open""#, [false, true, false]);
        check(r#"status in ["open", "closed"]"#, [true, true, true]);
        check(r#"status not in ["Closed"]"#, [true, false, true]);
    }

    #[test]
    fn labels_operators() {
        check(r#"labels == "bug""#, [true, false, false]);
        check(r#"labels contains "bug""#, [true, false, false]);
        check(r#"labels contains "BUG""#, [false, false, false]);
        check(r#"labels != "bug""#, [false, true, true]);
        check(r#"labels in ["ui", "docs"]"#, [true, false, false]);
        check(r#"labels not in ["ui", "docs"]"#, [false, true, true]);
        check(r#"labels in ["docs",]"#, [false, false, false]);
    }

    #[test]
    fn milestone_operators() {
        // By id, by title, by id prefix of at least four characters.
        check(r#"milestone == "f00dbabe42""#, [true, false, false]);
        check(r#"milestone == "v1.0""#, [true, false, false]);
        check(r#"milestone == "f00d""#, [true, false, false]);
        check(r#"milestone == "f00""#, [false, false, false]);
        check(r#"milestone == "V1.0""#, [false, false, false]);
        check(r#"milestone != "v1.0""#, [false, true, true]);
        check(r#"milestone == null"#, [false, true, true]);
        check(r#"milestone != NULL"#, [true, false, false]);
        check(r#"milestone in ["v2.0", null]"#, [false, true, true]);
        check(r#"milestone in ["v2.0", "f00db"]"#, [true, false, false]);
        check(r#"milestone not in ["v1.0"]"#, [false, true, true]);
        check(r#"milestone contains "V1""#, [true, false, false]);
        check(r#"milestone contains "f00d""#, [false, false, false]);
    }

    #[test]
    fn date_day_boundaries() {
        // issue: created 2026-01-31T23:59:59Z, updated 2026-02-01T00:00:00Z.
        check("created == 2026-01-31", [true, false, false]);
        check("updated == 2026-01-31", [false, false, false]);
        check("updated == 2026-02-01", [true, false, false]);
        check("created != 2026-01-31", [false, true, true]);
        check("updated < 2026-02-01", [false, true, true]);
        check("created < 2026-02-01", [true, true, true]);
        check("updated <= 2026-01-31", [false, true, true]);
        check("created <= 2026-01-31", [true, true, true]);
        check("created > 2026-01-31", [false, false, false]);
        check("updated > 2026-01-31", [true, false, false]);
        check("updated >= 2026-02-01", [true, false, false]);
        check("created >= 2026-01-31", [true, false, false]);
        // milestone: created 2026-01-01T00:00:00Z exactly at the day's start.
        check("created >= 2026-01-01", [true, false, true]);
        check("created < 2026-01-01", [false, true, false]);
        check("created == 2026-01-01", [false, false, true]);
    }

    #[test]
    fn date_timestamps_and_quoted_dates() {
        check("updated == 2026-02-01T00:00:00Z", [true, false, false]);
        check("updated == 2026-02-01T01:00:00+01:00", [true, false, false]);
        check("updated > 2026-01-31T23:59:59.5Z", [true, false, false]);
        check("created < 2026-01-31T23:59:59.5Z", [true, true, true]);
        check("created <= 2026-01-31T23:59:59Z", [true, true, true]);
        check("created >= 2026-01-31T18:59:59-05:00", [true, false, false]);
        check("created != 2026-01-31T23:59:59Z", [false, true, true]);
        check(r#"created == "2026-01-31""#, [true, false, false]);
        check(r#"created > '2026-01-31T00:00:00Z'"#, [true, false, false]);
    }

    #[test]
    fn number_operators_and_null() {
        // comment_count: issue 3, bare 0, milestone None.
        check("comment_count == 3", [true, false, false]);
        check("comment_count != 3", [false, true, false]);
        check("comment_count < 3", [false, true, false]);
        check("comment_count <= 3", [true, true, false]);
        check("comment_count > 0", [true, false, false]);
        check("comment_count >= 0", [true, true, false]);
        check("comment_count in [0, 3]", [true, true, false]);
        check("comment_count not in [0]", [true, false, false]);
        check("comment_count in [1, null]", [false, false, true]);
        check("comment_count not in [null]", [true, true, false]);
        check("comment_count == null", [false, false, true]);
        check("comment_count != null", [true, true, false]);
        check("open_issues == 2", [false, false, true]);
        check("open_issues == null", [true, true, false]);
        check("open_issues >= 0", [false, false, true]);
        check("not open_issues >= 0", [true, true, false]);
    }

    #[test]
    fn bool_operators() {
        check("has_comments", [true, false, false]);
        check("has_comments == true", [true, false, false]);
        check("has_comments == FALSE", [false, true, true]);
        check("has_comments != true", [false, true, true]);
        check("has_comments != false", [true, false, false]);
        check("has_milestone", [true, false, false]);
        check("not has_milestone", [false, true, true]);
        check("!has_milestone && !has_comments", [false, true, true]);
        check("(has_milestone)", [true, false, false]);
    }

    #[test]
    fn precedence_not_and_parentheses() {
        // a or b and c == a or (b and c)
        let a = r#"status == "closed""#;
        let b = r#"author == "carol""#;
        let c = r#"comment_count == 3"#;
        check(&format!("{a} or {b} and {c}"), [false, true, false]);
        check(&format!("{a} or ({b} and {c})"), [false, true, false]);
        check(&format!("({a} or {b}) and {c}"), [false, false, false]);
        check(&format!("{c} and {a} or {b}"), [false, false, true]);
        // not binds tighter than and.
        check(&format!("not {a} and {c}"), [true, false, false]);
        check(&format!("not ({a} and {c})"), [true, true, true]);
        check(&format!("not not {a}"), [false, true, false]);
        check(&format!("!({a} || {b})"), [true, false, false]);
        check(&format!("(((({a}))))"), [false, true, false]);
    }

    #[test]
    fn aliases_and_keyword_case() {
        check(
            r#"status == "open" AND labels Contains "bug""#,
            [true, false, false],
        );
        check(
            r#"status == "open" && labels contains "bug""#,
            [true, false, false],
        );
        check(
            r#"author == "bob" Or author == "carol""#,
            [false, true, true],
        );
        check(
            r#"author == "bob" || author == "carol""#,
            [false, true, true],
        );
        check(r#"NOT author == "bob""#, [true, false, true]);
        check(r#"! author == "bob""#, [true, false, true]);
        check(r#"author NOT IN ["bob"]"#, [true, false, true]);
        check("has_comments == True", [true, false, false]);
        check("milestone == Null", [false, true, true]);
        check("comment_count>=1&&comment_count<=3", [true, false, false]);
        check(
            "  \tstatus==\"open\"\n  and\nlabels\tin['bug']  ",
            [true, false, false],
        );
    }

    #[test]
    fn mentions_fields() {
        let filter = parse(r#"not (status == "open" or labels contains "x") and has_comments"#);
        assert!(filter.mentions(Field::Status));
        assert!(filter.mentions(Field::Labels));
        assert!(filter.mentions(Field::HasComments));
        assert!(!filter.mentions(Field::Title));
        assert!(!parse("comment_count > 1").mentions(Field::Status));
    }

    /// An entity whose values never fit their fields.
    struct Mismatched;

    impl Fields for Mismatched {
        fn value(&self, field: Field) -> Value<'_> {
            match field.field_type() {
                FieldType::Bool => Value::Text("true"),
                FieldType::Number => Value::Bool(true),
                _ => Value::Number(Some(1)),
            }
        }
    }

    #[test]
    fn mismatched_values_never_match() {
        for filter in [
            r#"title == "1""#,
            r#"title != "1""#,
            r#"title not in ["1"]"#,
            r#"status != "open""#,
            r#"labels != "x""#,
            r#"labels not in ["x"]"#,
            r#"milestone != "x""#,
            r#"milestone == null"#,
            r#"milestone contains "x""#,
            "created != 2026-01-01",
            "comment_count != 1",
            "comment_count not in [2]",
            "has_comments",
            "has_comments != false",
        ] {
            assert!(!parse(filter).matches(&Mismatched), "{filter}");
        }
    }

    #[test]
    fn errors_point_at_the_offending_token() {
        // (filter, column, a fragment of `expected`, `found`)
        let cases: &[(&str, usize, &str, &str)] = &[
            // Unterminated string: at the opening quote.
            (r#"title == "abc"#, 10, "closing \"", "end of filter"),
            (r#"title == 'abc\'"#, 10, "closing '", "end of filter"),
            (r#"title == "a\qb""#, 12, "escape", r"`\q`"),
            // Missing `]`.
            (r#"labels in ["a", "b""#, 20, "`]` or `,`", "end of filter"),
            (r#"labels in ["a" "b"]"#, 16, "`]` or `,`", r#"`"b"`"#),
            (r#"labels in "a""#, 11, "`[` after `in`", r#"`"a"`"#),
            (r#"labels in []"#, 12, "a value", "`]`"),
            // Unknown field.
            (
                r#"colour == "red""#,
                1,
                "a field name (one of id, title,",
                "`colour`",
            ),
            (
                r#"status == "open" and Status == "open""#,
                22,
                "a field name",
                "`Status`",
            ),
            // `=` instead of `==`.
            (r#"status = "open""#, 8, "== (comparison)", "`=`"),
            // Trailing token.
            (
                r#"status == "open" foo"#,
                18,
                "`and`, `or` or end of filter",
                "`foo`",
            ),
            (
                r#"status == "open")"#,
                17,
                "`and`, `or` or end of filter",
                "`)`",
            ),
            (
                r#"(status == "open""#,
                18,
                "`and`, `or` or `)`",
                "end of filter",
            ),
            (r#"(status == "open" x)"#, 19, "`and`, `or` or `)`", "`x`"),
            // Missing comparison, missing condition.
            (
                r#"title"#,
                6,
                "a comparison (==, !=, <, <=, >, >=, in, not in, contains) after `title`",
                "end of filter",
            ),
            (r#"title "x""#, 7, "a comparison", r#"`"x"`"#),
            (r#"title not "x""#, 11, "`in` after `not`", r#"`"x"`"#),
            (
                r#"status == "open" and"#,
                21,
                "a condition",
                "end of filter",
            ),
            (r#"status == "open" or ) "#, 21, "a condition", "`)`"),
            (
                r#"status == "open" & x"#,
                18,
                "`and`, `or` or end of filter",
                "`&`",
            ),
            // Empty input.
            ("", 1, "a condition", "end of filter"),
            ("   ", 4, "a condition", "end of filter"),
            ("()", 2, "a condition", "`)`"),
            // Bad dates.
            ("created == 2026-02-30", 12, "a valid date", "`2026-02-30`"),
            (
                "created > 2026-01-01T25:00:00Z",
                11,
                "a valid date",
                "`2026-01-01T25:00:00Z`",
            ),
            (
                "created > 2026-01-01T10:00:00",
                11,
                "a valid date",
                "`2026-01-01T10:00:00`",
            ),
            (
                r#"created == "yesterday""#,
                12,
                "a date (YYYY-MM-DD",
                r#"`"yesterday"`"#,
            ),
            (
                r#"created == "2026-02-30""#,
                12,
                "a date",
                r#"`"2026-02-30"`"#,
            ),
            ("created == null", 12, "a date", "`null`"),
            ("created == 2026", 12, "a date", "`2026`"),
            (
                "created in [2026-01-01]",
                9,
                "one of ==, !=, <, <=, >, >= for `created`",
                "`in`",
            ),
            // Ordering and other unsuitable operators.
            (
                r#"labels < "bug""#,
                8,
                "one of ==, !=, in, not in, contains for `labels`",
                "`<`",
            ),
            (
                r#"status >= "open""#,
                8,
                "one of ==, !=, in, not in for `status`",
                "`>=`",
            ),
            (r#"status contains "op""#, 8, "for `status`", "`contains`"),
            (r#"milestone > "v1""#, 11, "for `milestone`", "`>`"),
            (
                "comment_count contains 3",
                15,
                "for `comment_count`",
                "`contains`",
            ),
            (
                "has_comments < true",
                14,
                "one of ==, != for `has_comments`",
                "`<`",
            ),
            (
                "has_comments NOT in [true]",
                14,
                "for `has_comments`",
                "`NOT in`",
            ),
            // Wrong value types.
            ("title == 3", 10, "a string for `title`", "`3`"),
            ("title == null", 10, "a string for `title`", "`null`"),
            (r#"title in ["a", 2]"#, 16, "a string for `title`", "`2`"),
            (
                r#"status == "pending""#,
                11,
                r#""open" or "closed""#,
                r#"`"pending"`"#,
            ),
            (
                "status == open",
                11,
                "a value (string, number, true, false, null or date)",
                "`open`",
            ),
            (
                r#"comment_count == "3""#,
                18,
                "a number or null",
                r#"`"3"`"#,
            ),
            ("comment_count < null", 17, "null only works with", "`null`"),
            ("comment_count == -1", 18, "a value", "`-`"),
            ("comment_count == 3x", 18, "a value", "`3x`"),
            (
                "comment_count == 99999999999999999999",
                18,
                "a number no greater than",
                "`99999999999999999999`",
            ),
            (
                r#"has_comments == "yes""#,
                17,
                "true or false for `has_comments`",
                r#"`"yes"`"#,
            ),
            (
                "milestone == 12",
                14,
                "a string or null for `milestone`",
                "`12`",
            ),
            (r#"labels == null"#, 11, "a string for `labels`", "`null`"),
            // Multi-byte characters count as one column each.
            ("tïtle == \"x\"", 1, "a field name", "`tïtle`"),
            (
                "title == \"é\" ⊕",
                14,
                "`and`, `or` or end of filter",
                "`⊕`",
            ),
            ("\"ü\" == title", 1, "a condition", "`\"ü\"`"),
        ];
        for &(filter, column, expected, found) in cases {
            let e = error(filter);
            assert_eq!(e.column, column, "column for `{filter}`: {e}");
            assert!(
                e.expected.contains(expected),
                "expected for `{filter}` should mention {expected:?}: {e}"
            );
            assert_eq!(e.found, found, "found for `{filter}`: {e}");
        }
    }

    #[test]
    fn bare_words_get_their_quoted_form_suggested() {
        let e = error("status == open");
        assert_eq!(e.column, 11);
        assert_eq!(e.suggestion.as_deref(), Some(r#"status == "open""#));
        assert_eq!(
            e.to_string(),
            "filter error at column 11: expected a value (string, number, true, false, null or \
             date), found `open`; did you mean `status == \"open\"`?"
        );
        let long = format!("title == {}", "w".repeat(60));
        let cases: &[(&str, Option<&str>)] = &[
            ("labels contains bug", Some(r#"labels contains "bug""#)),
            ("labels != in-progress", Some(r#"labels != "in-progress""#)),
            ("title == v1.2 and status", Some(r#"title == "v1.2""#)),
            ("status in [open, closed]", Some(r#""open""#)),
            ("milestone == Alpha", Some(r#"milestone == "Alpha""#)),
            // Fields that take no strings: quoting would not help.
            ("has_comments == yes", None),
            ("comment_count > many", None),
            ("comment_count in [one]", None),
            // Too long to quote back whole.
            (&long, None),
        ];
        for &(filter, suggestion) in cases {
            assert_eq!(error(filter).suggestion.as_deref(), suggestion, "{filter}");
        }
        // Errors of another kind suggest nothing.
        assert_eq!(error(r#"status = "open""#).suggestion, None);
        assert_eq!(error("title == 12").suggestion, None);
        // What is suggested parses.
        for filter in [
            "status == open",
            "labels != in-progress",
            "milestone == Alpha",
        ] {
            let suggested = error(filter).suggestion.unwrap();
            parse(&suggested);
        }
    }

    #[test]
    fn error_message_format() {
        let e = error(r#"status = "open""#);
        assert_eq!(
            e.to_string(),
            "filter error at column 8: expected == (comparison), found `=`"
        );
        let e = error("nope");
        assert_eq!(
            e.expected,
            format!("a field name (one of {})", Field::names())
        );
    }

    #[test]
    fn nesting_and_length_limits() {
        let ok = format!(
            "{}has_comments{}",
            "(".repeat(MAX_DEPTH),
            ")".repeat(MAX_DEPTH)
        );
        assert!(parse(&ok).matches(&issue()));
        let deep = format!(
            "{}has_comments{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        let e = error(&deep);
        assert_eq!(e.column, MAX_DEPTH + 1);
        assert!(e.expected.contains("nesting"), "{e}");
        assert_eq!(e.found, "`(`");

        let nots = format!("{}has_comments", "not ".repeat(MAX_DEPTH));
        assert!(parse(&nots).matches(&issue()));
        let e = error(&format!("{}has_comments", "!".repeat(MAX_DEPTH + 1)));
        assert_eq!(e.column, MAX_DEPTH + 1);
        assert!(e.expected.contains("nesting"), "{e}");

        // Far deeper than the limit, within the length limit: an error, not a stack overflow.
        let e = error(&"(".repeat(MAX_INPUT_CHARS));
        assert_eq!(e.column, MAX_DEPTH + 1);

        let long = format!("title == \"{}\"", "x".repeat(MAX_INPUT_CHARS));
        let e = error(&long);
        assert_eq!(e.column, MAX_INPUT_CHARS + 1);
        assert!(e.expected.contains("at most 4096 characters"), "{e}");
        let just_fits = format!("title == \"{}\"", "x".repeat(MAX_INPUT_CHARS - 11));
        assert_eq!(just_fits.chars().count(), MAX_INPUT_CHARS);
        assert!(!parse(&just_fits).matches(&issue()));
    }

    #[test]
    fn long_tokens_are_shortened_in_errors() {
        let e = error(&format!("title == {}", "y".repeat(100)));
        assert_eq!(e.found, format!("`{}…`", "y".repeat(MAX_FOUND_CHARS)));
    }

    #[test]
    fn every_prefix_parses_or_errors_without_panicking() {
        let filters = [
            r#"not (status == "open" || labels in ["bug", 'ui',]) AND milestone != null"#,
            r#"created >= 2026-01-31T23:59:59.123+01:00 and updated < "2026-02-01" or has_comments"#,
            r#"title contains "héllo — \"wörld\"\t" && comment_count not in [1, 2, null]"#,
            "!(has_milestone)||open_issues<=10&&author>'m'",
        ];
        for filter in filters {
            let full = parse(filter);
            let _ = full.matches(&issue());
            let chars: Vec<char> = filter.chars().collect();
            for end in 0..=chars.len() {
                let prefix: String = chars[..end].iter().collect();
                match Filter::parse(&prefix) {
                    Ok(parsed) => {
                        let _ = parsed.matches(&issue());
                    }
                    Err(e) => {
                        assert!(
                            (1..=end + 1).contains(&e.column),
                            "column {} out of range for `{prefix}`",
                            e.column
                        );
                    }
                }
                // The same prefix followed by garbage must not panic either.
                let _ = Filter::parse(&format!("{prefix}\u{1F600}\"\\"));
            }
        }
    }

    #[test]
    fn random_token_soup_never_panics() {
        let pieces = [
            "status",
            "title",
            "labels",
            "milestone",
            "created",
            "comment_count",
            "has_comments",
            "==",
            "!=",
            "<",
            "<=",
            ">",
            ">=",
            "=",
            "!",
            "&&",
            "||",
            "&",
            "|",
            "and",
            "OR",
            "not",
            "in",
            "contains",
            "(",
            ")",
            "[",
            "]",
            ",",
            "\"open\"",
            "'x",
            "\"",
            "\\",
            "3",
            "2026-01-31",
            "2026-02-30",
            "2026-01-31T00:00:00Z",
            "null",
            "true",
            "é",
            "🦀",
            " ",
            "\t",
            "99999999999999999999999",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5000 {
            let mut filter = String::new();
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 60) as usize + 1;
            for _ in 0..len {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                filter.push_str(pieces[(state >> 33) as usize % pieces.len()]);
                if state & 1 == 0 {
                    filter.push(' ');
                }
            }
            match Filter::parse(&filter) {
                Ok(parsed) => {
                    let _ = parsed.matches(&issue());
                    let _ = parsed.matches(&Mismatched);
                }
                Err(e) => assert!(
                    (1..=filter.chars().count() + 1).contains(&e.column),
                    "column {} out of range for `{filter}`",
                    e.column
                ),
            }
        }
    }
}
