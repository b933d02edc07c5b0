"""A throwaway real PostgreSQL server for tests: initdb into a temp folder, serve on a socket there.

The server listens on a Unix socket in its own folder only (no TCP port, so parallel runs never
collide), requires a password (scram-sha-256), and is stopped and removed when the tests end.
Debian's `postgresql` package provides the binaries (`/usr/lib/postgresql/<version>/bin`, or on
PATH); initdb and postgres refuse to run as root, so as root they run as the `postgres` user
that package creates.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

INSTALL_HINT = ("PostgreSQL checkpointer tests need a PostgreSQL server and the postgres extra: "
                "apt-get install postgresql; pip install -e '.[postgres]'")
"""The one skip message: what to install."""

PORT = 5432  # names the socket file only: the server listens on no TCP port
REQUIRE = "TESTS_REQUIRE_POSTGRES"
"""Set (CI sets it once it has installed PostgreSQL) to fail, not skip, when none starts."""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server can be started here; the message says why and what to install."""


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server: `url` is a libpq URI with the password."""

    folder: Path
    bindir: Path
    user: str
    password: str
    database: str

    @property
    def url(self) -> str:
        """The connection string for `database` as `user`, over the folder's socket."""
        return (f"postgresql://{self.user}:{quote(self.password, safe='')}@/{self.database}"
                f"?host={quote(str(self.folder), safe='')}&port={PORT}")

    def url_for(self, database: str) -> str:
        """The connection string for another database on this server."""
        return self.url.replace(f"@/{self.database}?", f"@/{database}?")

    def restart(self) -> None:
        """Stop the server (dropping every connection) and start it again on the same socket."""
        self.stop()
        self.start()

    def stop(self) -> None:
        """Stop the server, dropping every connection; its socket goes with it."""
        _run(self, "pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")

    def start(self) -> None:
        """Start the stopped server again on the same socket."""
        _pg_ctl_start(self)

    def running(self) -> bool:
        """Whether the server is up (pg_ctl status)."""
        status = subprocess.run(_command(self, "pg_ctl", "-D", str(self.folder / "data"),
                                         "status"), capture_output=True, timeout=60,
                                check=False)
        return status.returncode == 0

    def create_database(self, name: str) -> str:
        """Create database `name` and return its connection string."""
        _run(self, "createdb", "-h", str(self.folder), "-p", str(PORT), "-U", self.user, name)
        return self.url_for(name)


def find_bindir() -> Path | None:
    """Return the folder holding initdb, pg_ctl and postgres (PATH first, then Debian's)."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
                    key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                    else 0)
    return debian[-1].parent if debian else None


def _run_as() -> str | None:
    """The user to run the server as: None for ourselves, `postgres` when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable("running as root and there is no 'postgres' user to run the "
                                  "server as") from None
    return "postgres"


def _command(server: PostgresServer, tool: str, *args: str) -> list[str]:
    cmd = [str(server.bindir / tool), *args]
    user = _run_as()
    if user is None:
        return cmd
    runuser = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
    if runuser is None:
        raise PostgresUnavailable("running as root and runuser (util-linux) is not installed "
                                  "to run the server as 'postgres'")
    return [runuser, "-u", user, "--", *cmd]


def _run(server: PostgresServer, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PGPASSWORD": server.password}
    return subprocess.run(_command(server, tool, *args), env=env, capture_output=True, text=True,
                          check=True, timeout=120)


def _pg_ctl_start(server: PostgresServer) -> None:
    folder = server.folder
    # fsync off: a test database need not survive a power cut
    opts = f"-k {folder} -c listen_addresses= -p {PORT} -c fsync=off"
    _run(server, "pg_ctl", "-D", str(folder / "data"), "-l", str(folder / "server.log"),
         "-w", "-t", "60", "-o", opts, "start")


def _start(server: PostgresServer, user: str | None) -> None:
    """Initialise the server's folder, start it and create its database."""
    folder = server.folder
    pwfile = folder / "pw"
    pwfile.write_text(server.password + "\n")
    if user is not None:
        shutil.chown(folder, user=user)
        shutil.chown(pwfile, user=user)
    step = "initdb"
    try:
        _run(server, "initdb", "-D", str(folder / "data"), "-U", server.user,
             "--auth=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync")
        pwfile.unlink()
        step = "pg_ctl start"
        _pg_ctl_start(server)
        step = "createdb"
        server.create_database(server.database)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = [str(exc)]
        if isinstance(exc, subprocess.CalledProcessError):
            detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-1:]
        log = folder / "server.log"
        if log.exists():
            detail += log.read_text(errors="replace").strip().splitlines()[-3:]
        raise PostgresUnavailable(f"{step} failed: {' | '.join(detail)}") from exc


@contextmanager
def running_postgres(database: str = "textbound") -> Iterator[PostgresServer]:
    """Start a PostgreSQL server in a temp folder with `database` created; stop and remove it.

    Raises PostgresUnavailable (saying what is missing or what failed) when none can start.
    """
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl) found")
    user = _run_as()
    # not under pytest's tmp_path: its folders are private to root, and the server runs as
    # `postgres`
    folder = Path(tempfile.mkdtemp(prefix="textbound-pg-"))
    server = PostgresServer(folder=folder, bindir=bindir, user="postgres",
                            password=secrets.token_urlsafe(16), database=database)
    try:
        _start(server, user)
        yield server
    finally:
        if (folder / "data" / "postmaster.pid").exists():
            stop = _command(server, "pg_ctl", "-D", str(folder / "data"), "-m", "immediate",
                            "-w", "stop")
            subprocess.run(stop, capture_output=True, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _unavailable(reason: str) -> None:
    message = f"{INSTALL_HINT} ({reason})"
    if os.environ.get(REQUIRE):
        pytest.fail(f"{REQUIRE} is set but {message}", pytrace=False)
    pytest.skip(message)


def _no_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:
        return True


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server for the whole session, with database `textbound`.

    Import it into a conftest or test module (`from tests.pg_server import postgres_server`).
    """
    missing = [m for m in ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres")
               if _no_module(m)]
    if missing:
        _unavailable(f"not installed: {', '.join(missing)}")
    try:
        with running_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        _unavailable(str(exc))
