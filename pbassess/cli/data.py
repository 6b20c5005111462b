"""``pbassess data``: list, show and fetch the registered prediction sets (the model zoo).

* ``pbassess data list [--json]``: every registered name, built-in default first, with its
  task, number of items and classes, and where it would be read from: ``built in``, ``mirror``
  (the folder named by ``PBASSESS_DATA_DIR``), ``cache`` or ``download``.
* ``pbassess data show NAME [--json]``: the card of one name.
* ``pbassess data fetch NAME [--json]``: make the file local (mirror, cache, or a download whose
  sha256 is checked; mirrored and cached copies are checked too) and print its path.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pbassess.constants import CACHE_DIR_ENV, DATA_DIR_ENV
from pbassess.data import registry
from pbassess.errors import DataError

__all__ = ["describe_card", "locate", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``data`` subcommand and its ``list``/``show``/``fetch`` actions."""
    from pbassess.cli import options as opt

    parser = opt.add_command(
        subparsers, "data", help="list, show and fetch the registered prediction sets",
        description="The model zoo: registered prediction sets, built in or downloaded with checksums.",
        examples=("pbassess data list", "pbassess data show digits-shift --json"),
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=type(parser))
    p_list = opt.add_command(actions, "list", help="every registered name with task, size and source",
                             description="Every registered name with its task, size and where it is read from.")
    p_list.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p_show = opt.add_command(actions, "show", help="print the card of one registered name",
                             description="Print the card of one registered name.")
    p_show.add_argument("name", metavar="NAME", help="a registered name (see: pbassess data list)")
    p_show.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p_fetch = opt.add_command(actions, "fetch", help="make a registered set local and print its path",
                              description="Make a registered set local (checksum verified) and print its path.")
    p_fetch.add_argument("name", metavar="NAME", help="a registered name (see: pbassess data list)")
    p_fetch.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def locate(card: registry.ModelCard) -> tuple[str, Path | None]:
    """Where a registered set would be read from, without downloading anything.

    Returns
    -------
    source : {"built in", "mirror", "cache", "download"}
    path : Path or None
        The local file, or ``None`` when it would have to be downloaded.

    Examples
    --------
    >>> from pbassess.data.registry import model_card
    >>> locate(model_card("digits-logreg"))[0]
    'built in'
    """
    try:
        path = registry.resolve_path(card.name, download=False)
    except DataError:
        if card.builtin:
            raise
        return "download", None
    if card.builtin:
        return "built in", path
    mirror = os.environ.get(DATA_DIR_ENV)
    if mirror and _is_under(path, Path(mirror)):
        return "mirror", path
    return "cache", path


def _is_under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _n_classes(card: registry.ModelCard) -> int | None:
    if isinstance(card.classes, int):
        return card.classes
    if isinstance(card.classes, (list, tuple)):
        return len(card.classes)
    return None


def describe_card(card: registry.ModelCard) -> dict[str, Any]:
    """The card as a JSON-able dict, with its number of classes/items and current source."""
    source, path = locate(card)
    out = card.to_dict()
    out.update({
        "n_classes": _n_classes(card),
        "n_items": card.extra.get("n_items"),
        "where": source,
        "path": None if path is None else str(path),
        "readme": str(card.folder / "README.md") if (card.folder / "README.md").exists() else None,
    })
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess data <action>``."""
    from pbassess.cli import emit_json

    if args.action == "list":
        cards = registry.list_models()
        rows = [describe_card(card) for card in cards]
        if args.json:
            default = next((card.name for card in cards if card.default), None)
            emit_json({"default": default, "models": [
                {k: r[k] for k in ("name", "task", "n_items", "n_classes", "format", "builtin", "default",
                                   "where", "path")} for r in rows]})
        else:
            _print_table(rows)
        return 0
    card = registry.model_card(args.name)
    if args.action == "show":
        info = describe_card(card)
        if args.json:
            emit_json(info)
        else:
            _print_card(info)
        return 0
    # fetch: the checksum of mirrored / cached copies is verified too (downloads always are).
    path = registry.resolve_path(card.name, download=True, verify=not card.builtin)
    source, _ = locate(card)
    if args.json:
        emit_json({"name": card.name, "path": str(path), "where": source, "verified": not card.builtin})
    else:
        print(path)
    return 0


def _print_table(rows: list[dict[str, Any]]) -> None:
    header = ("name", "task", "items", "classes", "where")
    table = [header]
    for r in rows:
        task = r["task"].rsplit(" (", 1)[0] if r["task"].endswith(")") else r["task"]
        task = task if len(task) <= 72 else task[:69] + "..."
        name = r["name"] + (" *" if r["default"] else "")
        items = "" if r["n_items"] is None else f"{r['n_items']:,}"
        table.append((name, task, items, "" if r["n_classes"] is None else str(r["n_classes"]), r["where"]))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for j, row in enumerate(table):
        print("  ".join(cell.rjust(w) if i in (2, 3) else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))
    print(f"* built-in default (pbassess.load_data() with no name). Sources: mirror = ${DATA_DIR_ENV}, "
          f"cache = ${CACHE_DIR_ENV} (default ~/.cache/pbassess), download = fetched and sha256-checked on first use.")


def _print_card(info: dict[str, Any]) -> None:
    print(info["name"] + (" (built-in default)" if info["default"] else ""))
    print("=" * len(info["name"]))
    fields = [("task", info["task"]), ("classes", info["n_classes"]), ("items", info["n_items"]),
              ("format", info["format"]), ("provenance", info["provenance"]), ("citation", info["citation"]),
              ("license", info["license"])]
    if info.get("groups"):
        fields.append(("groups", ", ".join(info["groups"])))
    if info["reader_options"]:
        fields.append(("reader options", ", ".join(f"{k}={v}" for k, v in info["reader_options"].items())))
    if info.get("published"):
        fields.append(("published", ", ".join(f"{k} {v}" for k, v in info["published"].items())))
    if info["builtin"]:
        fields.append(("obtain", f"built in: {info['path']}"))
    else:
        src = info["source"] or {}
        fields += [("url", src.get("url")), ("sha256", src.get("sha256")), ("mirror path", src.get("mirror_path"))]
        fields.append(("obtain", f"{info['where']}: {info['path']}" if info["path"] else
                       "download on first use (`pbassess data fetch " + info["name"] + "`)"))
    if info["readme"]:
        fields.append(("card", info["readme"]))
    width = max(len(k) for k, _ in fields)
    for key, value in fields:
        if value is not None and value != "":
            print(f"{key.ljust(width)}  {value}")
