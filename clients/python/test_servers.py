"""Every server through the official Python MCP SDK, over stdio and over Streamable HTTP:
handshake, tool listing, every tool called (ok and error results, checked against the tool's
outputSchema), a paged walk with cursors, forged cursors refused, and a server's read-only mode
(scenario `read_only`: `git mile mcp-server --read-only`)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from harness import (
    CASES,
    SCENARIOS,
    TRANSPORTS,
    VARIANTS,
    Server,
    check_error_object,
    check_page,
    connect,
    dig,
    http_client,
    http_endpoint,
    jility_seed,
    make,
    scenario_of,
    substitute,
    validate,
)

pytestmark = pytest.mark.anyio
warnings.filterwarnings("ignore", category=DeprecationWarning)


async def all_tools(client: Client) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            assert tool.name not in tools, f"tool {tool.name} listed twice"
            tools[tool.name] = tool
        cursor = page.next_cursor
        if not cursor:
            return tools


async def call(client: Client, tools: dict[str, Any], server: str, spec: dict[str, Any], variables: dict[str, str]) -> Any:
    """Make one scenario call and check it; returns structuredContent."""
    name = spec["tool"]
    args = substitute(spec["args"], variables)
    what = f"{server} {name} {json.dumps(args)}"
    envelope = SCENARIOS[scenario_of(server)]["envelope"]
    if spec["expect"] == "rpc_error":
        with pytest.raises(MCPError) as caught:
            await client.call_tool(name, args)
        assert caught.value.code == spec["rpc_code"], f"{what}: {caught.value!r}"
        if "rpc_data_code" in spec:
            check_error_object(caught.value.data, f"{what} (error data)")
            assert caught.value.data["code"] == spec["rpc_data_code"], f"{what}: {caught.value.data}"
        return None
    result = await client.call_tool(name, args)
    structured = result.structured_content
    text = "".join(getattr(block, "text", "") for block in result.content)
    if structured is None and result.is_error and not envelope:
        # git_mile.list and git_mile.show carry the error object as JSON text only: their
        # outputSchema describes the entity or the page, not the error.
        error = json.loads(text)["error"]
        check_error_object(error, what)
        assert spec["expect"] == "error", f"{what}: expected ok, got {text[:500]}"
        if "code" in spec:
            assert error["code"] == spec["code"], f"{what}: expected {spec['code']}, got {text[:500]}"
        assert "fields" not in spec and "capture" not in spec, f"{what}: no structuredContent to look into"
        return {"error": error}
    assert structured is not None, f"{what}: no structuredContent (text: {text[:300]})"
    schema = tools[name].output_schema
    assert schema is not None, f"{what}: the tool declares no outputSchema"
    validate(structured, schema, what)
    dump = json.dumps(structured, ensure_ascii=False)
    if not envelope:
        # git-mile answers the same JSON as text and as structuredContent (errors included).
        assert json.loads(text) == structured, f"{what}: the text is not the JSON of structuredContent: {text[:500]}"
    if spec["expect"] == "ok":
        assert not result.is_error, f"{what}: expected ok, got {dump[:500]}"
        if envelope:
            assert structured.get("status") == "ok", f"{what}: {dump[:500]}"
            assert "data" in structured, f"{what}: {dump[:500]}"
    else:
        assert result.is_error, f"{what}: expected an error, got {dump[:500]}"
        error = structured.get("error")
        if envelope:
            assert structured.get("status") == "error", f"{what}: {dump[:500]}"
            check_error_object(error, what)
        else:
            # git-mile's writes: structuredContent is {"error": {...}} (the error branch of
            # their outputSchema's anyOf), nothing else.
            assert set(structured) == {"error"}, f"{what}: {dump[:500]}"
            check_error_object(error, what)
        if "code" in spec:
            assert error["code"] == spec["code"], f"{what}: expected {spec['code']}, got {dump[:500]}"
    if "contains" in spec:
        assert spec["contains"] in dump, f"{what}: {spec['contains']!r} not in {dump[:800]}"
    for path, expected in substitute(spec.get("fields", {}), variables).items():
        try:
            got = dig(structured, path)
        except (KeyError, IndexError, TypeError):
            raise AssertionError(f"{what}: no {path} in {dump[:800]}") from None
        assert got == expected, f"{what}: {path} is {got!r}, expected {expected!r}"
    for var, path in spec.get("capture", {}).items():
        variables[var] = str(dig(structured, path))
    return structured


@pytest.mark.parametrize(("name", "transport"), CASES)
async def test_handshake_and_tool_list(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    scenario = SCENARIOS[scenario_of(name)]
    async with connect(server, transport) as client:
        assert client.server_info is not None and client.server_info.name == scenario_of(name)
        assert client.server_info.version
        caps = client.server_capabilities
        assert caps.tools is not None
        assert (caps.resources is not None) == ("resources" in scenario["capabilities"]), caps
        assert (caps.prompts is not None) == ("prompts" in scenario["capabilities"]), caps
        await client.send_ping()
        tools = await all_tools(client)
        covered = {c["tool"] for c in scenario["calls"] + scenario.get("calls_without_credentials", [])}
        assert set(tools) == covered, f"tools not covered by the scenario: {set(tools) ^ covered}"
        for tool in tools.values():
            assert tool.description, tool.name
            assert tool.input_schema.get("type") == "object", tool.name
            assert tool.output_schema is not None, f"{tool.name} has no outputSchema"
        if "resources" in scenario["capabilities"]:
            resources = await client.list_resources()
            assert resources.resources, "resources capability but no resources"
            uris = [str(r.uri) for r in resources.resources] + scenario.get("read_resources", [])
            for uri in uris:
                read = await client.read_resource(uri)
                assert read.contents, uri
                for content in read.contents:
                    if content.mime_type == "application/json":
                        json.loads(content.text)
        if "prompts" in scenario["capabilities"]:
            prompts = await client.list_prompts()
            assert prompts.prompts
            for prompt in prompts.prompts:
                got = await client.get_prompt(prompt.name, {})
                assert got.messages, prompt.name


@pytest.mark.parametrize(("name", "transport"), CASES)
async def test_every_tool(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    scenario = SCENARIOS[scenario_of(name)]
    variables = dict(server.vars)
    async with connect(server, transport) as client:
        tools = await all_tools(client)
        for spec in scenario["calls"]:
            await call(client, tools, name, spec, variables)
        if server.actor is not None:
            # jility records who wrote: JILITY_ACTOR locally, the token's name in the cloud.
            ticket = (await client.call_tool("jility_get_ticket", {"ticket_id": "API-1"})).structured_content
            assert ticket["data"]["ticket"]["created_by"] == server.actor, ticket["data"]["ticket"]


@pytest.mark.parametrize(("name", "transport"), [(n, t) for n, t in CASES if "read_only" in SCENARIOS[scenario_of(n)]])
async def test_read_only(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    """The server started with the scenario's read_only args (`git mile mcp-server
    --read-only`) lists exactly the read tools and refuses the others."""
    server = make(name, tmp_path, mock)
    spec = SCENARIOS[scenario_of(name)]["read_only"]
    server.args = [*server.args, *spec["args"]]
    variables = dict(server.vars)
    async with connect(server, transport) as client:
        tools = await all_tools(client)
        assert sorted(tools) == sorted(spec["tools"]), f"{name} {spec['args']}: lists {sorted(tools)}"
        for call_spec in spec["calls"]:
            await call(client, tools, name, call_spec, variables)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_twig_network_tools_without_credentials(transport: str, tmp_path: Path, mock: str) -> None:
    server = make("twig-mcp", tmp_path, mock, credentials=False)
    async with connect(server, transport) as client:
        tools = await all_tools(client)
        for spec in SCENARIOS["twig-mcp"]["calls_without_credentials"]:
            structured = await call(client, tools, "twig-mcp", spec, {})
            assert structured["error"]["retryable"] is False
            assert "test-token" not in json.dumps(structured)


async def walk(client: Client, server: str, spec: dict[str, Any], variables: dict[str, str]) -> list[Any]:
    """Follow cursors from the first page to the last; the items of all pages."""
    args = substitute(spec["args"], variables)
    items: list[Any] = []
    cursor = None
    pages = 0
    total = None
    while True:
        page_args = {**args, "limit": spec["limit"]}
        if cursor is not None:
            page_args["cursor"] = cursor
        result = await client.call_tool(spec["tool"], page_args)
        structured = result.structured_content
        assert not result.is_error, f"{server} {page_args}: {structured}"
        pages += 1
        assert pages <= 100, "the walk does not end"
        if SCENARIOS[scenario_of(server)]["envelope"]:
            data = structured["data"]
            page = structured.get("page")
            check_page(page, f"{server} {spec['tool']}")
            assert total is None or page["total"] == total, "total changed between pages"
            total = page["total"]
            batch = data if isinstance(data, list) else next(v for v in data.values() if isinstance(v, list))
            cursor = page.get("next_cursor")
        else:
            batch = structured["items"]
            cursor = structured.get("nextCursor")
        assert len(batch) <= spec["limit"], f"page longer than limit: {batch}"
        items.extend(batch)
        if not cursor:
            break
        assert len(batch) == spec["limit"], "a page before the last is short"
    assert pages > 1, f"{server} {spec['tool']}: one page only ({items}); the fixture is too small"
    if total is not None:
        assert len(items) == total, f"{len(items)} items over {pages} pages, total {total}"
    if "total" in spec:
        assert len(items) == spec["total"], items
    keys = [json.dumps(item, sort_keys=True) for item in items]
    assert len(set(keys)) == len(keys), "an item repeats across pages"
    return items


@pytest.mark.parametrize(("name", "transport"), CASES)
async def test_paged_walk(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    if scenario_of(name) == "jility":
        jility_seed(server, 5)
    spec = SCENARIOS[scenario_of(name)]["paged"]
    async with connect(server, transport) as client:
        first = await walk(client, name, spec, server.vars)
        # Same query, same answer: the walk is repeatable.
        again = await walk(client, name, spec, server.vars)
        assert first == again


@pytest.mark.parametrize(("name", "transport"), CASES)
async def test_forged_cursor(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    if scenario_of(name) == "jility":
        jility_seed(server, 3)
    spec = SCENARIOS[scenario_of(name)]["forged_cursor"]
    args = substitute(spec["args"], server.vars)
    async with connect(server, transport) as client:
        tools = await all_tools(client)
        # A real cursor, altered by one character, and one that was never a cursor.
        first = await client.call_tool(spec["tool"], {**args, "limit": 1})
        structured = first.structured_content
        real = structured["page"].get("next_cursor") if SCENARIOS[scenario_of(name)]["envelope"] else structured.get("nextCursor")
        forged = ["AAAAnot-a-cursor"]
        if real:
            flipped = real[:-1] + ("A" if real[-1] != "A" else "B")
            forged.append(flipped)
        for cursor in forged:
            what = f"{name} {spec['tool']} cursor={cursor!r}"
            if SCENARIOS[scenario_of(name)]["envelope"]:
                result = await client.call_tool(spec["tool"], {**args, "cursor": cursor})
                assert result.is_error, f"{what}: accepted: {result.structured_content}"
                validate(result.structured_content, tools[spec["tool"]].output_schema, what)
                error = result.structured_content["error"]
                check_error_object(error, what)
                assert error["code"] == "invalid_params", f"{what}: {error}"
                assert error["retryable"] is False
            else:
                with pytest.raises(MCPError) as caught:
                    await client.call_tool(spec["tool"], {**args, "cursor": cursor})
                assert caught.value.code == -32602, f"{what}: {caught.value!r}"
                check_error_object(caught.value.data, f"{what} (error data)")
                assert caught.value.data["code"] == "invalid_cursor", f"{what}: {caught.value.data}"


@pytest.mark.parametrize(("name", "transport"), CASES)
async def test_sdk_default_mode(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    """The SDK's default connection mode ('auto': probe server/discover, fall back to
    initialize), as an application that does not choose one connects."""
    server = make(name, tmp_path, mock)
    async with connect(server, transport, mode="auto") as client:
        tools = await all_tools(client)
        assert tools
        first = SCENARIOS[scenario_of(name)]["calls"][0]
        await call(client, tools, name, first, dict(server.vars))


@pytest.mark.parametrize("name", [n for n, t in CASES if t == "http"])
async def test_http_sessions_share_cursors(name: str, tmp_path: Path, mock: str) -> None:
    """A cursor from one HTTP session continues the walk in another session of the same
    process (the kit keeps one cursor key per process)."""
    server = make(name, tmp_path, mock)
    if scenario_of(name) == "jility":
        jility_seed(server, 3)
    spec = SCENARIOS[scenario_of(name)]["paged"]
    args = {**substitute(spec["args"], server.vars), "limit": 1}
    envelope = SCENARIOS[scenario_of(name)]["envelope"]
    with http_endpoint(server) as url:
        async with http_client(server, url) as one:
            first = (await one.call_tool(spec["tool"], args)).structured_content
        cursor = first["page"]["next_cursor"] if envelope else first["nextCursor"]
        assert cursor
        async with http_client(server, url) as two:
            second = await two.call_tool(spec["tool"], {**args, "cursor": cursor})
        assert not second.is_error, second.structured_content
        a = first["data"] if envelope else first["items"]
        b = second.structured_content["data"] if envelope else second.structured_content["items"]
        assert a != b


async def test_git_mile_as_git_subcommand(tmp_path: Path, mock: str) -> None:
    """`git mile mcp-server` (git finds git-mile on PATH) speaks MCP over stdio too."""
    server = make("git-mile", tmp_path, mock)
    bin_dir = str(Path(server.command).parent)
    server.command = "git"
    server.args = ["mile", "mcp-server"]
    server.env = {**server.env, "PATH": f"{bin_dir}:{server.env['PATH']}"}
    async with connect(server, "stdio") as client:
        assert client.server_info.name == "git-mile"
        result = await client.call_tool("git_mile.list", {"entity": "issue"})
        assert not result.is_error
        assert len(result.structured_content["items"]) == 3


@pytest.mark.parametrize(("name", "transport"), [(n, t) for n, t in CASES if "other_query" in SCENARIOS[scenario_of(n)]])
async def test_cursor_of_another_query(name: str, transport: str, tmp_path: Path, mock: str) -> None:
    """A genuine cursor is bound to its query: with other filters or order it is refused."""
    server = make(name, tmp_path, mock)
    if scenario_of(name) == "jility":
        jility_seed(server, 3)
    spec = SCENARIOS[scenario_of(name)]["other_query"]
    envelope = SCENARIOS[scenario_of(name)]["envelope"]
    async with connect(server, transport) as client:
        first = (await client.call_tool(spec["tool"], {**spec["first"], "limit": 1})).structured_content
        cursor = first["page"]["next_cursor"] if envelope else first["nextCursor"]
        assert cursor, first
        what = f"{name} {spec['tool']} {spec['then']} with the cursor of {spec['first']}"
        if envelope:
            result = await client.call_tool(spec["tool"], {**spec["then"], "limit": 1, "cursor": cursor})
            assert result.is_error, f"{what}: accepted"
            check_error_object(result.structured_content["error"], what)
            assert result.structured_content["error"]["code"] == "invalid_params", what
        else:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(spec["tool"], {**spec["then"], "limit": 1, "cursor": cursor})
            assert caught.value.code == -32602, f"{what}: {caught.value!r}"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cursor_of_another_server(transport: str, tmp_path: Path, mock: str) -> None:
    """A cursor of twig-mcp's list_branches means nothing to jility (local, bridge, cloud) or
    duvet: refused."""
    twig = make("twig-mcp", tmp_path / "twig", mock)
    async with connect(twig, transport) as client:
        first = (await client.call_tool("list_branches", {"limit": 1})).structured_content
    cursor = first["page"]["next_cursor"]
    targets = [("jility", "jility_list_tickets", {}), ("duvet", "list_uncited_requirements", {})]
    targets += [(n, "jility_list_tickets", {}) for n, t in CASES if n in VARIANTS and t == transport]
    for name, tool, args in targets:
        server = make(name, tmp_path / name, mock)
        async with connect(server, transport) as client:
            result = await client.call_tool(tool, {**args, "cursor": cursor})
            assert result.is_error, f"{name} accepted twig's cursor"
            assert result.structured_content["error"]["code"] == "invalid_params"
