//! The page's executed coverage (`duvet report --coverage-report`): which coverage reports it
//! was made from, each requirement's executed state (a badge with a sign and words, never
//! colour alone) and each implementation citation's, per specification a table of the states
//! by level, a "Not executed" filter (CSS only, as the status filters) and a legend. Without
//! coverage none of it is written, and the page is the one it always was.
//!
//! The states and their names are `duvet mcp`'s ([`crate::report::executed`]); the filter
//! shows the requirements `list_unexecuted_requirements` lists: not executed, partly executed,
//! or not measured.

use std::fmt::Write as _;

use super::{Plan, esc, plural};
use crate::execution::ExecutionStatus;
use crate::execution::view::{Executed, ExecutedState};
use crate::report::executed::{Executions, STATES, state_index, state_name, unexecuted};

/// The filter's id (`f-…`) and class of the navigation entries it keeps (`n-…`).
const FILTER: &str = "not-executed";

/// The most report files the page names one by one.
const REPORTS_NAMED: usize = 10;

/// A state's CSS class suffix (`e-…`).
fn slug(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "executed",
        ExecutedState::PartlyExecuted => "partly-executed",
        ExecutedState::NotExecuted => "not-executed",
        ExecutedState::Unknown => "unknown",
        ExecutedState::Uncited => "uncited",
    }
}

/// A state in words, for the badge of a requirement.
fn label(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "Code executed",
        ExecutedState::PartlyExecuted => "Code partly executed",
        ExecutedState::NotExecuted => "Code not executed",
        ExecutedState::Unknown => "Code not measured",
        ExecutedState::Uncited => "No implementation",
    }
}

/// The sign that stands beside the words (so that colour is not the only signal).
fn sign(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "\u{2713}",
        ExecutedState::PartlyExecuted => "\u{25d0}",
        ExecutedState::NotExecuted => "\u{2717}",
        ExecutedState::Unknown => "?",
        ExecutedState::Uncited => "\u{2013}",
    }
}

fn meaning(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "the code of every implementation citation of it ran",
        ExecutedState::PartlyExecuted => {
            "the code of some of its implementation citations ran, of others not (or it could \
             not be told)"
        }
        ExecutedState::NotExecuted => "the code of none of its implementation citations ran",
        ExecutedState::Unknown => {
            "no implementation lines measured: the coverage reports have no data for the \
             lines its implementation citations stand on"
        }
        ExecutedState::Uncited => "no implementation citation quotes it: there is no code to run",
    }
}

/// Count requirement `anno` of level rank `level` by its executed state.
pub(super) fn count(plan: &mut Plan, ex: Option<&Executions>, anno: usize, level: u8) {
    if let (Some(totals), Some(run)) = (
        plan.executed.as_mut(),
        ex.and_then(|ex| ex.requirement(anno)),
    ) {
        totals[state_index(run.state)][usize::from(level)] += 1;
    }
}

/// Of a plan: the requirements with implementation citations, and those whose code all ran.
fn executed_of(plan: &Plan) -> Option<(usize, usize)> {
    let totals = plan.executed.as_ref()?;
    let sum = |state: ExecutedState| -> usize { totals[state_index(state)].iter().sum() };
    let with = STATES
        .into_iter()
        .filter(|&s| s != ExecutedState::Uncited)
        .map(sum)
        .sum();
    Some((sum(ExecutedState::Executed), with))
}

/// Of a plan: the requirements the filter keeps.
fn unexecuted_of(plan: &Plan) -> usize {
    plan.executed.as_ref().map_or(0, |totals| {
        STATES
            .into_iter()
            .filter(|&s| unexecuted(s))
            .map(|s| totals[state_index(s)].iter().sum::<usize>())
            .sum()
    })
}

