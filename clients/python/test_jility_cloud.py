"""jility's cloud mode beyond the scenario that test_servers.py runs on it (variants
`jility-cloud`, `jility-bridge`): the /mcp endpoint of `jility serve` refuses requests without
a valid token; a narrower token sees and may use only what its scopes allow; and the cloud
answers the scenario as local mode does."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import SCENARIOS, api_request, check_error_object, connect, make, substitute, validate

pytestmark = pytest.mark.anyio

# The tools a `tickets:read` token may use (ops.rs: the operations guarded by TicketsRead).
READ_TOOLS = {
    "jility_estimate_effort",
    "jility_get_dependency_graph",
    "jility_get_epic",
    "jility_get_ticket",
    "jility_get_ticket_history",
    "jility_list_epics",
    "jility_list_notifications",
    "jility_list_sprints",
    "jility_list_templates",
    "jility_list_tickets",
    "jility_list_views",
    "jility_mark_notifications_read",
    "jility_plan_sprint",
    "jility_search_tickets",
    "jility_sprint_stats",
    "jility_suggest_related",
    "jility_watch_ticket",
}

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


async def tools_of(client) -> dict:
    tools = {}
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update({tool.name: tool for tool in page.tools})
        cursor = page.next_cursor
        if not cursor:
            return tools


def test_jility_cloud_mcp_needs_a_token(tmp_path: Path) -> None:
    server = make("jility-cloud", tmp_path, "")
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    for extra in ({}, {"Authorization": "Bearer jil_live_not-a-token"}):
        response = httpx.post(server.url, json=INITIALIZE, headers={**headers, **extra}, timeout=30)
        assert response.status_code == 401, (extra, response.status_code, response.text)
    right = httpx.post(server.url, json=INITIALIZE, headers={**headers, **server.headers}, timeout=30)
    assert right.status_code == 200, right.text


async def test_jility_cloud_read_token(tmp_path: Path) -> None:
    server = make("jility-cloud", tmp_path, "")
    status, minted = api_request(server, "POST", "/tokens", {"name": "reader", "scopes": ["tickets:read"]})
    assert status == 201, minted
    assert minted["scopes"] == ["tickets:read"] and minted["token"].startswith("jil_live_"), minted

    # The full_access token sees all 39 tools; create_ticket's outputSchema comes from there.
    async with connect(server, "http") as client:
        everything = await tools_of(client)
        assert len(everything) == 39, sorted(everything)
        made = await client.call_tool("jility_create_ticket", {"title": "Visible to readers"})
        assert not made.is_error, made.structured_content

    server.headers = {"Authorization": f"Bearer {minted['token']}"}
    async with connect(server, "http") as client:
        tools = await tools_of(client)
        assert set(tools) == READ_TOOLS
        for name, tool in tools.items():
            assert tool.output_schema == everything[name].output_schema, name
        listed = await client.call_tool("jility_list_tickets", {})
        assert not listed.is_error, listed.structured_content
        validate(listed.structured_content, tools["jility_list_tickets"].output_schema, "list_tickets")
        assert "API-1" in json.dumps(listed.structured_content)

        result = await client.call_tool("jility_create_ticket", {"title": "Not allowed"})
        structured = result.structured_content
        what = f"create_ticket with a tickets:read token: {structured}"
        assert result.is_error, what
        validate(structured, everything["jility_create_ticket"].output_schema, what)
        assert structured["status"] == "error", what
        check_error_object(structured["error"], what)
        assert structured["error"]["code"] == "permission_denied", what
        assert structured["error"]["retryable"] is False, what
        assert "tickets:write" in json.dumps(structured), f"the error names the scope needed: {what}"

    status, tickets = api_request(server, "GET", "/tickets")
    assert status == 200 and "Not allowed" not in json.dumps(tickets), tickets


async def test_jility_bridge_read_token(tmp_path: Path) -> None:
    """The bridge lists the tools its token's scopes allow, as `/mcp` does (it asks the API
    which scopes at start): a `tickets:read` token sees no write tool, and a write called all
    the same is permission_denied, an isError result that matches the tools' outputSchema
    (whose error member every tool shares)."""
    server = make("jility-bridge", tmp_path, "")
    status, minted = api_request(server, "POST", "/tokens", {"name": "reader", "scopes": ["tickets:read"]})
    assert status == 201, minted
    server.env = {**server.env, "JILITY_API_TOKEN": minted["token"]}
    async with connect(server, "stdio") as client:
        tools = await tools_of(client)
        assert "jility_get_ticket" in tools and "jility_list_tickets" in tools, sorted(tools)
        assert "jility_create_ticket" not in tools, sorted(tools)
        assert "jility_add_comment" not in tools, sorted(tools)
        result = await client.call_tool("jility_create_ticket", {"title": "Not allowed"})
        what = f"create_ticket through the bridge with a tickets:read token: {result.structured_content}"
        assert result.is_error, what
        validate(result.structured_content, tools["jility_get_ticket"].output_schema, what)
        check_error_object(result.structured_content["error"], what)
        assert result.structured_content["error"]["code"] == "permission_denied", what


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?")


BULK_ID = re.compile(r'(?i)(?<="bulk_id": ")[0-9a-f]{8}|(?<=bulk edit )[0-9a-f]{8}')


def comparable(tool: str, structured: Any, text: str, actor: str) -> tuple[str, str]:
    """An answer without what differs by nature between runs and modes: ids, times, the actor
    (JILITY_ACTOR locally, the token's name in the cloud), and search snippets (local mode
    takes them from SQLite FTS5's snippet(), the cloud from PostgreSQL's ts_headline on the
    first field that matches: the same hits, not always the same excerpt)."""
    if tool == "jility_search_tickets" and isinstance(structured, dict) and "data" in structured:
        structured = json.loads(json.dumps(structured))
        for hit in structured["data"].get("hits", []):
            hit.pop("snippet", None)
        text = "\n".join(line for line in text.splitlines() if not line.startswith("   > "))
    dump = json.dumps(structured, sort_keys=True, ensure_ascii=False)
    out = []
    for value in (dump, text):
        value = TIMESTAMP.sub("<time>", UUID.sub("<uuid>", value))
        # A bulk edit's id is random.
        value = BULK_ID.sub("<bulk>", value)
        out.append(re.sub(rf"\b{re.escape(actor)}\b", "<actor>", value))
    return out[0], out[1]


async def scenario_answers(name: str, transport: str, tmp: Path) -> tuple[dict[str, Any], list[Any]]:
    server = make(name, tmp, "")
    answers = []
    async with connect(server, transport) as client:
        tools = {n: t.model_dump(mode="json", exclude_none=True) for n, t in (await tools_of(client)).items()}
        for spec in SCENARIOS["jility"]["calls"]:
            args = substitute(spec["args"], {})
            result = await client.call_tool(spec["tool"], args)
            text = "".join(getattr(block, "text", "") for block in result.content)
            answers.append((spec["tool"], args, result.is_error, *comparable(spec["tool"], result.structured_content, text, server.actor)))
    return tools, answers


@pytest.mark.parametrize(("name", "transport"), [("jility-cloud", "http"), ("jility-bridge", "stdio")])
async def test_jility_cloud_answers_like_local(name: str, transport: str, tmp_path: Path) -> None:
    """The same tools (definitions and schemas) and the same answers (structuredContent and
    text) to jility's scenario as local mode, but for ids, times, actor and search snippets."""
    local_tools, local = await scenario_answers("jility", "stdio", tmp_path / "local")
    cloud_tools, cloud = await scenario_answers(name, transport, tmp_path / "cloud")
    assert cloud_tools == local_tools
    for here, there in zip(local, cloud):
        assert there == here, f"{name}: {here[0]} {json.dumps(here[1])} answers otherwise than local mode"


