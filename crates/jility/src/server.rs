//! The MCP surface of `jility --mcp-server`: one tool per operation of the tracker. Each
//! answers with the design's readable markdown as text and the same facts as the JSON
//! envelope in `structuredContent`. Every operation runs on a blocking thread
//! ([`jility_core::service`]), so a call waiting for the database never holds up another.
//!
//! This is the only module that speaks MCP (imports rmcp).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jility_core::backend::{Backend, Caller};
use jility_core::errors;
use jility_core::ops::{self, Operation, Verb};
use jility_core::token::Principal;
use mcp_common::CursorKey;
use mcp_common::ask::Asker;
use mcp_common::surface::{Entry, Selection, Surface};
use mcp_common::{MarkdownReply, Parameters, ToolError, output_schema, paged_output_schema};
use rmcp::handler::server::common::{FromContextPart as _, schema_for_input};
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler, model::*, tool_handler};

pub const INSTRUCTIONS: &str = "Jility is the project's ticket tracker. Tickets are named KEY-N \
(e.g. TASK-42). Find work with jility_list_tickets (filters, grouped by status) or \
jility_search_tickets; read one with jility_get_ticket; take it with jility_claim_ticket; edit \
descriptions precisely with jility_update_description (append, replace_lines, replace_section) \
instead of rewriting them; move it through backlog → todo → in_progress → review → done with \
jility_update_status; hand over with jility_assign_ticket. Every change is recorded with its \
author; jility_get_ticket_history shows every version of a description. Plan with epics \
(jility_list_epics, jility_get_epic: progress and the critical path) and sprints \
(jility_plan_sprint proposes what fits, jility_add_to_sprint applies it, jility_sprint_stats \
gives the burndown and velocity). Lists answer a page: pass page.next_cursor as cursor, with \
the same other arguments, for the next one.";

/// What every session of a server shares: where operations run and the configured actor.
#[derive(Clone)]
pub struct Shared<B> {
    backend: B,
    /// `JILITY_ACTOR`, when set; otherwise each session's client name from its handshake.
    /// (In the cloud, the token's name is the actor.)
    actor: Option<String>,
    /// The tools offered (`--toolsets`, `--tools`, `--read-only`): all by default.
    selection: Selection,
    /// Seals the state of the questions put to users (crate::confirm); its key is this
    /// process's, so a question is answered to the server that asked it.
    asker: Arc<Asker>,
}

impl<B: Backend> Shared<B> {
    /// The tools on `backend`, authored by `actor` where the backend takes the caller's
    /// word for it (local mode).
    pub fn new(backend: B, actor: Option<String>) -> Self {
        Self {
            backend,
            actor,
            selection: Selection::all(),
            asker: Arc::new(Asker::new(&CursorKey::random())),
        }
    }

    /// Offering only the tools `selection` chooses.
    pub fn with_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }
}

/// The toolset of the tool `name`: `planning` (epics and sprints), `inbox` (notifications
/// and watching), `tickets` (everything else: tickets, their links and history, search,
/// views, bulk edits).
fn toolset(name: &str) -> &'static str {
    match name {
        "jility_list_epics"
        | "jility_get_epic"
        | "jility_list_sprints"
        | "jility_create_sprint"
        | "jility_start_sprint"
        | "jility_complete_sprint"
        | "jility_add_to_sprint"
        | "jility_remove_from_sprint"
        | "jility_plan_sprint"
        | "jility_sprint_stats" => "planning",
        "jility_list_notifications" | "jility_mark_notifications_read" | "jility_watch_ticket" => {
            "inbox"
        }
        _ => "tickets",
    }
}

