//! The branch dependency graph as twig builds it, and its tree rendering.
//!
//! - Nodes are the local git branches.
//! - Declared dependencies give parent → child edges when both branches exist; children are
//!   sorted by name. A branch with several declared parents is drawn under its primary parent
//!   (the first declared one that exists), the `parent_branch` the other tools report.
//! - Orphan parenting: a branch without a parent that is neither the default root nor a
//!   configured root hangs under the default root (`is_default`, else the first root).
//! - Root candidates: the configured roots that exist, else the checked-out branch, else the
//!   first branch by name.

use std::collections::{HashMap, HashSet};

use crate::{
    state::LoadedState,
    types::{BranchTreeNode, BranchTreeResponse},
};

/// The deepest level of the tree that is expanded.
pub const MAX_DEPTH: usize = 40;
/// The most branches one tree shows.
pub const MAX_NODES: usize = 5000;

/// State of one tree walk.
struct Walk<'a> {
    seen: HashSet<&'a str>,
    /// Branches whose children were not all shown.
    cut: HashSet<&'a str>,
    budget: usize,
}

#[derive(Debug, Default)]
pub struct BranchGraph {
    /// branch → its children, sorted by name. Every node has an entry.
    children: HashMap<String, Vec<String>>,
    root_candidates: Vec<String>,
}