async def test_jility_cloud_oauth_with_the_python_sdk(tmp_path: Path) -> None:
    """The Python SDK's OAuth client: discovery from the 401, dynamic registration, a person
    (scripted, as a browser without script would) signing in and approving reading, the
    code exchanged with PKCE; then only the reading tools are listed and work."""
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    from harness import binary, run

    server = make("jility-cloud", tmp_path, "")
    jility = binary("jility")
    password = "correct horse battery"
    admin = [jility, "admin"]
    db = ["--database-url", server.database]
    run([*admin, "create-user", "--email", "pia@example.com", "--name", "Pia", "--password-stdin", *db], server.cwd, server.env, password)
    run([*admin, "add-member", "--workspace", "acme", "--email", "pia@example.com", "--role", "member", *db], server.cwd, server.env)
    base = server.url.removesuffix("/mcp")
    redirect = "http://127.0.0.1:47019/callback"

    class Memory:
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    asked: list[str] = []

    async def redirect_handler(url: str) -> None:
        asked.append(url)

    def hidden(page: str) -> list[tuple[str, str]]:
        return re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)

    async def callback_handler() -> AuthorizationCodeResult:
        # Pia in a browser: sign in, then approve reading only on the consent page.
        with httpx.Client(base_url=base, timeout=30, follow_redirects=False) as browser:
            login = browser.get("/login")
            csrf = dict(hidden(login.text))["_csrf"]
            signed = browser.post("/login", data={"_csrf": csrf, "email": "pia@example.com", "password": password}, headers={"origin": base})
            assert signed.status_code == 303, signed.text
            consent = browser.get(asked[-1])
            assert consent.status_code == 200 and "python-sdk-client" in consent.text, consent.text
            form = [(k, v.replace("&amp;", "&")) for k, v in hidden(consent.text)] + [("decision", "approve"), ("grant", "tickets:read")]
            answer = browser.post(
                "/oauth/authorize",
                content=urllib.parse.urlencode(form),
                headers={"origin": base, "content-type": "application/x-www-form-urlencoded"},
            )
            assert answer.status_code == 303, answer.text
            back = urllib.parse.urlparse(answer.headers["location"])
            assert back.geturl().startswith(redirect), back
            query = dict(urllib.parse.parse_qsl(back.query))
            assert query.get("iss") == base, query
            return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    storage = Memory()
    provider = OAuthClientProvider(
        server_url=server.url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-client",
            redirect_uris=[redirect],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with create_mcp_http_client(auth=provider) as http:
        async with Client(streamable_http_client(server.url, http_client=http), read_timeout_seconds=60) as client:
            tools = await tools_of(client)
            assert set(tools) == READ_TOOLS, sorted(tools)
            listed = await client.call_tool("jility_list_tickets", {})
            assert not listed.is_error, listed.structured_content
    assert storage.tokens is not None and storage.tokens.scope == "tickets:read", storage.tokens
    assert storage.client is not None and storage.client.client_id.startswith("jilc_"), storage.client
