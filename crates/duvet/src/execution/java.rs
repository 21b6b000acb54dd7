//! duvet 0.4.3's Java line classifier: tree-sitter-java's syntax tree read into each line's
//! properties (its `LineProperty` sets) and the ordered stream of scope braces.
//!
//! * Blank lines are `Whitespace`; lines whose trimmed text starts `//=` or `//#` are
//!   `Annotation` (the default prefixes, whatever the configuration says, as 0.4.3 does).
//! * Every node of the tree, in document order, stamps its lines by kind: declarations
//!   (types, methods, constructors, `static { … }`) are `Declaration` up to the line their body
//!   opens on; statements are `Statement` over all their lines, control statements (`if`,
//!   loops, `switch`, an arrow `case`) on their first line; `try`/`catch`/`finally` are
//!   `Declaration` on their first line; a local or field is `Declaration`, and `Statement` too
//!   when a declarator has a value; a block-like body is `ScopeOpen` on its `{` line and
//!   `ScopeClose` on its `}` line; comments are `Comment`; `import`, `package`, Java
//!   annotations and enum constants are `Declaration` (a constant with arguments `Statement`
//!   too); a labelled statement is `NonLinearControl` on its first line. A line no node
//!   stamps stays unclassified (`None`).
//! * Then the post-pass: a line that is an annotation, blank, or a comment on which no code
//!   node starts loses `Statement`, `Declaration` and `NonLinearControl`; a code line with a
//!   trailing comment loses `Comment`. Scope braces are never removed.
//! * The scope stream has one event per brace of every block-like node, in byte order, so a
//!   line such as `} finally {}` keeps its three braces.
//! * A tree with `ERROR` or `MISSING` nodes is refused: the lines those nodes start on, sorted
//!   and each once, are the outcome instead.
//!
//! The walk is iterative, so no nesting depth exhausts the stack; nothing here panics.

use std::fmt;

use tree_sitter::{Node, Parser, Tree};

/// One property of a line (0.4.3's `LineProperty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Property {
    Statement,
    Declaration,
    ScopeOpen,
    ScopeClose,
    Comment,
    Annotation,
    Whitespace,
    NonLinearControl,
}

