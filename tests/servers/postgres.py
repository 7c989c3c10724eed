"""A real PostgreSQL server for the team-library tests, started from the distribution's binaries.

Why a real server: the library's PostgreSQL backend relies on the server's own full-text
search (``tsvector``, GIN), ``pg_trgm`` and its locking; a mock would test none of them.
Debian's ``postgresql`` package installs the binaries under ``/usr/lib/postgresql/<v>/bin``
(``.ci/run`` installs it); the server runs under a temporary data directory on a free port
of 127.0.0.1, with TLS on (a self-signed certificate) and a password role, so a test
connects the way a team's laptop does. Where no binary or no way to run it exists,
:func:`find_binaries` says why and the tests skip with that reason.

``initdb`` refuses to run as root; as root (CI) the server runs as the ``postgres`` user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROLE, PASSWORD, DATABASE = "loom", "loom-test-password", "loom"
START_SECONDS = 60.0  # a busy two-core machine can take this long to start a cluster


def find_binaries() -> tuple[Path | None, str]:
    """The folder holding ``initdb`` and ``pg_ctl``, or None and why not."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version, reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            if os.geteuid() == 0 and _postgres_user() is None:
                return None, "running as root and there is no 'postgres' user to run the server"
            return folder, ""
    return None, "no PostgreSQL server binaries (Debian: apt-get install postgresql)"


def _version(folder: Path) -> float:
    try:
        return float(folder.parent.name)
    except ValueError:
        return 0.0


def _postgres_user() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """One cluster under ``root``; :meth:`start` / :meth:`stop` / :meth:`restart`."""

    bindir: Path
    root: Path
    port: int = 0

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def passfile(self) -> Path:
        """A ``PGPASSFILE`` with the role's password (mode 0600, as libpq requires)."""
        return self.root / "pgpass"

    def url(self, database: str = DATABASE) -> str:
        """The URL a user puts in ``LOOM_LIBRARY_URL``: no password in it."""
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        user = _postgres_user() if os.geteuid() == 0 else None
        return subprocess.run(
            list(argv),
            check=check,
            capture_output=True,
            text=True,
            user=user.pw_uid if user else None,
            group=user.pw_gid if user else None,
            cwd=self.root,
            timeout=START_SECONDS,
        )

    def init(self) -> None:
        """A new cluster: TLS on, scram passwords over TCP, trust on its own socket only."""
        self.root.mkdir(parents=True, exist_ok=True)
        user = _postgres_user() if os.geteuid() == 0 else None
        if user:
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
            "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
        )  # fmt: skip
        self._certificate(user)
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nunix_socket_directories = '{self.root}'\n"
                "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n"
                "fsync = off\nmax_connections = 200\n"
            )
        self.passfile.write_text(f"127.0.0.1:*:*:{ROLE}:{PASSWORD}\n", encoding="utf-8")
        self.passfile.chmod(0o600)

    def _certificate(self, user: pwd.struct_passwd | None) -> None:
        crt, key = self.data / "server.crt", self.data / "server.key"
        subprocess.run(
            ["openssl", "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", str(key), "-out", str(crt)],
            check=True, capture_output=True, timeout=START_SECONDS,
        )  # fmt: skip
        key.chmod(0o600)
        if user:
            for path in (crt, key):
                os.chown(path, user.pw_uid, user.pw_gid)

    def start(self) -> None:
        """Start on a free port (a new one each time) and create the role and database."""
        fresh = not self.data.exists()
        if fresh:
            self.init()
        self.port = free_port()
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"),
            "-o", f"-p {self.port}", "-w", "-t", str(int(START_SECONDS)), "start",
        )  # fmt: skip
        if fresh:
            self.psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
            self.psql(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
            # pg_trgm is a trusted extension from PostgreSQL 13: the owner may create it
            # too; made here once so every test database has it without a superuser
            self.psql("CREATE EXTENSION IF NOT EXISTS pg_trgm", DATABASE)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` as the superuser over the cluster's own socket."""
        done = self._run(
            str(self.bindir / "psql"), "-h", str(self.root), "-p", str(self.port), "-U",
            "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql,
        )  # fmt: skip
        return done.stdout.strip()

    def create_database(self, name: str) -> str:
        """A new empty database owned by the test role (one per test: no shared state)."""
        self.psql(f"CREATE DATABASE {name} OWNER {ROLE} TEMPLATE template0")
        self.psql("CREATE EXTENSION IF NOT EXISTS pg_trgm", name)
        return self.url(name)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``immediate`` is a crash: no shutdown checkpoint)."""
        if self.port:
            self._run(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                "-t", str(int(START_SECONDS)), "stop", check=False,
            )  # fmt: skip

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop, stay down a while (clients see refused connections), start on the same port."""
        port = self.port
        self.stop("immediate")
        if down_seconds:
            time.sleep(down_seconds)
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"),
            "-o", f"-p {port}", "-w", "-t", str(int(START_SECONDS)), "start",
        )  # fmt: skip
