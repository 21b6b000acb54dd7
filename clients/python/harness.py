"""Fixtures and launchers for the client suites: each server on a fresh temp fixture made with
the real tools (git, jility, git-mile), started over stdio (by the SDK) or over Streamable
HTTP (by us, with `--http 127.0.0.1:0`), in a clean environment without credentials."""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "clients" / "fixtures"
BIN_DIR = Path(os.environ.get("MCP_BIN_DIR", REPO / "target" / "debug")).resolve()
SCENARIOS = json.loads((FIXTURES / "scenarios.json").read_text())["servers"]
SERVERS = ["twig-mcp", "duvet", "jility", "git-mile"]
ANNOUNCE = re.compile(r"serving MCP over HTTP at (http://\S+/mcp)")

# Variants: the same server reached another way, running the scenario of the server they name.
#   jility-cloud   `jility serve` on a fresh PostgreSQL database, its /mcp endpoint (Streamable
#                  HTTP, `Authorization: Bearer` with the workspace's first token): remote only
#   jility-bridge  `JILITY_MODE=cloud jility --mcp-server` (stdio, and `--http`) talking to the
#                  API of such a `jility serve`
VARIANTS = {"jility-cloud": "jility", "jility-bridge": "jility"}
TRANSPORTS = ["stdio", "http"]
VARIANT_TRANSPORTS = {"jility-cloud": ["http"]}
# (name, transport) for every server and variant: what the per-server tests run on.
CASES = [(n, t) for n in [*SERVERS, *VARIANTS] for t in VARIANT_TRANSPORTS.get(n, TRANSPORTS)]
SERVE_ANNOUNCE = re.compile(r"serving the API at (http://\S+)/api/v1 and MCP at (http://\S+/mcp)")
# The PostgreSQL server the cloud variants make their databases on (scripts/test ensures it).
DATABASE_URL = os.environ.get("JILITY_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")


def scenario_of(name: str) -> str:
    """The scenario a server or variant runs: `jility-cloud` runs jility's."""
    return VARIANTS.get(name, name)

# The identity and configuration git gets in fixtures: none of the developer's.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Ann Example",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "Ann Example",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
}


def binary(name: str) -> str:
    path = BIN_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the workspace binaries first (scripts/test does)")
    return str(path)


def base_env(home: Path) -> dict[str, str]:
    """A minimal environment: PATH, a temp HOME, git without user config. Nothing else is
    inherited (no GITHUB_TOKEN, GH_TOKEN, JIRA_*, MCP_HTTP_TOKEN, ...)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        **GIT_ENV,
    }


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, input=stdin)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({done.returncode}): {done.stderr}")
    return done.stdout.strip()


@dataclass
class Server:
    """How to start one server on its fixture."""

    name: str
    command: str
    args: list[str]
    cwd: Path
    env: dict[str, str]
    vars: dict[str, str] = field(default_factory=dict)
    log: Path | None = None
    # The actor jility records for writes made through this server.
    actor: str | None = None
    # Cloud variants: the API's base (http://ADDR), the full_access token for it, and for
    # jility-cloud the remote MCP endpoint (connected to, not started) with its headers.
    api: str | None = None
    token: str | None = None
    # jility-cloud: its PostgreSQL database (for `jility admin`).
    database: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Cleanup of what a test made besides temp dirs (processes, databases)
# --------------------------------------------------------------------------------------------

_cleanups: list[Callable[[], None]] = []
_databases: set[str] = set()


def cleanup_fixtures() -> None:
    """Undo what the fixtures made, newest first (conftest calls this after every test, also
    when it failed); every step runs even if an earlier one raised."""
    errors = []
    while _cleanups:
        try:
            _cleanups.pop()()
        except Exception as err:  # noqa: BLE001
            errors.append(err)
    if errors:
        raise errors[0]


def _psql(sql: str) -> None:
    done = subprocess.run(
        ["psql", DATABASE_URL, "-v", "ON_ERROR_STOP=1", "-qtAc", sql], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        raise RuntimeError(f"psql {sql!r} failed: {done.stderr}")


def _drop_database(name: str) -> None:
    _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _databases.discard(name)


@atexit.register
def _drop_leftover_databases() -> None:
    # A run that was interrupted before its fixtures were cleaned up.
    for name in list(_databases):
        try:
            _drop_database(name)
        except Exception:  # noqa: BLE001
            pass


def pg_database() -> str:
    """A fresh PostgreSQL database (`jility_sdk_<random>`), dropped by cleanup_fixtures;
    returns its URL."""
    name = f"jility_sdk_{secrets.token_hex(6)}"
    _psql(f"CREATE DATABASE {name}")
    _databases.add(name)
    _cleanups.append(lambda: _drop_database(name))
    return urllib.parse.urlsplit(DATABASE_URL)._replace(path=f"/{name}").geturl()


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_announce(proc: subprocess.Popen[Any], log: Any, pattern: re.Pattern[str], what: str) -> re.Match[str]:
    """Wait for the process to write `pattern` to its stderr log."""
    deadline = time.monotonic() + 60
    while True:
        log.seek(0)
        match = pattern.search(log.read())
        if match:
            return match
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not announce its address")
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------
# The local GitHub/Jira mock for twig-mcp
# --------------------------------------------------------------------------------------------


@contextmanager
def remote_mock() -> Iterator[str]:
    """Serve clients/fixtures/twig/remote.json on 127.0.0.1; yields http://127.0.0.1:PORT."""
    spec = json.loads((FIXTURES / "twig" / "remote.json").read_text())

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0]
            body = spec["routes"].get(path)
            status = 200 if body is not None else 404
            data = json.dumps(body if body is not None else spec["not_found"]).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


