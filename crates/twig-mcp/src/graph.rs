//! The branch dependency graph as twig builds it, and its tree rendering.
//!
//! - Nodes are the local git branches; a declared dependency is an edge when both branches
//!   exist. Children are sorted by name.
//! - A branch with several parents is shown under each of them: in full (with its subtree)
//!   under its primary parent (the first declared one that exists), as a marked repeat without
//!   children under the others — so a reader sees one branch, not two. When the primary parent
//!   is not in the tree drawn, the first other parent reached shows it in full.
//! - Orphans — branches without an existing parent that are not configured roots: when a
//!   root is marked default (`twig branch root add B --default`) and git has it, they are
//!   drawn as its children, as `twig tree` draws them, but marked `[orphan]` (with a note
//!   under the tree) so that no one reads a dependency on the root that no edge declares;
//!   otherwise they are a separate group, as `twig tree` lists them then.
//! - Root candidates: the configured roots that exist (the default one first), else the
//!   checked-out branch, else the first branch by name.

// foldhash, not std's SipHash: the tree hashes every name several times per call, and no
// name comes from a network peer (the repository's own refs and state file).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::{
    health,
    state::LoadedState,
    types::{BranchHealth, BranchTreeNode, BranchTreeResponse},
};

/// The deepest level of the tree that is expanded.
pub const MAX_DEPTH: usize = 40;
/// The most branches one tree shows.
pub const MAX_NODES: usize = 5000;

/// The most other parents a branch names (`also_under`); beyond, the branch is marked cut.
pub const MAX_ALSO_UNDER: usize = 10;

/// The health of each branch, for the badges `get_branch_tree` adds with `health: true`.
#[derive(Debug, Default)]
pub struct Badges {
    by_branch: HashMap<String, BranchHealth>,
}

impl Badges {
    pub fn of(branches: Vec<BranchHealth>) -> Self {
        Self {
            by_branch: branches
                .into_iter()
                .map(|h| (h.branch.clone(), h))
                .collect(),
        }
    }

    /// The badges of `branch` drawn under `under`: ahead/behind against that parent (the
    /// primary one when it is drawn elsewhere), then its status.
    fn text(&self, branch: &str, under: Option<&str>) -> Option<String> {
        let text = health::badges(self.by_branch.get(branch)?, under);
        (!text.is_empty()).then_some(text)
    }
}

/// State of one tree walk.
struct Walk<'a> {
    /// Branches shown in full so far.
    seen: HashSet<&'a str>,
    /// Branches shown in full under a parent other than their primary one.
    shown_under: HashMap<&'a str, &'a str>,
    /// Branches the primary edges reach from the root: shown in full under their primary parent.
    primary_reach: HashSet<&'a str>,
    /// Branches whose children were not all shown.
    cut: HashSet<&'a str>,
    budget: usize,
}

/// The graph of one call, its names borrowed from the list of local branches it was built from.
#[derive(Debug, Default)]
pub struct BranchGraph<'a> {
    /// branch → its existing parents, the primary first. Every node has an entry.
    parents: HashMap<&'a str, Vec<&'a str>>,
    /// branch → every child (primary or not), sorted by name.
    children: HashMap<&'a str, Vec<&'a str>>,
    orphans: Vec<String>,
    /// The orphans drawn under the default root (then `orphans` is empty).
    adopted: HashSet<&'a str>,
    /// The root marked default, when git has it.
    default_root: Option<String>,
    root_candidates: Vec<String>,
}

