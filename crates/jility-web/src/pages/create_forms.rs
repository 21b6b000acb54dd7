//! The markup of the create page (`/new`): its three forms — one ticket, a batch from
//! pasted lines, a ticket from a template with its variables — each keeping what the
//! person typed when a form comes back refused.

use jility_core::model::Status;
use jility_core::templates::Template;
use jility_core::tracker::TemplateList;
use maud::{Markup, html};
use mcp_common_core::ToolError;

use crate::layout;
use crate::site::Viewer;

/// Story points the form offers (the tracker takes 1 to 13).
pub const POINTS: [u8; 6] = [1, 2, 3, 5, 8, 13];

/// Which of the page's forms was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    One,
    Batch,
    Template,
}

/// What a refused form carried, to fill it in again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kept<'a> {
    pub form: Option<Form>,
    pub pairs: &'a [(String, String)],
}

impl<'a> Kept<'a> {
    /// The value of `name` as `form` was sent, when it was.
    pub fn get(&self, form: Form, name: &str) -> Option<&'a str> {
        if self.form != Some(form) {
            return None;
        }
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The templates as read (or why they could not be).
pub type Templates = Result<TemplateList, ToolError>;

/// Everything the page shows.
pub struct NewPage<'a> {
    pub viewer: &'a Viewer,
    pub templates: &'a Templates,
    /// The chosen template's name (`?template=`, or the refused form's).
    pub chosen: Option<&'a str>,
    pub kept: Kept<'a>,
    /// Why the form came back.
    pub error: Option<&'a ToolError>,
}

/// `main[data-page=new]`.
pub fn render(page: &NewPage<'_>) -> Markup {
    let base = layout::base(&page.viewer.workspace);
    html! {
        main id="main" class="new-page" data-page="new" {
            h1 { "New tickets" }
            div id="notice" {
                @if let Some(err) = page.error {
                    (layout::notice("error", &err.message, Some(err.hint_text())))
                }
            }
            p class="help" {
                "Create one ticket, paste a list of titles to create several at once, or start from a template. "
                a href="#batch" { "Batch" } " · " a href="#from-template" { "From a template" }
            }
            div class="create-forms" {
                (one_form(&base, page))
                (batch_form(&base, page))
                (template_section(&base, page))
            }
        }
    }
}

fn one_form(base: &str, page: &NewPage<'_>) -> Markup {
    let kept = |name: &str| page.kept.get(Form::One, name);
    let status = kept("status").unwrap_or(Status::Backlog.as_str());
    let points = kept("story_points").unwrap_or_default();
    html! {
        section class="create one" id="one" aria-labelledby="h-one" {
            h2 id="h-one" { "One ticket" }
            form method="post" action=(format!("{base}/tickets")) {
                input type="hidden" name="_csrf" value=(page.viewer.csrf);
                div class="field" {
                    label for="n-title" { "Title" }
                    input id="n-title" type="text" name="title" required maxlength="500"
                        aria-describedby="n-duplicates"
                        data-related=(format!("{base}/related")) value=[kept("title")];
                    // Filled by the page script as the title is typed: likely duplicates.
                    div id="n-duplicates" class="duplicates" aria-live="polite" {}
                }
                div class="field" {
                    label for="n-description" { "Description (markdown)" }
                    textarea id="n-description" name="description" rows="8" {
                        (kept("description").unwrap_or_default())
                    }
                }
                div class="row" {
                    div class="field" {
                        label for="n-status" { "Status" }
                        select id="n-status" name="status" {
                            @for s in Status::ALL {
                                option value=(s.as_str()) selected[s.as_str() == status] { (s.label()) }
                            }
                        }
                    }
                    div class="field" {
                        label for="n-points" { "Story points" }
                        select id="n-points" name="story_points" {
                            option value="" selected[points.is_empty()] { "None" }
                            @for p in POINTS {
                                option value=(p) selected[points == p.to_string()] { (p) }
                            }
                        }
                    }
                }
                div class="field" {
                    label for="n-labels" { "Labels" }
                    input id="n-labels" type="text" name="labels" placeholder="backend, bug"
                        aria-describedby="n-labels-help" value=[kept("labels")];
                    span class="help" id="n-labels-help" { "Separated by commas." }
                }
                div class="field" {
                    label for="n-assignees" { "Assignees" }
                    input id="n-assignees" type="text" name="assignees"
                        placeholder=(format!("{}, claude-code", page.viewer.name))
                        aria-describedby="n-assignees-help" value=[kept("assignees")];
                    span class="help" id="n-assignees-help" { "People or agents, separated by commas." }
                }
                div class="row" {
                    div class="field" {
                        label for="n-parent" { "Parent" }
                        input id="n-parent" type="text" name="parent" placeholder="KEY-N" value=[kept("parent")];
                    }
                    div class="field" {
                        label for="n-epic" { "Epic" }
                        input id="n-epic" type="text" name="epic" placeholder="KEY-N" value=[kept("epic")];
                    }
                }
                button type="submit" { "Create ticket" }
            }
        }
    }
}

