"""A TCP proxy a test controls, between the app and a service (PostgreSQL, Redis): `cut()` drops every open
connection and closes new ones at once (a service gone away), `restore()` forwards again."""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._cut = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.accepted = self.refused = 0
        threading.Thread(target=self._accept, name=f"proxy:{self.port}", daemon=True).start()

    def cut(self) -> None:
        self._cut.set()
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _drop(sock)

    def restore(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self._closed.set()
        self.cut()
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            if self._cut.is_set():
                self.refused += 1
                _drop(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _drop(client)
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            self.accepted += 1
            with self._lock:
                self._open.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(src)
                self._open.discard(dst)
            _drop(src)
            _drop(dst)


def _drop(sock: socket.socket) -> None:
    """Reset, not a polite close: the peer sees the connection break, as when a server dies."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes the pump thread blocked in recv() on it
    with contextlib.suppress(OSError):
        sock.close()
