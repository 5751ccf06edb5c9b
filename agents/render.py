"""Render a one-slide PPTX to a metadata-free PNG for side-by-side human comparison.

LibreOffice (headless) converts the deck to PDF, Poppler's ``pdftoppm`` rasterises the one page
at a fixed long edge, and Pillow re-encodes the PNG without metadata and makes a thumbnail.

LibreOffice's start-up costs more than a conversion, so a ``LibreOfficeRenderer`` converts
inputs in batches: one ``soffice --convert-to pdf f1 … fN`` per batch, with a private profile
reused across its batches. Inputs are hard-linked (or copied) into a private directory under
neutral names, because they are often all called ``output.pptx``. A batch that hangs or dies is
killed as a whole process group, and every file it did not convert is retried on its own, so a
single bad file costs only itself. A persistent LibreOffice (UNO) is not used: python-uno is
importable only from the system interpreter, not from the project's virtualenv.

Pure module: no Django, DRF or Celery.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

RENDER_VERSION = "1"
DEFAULT_LONG_EDGE = 1600
DEFAULT_THUMBNAIL_LONG_EDGE = 320
DEFAULT_TIMEOUT = 60.0
DEFAULT_BATCH_SIZE = 20

PNG_NAME = "render.png"
THUMBNAIL_NAME = "thumb.png"

REASON_FAILED = "render_failed"
REASON_TIMEOUT = "render_timeout"

_POLL_SECONDS = 0.05
_GROUP_EXIT_SECONDS = 5.0
_NOISE = re.compile(r"javaldx|^convert .* using filter", re.IGNORECASE)
_PAGES = re.compile(r"^Pages:\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Rendering:
    """The outcome of rendering one deck.

    ``seconds`` is the wall time attributable to this file: its share of its batch's
    LibreOffice run, plus any retry of its own, plus its PNG work.
    """

    ok: bool
    reason: str  # "" when ok, else REASON_FAILED or REASON_TIMEOUT
    detail: str  # never contains the input's path or file name
    pdf_pages: int
    png_path: Path | None
    thumbnail_path: Path | None
    width: int
    height: int
    png_sha256: str
    thumbnail_sha256: str
    seconds: float


def _failure(reason: str, detail: str, *, pdf_pages: int = 0, seconds: float = 0.0) -> Rendering:
    return Rendering(
        ok=False,
        reason=reason,
        detail=detail,
        pdf_pages=pdf_pages,
        png_path=None,
        thumbnail_path=None,
        width=0,
        height=0,
        png_sha256="",
        thumbnail_sha256="",
        seconds=seconds,
    )


@dataclass(frozen=True)
class _Run:
    timed_out: bool
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float


class LibreOfficeRenderer:
    """Renders decks with as few LibreOffice start-ups as possible.

    One per worker process (not thread-safe). Use as a context manager, or call ``close()``,
    which removes the private profile and scratch space.
    """

    def __init__(
        self,
        *,
        soffice: str = "soffice",
        timeout: float = DEFAULT_TIMEOUT,
        long_edge: int = DEFAULT_LONG_EDGE,
        thumbnail_long_edge: int = DEFAULT_THUMBNAIL_LONG_EDGE,
        batch_size: int = DEFAULT_BATCH_SIZE,
        pdftoppm: str = "pdftoppm",
        pdfinfo: str = "pdfinfo",
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if long_edge < 1 or thumbnail_long_edge < 1:
            raise ValueError("long edges must be positive")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.soffice = soffice
        self.timeout = timeout
        self.long_edge = long_edge
        self.thumbnail_long_edge = thumbnail_long_edge
        self.batch_size = batch_size
        self.pdftoppm = pdftoppm
        self.pdfinfo = pdfinfo
        self._root = Path(tempfile.mkdtemp(prefix="refig-render-"))
        self.profile_dir = self._root / "profile"
        self._batches = 0
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._root, ignore_errors=True)

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> LibreOfficeRenderer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    # -- public verbs --------------------------------------------------------------------

    def render(self, pptx_path: Path | str, *, out_dir: Path | str) -> Rendering:
        return self.render_many([Path(pptx_path)], out_dirs=[Path(out_dir)])[0]

    def render_many(
        self, pptx_paths: Sequence[Path | str], *, out_dirs: Sequence[Path | str]
    ) -> list[Rendering]:
        """Render each deck into its own ``out_dir`` (``render.png``, ``thumb.png``)."""
        if self.closed:
            raise RuntimeError("renderer is closed")
        if len(pptx_paths) != len(out_dirs):
            raise ValueError("pptx_paths and out_dirs must have the same length")
        results: list[Rendering] = []
        for start in range(0, len(pptx_paths), self.batch_size):
            chunk = range(start, min(start + self.batch_size, len(pptx_paths)))
            results.extend(
                self._render_batch([Path(pptx_paths[i]) for i in chunk], [Path(out_dirs[i]) for i in chunk])
            )
        return results

    # -- one batch -----------------------------------------------------------------------

    def _render_batch(self, inputs: list[Path], out_dirs: list[Path]) -> list[Rendering]:
        self._batches += 1
        work = self._root / f"batch-{self._batches}"
        in_dir, pdf_dir = work / "in", work / "pdf"
        in_dir.mkdir(parents=True)
        pdf_dir.mkdir()
        try:
            for out_dir in out_dirs:
                _clear_outputs(out_dir)
            results: list[Rendering | None] = [None] * len(inputs)
            staged: dict[int, Path] = {}
            for i, src in enumerate(inputs):
                dst = in_dir / f"deck-{i:04d}.pptx"
                try:
                    _link_or_copy(src, dst)
                except OSError:
                    results[i] = _failure(REASON_FAILED, "input file could not be read")
                    continue
                staged[i] = dst

            seconds = {i: 0.0 for i in staged}
            pending = list(staged)
            if len(pending) == 1:
                run = self._convert([staged[pending[0]]], pdf_dir, work)
                seconds[pending[0]] += run.seconds
                results[pending[0]] = self._check_pdf(staged[pending[0]], pdf_dir, run)
            elif pending:
                run = self._convert([staged[i] for i in pending], pdf_dir, work)
                for i in pending:
                    seconds[i] += run.seconds / len(pending)
                converted = [i for i in pending if _pdf_for(staged[i], pdf_dir).exists()]
                if converted and (run.timed_out or (run.returncode or 0) < 0):
                    # Files convert in order; the last PDF of a killed batch may be partial.
                    _pdf_for(staged[converted[-1]], pdf_dir).unlink(missing_ok=True)
                    converted.pop()
                for i in pending:
                    if i in converted:
                        results[i] = self._check_pdf(staged[i], pdf_dir, run)
                    else:  # retried alone: its own timeout and its own error message
                        single = self._convert([staged[i]], pdf_dir, work)
                        seconds[i] += single.seconds
                        results[i] = self._check_pdf(staged[i], pdf_dir, single)

            final: list[Rendering] = []
            for i, result in enumerate(results):
                assert result is not None
                if result.ok:
                    started = time.monotonic()
                    result = self._rasterise(_pdf_for(staged[i], pdf_dir), out_dirs[i], work)
                    seconds[i] += time.monotonic() - started
                final.append(_with_seconds(result, seconds.get(i, 0.0)))
            return final
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _convert(self, decks: list[Path], pdf_dir: Path, work: Path) -> _Run:
        cmd = [
            self.soffice,
            f"-env:UserInstallation={self.profile_dir.as_uri()}",
            "--headless",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            "--convert-to",
            "pdf",
            "--outdir",
            str(pdf_dir),
            *[str(d) for d in decks],
        ]
        # A batch makes progress file by file; a single file gets a hard deadline.
        run = _run_watched(cmd, timeout=self.timeout, cwd=work, progress_dir=pdf_dir if len(decks) > 1 else None)
        if run.timed_out or (run.returncode or 0) < 0:
            # A killed LibreOffice may leave a half-written profile; the next run makes a fresh one.
            shutil.rmtree(self.profile_dir, ignore_errors=True)
        return run

    def _check_pdf(self, deck: Path, pdf_dir: Path, run: _Run) -> Rendering:
        pdf = _pdf_for(deck, pdf_dir)
        if not pdf.exists() or pdf.stat().st_size == 0:
            if run.timed_out:
                return _failure(REASON_TIMEOUT, f"LibreOffice did not finish within {self.timeout:g} s")
            message = _clean_message(run.stderr + "\n" + run.stdout, deck.parent.parent)
            return _failure(REASON_FAILED, "no PDF written" + (f": {message}" if message else ""))
        info = _run_watched([self.pdfinfo, str(pdf)], timeout=self.timeout, cwd=pdf_dir)
        if info.timed_out:
            return _failure(REASON_TIMEOUT, "pdfinfo did not finish in time")
        match = _PAGES.search(info.stdout)
        if info.returncode != 0 or match is None:
            message = _clean_message(info.stderr, deck.parent.parent)
            return _failure(REASON_FAILED, "unreadable PDF" + (f": {message}" if message else ""))
        pages = int(match.group(1))
        if pages != 1:
            return _failure(REASON_FAILED, f"PDF has {pages} pages", pdf_pages=pages)
        return Rendering(
            ok=True, reason="", detail="", pdf_pages=1, png_path=None, thumbnail_path=None,
            width=0, height=0, png_sha256="", thumbnail_sha256="", seconds=0.0,
        )

    def _rasterise(self, pdf: Path, out_dir: Path, work: Path) -> Rendering:
        prefix = work / f"{pdf.stem}-page"
        cmd = [self.pdftoppm, "-png", "-singlefile", "-scale-to", str(self.long_edge), str(pdf), str(prefix)]
        run = _run_watched(cmd, timeout=self.timeout, cwd=work)
        raw = prefix.with_name(prefix.name + ".png")
        if run.timed_out:
            return _failure(REASON_TIMEOUT, "pdftoppm did not finish in time", pdf_pages=1)
        if run.returncode != 0 or not raw.exists():
            message = _clean_message(run.stderr, work)
            return _failure(REASON_FAILED, "pdftoppm failed" + (f": {message}" if message else ""), pdf_pages=1)
        with Image.open(raw) as opened:
            image = _plain(opened)
        thumbnail = image.copy()
        thumbnail.thumbnail((self.thumbnail_long_edge, self.thumbnail_long_edge), Image.Resampling.LANCZOS)
        png_bytes, thumb_bytes = _encode(image), _encode(thumbnail)
        out_dir.mkdir(parents=True, exist_ok=True)
        png_path, thumb_path = out_dir / PNG_NAME, out_dir / THUMBNAIL_NAME
        _write_atomic(png_path, png_bytes)
        _write_atomic(thumb_path, thumb_bytes)
        return Rendering(
            ok=True,
            reason="",
            detail="",
            pdf_pages=1,
            png_path=png_path,
            thumbnail_path=thumb_path,
            width=image.width,
            height=image.height,
            png_sha256=hashlib.sha256(png_bytes).hexdigest(),
            thumbnail_sha256=hashlib.sha256(thumb_bytes).hexdigest(),
            seconds=0.0,
        )


def render_pptx(
    path: Path | str,
    *,
    out_dir: Path | str,
    timeout: float = DEFAULT_TIMEOUT,
    long_edge: int = DEFAULT_LONG_EDGE,
    soffice: str = "soffice",
) -> Rendering:
    """Render one deck with a throw-away renderer (one LibreOffice start-up)."""
    with LibreOfficeRenderer(soffice=soffice, timeout=timeout, long_edge=long_edge) as renderer:
        return renderer.render(path, out_dir=out_dir)


def strip_png_metadata(src: bytes) -> bytes:
    """Re-encode a PNG with pixels only: no text, EXIF, ICC, time or physical-size chunks."""
    with Image.open(io.BytesIO(src)) as opened:
        return _encode(_plain(opened))


# -- helpers ------------------------------------------------------------------------------


def _plain(image: Image.Image) -> Image.Image:
    """A fresh image with the same pixels and an empty ``info`` (so nothing is carried over)."""
    image.load()
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "transparency" in image.info or "A" in image.mode else "RGB")
    return Image.frombytes(image.mode, image.size, image.tobytes())


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _clear_outputs(out_dir: Path) -> None:
    for name in (PNG_NAME, THUMBNAIL_NAME):
        (out_dir / name).unlink(missing_ok=True)


def _link_or_copy(src: Path, dst: Path) -> None:
    if not src.is_file():
        raise FileNotFoundError(src)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _pdf_for(deck: Path, pdf_dir: Path) -> Path:
    return pdf_dir / f"{deck.stem}.pdf"


def _with_seconds(result: Rendering, seconds: float) -> Rendering:
    return dataclasses.replace(result, seconds=round(seconds, 3))


def _clean_message(text: str, private_dir: Path) -> str:
    """LibreOffice's own words, minus start-up noise and our private (neutral) paths."""
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if not line or _NOISE.search(line):
            continue
        line = line.replace(str(private_dir), "").replace(str(private_dir.resolve()), "")
        if line not in lines:
            lines.append(line)
    return "; ".join(lines)[:500]


def _run_watched(cmd: list[str], *, timeout: float, cwd: Path, progress_dir: Path | None = None) -> _Run:
    """Run ``cmd`` in its own session; on timeout kill its whole process group.

    With ``progress_dir``, the deadline restarts whenever the command writes to stdout/stderr or
    a new file appears there, so a batch of N files gets ``timeout`` per file, not in total.
    """
    started = time.monotonic()
    with tempfile.TemporaryFile(dir=cwd) as out, tempfile.TemporaryFile(dir=cwd) as err:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        deadline = started + timeout
        seen = _progress(out, err, progress_dir)
        timed_out = False
        try:
            while True:
                remaining = deadline - time.monotonic()
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
    return _Run(timed_out, proc.returncode, stdout, stderr, time.monotonic() - started)


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
