//! The MCP surface of `jility --mcp-server`: one tool per operation of the tracker. Each
//! answers with the design's readable markdown as text and the same facts as the JSON
//! envelope in `structuredContent`. Every operation runs on a blocking thread
//! ([`jility_core::service`]), so a call waiting for the database never holds up another.
//!
//! This is the only module that speaks MCP (imports rmcp).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jility_core::backend::{Backend, Caller};
use jility_core::errors;
use jility_core::ops::{self, Operation};
use jility_core::params::*;
use jility_core::render;
use jility_core::token::Principal;
use jility_core::tracker::*;
use mcp_common::{
    MarkdownReply, Page, Paged, Parameters, ToolError, output_schema, paged_output_schema,
};
use rmcp::{
    Peer, RoleServer, ServerHandler, handler::server::router::tool::ToolRouter, model::*,
    service::RequestContext, tool, tool_handler, tool_router,
};

pub const INSTRUCTIONS: &str = "Jility is the project's ticket tracker. Tickets are named KEY-N \
(e.g. TASK-42). Find work with jility_list_tickets (filters, grouped by status) or \
jility_search_tickets; read one with jility_get_ticket; take it with jility_claim_ticket; edit \
descriptions precisely with jility_update_description (append, replace_lines, replace_section) \
instead of rewriting them; move it through backlog → todo → in_progress → review → done with \
jility_update_status; hand over with jility_assign_ticket. Every change is recorded with its \
author; jility_get_ticket_history shows every version of a description. Lists answer a page: \
pass page.next_cursor as cursor, with the same other arguments, for the next one.";

/// What every session of a server shares: where operations run and the configured actor.
#[derive(Clone)]
pub struct Shared<B> {
    backend: B,
    /// `JILITY_ACTOR`, when set; otherwise each session's client name from its handshake.
    /// (In the cloud, the token's name is the actor.)
    actor: Option<String>,
}

impl<B: Backend> Shared<B> {
    /// The tools on `backend`, authored by `actor` where the backend takes the caller's
    /// word for it (local mode).
    pub fn new(backend: B, actor: Option<String>) -> Self {
        Self { backend, actor }
    }
}

/// One MCP session's handler (stdio has one; HTTP makes one per session). Cheap to make:
/// the state is shared.
#[derive(Clone)]
pub struct JilityServer<B> {
    shared: Shared<B>,
    tool_router: ToolRouter<Self>,
}

/// Bad arguments are this domain's `invalid_input`.
fn arguments<P>(params: Parameters<P>) -> Result<P, ToolError> {
    params.into_inner().map_err(|e| ToolError {
        code: errors::INVALID_INPUT,
        ..e
    })
}

/// The longest actor name taken from a client's handshake.
const MAX_ACTOR_CHARS: usize = 100;

/// The caller of a request to `/mcp` on `jility serve`: the API's authentication put it in
/// the HTTP request, which rmcp hands on.
fn principal_of(context: &RequestContext<RoleServer>) -> Option<Principal> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
}

impl<B: Backend> JilityServer<B> {
    fn actor(&self, peer: &Peer<RoleServer>) -> String {
        if let Some(actor) = &self.shared.actor {
            return actor.clone();
        }
        // A stateless (2026-07-28) request has no handshake: rmcp then reports its own
        // default implementation, which names no client.
        let unknown = Implementation::default();
        peer.peer_info()
            .filter(|info| info.client_info != unknown)
            .map(|info| {
                let name = info.client_info.name.trim();
                name.chars().take(MAX_ACTOR_CHARS).collect::<String>()
            })
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "mcp-client".to_string())
    }

    /// Who calls, as the backend needs to know.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            actor: self.actor(&context.peer),
            principal: principal_of(context),
        }
    }

    /// Run operation `O` on the backend.
    async fn exec<O: Operation>(
        &self,
        params: Parameters<O::Params>,
        context: &RequestContext<RoleServer>,
    ) -> Result<O::Output, ToolError> {
        let caller = self.caller(context);
        self.shared
            .backend
            .exec::<O>(&caller, arguments(params))
            .await
    }

    /// A tool's answer: the operation's result with its markdown.
    async fn call<O: Operation>(
        &self,
        params: Parameters<O::Params>,
        context: RequestContext<RoleServer>,
        text: fn(&O::Output) -> String,
    ) -> MarkdownReply<O::Output> {
        match self.exec::<O>(params, &context).await {
            Ok(data) => {
                let markdown = text(&data);
                MarkdownReply::ok(data, markdown)
            }
            Err(err) => MarkdownReply::err(err),
        }
    }

    /// A list tool's answer: its page beside the data.
    async fn page<O, T>(
        &self,
        params: Parameters<O::Params>,
        context: RequestContext<RoleServer>,
        text: fn(&T, &Page) -> String,
    ) -> MarkdownReply<T>
    where
        O: Operation<Output = Paged<T>>,
    {
        match self.exec::<O>(params, &context).await {
            Ok(Paged { data, page }) => {
                let markdown = text(&data, &page);
                MarkdownReply::paged(data, page, markdown)
            }
            Err(err) => MarkdownReply::err(err),
        }
    }

    /// Whether the caller may use the tool `name` (at `/mcp` on `jility serve`: only with a
    /// token whose scopes allow it).
    fn allowed(&self, name: &str, caller: &Caller) -> bool {
        ops::describe_tool(name).is_none_or(|op| self.shared.backend.allows(caller, op))
    }
}

