//! The branch dependency graph as twig builds it, and its tree rendering.
//!
//! - Nodes are the local git branches.
//! - Declared dependencies give parent → child edges when both branches exist; children are
//!   sorted by name; a branch's primary parent is its first declared parent.
//! - Orphan parenting: a branch without a parent that is neither the default root nor a
//!   configured root hangs under the default root (`is_default`, else the first root).
//! - Root candidates: the configured roots that exist, else the checked-out branch, else the
//!   first branch by name.

use std::collections::{HashMap, HashSet};

use crate::{
    state::LoadedState,
    types::{BranchTreeNode, BranchTreeResponse},
};

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
        for dep in &state.state.dependencies {
            if children.contains_key(&dep.child)
                && let Some(list) = children.get_mut(&dep.parent)
            {
                if !list.contains(&dep.child) {
                    list.push(dep.child.clone());
                }
                has_parent.insert(dep.child.as_str());
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
        root_candidates.dedup();
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

    /// The tree below `root` as data and as text. A branch reachable twice (a cycle, or a
    /// second parent) is shown once, where it is first reached.
    pub fn tree(&self, root: &str, state: &LoadedState) -> BranchTreeResponse {
        let mut seen = HashSet::new();
        let node = self.node(root, state, &mut seen);
        let mut tree_text = String::new();
        render(&node, "", None, &mut tree_text);
        BranchTreeResponse {
            root: root.to_string(),
            tree_text,
            branches: vec![node],
        }
    }

    fn node<'a>(
        &'a self,
        name: &'a str,
        state: &LoadedState,
        seen: &mut HashSet<&'a str>,
    ) -> BranchTreeNode {
        seen.insert(name);
        let meta = state.state.branches.get(name);
        let mut children = Vec::new();
        for child in self.children.get(name).into_iter().flatten() {
            if !seen.contains(child.as_str()) {
                children.push(self.node(child, state, seen));
            }
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

/// Draw `node` with `├── `, `└── ` and `│   `; `is_last` is `None` for the root.
fn render(node: &BranchTreeNode, prefix: &str, is_last: Option<bool>, out: &mut String) {
    let label = annotate(&node.branch, node.jira_issue.as_deref(), node.pr_number);
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
        render(child, &child_prefix, Some(i + 1 == count), out);
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
