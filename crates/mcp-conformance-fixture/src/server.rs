//! What the fixture declares, and which module answers what.

// Logging and `resources/subscribe` are what the 2025-11-25 scenarios test: rmcp marks them
// deprecated (SEP-2577), the fixture serves them all the same.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::state::{Fixture, ListChange};
use crate::wire::{is_stateless, result_of};
use crate::{mrtr, prompts, resources, tools};

/// The tools of a wire: [`tools`]' and, stateless, [`mrtr`]'s.
fn tools_of(stateless: bool) -> Vec<Value> {
    let mut listed = tools::list(stateless);
    if stateless {
        listed.extend(mrtr::definitions());
    }
    listed
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "logging": {},
            "completions": {},
        }))
        .unwrap_or_default();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let stateless = is_stateless(&context);
        result_of(json!({ "tools": tools_of(stateless) }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let stateless = is_stateless(&context);
        let listed = tools_of(stateless);
        let names = listed.iter().filter_map(|tool| tool["name"].as_str());
        if !names.clone().any(|name| name == request.name) {
            return Err(mcp_common::protocol::unknown_tool(&request.name, names));
        }
        if mrtr::TOOLS.contains(&request.name.as_ref()) {
            return mrtr::call(self, request, context).await;
        }
        tools::call(self, request, context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        prompts::list(is_stateless(&context))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if is_stateless(&context) && request.name == prompts::INPUT_REQUIRED {
            return mrtr::prompt(self, &request);
        }
        prompts::get(&request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list()
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        resources::templates()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&request.uri).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        resources::complete(&request)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // The stateless wire removed `logging/setLevel` (a request's `_meta` names its level).
        if is_stateless(&context) {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        self.set_level(request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        resources::check_subscribable(&request.uri)?;
        // The fixture's resources never change: nothing waits on the end of the subscriptions.
        self.subscriptions()
            .accept(request.uri.to_string(), context.peer.clone())
            .map(drop)
            .map_err(|err| ErrorData::internal_error(err, None))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions().remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = mcp_common::subscribe::accepted_filter(requested, |uri| {
            resources::check_subscribable(uri).is_ok()
        });
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.changes();
        let tools = context.accepted().tools_list_changed == Some(true);
        let prompts = context.accepted().prompts_list_changed == Some(true);
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let sent = match change {
                Ok(ListChange::Tools) if tools => context.sink().notify_tool_list_changed().await,
                Ok(ListChange::Prompts) if prompts => {
                    context.sink().notify_prompt_list_changed().await
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => Ok(()),
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            if sent.is_err() {
                return Ok(());
            }
        }
    }
}
