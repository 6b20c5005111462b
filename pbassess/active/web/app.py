"""The ASGI application of the labeling app (Starlette): the page, its JSON API, images and figures.

Routes (every one behind :class:`~pbassess.active.web.security.Guard`):

=================================  ========================================================
``GET /``                          the page (``?token=...`` sets the token cookie, then redirects)
``POST /api/next``                 ``{"annotator"}`` -> the annotator's item
``POST /api/label``                ``{"annotator", "item_id", "kind", "label", "request_id"}``
                                   -> committed, then the next item
``POST /api/undo``                 ``{"annotator"}`` -> the last action withdrawn, its item again
``GET /api/status``                the posterior panel's figures (JSON)
``GET /figure/{kind}.png``         the library's session figure for the current posterior
``GET /image/{item_id}``           the item's image (arrays as PNG; files only below the pool's folder)
``GET /export/state.json``         the session's JSON state (``pbassess session`` reads it)
``GET /export/labels.csv``         every action with who and when
``GET /healthz``                   ``ok``
=================================  ========================================================

Errors a user can cause are answered with status 400/403/404 and ``{"error": "one line"}``.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any
from urllib.parse import unquote

from pbassess.active.web.security import TOKEN_COOKIE, Guard
from pbassess.active.web.service import LabelService
from pbassess.errors import DataError, PbassessError

__all__ = ["create_app", "shortcut_keys"]

_KEYS = "1234567890qwertyuiopasdfghjklzxcvbnm"


def shortcut_keys(classes: tuple[str, ...]) -> list[str]:
    """The key of each class button: the class name itself when it is one distinct character, else 1-9, 0, q, w, ...

    Examples
    --------
    >>> shortcut_keys(("0", "1", "2"))
    ['0', '1', '2']
    >>> shortcut_keys(("cat", "dog"))
    ['1', '2']
    """
    reserved = {"s", "n", "u", "h"}  # skip, not sure, undo, hide the prediction
    if all(len(c) == 1 and c.lower() not in reserved for c in classes) and len({c.lower() for c in classes}) == len(classes):
        return [c.lower() for c in classes]
    keys = [k for k in _KEYS if k not in reserved]
    return [keys[i] if i < len(keys) else "" for i in range(len(classes))]


def _asset(name: str) -> str:
    return resources.files("pbassess.active.web").joinpath("assets", name).read_text(encoding="utf-8")


def create_app(service: LabelService, guard: Guard | None = None, *, title: str | None = None):
    """The Starlette application serving ``service``.

    Parameters
    ----------
    service : LabelService
    guard : Guard, optional
        Token and CSRF checks (default: no token, a random CSRF token).
    title : str, optional
        The page's title (default: the pool's name and the target).

    Returns
    -------
    ASGI application
        The Starlette application behind the request checks.

    Examples
    --------
    >>> import asyncio, tempfile, pathlib
    >>> import httpx
    >>> from pbassess.active.session import LabelingSession
    >>> from pbassess.active.web.store import open_store
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> session = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate", seed=0)
    >>> service = LabelService(session, open_store(folder / "s.sqlite"))
    >>> async def ask(app):  # a POST without the page's CSRF token is refused
    ...     async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
    ...         return (await c.get("/healthz")).text, (await c.post("/api/next", json={"annotator": "a"})).status_code
    >>> asyncio.run(ask(create_app(service)))
    ('ok', 403)
    >>> service.close()
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import (
        FileResponse,
        HTMLResponse,
        JSONResponse,
        PlainTextResponse,
        RedirectResponse,
        Response,
    )
    from starlette.routing import Route

    guard = guard or Guard()
    page, script = _page(service, guard, title), _asset("app.js")

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = json.loads(await request.body() or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise DataError("the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise DataError("the body must be a JSON object")
        return data

    async def index(request: Request) -> Response:
        if "token" in request.query_params and guard.token is not None:  # passed the check: keep it in a cookie
            response = RedirectResponse("./", status_code=303)
            response.set_cookie(TOKEN_COOKIE, request.query_params["token"], httponly=True, samesite="strict")
            return response
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def app_js(request: Request) -> Response:
        return Response(script, media_type="text/javascript")

    async def api_next(request: Request) -> Response:
        data = await body(request)
        item = await run_in_threadpool(service.next_item, data.get("annotator"))
        return JSONResponse({"next": item})

    async def api_label(request: Request) -> Response:
        data = await body(request)
        done = await run_in_threadpool(service.record, data.get("annotator"), data.get("item_id"),
                                       data.get("kind", "label"), data.get("label"), data.get("request_id"))
        return JSONResponse(done)

    async def api_undo(request: Request) -> Response:
        data = await body(request)
        return JSONResponse(await run_in_threadpool(service.undo, data.get("annotator")))

    async def api_status(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(service.status))

    async def figure(request: Request) -> Response:
        data = await run_in_threadpool(service.figure_png, request.path_params["kind"])
        return Response(data, media_type="image/png", headers={"Cache-Control": "no-store"})

    async def image(request: Request) -> Response:
        item = unquote(request.path_params["item_id"])
        views = service.views
        if not views.has_image(item):
            return _error(404, f"item {item[:80]!r} has no image")
        if views.image_column is None:
            return Response(views.image_png(item), media_type="image/png")
        path, kind = views.image_file(item)
        return FileResponse(path, media_type=kind)

    async def export_state(request: Request) -> Response:
        return Response(await run_in_threadpool(service.export_state), media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="session.json"'})

    async def export_labels(request: Request) -> Response:
        return Response(await run_in_threadpool(service.labels_csv), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="labels.csv"'})

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/", index), Route("/app.js", app_js), Route("/healthz", healthz),
        Route("/api/next", api_next, methods=["POST"]), Route("/api/label", api_label, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]), Route("/api/status", api_status),
        Route("/figure/{kind}.png", figure), Route("/image/{item_id:path}", image),
        Route("/export/state.json", export_state), Route("/export/labels.csv", export_labels),
    ]

    app = Starlette(routes=routes, exception_handlers={PbassessError: _on_error})
    return _Guarded(app, guard)


def _page(service: LabelService, guard: Guard, title: str | None) -> str:
    """The page's HTML: its title, the configuration the script reads (classes, keys, CSRF token) and the CSS."""
    cfg = service.session.config
    title = title or f"Label {service.session.pool.name} - {cfg['target']}"
    page_config = {"classes": list(service.classes), "keys": shortcut_keys(service.classes), "csrf": guard.csrf,
                   "stop_at": service.stop_at, "target": cfg["target"]}
    return (_asset("page.html")
            .replace("{{title}}", html.escape(title))
            .replace("{{config}}", html.escape(json.dumps(page_config), quote=True))
            .replace("{{css}}", _asset("app.css")))


def _error(status: int, message: str):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


async def _on_error(request: Any, exc: Exception):
    """A user's error: one line, 400 (404 for a missing image, 403 for a path leaving the pool's folder)."""
    status = 404 if isinstance(exc, DataError) and request.url.path.startswith("/image/") else 400
    if "leaves the pool's folder" in str(exc):
        status = 403
    return _error(status, str(exc))


class _Guarded:
    """ASGI middleware: the Host check, the token on every request and the CSRF checks on every POST."""

    def __init__(self, app: Any, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        request = Request(scope)
        headers = request.headers
        problem = None
        if not self.guard.host_ok(headers):
            problem = (403, f"host {headers.get('host', '')!r} refused: without a token only the loopback address "
                            "is served")
        elif not self.guard.token_ok(headers, request.cookies, request.query_params):
            problem = (401 if self.guard.token else 403, "the access token is missing or wrong: open the URL printed "
                                                         "when the server started")
        elif scope["method"] not in ("GET", "HEAD", "POST"):
            problem = (405, f"method {scope['method']} not allowed")
        elif scope["method"] == "POST":
            why = self.guard.post_problem(headers)
            if why is not None:
                problem = (403, why)
        if problem is not None:
            await JSONResponse({"error": problem[1]}, status_code=problem[0])(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                extra = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                         (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; "
                                                      b"style-src 'self' 'unsafe-inline'; script-src 'self'; "
                                                      b"connect-src 'self'; frame-ancestors 'self' http://localhost:* "
                                                      b"http://127.0.0.1:*")]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)

