from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import remote_mock  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def mock() -> Iterator[str]:
    """The local GitHub/Jira mock twig-mcp's network tools talk to."""
    with remote_mock() as url:
        yield url
