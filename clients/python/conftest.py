from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import cleanup_fixtures, remote_mock  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def mock() -> Iterator[str]:
    """The local GitHub/Jira mock twig-mcp's network tools talk to."""
    with remote_mock() as url:
        yield url


@pytest.fixture(autouse=True)
def _cleanup_fixtures() -> Iterator[None]:
    """Stop the processes and drop the databases a test's fixtures made (jility's cloud
    variants), also when the test failed."""
    yield
    cleanup_fixtures()
