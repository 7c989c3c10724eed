"""One Loom Desktop per user: a second launch hands its files to the first and exits.

The first instance listens on a ``QLocalServer`` (a Unix socket, a named pipe on
Windows) whose name includes the user, so two users on one machine each get
their own window. A later ``loom-desktop FILE...`` connects, sends one JSON line
``{"paths": [...], "activation_token": ...}`` and waits for ``ok``: only then has
the running window taken the files, so exiting 0 is honest.

A crashed instance leaves its socket file behind. Connecting to it is refused,
which is how a stale socket is told from a live one: it is removed and the new
process becomes the server. A live instance that does not answer in time is
left alone; the new process then runs on its own rather than stealing the name.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

ENV_NAME = "LOOM_DESKTOP_INSTANCE"
MAX_MESSAGE = 1 << 20  # a list of paths; anything bigger is not ours
ACK = b"ok\n"
CONNECT_MS = 1000
ANSWER_MS = 10_000  # the running window may be busy painting a big trace


def server_name() -> str:
    """The per-user name of the local server; ``$LOOM_DESKTOP_INSTANCE`` overrides it (tests)."""
    override = os.environ.get(ENV_NAME)
    if override:
        return override
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    uid = str(os.getuid()) if hasattr(os, "getuid") else ""
    return "loom-desktop-" + re.sub(r"[^A-Za-z0-9_.-]", "_", f"{user}-{uid}".strip("-"))


def encode(paths: list[str], activation_token: str | None = None) -> bytes:
    message: dict[str, object] = {"paths": list(paths)}
    if activation_token:
        message["activation_token"] = activation_token
    return json.dumps(message).encode() + b"\n"


def decode(line: bytes) -> tuple[list[str], str | None]:
    """Paths and activation token of one message; ``ValueError`` if it is not one."""
    message = json.loads(line)
    paths = message.get("paths") if isinstance(message, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("not a list of paths")
    token = message.get("activation_token")
    return paths, token if isinstance(token, str) else None


def hand_over(
    name: str, paths: list[str], connect_ms: int = CONNECT_MS, answer_ms: int = ANSWER_MS
) -> bool | None:
    """Give ``paths`` to the instance serving ``name``.

    True: it took them. False: nobody is serving (no socket, or a stale one).
    None: someone is there but did not answer in time.
    """
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(connect_ms):
        return False
    try:
        socket.write(encode(paths, os.environ.get("XDG_ACTIVATION_TOKEN")))
        socket.waitForBytesWritten(answer_ms)
        answer = b""
        while not answer.endswith(b"\n") and socket.waitForReadyRead(answer_ms):
            answer += bytes(socket.readAll().data())
        return True if answer == ACK else None
    finally:
        socket.abort()


class InstanceServer(QObject):
    """Owns the local server of the running instance; emits what later launches send."""

    paths_received = Signal(list, object)  # paths, activation token or None

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        return self._server.listen(self.name)

    def is_listening(self) -> bool:
        return self._server.isListening()

    def close(self) -> None:
        """Stop serving and drop half-read connections (removes the socket file)."""
        self._server.close()
        for socket in list(self._buffers):
            socket.abort()
            socket.deleteLater()
        self._buffers.clear()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _forget(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        self._buffers[socket] = data
        if b"\n" not in data and len(data) < MAX_MESSAGE:
            return
        line = data.split(b"\n", 1)[0]
        try:
            paths, token = decode(line)
        except ValueError:  # json.JSONDecodeError is a ValueError
            socket.abort()
            return
        self.paths_received.emit(paths, token)
        socket.write(ACK)
        socket.flush()
        socket.disconnectFromServer()


def claim(name: str, paths: list[str], attempts: int = 3) -> InstanceServer | bool | None:
    """Become the instance for ``name``, or hand ``paths`` to the one that already is.

    Returns the listening server; ``True`` when another instance took the paths;
    ``None`` when this process should run on its own (a live instance that did
    not answer, or a name that cannot be listened on).
    """
    for _ in range(attempts):  # bounded: two launches may race for the name
        handed = _ask(name, paths)
        if handed is not False:
            return handed
        server = InstanceServer(name)
        if server.listen():
            return server
        # Nobody answered a moment ago, yet the name is taken: either a racing
        # launch just took it, or it is a crashed instance's socket. Ask again
        # before calling it stale, so a live racer's socket is never removed.
        handed = _ask(name, paths)
        if handed is not False:
            server.deleteLater()
            return handed
        QLocalServer.removeServer(name)
        if server.listen():
            return server
        server.deleteLater()
    return None


def _ask(name: str, paths: list[str]) -> bool | None:
    """``hand_over``, returning False to go on, True or None to stop (with a note for None)."""
    handed = hand_over(name, paths)
    if handed is None:
        print(
            "loom-desktop: the running instance did not answer; opening a new window",
            file=sys.stderr,
        )
    return handed
