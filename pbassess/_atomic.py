"""Writing output files atomically, and a write failure in one line.

Every file a command writes (``--out`` folders, ``--plot``, saved results, grid stores) goes
through :func:`atomic_path` or :func:`atomic_write_bytes`: the content is written to a hidden
temporary file in the same folder, flushed and fsynced, then renamed over the target
(``os.replace``, atomic on POSIX) and the folder fsynced. A failure at any point (full disk,
file-size limit, read-only folder) removes the temporary file and leaves the previous file, if
any, untouched; :func:`os_failure` turns the ``OSError`` into one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "fsync_directory", "os_failure"]

_HINTS = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (disk quota)",
    errno.EFBIG: "the file is larger than the file-size limit (ulimit -f)",
    errno.EROFS: "the folder is on a read-only file system",
    errno.EACCES: "choose a folder you may write to",
    errno.EPERM: "choose a folder you may write to",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "the path is a folder; give a file name",
}


def os_failure(exc: OSError) -> str:
    """An ``OSError`` in words, on one line: what failed, the errno and what to do.

    Examples
    --------
    >>> os_failure(OSError(errno.ENOSPC, "No space left on device"))
    'No space left on device (errno 28): free some space'
    >>> os_failure(OSError(errno.EFBIG, "File too large", "/tmp/x.nc"))
    '/tmp/x.nc: File too large (errno 27): the file is larger than the file-size limit (ulimit -f)'
    >>> os_failure(OSError("simulated\\n  crash"))
    'simulated crash'
    """
    code = exc.errno
    if code is None:
        return " ".join(str(exc).split()) or type(exc).__name__
    text = " ".join(str(exc.strerror or os.strerror(code)).split())
    # libraries (h5py, zarr) put long messages in strerror: keep the first sentence
    text = text.split(" (file write failed")[0][:200]
    where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    hint = _HINTS.get(code)
    return f"{where}{text} (errno {code})" + (f": {hint}" if hint else "")


def fsync_directory(directory: str | os.PathLike) -> None:
    """Make a rename inside ``directory`` durable (no-op where folders cannot be opened).

    Examples
    --------
    >>> fsync_directory(tempfile.gettempdir())
    """
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    """The process's file-creation mask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):  # pragma: no cover - no /proc
        pass
    mask = os.umask(0o022)  # pragma: no cover
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def _mkstemp(path: Path, suffix: str) -> tuple[Path, int, str]:
    """The folder of ``path`` and a new hidden temporary file in it (errors name the folder or the path).

    The file gets the permissions of an ordinary new file (0666 less the umask), not mkstemp's 0600.
    """
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=suffix)
    except OSError as exc:  # name the folder when it is the problem, else the file that could not be made
        raise type(exc)(exc.errno, exc.strerror, str(directory if not directory.is_dir() else path)) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
    except OSError:  # pragma: no cover - a file system without modes
        pass
    return directory, fd, name


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block succeeds.

    The temporary file keeps ``path``'s suffix (so writers that choose a format from it, such
    as ``savefig``, still do). When the block raises, the temporary file is removed and
    ``path`` is untouched.

    Parameters
    ----------
    path : path-like
        The file to replace; its folder must exist.

    Yields
    ------
    pathlib.Path
        Where to write.

    Examples
    --------
    >>> folder = Path(tempfile.mkdtemp())
    >>> with atomic_path(folder / "a.txt") as tmp:
    ...     _ = tmp.write_text("hello")
    >>> (folder / "a.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('hello', ['a.txt'])
    """
    path = Path(path)
    directory, fd, name = _mkstemp(path, f".tmp{path.suffix}")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_directory(directory)


def atomic_write_bytes(path: str | os.PathLike, data: bytes | memoryview | str) -> Path:
    """Replace ``path`` by ``data`` atomically and durably (``str`` is written as UTF-8).

    Examples
    --------
    >>> p = Path(tempfile.mkdtemp()) / "x.json"
    >>> atomic_write_bytes(p, "{}").read_text()
    '{}'
    >>> atomic_write_bytes(Path("/no/such/folder/x.json"), b"{}")
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory: '/no/such/folder'
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif isinstance(data, memoryview):
        data = data.tobytes()
    path = Path(path)
    directory, fd, name = _mkstemp(path, ".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    fsync_directory(directory)
    return path