impl BranchGraph {
    pub fn build(local_branches: &[String], state: &LoadedState, head: Option<&str>) -> Self {
        let mut children: HashMap<String, Vec<String>> = local_branches
            .iter()
            .map(|name| (name.clone(), Vec::new()))
            .collect();
        let first = local_branches.iter().min().cloned();
        let mut has_parent: HashSet<&str> = HashSet::new();
        for child in local_branches {
            let primary = state
                .parents(child)
                .find(|parent| children.contains_key(*parent));
            if let Some(parent) = primary
                && let Some(list) = children.get_mut(parent)
            {
                if !list.contains(child) {
                    list.push(child.clone());
                }
                has_parent.insert(child.as_str());
            }
        }

        if let Some(default_root) = state.default_root()
            && children.contains_key(default_root)
        {
            let configured: HashSet<&str> = state.root_names().collect();
            let orphans: Vec<String> = local_branches
                .iter()
                .filter(|name| {
                    !has_parent.contains(name.as_str())
                        && name.as_str() != default_root
                        && !configured.contains(name.as_str())
                })
                .cloned()
                .collect();
            if let Some(list) = children.get_mut(default_root) {
                for orphan in orphans {
                    if !list.contains(&orphan) {
                        list.push(orphan);
                    }
                }
            }
        }
        for list in children.values_mut() {
            list.sort();
        }

        let mut root_candidates: Vec<String> = state
            .root_names()
            .filter(|root| children.contains_key(*root))
            .map(str::to_string)
            .collect();
        if root_candidates.is_empty()
            && let Some(head) = head.filter(|h| children.contains_key(*h))
        {
            root_candidates.push(head.to_string());
        }
        if root_candidates.is_empty()
            && let Some(first) = &first
        {
            root_candidates.push(first.clone());
        }
        let mut unique = HashSet::new();
        root_candidates.retain(|root| unique.insert(root.clone()));
        Self {
            children,
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

    /// The tree below `root` as data and as text. A branch is shown once (cycle-safe). The
    /// tree stops at [`MAX_DEPTH`] levels and [`MAX_NODES`] branches: beyond, a cut branch
    /// ends with ` …` in the text and `truncated` is set (this also bounds the recursion and
    /// the JSON nesting, which clients parse with recursion limits).
    pub fn tree(&self, root: &str, state: &LoadedState) -> BranchTreeResponse {
        let mut walk = Walk {
            seen: HashSet::new(),
            cut: HashSet::new(),
            budget: MAX_NODES,
        };
        let node = self.node(root, state, 0, &mut walk);
        let mut tree_text = String::new();
        render(&node, "", None, &walk.cut, &mut tree_text);
        BranchTreeResponse {
            root: root.to_string(),
            tree_text,
            branches: vec![node],
            truncated: !walk.cut.is_empty(),
        }
    }

    fn node<'a>(
        &'a self,
        name: &'a str,
        state: &LoadedState,
        depth: usize,
        walk: &mut Walk<'a>,
    ) -> BranchTreeNode {
        walk.seen.insert(name);
        walk.budget = walk.budget.saturating_sub(1);
        let meta = state.state.branches.get(name);
        let mut children = Vec::new();
        for child in self.children.get(name).into_iter().flatten() {
            if walk.seen.contains(child.as_str()) {
                continue;
            }
            if depth + 1 >= MAX_DEPTH || walk.budget == 0 {
                walk.cut.insert(name);
                break;
            }
            children.push(self.node(child, state, depth + 1, walk));
        }
        BranchTreeNode {
            branch: name.to_string(),
            children,
            jira_issue: meta.and_then(|m| m.jira_issue.clone()),
            pr_number: meta.and_then(|m| m.github_pr),
        }
    }
}

/// `name (PROJ-1, #42)`, `name (PROJ-1)`, `name (#42)` or `name`.
pub fn annotate(branch: &str, jira_issue: Option<&str>, pr_number: Option<u32>) -> String {
    let mut labels = Vec::new();
    if let Some(issue) = jira_issue {
        labels.push(issue.to_string());
    }
    if let Some(pr) = pr_number {
        labels.push(format!("#{pr}"));
    }
    if labels.is_empty() {
        branch.to_string()
    } else {
        format!("{branch} ({})", labels.join(", "))
    }
}

/// Draw `node` with `├── `, `└── ` and `│   `; `is_last` is `None` for the root; a branch in
/// `cut` gets ` …`.
fn render(
    node: &BranchTreeNode,
    prefix: &str,
    is_last: Option<bool>,
    cut: &HashSet<&str>,
    out: &mut String,
) {
    let mut label = annotate(&node.branch, node.jira_issue.as_deref(), node.pr_number);
    if cut.contains(node.branch.as_str()) {
        label.push_str(" …");
    }
    let child_prefix = match is_last {
        None => {
            out.push_str(&label);
            String::new()
        }
        Some(last) => {
            out.push_str(prefix);
            out.push_str(if last { "└── " } else { "├── " });
            out.push_str(&label);
            format!("{prefix}{}", if last { "    " } else { "│   " })
        }
    };
    out.push('\n');
    let count = node.children.len();
    for (i, child) in node.children.iter().enumerate() {
        render(child, &child_prefix, Some(i + 1 == count), cut, out);
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
    fn renders_dependencies_and_orphans_under_the_default_root() {
        let state = state(
            r#"{"branches":{"feat/a":{"branch":"feat/a","jira_issue":"PROJ-1","github_pr":42,"created_at":"x"},
                            "feat/a2":{"branch":"feat/a2","github_pr":43,"created_at":"x"}},
                "dependencies":[{"id":"1","child":"feat/a2","parent":"feat/a","created_at":"x"},
                                {"id":"2","child":"feat/a","parent":"main","created_at":"x"},
                                {"id":"3","child":"gone","parent":"main","created_at":"x"}],
                "root_branches":[{"id":"4","branch":"main","is_default":true,"created_at":"x"}]}"#,
        );
        let local = names(&["feat/a", "feat/a2", "main", "stray", "zeta"]);
        let graph = BranchGraph::build(&local, &state, Some("feat/a2"));
        assert_eq!(graph.root_candidates(), ["main"]);
        let tree = graph.tree("main", &state);
        assert_eq!(
            tree.tree_text,
            "main\n├── feat/a (PROJ-1, #42)\n│   └── feat/a2 (#43)\n├── stray\n└── zeta\n"
        );
        assert_eq!(tree.branches[0].children.len(), 3);
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
    fn a_branch_with_two_parents_hangs_under_its_first_declared_parent() {
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
        assert_eq!(
            graph.tree("main", &state).tree_text,
            "main\n└── zed\n    ├── x\n    └── y\n",
            "x under zed (first declared); y under zed (its first parent that exists)"
        );
    }

    #[test]
    fn deep_chains_are_cut_and_flagged() {
        let deps: Vec<String> = (1..200)
            .map(|i| format!(r#"{{"child":"b{i:03}","parent":"b{:03}"}}"#, i - 1))
            .collect();
        let state = state(&format!(r#"{{"dependencies":[{}]}}"#, deps.join(",")));
        let local: Vec<String> = (0..200).map(|i| format!("b{i:03}")).collect();
        let graph = BranchGraph::build(&local, &state, None);
        let tree = graph.tree("b000", &state);
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

        let small = graph.tree("b190", &state);
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
        assert_eq!(graph.tree("a", &state).tree_text, "a\n└── b\n");
    }
}
