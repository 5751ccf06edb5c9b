"""A child process under a watchdog, as the renderer runs LibreOffice: ``run_watched`` starts a command in its own
session with its output in temporary files, restarts the deadline whenever the command shows progress (output, or a
new file in a watched directory), and on timeout kills its whole process group and waits until no live member is
left, so a hung or dying LibreOffice never outlives its batch. Pure: no Django, DRF or Celery.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_POLL_SECONDS = 0.05
_GROUP_EXIT_SECONDS = 5.0


@dataclass(frozen=True)
class ProcessRun:
    """How a watched command ended; ``returncode`` is negative when a signal killed it."""

    timed_out: bool
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float


def run_watched(
    cmd: list[str],
    *,
    timeout: float,
    cwd: Path,
    progress_dir: Path | None = None,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> ProcessRun:
    """Run ``cmd`` in its own session; on timeout, or when ``cancel`` is set (from another thread), kill its whole
    process group.

    With ``progress_dir``, the deadline restarts whenever the command writes to stdout/stderr or
    a new file appears there, so a batch of N files gets ``timeout`` per file, not in total.
    """
    started = time.monotonic()
    with tempfile.TemporaryFile(dir=cwd) as out, tempfile.TemporaryFile(dir=cwd) as err:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        deadline = started + timeout
        seen = _progress(out, err, progress_dir)
        timed_out = False
        try:
            while True:
                remaining = deadline - time.monotonic()
                if cancel is not None and cancel.is_set():
                    break  # killed below, as the process has not ended
                if remaining <= 0:
                    timed_out = True
                    break
                try:
                    proc.wait(timeout=min(_POLL_SECONDS, remaining))
                    break
                except subprocess.TimeoutExpired:
                    pass
                if progress_dir is not None:
                    now_seen = _progress(out, err, progress_dir)
                    if now_seen != seen:
                        seen = now_seen
                        deadline = time.monotonic() + timeout
        finally:
            if timed_out or proc.returncode is None:
                _kill_group(proc)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return ProcessRun(timed_out, proc.returncode, stdout, stderr, time.monotonic() - started)


def _progress(out, err, progress_dir: Path | None) -> tuple[int, int, int]:
    files = sum(1 for _ in progress_dir.iterdir()) if progress_dir is not None else 0
    return os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size, files


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group (leader not yet reaped, so the id is still ours), then wait
    until no live member is left. Killed grandchildren are re-parented to init and may stay
    zombies for a while; they hold nothing, so they do not count."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    deadline = time.monotonic() + _GROUP_EXIT_SECONDS
    while time.monotonic() < deadline and _group_has_live_members(proc.pid):
        time.sleep(0.02)


def _group_has_live_members(pgid: int) -> bool:
    proc_root = Path("/proc")
    if not proc_root.is_dir():  # not Linux: fall back to "any member, zombie or not"
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # state ppid pgrp ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False
