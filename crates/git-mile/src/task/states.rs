//! Upstream's vocabulary of states: the states of the repository's workflow and those its
//! tasks are in, each with its kind and how many tasks are in it (the first page of a task
//! listing without a filter names them). The workflow is given (it is read from `.git-mile/config.toml` by
//! the writes' side, `task_write/project.rs`); nothing here reads a file.

use super::TaskSet;
use super::shapes::StateUse;

/// A repository's workflow as the states list needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workflow {
    /// Its states in order, each with its kind (none when it gives none).
    pub states: Vec<(String, Option<String>)>,
    /// The state a new task starts in.
    pub default: Option<String>,
}

/// The states of `workflow` (in its order; none when it could not be read) and then the
/// other states `tasks` are in (by name; the tasks with no state last), each with its kind and
/// how many of `tasks` are in it.
pub fn states(tasks: &TaskSet, workflow: Option<&Workflow>) -> Vec<StateUse> {
    let tally = tasks.state_tally();
    let mut out = Vec::new();
    let configured = workflow.map(|w| w.states.as_slice()).unwrap_or_default();
    for (state, kind) in configured {
        let count = tally
            .iter()
            .find(|t| t.state.as_deref() == Some(state.as_str()))
            .map_or(0, |t| t.tasks);
        out.push(StateUse {
            state: Some(state.clone()),
            kind: kind.clone(),
            tasks: count,
            workflow: true,
            default: workflow.and_then(|w| w.default.as_deref()) == Some(state.as_str()),
        });
    }
    let in_workflow = |state: &Option<String>| {
        state
            .as_deref()
            .is_some_and(|s| configured.iter().any(|(c, _)| c == s))
    };
    for t in tally.iter().filter(|t| !in_workflow(&t.state)) {
        out.push(StateUse {
            state: t.state.clone(),
            kind: t.kind.clone(),
            tasks: t.tasks,
            workflow: false,
            default: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::task::Task;

    fn task(n: u32, state: Option<&str>, kind: Option<&str>) -> Arc<Task> {
        Arc::new(Task {
            state: state.map(str::to_string),
            state_kind: kind.map(str::to_string),
            ..Task::bare(
                &format!("019a5b2c-0001-7000-8000-{n:012}"),
                &format!("t{n}"),
            )
        })
    }

    #[test]
    fn the_workflow_first_then_what_tasks_use() {
        let tasks = TaskSet::new(
            vec![
                task(1, Some("state/todo"), Some("todo")),
                task(2, Some("state/todo"), Some("todo")),
                task(3, Some("old/review"), Some("blocked")),
                task(4, Some("old/review"), Some("in_progress")),
                task(5, Some("old/review"), Some("blocked")),
                task(6, None, None),
                task(7, Some("a/first"), None),
            ],
            Default::default(),
            Vec::new(),
        );
        let workflow = Workflow {
            states: vec![
                ("state/todo".into(), Some("todo".into())),
                ("state/done".into(), Some("done".into())),
            ],
            default: Some("state/todo".into()),
        };
        let got: Vec<String> = states(&tasks, Some(&workflow))
            .iter()
            .map(|s| {
                format!(
                    "{:?} {:?} {} {} {}",
                    s.state, s.kind, s.tasks, s.workflow, s.default
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                r#"Some("state/todo") Some("todo") 2 true true"#,
                r#"Some("state/done") Some("done") 0 true false"#,
                r#"Some("a/first") None 1 false false"#,
                r#"Some("old/review") Some("blocked") 3 false false"#,
                "None None 1 false false",
            ]
        );
        // Without a readable workflow: what the tasks use, nothing marked as the workflow's.
        let bare = states(&tasks, None);
        assert_eq!(bare.len(), 4);
        assert!(bare.iter().all(|s| !s.workflow && !s.default));
        assert!(states(&TaskSet::default(), None).is_empty());
    }
}