impl<'a> BranchGraph<'a> {
    pub fn build(local_branches: &'a [String], state: &LoadedState, head: Option<&str>) -> Self {
        let exists: HashSet<&'a str> = local_branches.iter().map(String::as_str).collect();
        let mut parents: HashMap<&'a str, Vec<&'a str>> =
            HashMap::with_capacity(local_branches.len());
        let mut children: HashMap<&'a str, Vec<&'a str>> = local_branches
            .iter()
            .map(|name| (name.as_str(), Vec::new()))
            .collect();
        for child in local_branches {
            let child = child.as_str();
            let mut own: Vec<&'a str> = Vec::new();
            // The state's parents of a child are distinct already.
            for parent in state.parents(child) {
                if let Some(&parent) = exists.get(parent)
                    && parent != child
                {
                    own.push(parent);
                    if let Some(list) = children.get_mut(parent) {
                        list.push(child);
                    }
                }
            }
            parents.insert(child, own);
        }
        for list in children.values_mut() {
            list.sort_unstable();
        }
        let configured: HashSet<&str> = state.root_names().collect();
        let mut orphans: Vec<&'a str> = local_branches
            .iter()
            .map(String::as_str)
            .filter(|name| {
                parents.get(name).is_none_or(Vec::is_empty) && !configured.contains(name)
            })
            .collect();
        orphans.sort_unstable();
        // With a default root git has (`twig branch root add B --default`), `twig tree` draws
        // the orphans under it (twig's resolver makes them its children): so do we, marked.
        let default_root: Option<&'a str> = state
            .state
            .root_branches
            .iter()
            .find(|r| r.is_default)
            .and_then(|r| exists.get(r.branch.as_str()).copied());
        let mut adopted = HashSet::new();
        if let Some(root) = default_root
            && !orphans.is_empty()
        {
            for &orphan in &orphans {
                parents.insert(orphan, vec![root]);
            }
            if let Some(list) = children.get_mut(root) {
                list.extend(orphans.iter().copied());
                list.sort_unstable();
            }
            adopted = std::mem::take(&mut orphans).into_iter().collect();
        }
        let orphans: Vec<String> = orphans.into_iter().map(str::to_string).collect();
        let default_root = default_root.map(str::to_string);

        let mut root_candidates: Vec<String> = state
            .root_names()
            .filter(|root| exists.contains(root))
            .map(str::to_string)
            .collect();
        if root_candidates.is_empty()
            && let Some(head) = head.filter(|h| exists.contains(h))
        {
            root_candidates.push(head.to_string());
        }
        if root_candidates.is_empty()
            && let Some(first) = local_branches.iter().min()
        {
            root_candidates.push(first.clone());
        }
        let mut unique = HashSet::new();
        root_candidates.retain(|root| unique.insert(root.clone()));
        // The default root first: the tree drawn when no root is asked for (its orphans too).
        if let Some(at) = default_root
            .as_ref()
            .and_then(|root| root_candidates.iter().position(|r| r == root))
        {
            let root = root_candidates.remove(at);
            root_candidates.insert(0, root);
        }
        Self {
            parents,
            children,
            orphans,
            adopted,
            default_root,
            root_candidates,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    pub fn contains(&self, branch: &str) -> bool {
        self.children.contains_key(branch)
    }

    pub fn root_candidates(&self) -> &[String] {
        &self.root_candidates
    }

    /// Branches without an existing parent that are not configured roots, by name.
    pub fn orphans(&self) -> &[String] {
        &self.orphans
    }

    fn primary_parent(&self, branch: &str) -> Option<&'a str> {
        self.parents.get(branch).and_then(|p| p.first()).copied()
    }

    /// The tree below `root` as data and as text; `orphans` says whether the repository's
    /// orphans are listed after it, `badges` adds health badges to the text. The tree stops at
    /// [`MAX_DEPTH`] levels and [`MAX_NODES`] branches: beyond, a cut branch ends with ` …`
    /// in the text and `truncated` is set (this also bounds the recursion and the JSON
    /// nesting, which clients parse with recursion limits).
    pub fn tree(
        &self,
        root: &str,
        state: &LoadedState,
        orphans: bool,
        badges: Option<&Badges>,
    ) -> BranchTreeResponse {
        let mut walk = Walk {
            seen: HashSet::new(),
            shown_under: HashMap::new(),
            primary_reach: self.primary_reach(root),
            cut: HashSet::new(),
            budget: MAX_NODES,
        };
        let node = self.node(root, None, state, 0, &mut walk);
        let mut tree_text = String::new();
        render(&node, "", None, None, &walk.cut, badges, &mut tree_text);
        if let Some(default_root) = &self.default_root
            && walk.seen.iter().any(|name| self.adopted.contains(*name))
        {
            tree_text.push_str(&format!(
                "\n[orphan]: no parent git has; drawn under the default root {default_root} as `twig tree` draws it, not a dependency\n"
            ));
        }
        let orphans: Vec<String> = if orphans {
            self.orphans
                .iter()
                .filter(|o| *o != root)
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        if !orphans.is_empty() {
            tree_text.push_str("\nOrphaned branches (no dependencies defined):\n");
            for orphan in &orphans {
                tree_text.push_str("  • ");
                tree_text.push_str(&labelled(orphan, state, badges));
                tree_text.push('\n');
            }
        }
        BranchTreeResponse {
            root: root.to_string(),
            tree_text,
            branches: vec![node],
            orphans,
            truncated: !walk.cut.is_empty(),
        }
    }

    /// The branches reached from `root` through primary edges only.
    fn primary_reach<'b>(&'b self, root: &'b str) -> HashSet<&'b str> {
        let mut reach = HashSet::with_capacity(self.children.len());
        reach.insert(root);
        let mut pending = vec![root];
        while let Some(name) = pending.pop() {
            for child in self.children.get(name).into_iter().flatten() {
                if self.primary_parent(child) == Some(name) && reach.insert(*child) {
                    pending.push(child);
                }
            }
        }
        reach
    }

    /// `name` in full, shown under `under` (`None` for the tree's root).
    fn node<'b>(
        &'b self,
        name: &'b str,
        under: Option<&str>,
        state: &LoadedState,
        depth: usize,
        walk: &mut Walk<'b>,
    ) -> BranchTreeNode {
        walk.seen.insert(name);
        walk.budget = walk.budget.saturating_sub(1);
        let mut children = Vec::new();
        for &child in self.children.get(name).into_iter().flatten() {
            let primary = self.primary_parent(child) == Some(name);
            // In full here: under its primary parent, or under the first other parent reached
            // when the primary parent is not in this tree. Elsewhere: a repeat.
            let full =
                !walk.seen.contains(child) && (primary || !walk.primary_reach.contains(child));
            let shown_elsewhere = !full && !primary;
            if !full && !shown_elsewhere {
                continue; // a cycle back to a branch already shown
            }
            if depth + 1 >= MAX_DEPTH || walk.budget == 0 {
                walk.cut.insert(name);
                break;
            }
            if full {
                if !primary {
                    walk.shown_under.insert(child, name);
                }
                children.push(self.node(child, Some(name), state, depth + 1, walk));
            } else {
                walk.budget = walk.budget.saturating_sub(1);
                let under = walk
                    .shown_under
                    .get(child)
                    .copied()
                    .or_else(|| self.primary_parent(child));
                let mut repeat = leaf(child, state);
                repeat.repeat = true;
                repeat.shown_under = under.map(str::to_string);
                children.push(repeat);
            }
        }
        let mut node = leaf(name, state);
        node.children = children;
        node.orphan = self.adopted.contains(name);
        if let Some(under) = under {
            let others = self
                .parents
                .get(name)
                .into_iter()
                .flatten()
                .filter(|p| **p != under);
            node.also_under = others
                .clone()
                .take(MAX_ALSO_UNDER)
                .map(|p| p.to_string())
                .collect();
            node.also_under_more = others.count().saturating_sub(MAX_ALSO_UNDER) as u64;
            if node.also_under_more > 0 {
                walk.cut.insert(name);
            }
        }
        node
    }
}

/// A node without children.
fn leaf(name: &str, state: &LoadedState) -> BranchTreeNode {
    let meta = state.meta(name);
    BranchTreeNode {
        branch: name.to_string(),
        children: Vec::new(),
        jira_issue: meta.and_then(|m| m.jira_issue.as_deref().map(str::to_string)),
        pr_number: meta.and_then(|m| m.github_pr),
        repeat: false,
        shown_under: None,
        also_under: Vec::new(),
        also_under_more: 0,
        orphan: false,
    }
}

/// A branch's label: its links and, when asked, its health badges.
fn labelled(name: &str, state: &LoadedState, badges: Option<&Badges>) -> String {
    let meta = state.meta(name);
    let mut label = annotate(
        name,
        meta.and_then(|m| m.jira_issue.as_deref()),
        meta.and_then(|m| m.github_pr),
    );
    if let Some(badge) = badges.and_then(|b| b.text(name, None)) {
        label.push_str("  ");
        label.push_str(&badge);
    }
    label
}

/// `name (PROJ-1, #42)`, `name (PROJ-1)`, `name (#42)` or `name`.
pub fn annotate(branch: &str, jira_issue: Option<&str>, pr_number: Option<u32>) -> String {
    let mut label = String::new();
    annotate_into(&mut label, branch, jira_issue, pr_number);
    label
}

/// [`annotate`], appended to `out`.
fn annotate_into(out: &mut String, branch: &str, jira_issue: Option<&str>, pr_number: Option<u32>) {
    out.push_str(branch);
    match (jira_issue, pr_number) {
        (None, None) => {}
        (issue, pr) => {
            out.push_str(" (");
            if let Some(issue) = issue {
                out.push_str(issue);
            }
            if let Some(pr) = pr {
                if issue.is_some() {
                    out.push_str(", ");
                }
                out.push('#');
                out.push_str(&pr.to_string());
            }
            out.push(')');
        }
    }
}

/// Draw `node` (under `under`) with `├── `, `└── ` and `│   `; `is_last` is `None` for the root; a branch in
/// `cut` gets ` …`, a repeat `[repeat: in full under P]`, a branch with other parents
/// `[also under: Q]`.
fn render(
    node: &BranchTreeNode,
    prefix: &str,
    is_last: Option<bool>,
    under: Option<&str>,
    cut: &HashSet<&str>,
    badges: Option<&Badges>,
    out: &mut String,
) {
    let child_prefix = match is_last {
        None => String::new(),
        Some(last) => {
            out.push_str(prefix);
            out.push_str(if last { "└── " } else { "├── " });
            let mut child_prefix = String::with_capacity(prefix.len() + 6);
            child_prefix.push_str(prefix);
            child_prefix.push_str(if last { "    " } else { "│   " });
            child_prefix
        }
    };
    annotate_into(
        out,
        &node.branch,
        node.jira_issue.as_deref(),
        node.pr_number,
    );
    if node.repeat {
        match &node.shown_under {
            Some(under) => {
                out.push_str(" [repeat: in full under ");
                out.push_str(under);
                out.push(']');
            }
            None => out.push_str(" [repeat]"),
        }
    } else if !node.also_under.is_empty() {
        out.push_str(" [also under: ");
        out.push_str(&node.also_under.join(", "));
        out.push(']');
    }
    if node.orphan {
        out.push_str(" [orphan]");
    }
    if let Some(badge) = badges.and_then(|b| b.text(&node.branch, under)) {
        out.push_str("  ");
        out.push_str(&badge);
    }
    if cut.contains(node.branch.as_str()) {
        out.push_str(" …");
    }
    out.push('\n');
    let count = node.children.len();
    for (i, child) in node.children.iter().enumerate() {
        let under = Some(node.branch.as_str());
        render(
            child,
            &child_prefix,
            Some(i + 1 == count),
            under,
            cut,
            badges,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RepoState;

    fn state(json: &str) -> LoadedState {
        LoadedState::new(serde_json::from_str::<RepoState>(json).unwrap())
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn renders_dependencies_and_lists_orphans_apart_without_a_default_root() {
        let json = r#"{"branches":{"feat/a":{"branch":"feat/a","jira_issue":"PROJ-1","github_pr":42,"created_at":"x"},
                            "feat/a2":{"branch":"feat/a2","github_pr":43,"created_at":"x"}},
                "dependencies":[{"id":"1","child":"feat/a2","parent":"feat/a","created_at":"x"},
                                {"id":"2","child":"feat/a","parent":"main","created_at":"x"},
                                {"id":"3","child":"gone","parent":"main","created_at":"x"}],
                "root_branches":[{"id":"4","branch":"main","is_default":false,"created_at":"x"}]}"#;
        let state = state(json);
        let local = names(&["feat/a", "feat/a2", "main", "stray", "zeta"]);
        let graph = BranchGraph::build(&local, &state, Some("feat/a2"));
        assert_eq!(graph.root_candidates(), ["main"]);
        let tree = graph.tree("main", &state, true, None);
        assert_eq!(
            tree.tree_text,
            "main\n└── feat/a (PROJ-1, #42)\n    └── feat/a2 (#43)\n\n\
             Orphaned branches (no dependencies defined):\n  • stray\n  • zeta\n"
        );
        assert_eq!(tree.branches[0].children.len(), 1);
        assert_eq!(tree.orphans, ["stray", "zeta"]);
        let subtree = graph.tree("feat/a", &state, false, None);
        assert!(subtree.orphans.is_empty() && !subtree.tree_text.contains("Orphaned"));

        // The same root marked default: twig draws the orphans under it; so do we, marked.
        let state =
            super::tests::state(&json.replace(r#""is_default":false"#, r#""is_default":true"#));
        let graph = BranchGraph::build(&local, &state, Some("feat/a2"));
        let tree = graph.tree("main", &state, true, None);
        assert_eq!(
            tree.tree_text,
            "main\n├── feat/a (PROJ-1, #42)\n│   └── feat/a2 (#43)\n├── stray [orphan]\n└── zeta [orphan]\n\n\
             [orphan]: no parent git has; drawn under the default root main as `twig tree` draws it, not a dependency\n"
        );
        assert!(tree.orphans.is_empty());
        let kids = &tree.branches[0].children;
        assert_eq!(
            kids.iter()
                .map(|k| (k.branch.as_str(), k.orphan))
                .collect::<Vec<_>>(),
            [("feat/a", false), ("stray", true), ("zeta", true)]
        );
        // A subtree without the default root has no orphans and no note.
        let subtree = graph.tree("feat/a", &state, false, None);
        assert!(
            !subtree.tree_text.contains("orphan"),
            "{}",
            subtree.tree_text
        );
    }

    #[test]
    fn root_falls_back_to_head_then_first_branch() {
        let empty = state("{}");
        let local = names(&["b", "a"]);
        assert_eq!(
            BranchGraph::build(&local, &empty, Some("b")).root_candidates(),
            ["b"]
        );
        assert_eq!(
            BranchGraph::build(&local, &empty, None).root_candidates(),
            ["a"],
            "first branch by name"
        );
    }

    #[test]
    fn a_branch_with_two_parents_is_shown_in_full_under_its_primary_and_repeated_under_the_other() {
        let state = state(
            r#"{"dependencies":[{"child":"x","parent":"zed"},{"child":"x","parent":"main"},
                                {"child":"zed","parent":"main"},{"child":"y","parent":"gone"},
                                {"child":"y","parent":"zed"}],
                "root_branches":[{"branch":"main","is_default":true},{"branch":"main","is_default":false}]}"#,
        );
        let local = names(&["main", "x", "y", "zed"]);
        let graph = BranchGraph::build(&local, &state, None);
        assert_eq!(
            graph.root_candidates(),
            ["main"],
            "a root listed twice is one root"
        );
        let tree = graph.tree("main", &state, true, None);
        assert_eq!(
            tree.tree_text,
            "main\n├── x [repeat: in full under zed]\n└── zed\n    ├── x [also under: main]\n    └── y\n",
            "x in full under zed (first declared), repeated under main; y under zed (its first parent that exists)"
        );
        let main = &tree.branches[0];
        assert!(main.children[0].repeat && main.children[0].children.is_empty());
        assert_eq!(main.children[0].shown_under.as_deref(), Some("zed"));
        assert_eq!(main.children[1].children[0].also_under, ["main"]);
        // Drawn from `main`'s other child only, x's primary parent is in the tree: x in full.
        let from_zed = graph.tree("zed", &state, false, None);
        assert_eq!(from_zed.tree_text, "zed\n├── x [also under: main]\n└── y\n");
    }

    #[test]
    fn deep_chains_are_cut_and_flagged() {
        let deps: Vec<String> = (1..200)
            .map(|i| format!(r#"{{"child":"b{i:03}","parent":"b{:03}"}}"#, i - 1))
            .collect();
        let state = state(&format!(r#"{{"dependencies":[{}]}}"#, deps.join(",")));
        let local: Vec<String> = (0..200).map(|i| format!("b{i:03}")).collect();
        let graph = BranchGraph::build(&local, &state, None);
        let tree = graph.tree("b000", &state, true, None);
        assert!(tree.truncated);
        assert_eq!(tree.tree_text.lines().count(), MAX_DEPTH);
        assert!(
            tree.tree_text.trim_end().ends_with("b039 …"),
            "{}",
            tree.tree_text
        );
        let json = serde_json::to_string(&tree).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["truncated"], true);

        let small = graph.tree("b190", &state, false, None);
        assert!(!small.truncated);
        assert_eq!(small.tree_text.lines().count(), 10);
    }

    #[test]
    fn cycles_are_shown_once() {
        let state = state(
            r#"{"dependencies":[{"id":"1","child":"a","parent":"b","created_at":"x"},
                                {"id":"2","child":"b","parent":"a","created_at":"x"}]}"#,
        );
        let local = names(&["a", "b"]);
        let graph = BranchGraph::build(&local, &state, None);
        assert_eq!(graph.tree("a", &state, true, None).tree_text, "a\n└── b\n");
    }
}
