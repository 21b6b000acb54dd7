"""The HTTP guards of every server (mcp_common::http): DNS-rebinding protection (foreign
Origin or Host: 403), the 4 MiB body limit (413), the bearer token (MCP_HTTP_TOKEN: required
off loopback, 401 `unauthenticated` without it or with a wrong one, as jility serve names it),
and OAuth's discovery paths (404 saying the server takes bearer tokens, without a token)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from harness import SERVERS, http_process, make

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "security-test", "version": "1.0"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN = "s3cret-test-token-0123456789abcdef"


def post(url: str, body: bytes | None = None, **headers: str) -> httpx.Response:
    data = body if body is not None else json.dumps(INITIALIZE).encode()
    return httpx.post(url, content=data, headers={**HEADERS, **headers}, timeout=30)


def initialized(response: httpx.Response) -> bool:
    """A 200 whose body (JSON or an SSE event) carries the initialize result."""
    return response.status_code == 200 and '"serverInfo"' in response.text


@pytest.mark.parametrize("name", SERVERS)
def test_plain_initialize_works(name: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    with http_process(server) as url:
        response = post(url, Origin=url.rsplit("/mcp", 1)[0])
        assert initialized(response), (response.status_code, response.text[:500])


@pytest.mark.parametrize("name", SERVERS)
def test_foreign_origin_is_403(name: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    with http_process(server) as url:
        response = post(url, Origin="http://evil.example")
        assert response.status_code == 403, (response.status_code, response.text[:500])


@pytest.mark.parametrize("name", SERVERS)
def test_foreign_host_is_403(name: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    with http_process(server) as url:
        response = post(url, Host="evil.example")
        assert response.status_code == 403, (response.status_code, response.text[:500])


@pytest.mark.parametrize("name", SERVERS)
def test_body_over_4_mib_is_413(name: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    big = dict(INITIALIZE)
    big["params"] = {**INITIALIZE["params"], "padding": "x" * (4 * 1024 * 1024 + 16)}
    with http_process(server) as url:
        response = post(url, json.dumps(big).encode())
        assert response.status_code == 413, (response.status_code, response.text[:500])
        # Just under the limit is still served.
        small = dict(INITIALIZE)
        small["params"] = {**INITIALIZE["params"], "padding": "x" * (4 * 1024 * 1024 - 4096)}
        response = post(url, json.dumps(small).encode())
        assert response.status_code != 413, response.status_code


@pytest.mark.parametrize("name", SERVERS)
def test_public_address_needs_a_token(name: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    done = subprocess.run(
        [server.command, *server.args, "--http", "0.0.0.0:0"],
        cwd=server.cwd,
        env=server.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done
    assert "MCP_HTTP_TOKEN" in done.stderr, done.stderr
    assert "serving MCP" not in done.stderr, done.stderr


@pytest.mark.parametrize("addr", ["127.0.0.1:0", "0.0.0.0:0"])
@pytest.mark.parametrize("name", SERVERS)
def test_bearer_token(name: str, addr: str, tmp_path: Path, mock: str) -> None:
    server = make(name, tmp_path, mock)
    env = {**server.env, "MCP_HTTP_TOKEN": TOKEN}
    with http_process(server, addr=addr, env=env) as url:
        # 0.0.0.0 is announced as such; connect through loopback.
        url = url.replace("0.0.0.0", "127.0.0.1")
        missing = post(url)
        assert missing.status_code == 401, (missing.status_code, missing.text[:300])
        assert TOKEN not in missing.text
        wrong = post(url, Authorization="Bearer not-the-token")
        assert wrong.status_code == 401, (wrong.status_code, wrong.text[:300])
        assert TOKEN not in wrong.text
        for refused in (missing, wrong):
            assert refused.json()["error"]["code"] == "unauthenticated", refused.text[:300]
            assert refused.headers["www-authenticate"].startswith("Bearer"), refused.headers
        # An OAuth client's discovery after the 401 is told there is no OAuth, without a token.
        root = url.removesuffix("/mcp")
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/register"):
            probe = httpx.get(root + path, timeout=30)
            assert probe.status_code == 404, (path, probe.status_code, probe.text[:300])
            assert probe.json()["error"]["code"] == "not_found", probe.text[:300]
            assert "bearer token" in probe.json()["error"]["message"], probe.text[:300]
        right = post(url, Authorization=f"Bearer {TOKEN}")
        assert initialized(right), (right.status_code, right.text[:500])
