"""Downloads of data files: the user cache folder and a checked download.

Shared by the model zoo (:mod:`pbassess.data.registry`) and the multi-file recipes such as
:mod:`pbassess.data.acs`; it knows nothing of model cards.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

from pbassess.constants import CACHE_DIR_ENV
from pbassess.errors import DataError

__all__ = ["cache_dir", "download_file", "sha256_of_content"]


def sha256_of_content(path: Path) -> str:
    """The sha256 of a file's content (of the uncompressed content for a ``.gz`` file).

    Examples
    --------
    >>> import gzip, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_bytes(b"abc")
    >>> with gzip.open(folder / "a.txt.gz", "wb") as fh:
    ...     _ = fh.write(b"abc")
    >>> sha256_of_content(folder / "a.txt") == sha256_of_content(folder / "a.txt.gz")
    True
    """
    digest = hashlib.sha256()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir() -> Path:
    """The user cache folder: ``PBASSESS_CACHE_DIR``, default ``~/.cache/pbassess``.

    Examples
    --------
    >>> import os
    >>> cache_dir().name if "PBASSESS_CACHE_DIR" not in os.environ else "pbassess"
    'pbassess'
    """
    return Path(os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "pbassess")


def download_file(url: str, target: Path, sha256: str, *, progress: bool = True) -> Path:
    """Download ``url`` to ``target``, kept only when the sha256 of its content matches.

    The file is written beside ``target`` first and moved into place once its checksum is
    right; any failure raises :class:`~pbassess.errors.DataError` and leaves no file behind.

    Examples
    --------
    >>> import hashlib, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "src.txt").write_bytes(b"abc")
    >>> digest = hashlib.sha256(b"abc").hexdigest()
    >>> download_file((folder / "src.txt").as_uri(), folder / "cache" / "a.txt", digest, progress=False).read_bytes()
    b'abc'
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    # Keep the target's suffix so that a .gz download is checked on its uncompressed content.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".download-", suffix="".join(target.suffixes[-1:]))
    try:
        with urllib.request.urlopen(url, timeout=60) as response, os.fdopen(fd, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0)
            show_progress = progress == "always" or (progress and sys.stderr.isatty())
            done = 0
            while chunk := response.read(1 << 16):
                out.write(chunk)
                done += len(chunk)
                if show_progress:
                    frac = f"{100 * done / total:5.1f}%" if total else f"{done / 1e6:.1f} MB"
                    print(f"\rdownloading {target.name}: {frac}", end="", file=sys.stderr, flush=True)
            out.flush()
            os.fsync(out.fileno())
        if show_progress:
            print(file=sys.stderr)
        got = sha256_of_content(Path(tmp))
        if got != sha256:
            raise DataError(f"checksum mismatch for {url}: expected sha256 {sha256[:12]}..., got {got[:12]}...")
        os.replace(tmp, target)
    except OSError as exc:
        raise DataError(f"could not download {url}: {exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
