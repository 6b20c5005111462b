"""The labeling app: a labeling session served as a web page, safe for several annotators.

``pbassess label serve digits-logreg --target least-accurate`` (or
:meth:`LabelingSession.serve() <pbassess.active.session.LabelingSession.serve>` in Python, an
IFrame in Jupyter) serves the session's next item with its image, text or attributes beside
the model's prediction (hideable), one key per class, skip / not sure / undo, and the
posterior panel of the question after every label.

- :mod:`~pbassess.active.web.store`: the SQLite label store (WAL; committed before the reply; one server per store);
- :mod:`~pbassess.active.web.service`: which item whom, recording labels, the posterior panel;
- :mod:`~pbassess.active.web.items`: images (arrays, files below the pool's folder, the built-in digits), texts, attributes;
- :mod:`~pbassess.active.web.security`: loopback by default, the token, CSRF and same-origin checks;
- :mod:`~pbassess.active.web.app`: the Starlette application (page, JSON API, figures, exports).

Examples
--------
>>> import tempfile, pathlib, urllib.request
>>> from pbassess.active.session import LabelingSession
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> s = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate", batch_size=1, seed=0)
>>> server = s.serve()  # a background thread on 127.0.0.1, a free port
>>> urllib.request.urlopen(server.url + "healthz").read()
b'ok'
>>> server.stop()
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from pbassess.active.web.items import ItemViews
from pbassess.active.web.security import Guard, resolve_token
from pbassess.active.web.service import LabelService
from pbassess.active.web.store import LabelStore, open_store
from pbassess.errors import PbassessError

__all__ = ["ItemViews", "LabelServer", "LabelService", "LabelStore", "bind_socket", "default_store_path",
           "open_store", "prepare", "serve_session"]


def default_store_path(state_path: str | os.PathLike) -> Path:
    """The label store beside a session's state file: ``session.json`` -> ``session.sqlite``.

    Examples
    --------
    >>> default_store_path("labeling/session.json").as_posix()
    'labeling/session.sqlite'
    """
    return Path(state_path).with_suffix(".sqlite")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: a free port), or one PbassessError line when the port is busy.

    Examples
    --------
    >>> sock = bind_socket("127.0.0.1", 0)
    >>> busy = sock.getsockname()[1]
    >>> bind_socket("127.0.0.1", busy)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.PbassessError: port ... on 127.0.0.1 is busy (another server?): choose another with --port (or port=0 for a free one)
    >>> sock.close()
    """
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), int(port)))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno in (98, 48, 10048):  # EADDRINUSE (Linux, macOS, Windows)
            raise PbassessError(f"port {port} on {host} is busy (another server?): choose another with --port "
                                "(or port=0 for a free one)") from None
        raise PbassessError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def prepare(session: Any, *, host: str = "127.0.0.1", token: str | None = None,
            store: str | os.PathLike | None = None, images: Any = None, image_column: str | None = None,
            text_column: str | None = None, stop_at: float = 0.95, double_label: float = 0.0,
            seed: int | None = None) -> tuple[LabelService, Guard]:
    """The service and the request guard of a session, with its store opened and locked.

    Parameters
    ----------
    session : LabelingSession
    host : str
        Where the server will listen (a token is required off loopback; generated when not given).
    token : str, optional
    store : path, optional
        The SQLite label store (default: :func:`default_store_path` of the state file).
    images, image_column, text_column
        What to show of the items (:meth:`ItemViews.for_pool`).
    stop_at, double_label, seed
        :class:`LabelService` settings.

    Returns
    -------
    (LabelService, Guard)

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess.active.session import LabelingSession
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> session = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate", seed=0)
    >>> service, guard = prepare(session, host="0.0.0.0")
    >>> service.store.path.name, guard.token is not None
    ('s.sqlite', True)
    >>> service.close()
    """
    guard = Guard(token=resolve_token(host, token))
    views = ItemViews.for_pool(session.pool, session._state["pool"].get("source"), images=images,
                               image_column=image_column, text_column=text_column)
    label_store = open_store(store if store is not None else default_store_path(session.state_path))
    try:
        service = LabelService(session, label_store, views, stop_at=stop_at, double_label=double_label, seed=seed)
    except BaseException:
        label_store.close()
        raise
    return service, guard


