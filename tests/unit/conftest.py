"""The unit tier cannot reach the network: sockets other than Unix sockets are disabled."""

from __future__ import annotations

import pytest
import pytest_socket

from textbound.documents.store import VectorStore

from ..conftest import make_settings


@pytest.fixture(autouse=True)
def _no_network() -> None:
    pytest_socket.disable_socket(allow_unix_socket=True)
    yield
    pytest_socket.enable_socket()


@pytest.fixture
def store(tmp_path, embeddings):
    """An embedded store in the test's own data folder (ingest and PDF tests); closed after."""
    s = VectorStore.from_settings(make_settings(tmp_path / "data"), embeddings)
    yield s
    s.close()