/// The style of the badges, and the rules of the filter.
pub(super) fn style(w: &mut String) {
    w.push_str(
        ".run,.cr{display:inline-block;border:1px solid currentColor;border-radius:4px;\
         padding:0 .35rem;font-size:.85rem;font-weight:600;white-space:nowrap}\n\
         .cr{font-size:.78rem;font-weight:500;margin-left:.25rem}\n\
         .run.e-executed,.cr.e-executed{background:#d1f4dc;color:#0f3d1f}\n\
         .run.e-partly-executed{background:#fbf0b5;color:#5a3a00}\n\
         .run.e-not-executed,.cr.e-not-executed{background:#fbd5d5;color:#6e1111}\n\
         .run.e-unknown,.cr.e-unknown,.cr.e-structural{background:#eaeef2;color:#24292f}\n\
         .run.e-uncited{background:#fff;color:#57606a}\n\
         .xs{display:inline-block;width:1rem;margin-right:.2rem;text-align:center;\
         font-weight:700;color:#6e1111}\n\
         @media (max-width:40rem){.totals .run{font-size:.75rem;padding:0 .25rem}}\n",
    );
    let _ = write!(
        w,
        "body:has(#f-{FILTER}:checked) .req:not(.xr),\
         body:has(#f-{FILTER}:checked) .sec:not(:has(.req.xr)),\
         body:has(#f-{FILTER}:checked) .spec:not(:has(.req.xr)),\
         body:has(#f-{FILTER}:checked) nav li:not(.n-{FILTER}){{display:none}}"
    );
}

/// The page's header line: the reports it was made from, and how many requirements' code ran.
pub(super) fn header(w: &mut String, ex: &Executions, plans: &[Plan]) {
    let (ran, with) = plans
        .iter()
        .filter_map(executed_of)
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    w.push_str("<p class=\"sum\">Executed coverage: code executed for ");
    let _ = write!(w, "{ran} of ");
    plural(
        w,
        with,
        "requirement with implementation citations",
        "requirements with implementation citations",
    );
    let _ = write!(
        w,
        ", by the {} ",
        match ex.format {
            crate::execution::CoverageFormat::Lcov => "LCOV",
            crate::execution::CoverageFormat::JacocoXml => "JaCoCo XML",
        }
    );
    w.push_str(if ex.reports.len() == 1 {
        "coverage report "
    } else {
        "coverage reports "
    });
    for (i, report) in ex.reports.iter().take(REPORTS_NAMED).enumerate() {
        if i > 0 {
            w.push_str(", ");
        }
        w.push_str("<code>");
        esc(w, &crate::model::path_text(report));
        w.push_str("</code>");
    }
    if ex.reports.len() > REPORTS_NAMED {
        let _ = write!(w, " and {} more", ex.reports.len() - REPORTS_NAMED);
    }
    w.push_str(".</p>");
}

/// The class of a specification's navigation entry that the filter keeps.
pub(super) fn nav_class(w: &mut String, plan: &Plan) {
    if unexecuted_of(plan) > 0 {
        let _ = write!(w, " n-{FILTER}");
    }
}

/// The "Not executed" filter, after the status filters.
pub(super) fn filter(w: &mut String, plans: &[Plan]) {
    if plans.iter().all(|p| p.executed.is_none()) {
        return;
    }
    let n: usize = plans.iter().map(unexecuted_of).sum();
    let _ = write!(
        w,
        "<span class=\"f\"><input type=\"radio\" name=\"show\" id=\"f-{FILTER}\">\
         <label for=\"f-{FILTER}\"><span class=\"xs\" aria-hidden=\"true\">\u{2717}</span>Not executed \
         <span class=\"n\">{n}</span></label></span>"
    );
}

/// The legend of the executed states.
pub(super) fn legend(w: &mut String, plans: &[Plan]) {
    if plans.iter().all(|p| p.executed.is_none()) {
        return;
    }
    w.push_str(
        "<p>Executed coverage: whether the code each implementation citation stands on ran \
         in the coverage reports, as <code>duvet query --check coverage</code> decides it. A \
         requirement is</p><dl>",
    );
    for state in STATES {
        w.push_str("<dt>");
        badge_of(w, state);
        let _ = write!(
            w,
            "</dt><dd>{} (<code>{}</code> in the JSON reports and <code>duvet mcp</code>)</dd>",
            meaning(state),
            state_name(state)
        );
    }
    w.push_str(
        "</dl><p>The <em>Not executed</em> filter shows the requirements whose code did \
         not all run: not executed, partly executed, or not measured. Each implementation \
         citation says whether its code ran.</p>",
    );
}