impl Property {
    const ALL: [Self; 8] = [
        Self::Statement,
        Self::Declaration,
        Self::ScopeOpen,
        Self::ScopeClose,
        Self::Comment,
        Self::Annotation,
        Self::Whitespace,
        Self::NonLinearControl,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Property`] (0.4.3's `LineClass`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LineClass(u8);

impl LineClass {
    pub fn of(properties: &[Property]) -> Self {
        let mut class = Self::default();
        for &p in properties {
            class.insert(p);
        }
        class
    }

    pub fn contains(self, p: Property) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn insert(&mut self, p: Property) {
        self.0 |= p.bit();
    }

    pub fn remove(&mut self, p: Property) {
        self.0 &= !p.bit();
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set is exactly `{p}`.
    pub fn is_only(self, p: Property) -> bool {
        self.0 == p.bit()
    }
}

impl fmt::Debug for LineClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(Property::ALL.iter().filter(|p| self.contains(**p)))
            .finish()
    }
}

/// One scope brace: its 1-based line, and whether it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeEvent {
    pub line: usize,
    pub opens: bool,
}

/// A file the classifier could read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// Per line (index = line - 1): its properties, `None` when unclassified.
    pub lines: Vec<Option<LineClass>>,
    /// Every scope brace, in source order.
    pub events: Vec<ScopeEvent>,
}

/// What the classifier makes of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Classified(Classified),
    /// The parser found syntax errors: the lines they start on, sorted, each once, never
    /// empty (line 1 when the parser gave no tree at all).
    ParseErrors(Vec<usize>),
}

/// Classify the Java source `source`.
pub fn classify(source: &str) -> Outcome {
    let lines: Vec<&str> = source.lines().collect();
    let Some(tree) = parse(source) else {
        return Outcome::ParseErrors(vec![1]);
    };
    let root = tree.root_node();
    if root.has_error() {
        let mut errors = Vec::new();
        for_each_node(&tree, |node| {
            if node.is_error() || node.is_missing() {
                errors.push(node.start_position().row.saturating_add(1));
            }
        });
        if errors.is_empty() {
            errors.push(1);
        }
        errors.sort_unstable();
        errors.dedup();
        return Outcome::ParseErrors(errors);
    }

    let mut walk = Walk::new(&lines);
    let mut keyed: Vec<(usize, ScopeEvent)> = Vec::new();
    for_each_node(&tree, |node| {
        walk.node(node);
        if is_scope_kind(node.kind()) {
            keyed.push((
                node.start_byte(),
                ScopeEvent {
                    line: line_of(node.start_position().row),
                    opens: true,
                },
            ));
            keyed.push((
                node.end_byte().saturating_sub(1),
                ScopeEvent {
                    line: line_of(node.end_position().row),
                    opens: false,
                },
            ));
        }
    });
    keyed.sort_by_key(|(byte, _)| *byte);
    Outcome::Classified(Classified {
        lines: walk.finish(),
        events: keyed.into_iter().map(|(_, event)| event).collect(),
    })
}

/// tree-sitter-java's tree of `source`; `None` when the grammar cannot be loaded or the
/// parser gives up (neither happens with the pinned versions).
fn parse(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_java::LANGUAGE.into())
        .ok()?;
    parser.parse(source, None)
}

/// Call `visit` on every node of `tree` (named or not), parents before children, in
/// document order, without recursion.
fn for_each_node<'t>(tree: &'t Tree, mut visit: impl FnMut(Node<'t>)) {
    let mut cursor = tree.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn line_of(row: usize) -> usize {
    row.saturating_add(1)
}

/// The node kinds whose braces delimit a scope.
fn is_scope_kind(kind: &str) -> bool {
    matches!(
        kind,
        "block"
            | "class_body"
            | "interface_body"
            | "enum_body"
            | "switch_block"
            | "constructor_body"
    )
}

/// The per-line state of the walk (1-based). A stamp over lines is two entries of a
/// difference table, so stamping costs the same however many lines a node spans.
struct Walk {
    lines: usize,
    /// Whether a line is a duvet annotation line.
    annotation: Vec<bool>,
    /// Per line and property: stamps starting there minus stamps ending just before.
    delta: Vec<[isize; 8]>,
    /// Lines on which a code or structural node starts.
    code_start: Vec<bool>,
}

impl Walk {
    fn new(lines: &[&str]) -> Self {
        let n = lines.len();
        let mut walk = Self {
            lines: n,
            annotation: vec![false; n + 1],
            delta: vec![[0; 8]; n + 2],
            code_start: vec![false; n + 1],
        };
        for (index, line) in lines.iter().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                walk.mark(index + 1, index + 1, Property::Whitespace);
            } else if trimmed.starts_with("//=") || trimmed.starts_with("//#") {
                walk.mark(index + 1, index + 1, Property::Annotation);
                walk.annotation[index + 1] = true;
            }
        }
        walk
    }

    /// Stamp `p` on lines `start..=end` (those past the end are ignored).
    fn mark(&mut self, start: usize, end: usize, p: Property) {
        let end = end.min(self.lines);
        if start == 0 || start > end {
            return;
        }
        let p = p as usize;
        if let Some(d) = self.delta.get_mut(start) {
            d[p] += 1;
        }
        if let Some(d) = self.delta.get_mut(end + 1) {
            d[p] -= 1;
        }
    }

    /// Stamp one node's lines by its kind.
    fn node(&mut self, node: Node<'_>) {
        use Property::*;
        let start = line_of(node.start_position().row);
        let end = line_of(node.end_position().row);
        let marks_code = match node.kind() {
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "static_initializer" => {
                self.declaration_with_scope(node, start, end);
                true
            }
            "expression_statement"
            | "return_statement"
            | "throw_statement"
            | "assert_statement"
            | "break_statement"
            | "continue_statement"
            | "yield_statement" => {
                self.mark(start, end, Statement);
                true
            }
            "if_statement"
            | "for_statement"
            | "enhanced_for_statement"
            | "while_statement"
            | "do_statement"
            | "switch_expression"
            | "switch_rule" => {
                self.mark(start, start, Statement);
                true
            }
            "try_statement" | "catch_clause" | "finally_clause" => {
                self.mark(start, start, Declaration);
                true
            }
            "local_variable_declaration" | "field_declaration" => {
                self.mark(start, end, Declaration);
                if has_initializer(node) {
                    self.mark(start, end, Statement);
                }
                true
            }
            kind if is_scope_kind(kind) => {
                self.mark(start, start, ScopeOpen);
                self.mark(end, end, ScopeClose);
                true
            }
            "line_comment" => {
                if !self.annotation.get(start).copied().unwrap_or(false) {
                    self.mark(start, end, Comment);
                }
                false
            }
            "block_comment" => {
                self.mark(start, end, Comment);
                false
            }
            "import_declaration" | "package_declaration" | "marker_annotation" | "annotation" => {
                self.mark(start, end, Declaration);
                true
            }
            "enum_constant" => {
                self.mark(start, end, Declaration);
                if has_child_kind(node, "argument_list") {
                    self.mark(start, end, Statement);
                }
                true
            }
            "labeled_statement" => {
                self.mark(start, start, NonLinearControl);
                true
            }
            _ => false,
        };
        if marks_code && let Some(code_start) = self.code_start.get_mut(start) {
            *code_start = true;
        }
    }

    /// A declaration that may have a body: `Declaration` on its lines before the body's
    /// line (and on that line when the body opens on the first line); all of its lines when
    /// it has no body.
    fn declaration_with_scope(&mut self, node: Node<'_>, start: usize, end: usize) {
        let mut cursor = node.walk();
        let body = node.children(&mut cursor).find(|child| {
            matches!(
                child.kind(),
                "class_body" | "interface_body" | "enum_body" | "block" | "constructor_body"
            )
        });
        match body {
            Some(body) => {
                let body_start = line_of(body.start_position().row);
                if body_start > start {
                    self.mark(start, body_start - 1, Property::Declaration);
                } else if body_start == start {
                    self.mark(start, start, Property::Declaration);
                }
            }
            None => self.mark(start, end, Property::Declaration),
        }
    }

    /// The post-pass, and the lines as 0-indexed classes (`None`: never stamped).
    fn finish(self) -> Vec<Option<LineClass>> {
        use Property::*;
        let mut counts = [0isize; 8];
        let mut out = Vec::with_capacity(self.lines);
        for line in 1..=self.lines {
            let mut props = LineClass::default();
            for p in Property::ALL {
                counts[p as usize] += self.delta[line][p as usize];
                if counts[p as usize] > 0 {
                    props.insert(p);
                }
            }
            if props.is_empty() {
                out.push(None);
                continue;
            }
            let comment = props.contains(Comment);
            if props.contains(Annotation)
                || props.contains(Whitespace)
                || (comment && !self.code_start[line])
            {
                props.remove(Statement);
                props.remove(Declaration);
                props.remove(NonLinearControl);
            } else if comment {
                props.remove(Comment);
            }
            out.push(Some(props));
        }
        out
    }
}

fn has_child_kind(node: Node<'_>, kind: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|child| child.kind() == kind)
}

/// Whether a local or field declaration has a declarator with a value (`int x = 5;`).
fn has_initializer(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|child| {
        child.kind() == "variable_declarator" && child.child_by_field_name("value").is_some()
    })
}

#[cfg(test)]
#[path = "java_tests.rs"]
mod tests;
