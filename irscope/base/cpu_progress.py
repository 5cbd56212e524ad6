"""Whether a child process is still working: the CPU its process group has used, read from /proc.

A forked child (a compile child, a copy of forked_map) can be stuck for good: a lock another thread held at
the fork is never released in the copy. Its parent cannot tell that from slow work by waiting, but it can
see that no process of the group uses CPU any more."""

from __future__ import annotations

import os
import time


class Progress:
    """Whether a child's process group still uses CPU, from /proc (Linux); unknown elsewhere."""

    def __init__(self, group: int):
        self.group = group
        self.known = os.path.isdir("/proc/self")
        self.last = self._cpu_ticks()
        self.since = time.monotonic()

    def stalled(self, limit: float) -> bool:
        if not self.known:
            return False
        now = self._cpu_ticks()
        if now != self.last:
            self.last, self.since = now, time.monotonic()
            return False
        return time.monotonic() - self.since > limit

    def _cpu_ticks(self) -> int:
        if not self.known:
            return 0
        total = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            # after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
            # utime stime cutime cstime
            # its own CPU and that of the children it has collected
            if int(fields[2]) == self.group:
                total += sum(int(value) for value in fields[11:15])
        return total
