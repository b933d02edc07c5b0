"""The unit tier cannot reach the network: sockets other than Unix sockets are disabled."""

from __future__ import annotations

import pytest
import pytest_socket


@pytest.fixture(autouse=True)
def _no_network() -> None:
    pytest_socket.disable_socket(allow_unix_socket=True)
    yield
    pytest_socket.enable_socket()
