"""One window per user and data folder: the first chattts-studio listens on a QLocalServer, and a
second launch hands its file to it and exits.
"""

import getpass
import hashlib
import json
import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from chattts_studio.core import paths

CONNECT_MS = 1_000
ANSWER_MS = 10_000  # the running window answers from its event loop; allow a busy moment


def server_name(data_folder: Path | None = None) -> str:
    """The socket's name: one per user and data folder (CHATTTS_STUDIO_HOME)."""
    folder = str((data_folder or paths.data_dir()).resolve())
    digest = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    user = str(os.getuid()) if hasattr(os, "getuid") else getpass.getuser()
    return f"chattts-studio-{user}-{digest}"


def hand_over(file: Path | None, name: str) -> bool:
    """Give `file` (None: just show the window) to a running window listening on `name`;
    True once it said it took it. False when none answers: nothing listens, or the socket
    was left behind by a window that is gone (the caller then opens a window itself)."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_MS):
        return False
    message = {"open": str(file) if file is not None else None}
    socket.write(json.dumps(message).encode("utf-8") + b"\n")
    answered = socket.waitForBytesWritten(CONNECT_MS)
    while answered and not socket.canReadLine():
        answered = socket.waitForReadyRead(ANSWER_MS)
    reply = bytes(socket.readLine().data()).strip() if answered else b""
    socket.disconnectFromServer()
    return reply == b"ok"


class InstanceServer(QObject):
    """Listens for later launches; `file_received` carries the path ('' to show the window)."""

    file_received = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening. A socket file left by a window that is gone (hand_over found
        nobody answering) is removed first. False when it cannot listen: the window still
        works, a second launch then opens a second window."""
        if self.server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)  # on Unix: the stale socket file
        return self.server.listen(self.name)

    def close(self) -> None:
        self.server.close()  # removes the socket file

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return  # the rest of the line is still on its way
        line = bytes(socket.readLine().data())
        try:
            message = json.loads(line)
            file = message.get("open") or ""
        except (ValueError, AttributeError):
            socket.disconnectFromServer()  # not one of ours
            return
        socket.write(b"ok\n")
        socket.flush()
        self.file_received.emit(str(file))