/// A specification's summary line.
pub(super) fn summary(w: &mut String, plan: &Plan) {
    if let Some((ran, with)) = executed_of(plan) {
        let _ = write!(w, "<p class=\"sum\">Code executed for {ran} of ");
        plural(
            w,
            with,
            "requirement with implementation citations",
            "requirements with implementation citations",
        );
        w.push_str("</p>");
    }
}

/// A specification's requirements by executed state and level.
pub(super) fn totals(w: &mut String, plan: &Plan) {
    let Some(executed) = &plan.executed else {
        return;
    };
    // The levels of the status table.
    let levels = super::totals_head(w, plan, "executed state", "Code");
    for state in STATES {
        let row = &executed[state_index(state)];
        w.push_str("<tr><th scope=\"row\">");
        badge_with(w, state, short(state));
        w.push_str("</th>");
        for &l in &levels {
            super::cell(w, row[l]);
        }
        super::cell(w, row.iter().sum());
        w.push_str("</tr>");
    }
    w.push_str("</tbody><tfoot><tr><th scope=\"row\">All</th>");
    for &l in &levels {
        super::cell(w, executed.iter().map(|row| row[l]).sum());
    }
    super::cell(w, executed.iter().flatten().sum());
    w.push_str("</tr></tfoot></table>");
}

/// The classes of a requirement's item: its state, and `xr` when the filter keeps it.
pub(super) fn classes(w: &mut String, run: Option<&Executed>) {
    if let Some(run) = run {
        let _ = write!(w, " e-{}", slug(run.state));
        if unexecuted(run.state) {
            w.push_str(" xr");
        }
    }
}

/// A state's badge: its sign and words.
fn badge_of(w: &mut String, state: ExecutedState) {
    badge_with(w, state, label(state));
}

fn badge_with(w: &mut String, state: ExecutedState, words: &str) {
    let _ = write!(
        w,
        "<span class=\"run e-{}\"><span aria-hidden=\"true\">{}</span> {words}</span>",
        slug(state),
        sign(state),
    );
}

/// A state in the words of the table, whose column says "Code".
fn short(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "Executed",
        ExecutedState::PartlyExecuted => "Partly executed",
        ExecutedState::NotExecuted => "Not executed",
        ExecutedState::Unknown => "Not measured",
        ExecutedState::Uncited => "No implementation",
    }
}

/// A requirement's badge, after its status and level.
pub(super) fn badge(w: &mut String, run: Option<&Executed>) {
    if let Some(run) = run {
        w.push(' ');
        badge_of(w, run.state);
    }
}

/// An implementation citation's status, after its place.
pub(super) fn citation(w: &mut String, status: Option<ExecutionStatus>) {
    let Some(status) = status else {
        return;
    };
    let (slug, sign, words) = match status {
        ExecutionStatus::Executed => ("executed", "\u{2713}", "executed".to_string()),
        ExecutionStatus::NotExecuted => ("not-executed", "\u{2717}", "not executed".to_string()),
        ExecutionStatus::Structural => (
            "structural",
            "\u{2013}",
            "structural: no code to run".to_string(),
        ),
        ExecutionStatus::Unknown { line: 0 } => ("unknown", "?", "not measured".to_string()),
        ExecutionStatus::Unknown { line } => {
            ("unknown", "?", format!("not measured (line {line})"))
        }
    };
    let _ = write!(
        w,
        " <span class=\"cr e-{slug}\"><span aria-hidden=\"true\">{sign}</span> {words}</span>"
    );
}

/// The footer's sentence on executed coverage.
pub(super) fn footer(w: &mut String) {
    w.push_str(
        " Executed states are those of <code>duvet mcp</code>&#39;s <code>execution</code>; \
         they never fail <code>duvet report --ci</code> (<code>duvet query --check \
         executed-coverage</code> is the check).",
    );
}