/// The tools with their schemas, built once per backend type: over HTTP a handler is made
/// per session.
fn tool_router<B: Backend>() -> ToolRouter<JilityServer<B>> {
    static ROUTERS: LazyLock<Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>> =
        LazyLock::new(Mutex::default);
    let mut routers = ROUTERS.lock().unwrap_or_else(PoisonError::into_inner);
    let router = routers
        .entry(TypeId::of::<B>())
        .or_insert_with(|| Box::new(Arc::new(JilityServer::<B>::tool_router())));
    match router.downcast_ref::<Arc<ToolRouter<JilityServer<B>>>>() {
        Some(router) => ToolRouter::clone(router),
        // Unreachable (the entry of B's type holds B's router); built afresh all the same.
        None => JilityServer::<B>::tool_router(),
    }
}

#[tool_router]
impl<B: Backend> JilityServer<B> {
    pub fn new(shared: Shared<B>) -> Self {
        Self {
            shared,
            tool_router: tool_router(),
        }
    }

    #[tool(
        description = "Create a new ticket with title, markdown description, story points (1-13), status, assignees, labels, parent and epic.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<Created>()
    )]
    async fn jility_create_ticket(
        &self,
        params: Parameters<CreateTicket>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<Created> {
        self.call::<ops::CreateTicket>(params, context, render::created)
            .await
    }

    #[tool(
        description = "Create several tickets at once, all or none (e.g. when breaking down an epic). Items may depend on existing tickets or on earlier items of the batch (`#1` or the item's exact title).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<BatchCreated>()
    )]
    async fn jility_create_tickets_batch(
        &self,
        params: Parameters<CreateBatch>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<BatchCreated> {
        self.call::<ops::CreateBatch>(params, context, render::batch)
            .await
    }

    #[tool(
        description = "Get full ticket context: the ticket, its comments, dependencies, dependents, linked commits and recent changes.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<TicketDetail>()
    )]
    async fn jility_get_ticket(
        &self,
        params: Parameters<TicketId>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<TicketDetail> {
        self.call::<ops::GetTicket>(params, context, render::detail)
            .await
    }

    #[tool(
        description = "Query tickets with filters (status, assignee, labels, parent, epic, unassigned); grouped by status, newest first; `limit` default 50, at most 200; `page` gives the total and the `next_cursor` to pass as `cursor` (with the same filters) for the next page.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<TicketPage>()
    )]
    async fn jility_list_tickets(
        &self,
        params: Parameters<ListTickets>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<TicketPage> {
        self.page::<ops::ListTickets, _>(params, context, render::page)
            .await
    }

    #[tool(
        description = "Claim a ticket: assign it to yourself and move it from backlog/todo to in_progress. Fails with already_assigned when someone else has it.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<Claimed>()
    )]
    async fn jility_claim_ticket(
        &self,
        params: Parameters<ClaimTicket>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<Claimed> {
        self.call::<ops::ClaimTicket>(params, context, render::claimed)
            .await
    }

    #[tool(
        description = "Precisely edit a ticket's description (token-efficient): replace_all, append, prepend, replace_lines (1-indexed inclusive start_line..end_line) or replace_section (a markdown header such as '## Acceptance Criteria'; its body up to the next header of the same or higher level is replaced). Each edit is stored as a new version with its message.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<DescriptionUpdated>()
    )]
    async fn jility_update_description(
        &self,
        params: Parameters<UpdateDescription>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<DescriptionUpdated> {
        self.call::<ops::UpdateDescription>(params, context, render::description_updated)
            .await
    }

    #[tool(
        description = "Move a ticket through the workflow: backlog → todo → in_progress → review → done, blocked from and back to any open status, done reopens to todo or in_progress. Other moves fail with invalid_status naming the allowed ones.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<StatusUpdated>()
    )]
    async fn jility_update_status(
        &self,
        params: Parameters<UpdateStatus>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<StatusUpdated> {
        self.call::<ops::UpdateStatus>(params, context, render::status_updated)
            .await
    }

    #[tool(
        description = "Add a markdown comment to a ticket (supports @mentions).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<CommentAdded>()
    )]
    async fn jility_add_comment(
        &self,
        params: Parameters<AddComment>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<CommentAdded> {
        self.call::<ops::AddComment>(params, context, render::comment_added)
            .await
    }

    #[tool(
        description = "Assign or reassign a ticket to humans or agents (several = pairing; empty list = unassign). The handoff message becomes a comment.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<Assigned>()
    )]
    async fn jility_assign_ticket(
        &self,
        params: Parameters<AssignTicket>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<Assigned> {
        self.call::<ops::AssignTicket>(params, context, render::assigned)
            .await
    }

    #[tool(
        description = "Link a git commit to a ticket for traceability.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<CommitLinked>()
    )]
    async fn jility_link_commit(
        &self,
        params: Parameters<LinkCommit>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<CommitLinked> {
        self.call::<ops::LinkCommit>(params, context, render::commit_linked)
            .await
    }

    #[tool(
        description = "Mark that a ticket depends on another (the other must be completed first). Refuses cycles with dependency_cycle, naming the cycle.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<DependencyAdded>()
    )]
    async fn jility_add_dependency(
        &self,
        params: Parameters<Dependency>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<DependencyAdded> {
        self.call::<ops::AddDependency>(params, context, render::dependency_added)
            .await
    }

    #[tool(
        description = "Remove a dependency relationship.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<DependencyRemoved>()
    )]
    async fn jility_remove_dependency(
        &self,
        params: Parameters<Dependency>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<DependencyRemoved> {
        self.call::<ops::RemoveDependency>(params, context, render::dependency_removed)
            .await
    }

    #[tool(
        description = "Get the dependency tree of a ticket: what blocks it and what it blocks, directly and transitively.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<DependencyGraph>()
    )]
    async fn jility_get_dependency_graph(
        &self,
        params: Parameters<TicketId>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<DependencyGraph> {
        self.call::<ops::DependencyGraph>(params, context, render::graph)
            .await
    }

    #[tool(
        description = "List ticket templates: the built-in ones and the project's own (.jility/templates/*.md), with their variables; `limit` default 50, at most 200; page on with `cursor`.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<TemplateList>()
    )]
    async fn jility_list_templates(
        &self,
        params: Parameters<ListTemplates>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<TemplateList> {
        self.page::<ops::ListTemplates, _>(params, context, render::templates)
            .await
    }

    #[tool(
        description = "Create a ticket from a template, filling its {{variables}}; every variable the template uses must be given.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<Created>()
    )]
    async fn jility_create_from_template(
        &self,
        params: Parameters<FromTemplate>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<Created> {
        self.call::<ops::CreateFromTemplate>(params, context, render::created)
            .await
    }

    #[tool(
        description = "Full-text search across titles, descriptions and comments, best matches first, with a snippet per hit. All words must match; \"quoted phrases\" match exactly; punctuation is ignored. `limit` default 20, at most 100; page on with `cursor`.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<SearchResults>()
    )]
    async fn jility_search_tickets(
        &self,
        params: Parameters<SearchTickets>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<SearchResults> {
        self.page::<ops::SearchTickets, _>(params, context, render::search)
            .await
    }

    #[tool(
        description = "The versions of a ticket's description, numbered from 1 (the original), each with its diff against the previous one, author, time and message.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<History>()
    )]
    async fn jility_get_ticket_history(
        &self,
        params: Parameters<TicketId>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<History> {
        self.call::<ops::History>(params, context, render::history)
            .await
    }

    #[tool(
        description = "Restore an earlier version of a ticket's description; recorded as a new version (nothing is lost).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<DescriptionUpdated>()
    )]
    async fn jility_revert_description(
        &self,
        params: Parameters<RevertDescription>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<DescriptionUpdated> {
        self.call::<ops::RevertDescription>(params, context, render::description_updated)
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl<B: Backend> ServerHandler for JilityServer<B> {
    /// The tools the caller may use (at `/mcp` on `jility serve`: what its token's scopes
    /// allow, so a read-only token sees no write tools).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context);
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| self.allowed(&tool.name, &caller))
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        if context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
        {
            result.ttl_ms = Some(0);
            // At `/mcp` the list depends on the caller's token.
            result.cache_scope = Some(if B::PER_CALLER {
                CacheScope::Private
            } else {
                CacheScope::Public
            });
        }
        Ok(result)
    }

    /// A call of a tool the caller may not use is `permission_denied`, naming the scope,
    /// before its arguments are looked at.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(op) = ops::describe_tool(&request.name) {
            let caller = self.caller(&context);
            if !self.shared.backend.allows(&caller, op) {
                let ticket = request
                    .arguments
                    .as_ref()
                    .and_then(|args| args.get("ticket_id")?.as_str().map(str::to_string));
                if let Some(err) = self.shared.backend.refuse(&caller, op, ticket).await {
                    return Ok(MarkdownReply::<()>::err(err).into_call_result().into());
                }
            }
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        self.tool_router.call(tcc).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}