fn batch_form(base: &str, page: &NewPage<'_>) -> Markup {
    let kept = |name: &str| page.kept.get(Form::Batch, name);
    html! {
        section class="create batch" id="batch" aria-labelledby="h-batch" {
            h2 id="h-batch" { "Several tickets from a list" }
            form method="post" action=(format!("{base}/tickets/batch")) {
                input type="hidden" name="_csrf" value=(page.viewer.csrf);
                div class="field" {
                    label for="b-lines" { "Titles, one per line" }
                    textarea id="b-lines" name="lines" rows="8" required aria-describedby="b-lines-help"
                        placeholder="- Login form\n- Password reset\n- [ ] Rate limiter" {
                        (kept("lines").unwrap_or_default())
                    }
                    span class="help" id="b-lines-help" {
                        "Bullets (\"- \", \"* \", \"1. \", \"- [ ] \") are removed and blank lines skipped. "
                        "All are created, or none when one line is refused."
                    }
                }
                div class="row" {
                    div class="field" {
                        label for="b-parent" { "Parent of all (optional)" }
                        input id="b-parent" type="text" name="parent" placeholder="KEY-N" value=[kept("parent")];
                    }
                    div class="field" {
                        label for="b-labels" { "Labels for all (optional)" }
                        input id="b-labels" type="text" name="labels" placeholder="backend, bug" value=[kept("labels")];
                    }
                }
                button type="submit" { "Create tickets" }
            }
        }
    }
}

fn template_section(base: &str, page: &NewPage<'_>) -> Markup {
    html! {
        section class="create from-template" id="from-template" aria-labelledby="h-template" {
            h2 id="h-template" { "From a template" }
            @match page.templates {
                Err(err) => {
                    p class="empty" { "The templates could not be read: " (err.message) }
                    p class="help" { (err.hint_text()) }
                }
                Ok(list) if list.templates.is_empty() => {
                    p class="empty" { "There are no templates. Add one as .jility/templates/NAME.md in the project." }
                }
                Ok(list) => {
                    (chooser(base, &list.templates, page.chosen))
                    @if let Some(name) = page.chosen {
                        @match list.templates.iter().find(|t| t.name == name) {
                            Some(template) => (template_form(base, page, template)),
                            None => {
                                p class="empty" data-unknown-template {
                                    "There is no template named “" (name) "”; choose one of the list."
                                }
                            }
                        }
                    }
                    @if !list.problems.is_empty() {
                        details class="problems" {
                            summary { (list.problems.len()) " template file(s) could not be read" }
                            ul { @for p in &list.problems { li { code { (p.path) } ": " (p.message) } } }
                        }
                    }
                }
            }
        }
    }
}

fn chooser(base: &str, templates: &[Template], chosen: Option<&str>) -> Markup {
    html! {
        form class="chooser" method="get" action=(format!("{base}/new#from-template")) {
            label for="t-choose" { "Template" }
            select id="t-choose" name="template" {
                @for t in templates {
                    option value=(t.name) selected[chosen == Some(t.name.as_str())] {
                        (t.name) " — " (t.description)
                    }
                }
            }
            button type="submit" class="secondary" { "Choose" }
        }
    }
}

fn template_form(base: &str, page: &NewPage<'_>, template: &Template) -> Markup {
    let kept = |name: &str| page.kept.get(Form::Template, name);
    html! {
        form class="template-form" method="post" action=(format!("{base}/tickets/from-template"))
            data-template=(template.name) {
            input type="hidden" name="_csrf" value=(page.viewer.csrf);
            input type="hidden" name="template" value=(template.name);
            p class="help" {
                "Title: " code { (template.title) }
                @if !template.labels.is_empty() { " · labels: " (template.labels.join(", ")) }
                @if let Some(points) = template.story_points { " · " (points) " story points" }
            }
            @if template.variables.is_empty() {
                p class="help" { "This template has no variables." }
            }
            @for var in &template.variables {
                @let name = format!("var_{var}");
                div class="field" {
                    label for=(format!("t-{name}")) { (var) }
                    input id=(format!("t-{name}")) type="text" name=(name) required value=[kept(&name)];
                }
            }
            div class="field" {
                label for="t-assignee" { "Assignee (optional)" }
                input id="t-assignee" type="text" name="assignee" value=[kept("assignee")];
            }
            button type="submit" { "Create from " (template.name) }
        }
    }
}