def twig_fixture(tmp: Path, mock: str, credentials: bool = True) -> Server:
    home = tmp / "home"
    home.mkdir(parents=True)
    env = base_env(home)
    repo = tmp / "repo"
    repo.mkdir()
    run(["git", "init", "-q", "-b", "main"], repo, env)
    (repo / "README.md").write_text("hello\n")
    run(["git", "add", "README.md"], repo, env)
    run(["git", "commit", "-q", "-m", "initial"], repo, env)
    for branch in ["feat/auth", "feat/auth-ui", "feat/billing", "feat/billing-ui", "scratch"]:
        run(["git", "branch", branch], repo, env)
    run(["git", "checkout", "-q", "feat/auth"], repo, env)
    run(["git", "remote", "add", "origin", "https://github.com/octo/widgets.git"], repo, env)
    (repo / ".twig").mkdir()
    shutil.copy(FIXTURES / "twig" / "state.json", repo / ".twig" / "state.json")
    if credentials:
        # One netrc entry serves both mocks: the machine is the host, without the port.
        (home / ".netrc").write_text("machine 127.0.0.1\n  login dev@example.com\n  password test-token\n")
        (home / ".netrc").chmod(0o600)
    env.update({"GITHUB_API_URL": mock, "JIRA_HOST": mock})
    return Server("twig-mcp", binary("twig-mcp"), [], repo, env)


def duvet_fixture(tmp: Path) -> Server:
    home = tmp / "home"
    home.mkdir(parents=True)
    project = tmp / "project"
    shutil.copytree(FIXTURES / "duvet-project", project)
    return Server("duvet", binary("duvet"), ["mcp"], project, base_env(home))


def jility_fixture(tmp: Path) -> Server:
    home = tmp / "home"
    home.mkdir(parents=True)
    project = tmp / "project"
    project.mkdir()
    env = base_env(home)
    run([binary("jility"), "--json", "init", "--key", "API"], project, {**env, "JILITY_ACTOR": "alice"})
    env["JILITY_ACTOR"] = "agent-1"
    return Server("jility", binary("jility"), ["--mcp-server"], project, env, actor="agent-1")


