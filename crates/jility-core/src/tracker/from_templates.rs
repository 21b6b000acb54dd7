//! Templates: listing them and creating a ticket from one.

use mcp_common_core::{Paged, ToolError, page::page_by_offset};

use super::checks::{invalid, page_size};
use super::{Created, TEMPLATES_LIMIT, TEMPLATES_TOOL, TemplateList, Tracker};
use crate::errors::clip;
use crate::params::{CreateTicket, FromTemplate, ListTemplates};
use crate::store::Store;
use crate::templates;

impl<S: Store> Tracker<S> {
    /// Every template, and the project template files that could not be read.
    fn all_templates(&self) -> TemplateList {
        let (templates, problems) = templates::load(&self.templates_dir, &self.root);
        TemplateList {
            templates,
            problems,
        }
    }

    /// One page of the templates (the unreadable files are named on every page).
    pub fn templates(&self, p: &ListTemplates) -> Result<Paged<TemplateList>, ToolError> {
        let limit = page_size(TEMPLATES_LIMIT, p.limit)?;
        let cursors = self.cursor_key.bind(TEMPLATES_TOOL, &());
        let all = self.all_templates();
        let (templates, page) =
            page_by_offset(&all.templates, &cursors, p.cursor.as_deref(), limit)?;
        Ok(Paged {
            data: TemplateList {
                templates,
                problems: all.problems,
            },
            page,
        })
    }

    pub fn create_from_template(
        &mut self,
        actor: &str,
        p: FromTemplate,
    ) -> Result<Created, ToolError> {
        let list = self.all_templates();
        let Some(template) = list.templates.iter().find(|t| t.name == p.template.trim()) else {
            let names = list
                .templates
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ToolError::not_found(format!(
                "Template '{}' not found",
                clip(&p.template)
            ))
            .with_hint(format!(
                "Available templates: {names}. Project templates live in .jility/templates/*.md."
            )));
        };
        let rendered = templates::render(template, &p.variables).map_err(|e| {
            let hint = match &e {
                templates::RenderError::Unfilled { missing, .. } => format!(
                    "Pass a value for each in `variables`, e.g. {{{}}}. The template uses: {}.",
                    missing
                        .iter()
                        .map(|m| format!("\"{m}\": \"…\""))
                        .collect::<Vec<_>>()
                        .join(", "),
                    template.variables.join(", ")
                ),
                _ => "Fill the variables the title uses.".to_string(),
            };
            invalid(e.to_string(), hint)
        })?;
        let created = self.create_ticket(
            actor,
            CreateTicket {
                title: rendered.title,
                description: Some(rendered.description),
                story_points: rendered.story_points.map(i64::from),
                assignees: p.assignee.into_iter().collect(),
                labels: rendered.labels,
                kind: Some(rendered.kind),
                ..Default::default()
            },
        )?;
        Ok(Created {
            template: Some(template.name.clone()),
            ..created
        })
    }
}