class LabelServer:
    """A labeling app serving in a background thread (what :meth:`LabelingSession.serve` returns).

    Attributes
    ----------
    url : str
        The page's address (with ``?token=...`` when a token is required).
    service : LabelService

    Examples
    --------
    >>> import tempfile, pathlib, urllib.request
    >>> from pbassess.active.session import LabelingSession
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> session = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate", seed=0)
    >>> with serve_session(session, token="a-token-of-twenty-chars") as server:
    ...     urllib.request.urlopen(server.base_url + "healthz?token=a-token-of-twenty-chars").read()
    b'ok'
    """

    def __init__(self, service: LabelService, guard: Guard, sock: socket.socket, host: str) -> None:
        import uvicorn

        from pbassess.active.web.app import create_app

        self.service = service
        self.guard = guard
        port = sock.getsockname()[1]
        if host in ("0.0.0.0", "::", "[::]"):  # every interface: the annotators use the machine's name
            host = socket.gethostname()
        shown = f"[{host.strip('[]')}]" if ":" in host else host
        self.base_url = f"http://{shown}:{port}/"
        self.url = self.base_url + (f"?token={guard.token}" if guard.token else "")
        self._sock = sock
        config = uvicorn.Config(create_app(service, guard), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        service.start_flusher()

    def start(self, timeout: float = 20.0) -> LabelServer:
        """Serve in a daemon thread; return once the server accepts connections."""
        self._server.config.install_signal_handlers = False  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True,
                                        name="pbassess-label-server")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise PbassessError("the labeling server did not start")
            time.sleep(0.02)
        return self

    def run(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C), then close the store."""
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._close()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving, close the store and release its lock (idempotent)."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        self.service.close()

    def __enter__(self) -> LabelServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def iframe(self, width: int | str = "100%", height: int = 720):
        """The page as an ``IPython.display.IFrame`` (Jupyter)."""
        from IPython.display import IFrame

        return IFrame(self.url, width=width, height=height)

    def _repr_html_(self) -> str:
        import html

        src = html.escape(self.url, quote=True)
        return (f'<p>Labeling app at <a href="{src}" target="_blank">{html.escape(self.base_url)}</a></p>'
                f'<iframe src="{src}" width="100%" height="720" style="border:1px solid #ddd"></iframe>')

    def __repr__(self) -> str:
        return f"LabelServer({self.base_url!r}, store={str(self.service.store.path)!r})"


def serve_session(session: Any, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                  store: str | os.PathLike | None = None, images: Any = None, block: bool = False,
                  **options: Any) -> LabelServer:
    """Serve a labeling session as a web page.

    Parameters
    ----------
    session : LabelingSession
    host : str
        Address to listen on (default loopback; any other requires a token, generated when omitted).
    port : int
        0 for a free port.
    token : str, optional
    store : path, optional
        The SQLite label store (default beside the state file).
    images : array, optional
        One image per pool item.
    block : bool
        Serve in this thread until interrupted; otherwise start a background thread and return.
    **options
        ``image_column``, ``text_column``, ``stop_at``, ``double_label``, ``seed`` (:func:`prepare`).

    Returns
    -------
    LabelServer

    Examples
    --------
    >>> import tempfile, pathlib, urllib.request
    >>> from pbassess.active.session import LabelingSession
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> session = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate", seed=0)
    >>> server = serve_session(session, port=0)
    >>> urllib.request.urlopen(server.url + "healthz").read()
    b'ok'
    >>> server.stop()
    """
    service, guard = prepare(session, host=host, token=token, store=store, images=images, **options)
    try:
        sock = bind_socket(host, port)
    except BaseException:
        service.close()
        raise
    server = LabelServer(service, guard, sock, host)
    if block:
        server.run()
        return server
    return server.start()