def jility_cloud(tmp: Path, name: str) -> Server:
    """A fresh database with workspace `API` (`jility admin create-workspace`), `jility serve`
    on it; `jility-cloud` connects to its /mcp with the bootstrap token, `jility-bridge` is
    `JILITY_MODE=cloud jility --mcp-server` pointed at its API. Everything goes at cleanup."""
    home = tmp / "home"
    home.mkdir(parents=True)
    project = tmp / "project"  # the bridge's working directory: no .jility anywhere
    project.mkdir()
    env = base_env(home)
    database = pg_database()
    jility = binary("jility")
    created = json.loads(
        run([jility, "admin", "create-workspace", "acme", "--database-url", database, "--key", "API", "--json"], project, env)
    )
    token = created["token"]
    log = open(tmp / f"jility-serve-{time.monotonic_ns()}.log", "w+")
    proc = subprocess.Popen(
        [jility, "serve", "--listen", "127.0.0.1:0", "--database-url", database, "--rate-limit", "100000"],
        cwd=project,
        # The webhook tests' receivers are on loopback (test_webhooks.py).
        env={**env, "JILITY_WEBHOOKS_ALLOW_PRIVATE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    _cleanups.append(log.close)
    _cleanups.append(lambda: _stop(proc))
    match = _wait_announce(proc, log, SERVE_ANNOUNCE, "jility serve")
    api, mcp_url = match.group(1), match.group(2)
    if name == "jility-cloud":
        server = Server(name, jility, [], project, env, url=mcp_url, headers={"Authorization": f"Bearer {token}"})
    else:
        bridge_env = {**env, "JILITY_MODE": "cloud", "JILITY_API_URL": api, "JILITY_API_TOKEN": token}
        server = Server(name, jility, ["--mcp-server"], project, bridge_env)
    # Writes are the token's: create-workspace names its token `bootstrap`.
    server.actor, server.api, server.token = "bootstrap", api, token
    server.database = database
    return server


def api_request(server: Server, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """A request to the cloud API (`/api/v1` + path) with the bearer token; (status, JSON)."""
    request = urllib.request.Request(
        f"{server.api}/api/v1{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token or server.token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def jility_seed(server: Server, count: int) -> None:
    """`count` tickets made with the CLI (for paging); in the cloud (where the ticket CLI
    does not work) with `POST /api/v1/tickets`."""
    if server.api is not None:
        for i in range(count):
            status, answer = api_request(server, "POST", "/tickets", {"title": f"Seeded ticket {i + 1}"})
            assert status in (200, 201), f"POST /api/v1/tickets: {status} {answer}"
        return
    for i in range(count):
        run(
            [binary("jility"), "--json", "ticket", "create", "--title", f"Seeded ticket {i + 1}"],
            server.cwd,
            {**server.env, "JILITY_ACTOR": "alice"},
        )


def git_mile_fixture(tmp: Path) -> Server:
    home = tmp / "home"
    home.mkdir(parents=True)
    repo = tmp / "repo"
    repo.mkdir()
    env = base_env(home)
    run(["git", "init", "-q", "-b", "main"], repo, env)
    (repo / "README.md").write_text("hello\n")
    run(["git", "add", "README.md"], repo, env)
    run(["git", "commit", "-q", "-m", "initial"], repo, env)
    gm = binary("git-mile")
    milestone = run([gm, "create", "milestone", "--title", "v1.0", "--description", "First release"], repo, env)
    issue1 = run([gm, "create", "issue", "--title", "Crash on start", "--label", "bug", "--milestone", milestone[:8]], repo, env)
    issue2 = run([gm, "create", "issue", "--title", "Slow search", "--label", "perf"], repo, env)
    issue3 = run([gm, "create", "issue", "--title", "Docs typo", "--label", "docs"], repo, env)
    run([gm, "comment", issue1, "--body", "Seen on Linux too"], repo, env)
    return Server(
        "git-mile",
        gm,
        ["mcp-server"],
        repo,
        env,
        vars={"milestone": milestone, "issue1": issue1, "issue2": issue2, "issue3": issue3},
    )


def make(name: str, tmp: Path, mock: str, credentials: bool = True) -> Server:
    if name == "twig-mcp":
        return twig_fixture(tmp, mock, credentials)
    if name == "duvet":
        return duvet_fixture(tmp)
    if name == "jility":
        return jility_fixture(tmp)
    if name == "git-mile":
        return git_mile_fixture(tmp)
    if name in ("jility-cloud", "jility-bridge"):
        return jility_cloud(tmp, name)
    raise ValueError(name)


# --------------------------------------------------------------------------------------------
# Connecting
# --------------------------------------------------------------------------------------------


@contextmanager
def http_process(server: Server, addr: str = "127.0.0.1:0", env: dict[str, str] | None = None) -> Iterator[str]:
    """Start the server with `--http ADDR`; yields the URL it announces on stderr."""
    log_path = server.cwd.parent / f"{server.name}-http-{time.monotonic_ns()}.log"
    log = open(log_path, "w+")
    proc = subprocess.Popen(
        [server.command, *server.args, "--http", addr],
        cwd=server.cwd,
        env=env if env is not None else server.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        yield _wait_announce(proc, log, ANNOUNCE, f"{server.name} --http").group(1)
    finally:
        _stop(proc)
        log.close()


@contextmanager
def http_endpoint(server: Server) -> Iterator[str]:
    """The server's Streamable HTTP endpoint: jility-cloud's /mcp (already served), else a
    `--http` process for the duration."""
    if server.url is not None:
        yield server.url
    else:
        with http_process(server) as url:
            yield url


@asynccontextmanager
async def http_client(server: Server, url: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """An SDK client on `url`, sending the server's headers (jility-cloud: its bearer token)."""
    if not server.headers:
        async with Client(url, mode=mode, read_timeout_seconds=60) as client:
            yield client
        return
    async with create_mcp_http_client(headers=server.headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=60) as client:
            yield client


@asynccontextmanager
async def connect(server: Server, transport: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """An SDK client connected to the server over `transport` ('stdio' or 'http')."""
    if transport == "stdio":
        assert server.url is None, f"{server.name} is remote only"
        log_path = server.cwd.parent / f"{server.name}-stdio-{time.monotonic_ns()}.log"
        with open(log_path, "w") as errlog:
            params = StdioServerParameters(command=server.command, args=server.args, cwd=server.cwd, env=server.env)
            async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60) as client:
                yield client
    elif transport == "http":
        with http_endpoint(server) as url:
            async with http_client(server, url, mode) as client:
                yield client
    else:
        raise ValueError(transport)


# --------------------------------------------------------------------------------------------
# Checking results
# --------------------------------------------------------------------------------------------


def substitute(value: Any, variables: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\$\{(\w+)\}", lambda m: variables[m.group(1)], value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def dig(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def validate(instance: Any, schema: dict[str, Any], what: str) -> None:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(schema).iter_errors(instance), key=lambda e: list(e.path))
    assert not errors, f"{what}: structuredContent does not match the outputSchema: " + "; ".join(
        f"{list(e.path)}: {e.message}" for e in errors[:5]
    )


def check_error_object(error: Any, what: str) -> None:
    """The kit's error object: code, message, hint (strings), retryable (bool), and
    retry_after_secs (integer) only when present."""
    assert isinstance(error, dict), f"{what}: error is not an object: {error!r}"
    for key in ("code", "message", "hint"):
        assert isinstance(error.get(key), str) and error[key], f"{what}: error.{key} missing: {error!r}"
    assert isinstance(error.get("retryable"), bool), f"{what}: error.retryable missing: {error!r}"
    if "retry_after_secs" in error:
        assert isinstance(error["retry_after_secs"], int), f"{what}: {error!r}"
    assert set(error) <= {"code", "message", "hint", "retryable", "retry_after_secs"}, f"{what}: {error!r}"


def check_page(page: Any, what: str) -> None:
    assert isinstance(page, dict), f"{what}: page missing"
    assert isinstance(page.get("total"), int), f"{what}: page.total missing: {page!r}"
    if "next_cursor" in page:
        assert isinstance(page["next_cursor"], str) and page["next_cursor"], f"{what}: {page!r}"
    if "total_exact" in page:
        assert page["total_exact"] is False, f"{what}: total_exact is only sent as false: {page!r}"