/// A person's name for the tool `name`: its words, e.g. `jility_list_tickets` → "List
/// tickets" (the tools are named for what they do).
fn title(name: &str) -> String {
    let words = name.trim_start_matches("jility_").replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

/// The icon of a toolset: tickets blue, planning green, the inbox amber.
fn toolset_icon(toolset: &str) -> Icon {
    mcp_common::surface::icon(match toolset {
        "planning" => "2a7f62",
        "inbox" => "c77c02",
        _ => "2f6fb5",
    })
}

/// Every tool, in the operations table's order, with its toolset, and writing unless its
/// route is a GET: what `--toolsets`, `--tools` and `--read-only` choose from.
pub fn catalog() -> &'static [Entry] {
    static CATALOG: LazyLock<Vec<Entry>> = LazyLock::new(|| {
        let mut entries = Vec::new();
        macro_rules! entry {
            ($op:ident) => {
                if <ops::$op as Operation>::TOOL {
                    let name = <ops::$op as Operation>::NAME;
                    entries.push(Entry {
                        name,
                        toolset: toolset(name),
                        writes: <ops::$op as Operation>::VERB != Verb::Get,
                    });
                }
            };
        }
        jility_core::for_each_operation!(entry);
        entries
    });
    &CATALOG
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
            trace_parent: context
                .meta
                .get("traceparent")
                .and_then(|v| v.as_str())
                .filter(|v| v.len() <= 128)
                .map(str::to_string),
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

    /// A tool's answer: the operation's result with its markdown, and a listing's page
    /// beside its data.
    async fn answer<O: Operation>(
        &self,
        params: Parameters<O::Params>,
        context: RequestContext<RoleServer>,
    ) -> MarkdownReply<O::Data> {
        match self.exec::<O>(params, &context).await {
            Ok(output) => {
                let markdown = O::markdown(&output);
                match O::split(output) {
                    (data, Some(page)) => MarkdownReply::paged(data, page, markdown),
                    (data, None) => MarkdownReply::ok(data, markdown),
                }
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
        .or_insert_with(|| Box::new(tools::<B>()));
    match router.downcast_ref::<ToolRouter<JilityServer<B>>>() {
        Some(router) => router.clone(),
        // Unreachable (the entry of B's type holds B's router); built afresh all the same.
        None => tools::<B>(),
    }
}

/// One tool per operation of the table that is a tool, in the table's order: the table is
/// the only list of them.
fn tools<B: Backend>() -> ToolRouter<JilityServer<B>> {
    let mut router = ToolRouter::new();
    macro_rules! add {
        ($op:ident) => {
            if <ops::$op as Operation>::TOOL {
                router.add_route(ToolRoute::new_dyn(tool::<ops::$op>(), call::<B, ops::$op>));
            }
        };
    }
    jility_core::for_each_operation!(add);
    // Input schemas in the single-type form every client's dialect accepts.
    mcp_common::protocol::portable_router(router)
}

/// The tool of `O`: its name, description and arguments' schema, its answer's schema (the
/// envelope, with a page for a listing), and its hints: read-only exactly for the GET routes.
fn tool<O: Operation>() -> Tool {
    let input = schema_for_input::<Parameters<O::Params>>().unwrap_or_else(|err| {
        tracing::error!(tool = O::NAME, %err, "the arguments' schema cannot be generated");
        Arc::new(JsonObject::new())
    });
    let output = if O::PAGED {
        paged_output_schema::<O::Data>()
    } else {
        output_schema::<O::Data>()
    };
    let read_only = O::VERB == Verb::Get;
    let tool = Tool::new_with_raw(O::NAME, Some(O::DESCRIPTION.into()), input)
        .with_raw_output_schema(output)
        .with_annotations(ToolAnnotations::from_raw(
            None,
            Some(read_only),
            if read_only { None } else { O::DESTRUCTIVE },
            Some(O::IDEMPOTENT),
            Some(false),
        ));
    mcp_common::surface::dress(tool, &title(O::NAME), &toolset_icon(toolset(O::NAME)))
}

/// A call of `O`'s tool: its arguments (or why they cannot be read), run on the backend.
fn call<B: Backend, O: Operation>(
    mut context: ToolCallContext<'_, JilityServer<B>>,
) -> Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_>> {
    Box::pin(async move {
        // Deleting a ticket and a bulk edit without `expected_count` confirm with the user
        // first, and a `ticket_id` of words asks which ticket, when the client can be asked
        // (MRTR, 2026-07-28).
        let takes_ticket = context
            .service
            .tool_router
            .map
            .get(O::NAME)
            .is_some_and(|route| {
                route
                    .attr
                    .input_schema
                    .get("properties")
                    .and_then(|p| p.get("ticket_id"))
                    .is_some()
            });
        if crate::confirm::may_ask(O::NAME, takes_ticket, context.arguments.as_ref())
            && mcp_common::ask::can_ask(&context.request_context)
        {
            let service = context.service;
            let confirmer = crate::confirm::Confirmer {
                backend: &service.shared.backend,
                caller: service.caller(&context.request_context),
                asker: &service.shared.asker,
                takes_ticket,
            };
            match confirmer.confirm::<O, _>(&mut context).await? {
                crate::confirm::Step::Run => {}
                crate::confirm::Step::Answer(answer) => return Ok(answer),
            }
        }
        let params = Parameters::<O::Params>::from_context_part(&mut context)?;
        let reply = context
            .service
            .answer::<O>(params, context.request_context)
            .await;
        Ok(reply.into_call_result().into())
    })
}

impl<B: Backend> JilityServer<B> {
    pub fn new(shared: Shared<B>) -> Self {
        let tool_router = shared.selection.apply(tool_router(), catalog());
        Self {
            shared,
            tool_router,
        }
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
        // Narrowed by the request's headers (X-MCP-Toolsets, X-MCP-Tools, X-MCP-Readonly).
        let surface = Surface::of(&self.shared.selection, &context, catalog())?;
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| {
                surface.offers(&tool.name, catalog()) && self.allowed(&tool.name, &caller)
            })
            .collect();
        // At `/mcp` the list depends on the caller's token.
        Ok(mcp_common::surface::listing(
            tools,
            &context,
            B::PER_CALLER || surface.narrowed(),
        ))
    }

    /// A call of a tool the caller may not use is `permission_denied`, naming the scope,
    /// before its arguments are looked at.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let surface = Surface::of(&self.shared.selection, &context, catalog())?;
        if !self.tool_router.has_route(&request.name) || !surface.offers(&request.name, catalog()) {
            // Named, with the tools this caller may use.
            let caller = self.caller(&context);
            let tools = self.tool_router.list_all();
            let offered = tools
                .iter()
                .filter(|tool| {
                    surface.offers(&tool.name, catalog()) && self.allowed(&tool.name, &caller)
                })
                .map(|tool| tool.name.as_ref());
            return Err(mcp_common::protocol::unknown_tool(&request.name, offered));
        }
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

    /// Only tools are declared, so the prompt, resource and completion methods (which rmcp
    /// would answer with empty lists) are unknown methods, as in every mode.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(not_declared("prompts/list"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(not_declared("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(not_declared("resources/templates/list"))
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(not_declared("completion/complete"))
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

/// `-32601` for a method of a capability jility does not declare.
fn not_declared(method: &str) -> ErrorData {
    mcp_common::protocol::not_declared(method, "tools (tools/list, tools/call) and ping")
}
