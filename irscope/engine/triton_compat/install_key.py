"""Triton's hash of its own install (`triton_key()`): kept on disk, and worked out beside the user's file.

Before Triton can even look in its cache, it hashes its whole install once per process (libtriton is
~0.5 GB): ~0.3 s of SHA-256 on every start. irscope keeps the result on disk, keyed by the install's
fingerprint (sizes and mtimes), so that a reopen reads it in a blink; the value is Triton's own
`triton_key()`, unchanged. It lives in irscope's cache rather than Triton's: it describes the install, so a
fresh `TRITON_CACHE_DIR` (a new project, a CI run) still skips the hashing.

When the memo is missing, `warm_triton_key` hashes in a process of its own while the user's file runs. A
thread did the same work but not beside the file: it had to win the interpreter lock back after every
megabyte it hashed, and the interpreter running the file held it for 5 ms at a time, so the hash took up to
three times as long and the first compile (engine/compile/ahead.py), which needs the key, started that much later.
Whoever needs the key meanwhile (the parent, a compile child forked from it) waits for the hashing process
to close its pipe, then reads the memo; if there is none (it was killed, the folder cannot be written), it
hashes for itself.
"""

from __future__ import annotations

import gc
import hashlib
import os
import signal
import threading
import warnings

import triton

from irscope.base.lifetime import die_with_parent
from irscope.engine.patching import write_atomically
from irscope.engine.triton_compat.caches import irscope_cache_dir

# The process hashing the install, while it may still be running: its pid, and the read end of a pipe whose
# only write end it holds (end of file there: it is done, one way or another). Inherited by forks.
_hasher: dict[str, int | None] = {"pid": None, "fd": None}
# over _hasher and the memo's value: two threads asking at once, one reads (or hashes)
_lock = threading.Lock()


def _new_lock() -> None:
    """A fork made while another thread held the lock would leave it held for ever in the child."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock)


def _install_fingerprint() -> str:
    """Sizes and mtimes of every file Triton hashes into its cache key: cheap to read, and any change
    to the install (an upgrade, an edited source file) changes it."""
    root = os.path.dirname(triton.__file__)
    parts = []
    for sub in ("compiler", "backends", "language", "runtime", "_C"):
        for folder, _dirs, files in os.walk(os.path.join(root, sub)):
            for name in sorted(files):
                if name.endswith((".py", ".so")):
                    st = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()


def remember_triton_key() -> None:
    """Put irscope's memo in front of Triton's `triton_key()` (once per process)."""
    import triton.runtime.autotuner as autotuner_module
    import triton.runtime.cache as cache_module

    original = cache_module.triton_key
    if getattr(original, "_irscope", False):
        return
    memo_path = os.path.join(irscope_cache_dir(), f"triton_key.{_install_fingerprint()}")
    value: list[str] = []

    def triton_key() -> str:
        if not value:
            with _lock:
                _wait_for_hasher()
                if not value:
                    try:
                        with open(memo_path, encoding="utf-8") as f:
                            value.append(f.read())
                    except OSError:
                        value.append(original())
                        # one that cannot be written: a missed shortcut
                        write_atomically(memo_path, value[0])
        return value[0]

    triton_key._irscope = True
    triton_key._memo_path = memo_path
    triton_key._original = original
    triton_key._known = value
    cache_module.triton_key = triton_key
    autotuner_module.triton_key = triton_key


def triton_install_key() -> str:
    """Triton's hash of its own install (`triton_key()`, from irscope's memo after the first time)."""
    import triton.runtime.cache as cache_module

    remember_triton_key()
    return cache_module.triton_key()


def triton_key_known() -> bool:
    """Whether asking for the key now returns at once (no hashing, no waiting for the hashing process)."""
    import triton.runtime.cache as cache_module

    remember_triton_key()
    key = cache_module.triton_key
    return bool(key._known) or os.path.exists(key._memo_path)


def warm_triton_key() -> None:
    """Hash Triton's install beside the user's file when irscope's memo does not have it (see above)."""
    import triton.runtime.cache as cache_module

    remember_triton_key()
    key = cache_module.triton_key
    if key._known or os.path.exists(key._memo_path):
        return
    with _lock:
        if _hasher["fd"] is not None:
            return
        if not hasattr(os, "fork"):
            threading.Thread(target=key, name="irscope-triton-key", daemon=True).start()
            return
        _start_hasher(key._original, key._memo_path)


def hashing_process() -> int | None:
    """The pid of the process hashing the install, until someone has seen it finish."""
    return _hasher["pid"]


def _start_hasher(original, memo_path: str) -> None:
    read_end, write_end = os.pipe()
    parent = os.getpid()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a process with threads (torch's); the child takes no lock
        # another thread could hold: it hashes files and writes one.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            gc.disable()  # a collection would copy the parent's heap page by page
            os.close(read_end)
            os.setpgid(0, 0)  # Ctrl-C at the terminal is the parent's to handle
            for name in ("SIGINT", "SIGTERM", "SIGHUP"):
                if hasattr(signal, name):
                    # never the parent's handlers
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            try:
                signal.set_wakeup_fd(-1)
            except ValueError:
                pass
            die_with_parent(parent)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            value = original()
            # killed during the write, it would leave a partial file behind: the signals wait until _exit
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
            code = 0 if write_atomically(memo_path, value) else 1
        except BaseException:  # noqa: BLE001 - whoever needs the key hashes for itself
            pass
        finally:
            os._exit(code)
    os.close(write_end)
    _hasher["pid"], _hasher["fd"] = pid, read_end


def _wait_for_hasher() -> None:
    """Block until the hashing process is done (at once if there is none); collect it if it is ours.
    Called with _lock held."""
    fd, pid = _hasher["fd"], _hasher["pid"]
    if fd is None:
        return
    _hasher["pid"] = _hasher["fd"] = None
    try:
        while os.read(fd, 64):  # blocks until the process exits: it writes nothing
            pass
    except OSError:
        pass
    os.close(fd)
    try:
        os.waitpid(pid, 0)
    # in a compile child forked from the parent: not its process to collect
    except ChildProcessError:
        pass
