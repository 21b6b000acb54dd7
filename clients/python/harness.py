"""Fixtures and launchers for the client suites: each server on a fresh temp fixture made with
the real tools (git, jility, git-mile), started over stdio (by the SDK) or over Streamable
HTTP (by us, with `--http 127.0.0.1:0`), in a clean environment without credentials."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "clients" / "fixtures"
BIN_DIR = Path(os.environ.get("MCP_BIN_DIR", REPO / "target" / "debug")).resolve()
SCENARIOS = json.loads((FIXTURES / "scenarios.json").read_text())["servers"]
SERVERS = ["twig-mcp", "duvet", "jility", "git-mile"]
ANNOUNCE = re.compile(r"serving MCP over HTTP at (http://\S+/mcp)")

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


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
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
    return Server("jility", binary("jility"), ["--mcp-server"], project, env)


def jility_seed(server: Server, count: int) -> None:
    """`count` tickets made with the CLI (for paging)."""
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
        url = None
        deadline = time.monotonic() + 60
        while url is None:
            log.seek(0)
            match = ANNOUNCE.search(log.read())
            if match:
                url = match.group(1)
                break
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"{server.name} --http exited with {proc.returncode}: {log.read()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{server.name} did not announce its HTTP address")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@asynccontextmanager
async def connect(server: Server, transport: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """An SDK client connected to the server over `transport` ('stdio' or 'http')."""
    if transport == "stdio":
        log_path = server.cwd.parent / f"{server.name}-stdio-{time.monotonic_ns()}.log"
        with open(log_path, "w") as errlog:
            params = StdioServerParameters(command=server.command, args=server.args, cwd=server.cwd, env=server.env)
            async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60) as client:
                yield client
    elif transport == "http":
        with http_process(server) as url:
            async with Client(url, mode=mode, read_timeout_seconds=60) as client:
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
