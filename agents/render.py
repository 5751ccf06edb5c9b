"""Render a one-slide PPTX to a metadata-free PNG for side-by-side human comparison.

LibreOffice (headless) converts the deck to PDF; PDFium (pypdfium2, in process) rasterises the
one page at a fixed long edge, and Pillow encodes the PNG without metadata and makes a thumbnail.
Poppler is not used: ``pdftoppm``/``pdfinfo`` as subprocesses cost more than LibreOffice's own
conversion, in-process PDFium a small fraction of it.

LibreOffice's start-up costs more than a conversion, so a ``LibreOfficeRenderer`` converts inputs in batches: one
``soffice --convert-to pdf f1 … fN`` per batch, with a private profile reused across its batches. Inputs are
hard-linked (or copied) into a private directory under neutral names, because they are often all called
``output.pptx``. A batch that hangs or dies is killed as a whole process group (``agents/watched_process.py``), and
every file it did not convert is retried on its own, so a single bad file costs only itself. While LibreOffice
converts, the renderer's own thread rasterises each PDF already whole (LibreOffice writes them in order, so a PDF is
whole once the next one appears) and hands the rendering to its caller (``render_iter``), which stores it: LibreOffice
on one core, the rest on another. A persistent LibreOffice (UNO) is not used: python-uno is importable only from the
system interpreter, not from the project's virtualenv.

One renderer per worker process: each has its own profile, so renderers never share
LibreOffice state. Fault safety:
  * a renderer's scratch space (profile, staged inputs, PDFs, LibreOffice's own temporary files)
    lives in a private directory under ``$TMPDIR/refig-render-<uid>/``, held by an ``flock``; a new
    renderer removes the directories of renderers whose process is gone;
  * every output is written to a temporary file in its own directory and renamed into place, and
    a renderer removes old outputs and leftover temporary files first, so a write killed halfway
    leaves no truncated ``render.png`` to be picked up.

Pure module: no Django, DRF or Celery.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import io
import math
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pypdfium2
import pypdfium2.raw as pdfium_c
from PIL import Image

from corpus.protocol import RENDER_LONG_EDGE, THUMBNAIL_LONG_EDGE

from .render_provenance import RendererProvenance, renderer_provenance
from .watched_process import ProcessRun, run_watched

# "2": PDFium replaced Poppler as the rasteriser (edge anti-aliasing differs on about 1 % of the
# pixels, and the short edge is rounded, not rounded up), so renders of version "1" are redone
# rather than mixed with new ones in one comparison.
RENDER_VERSION = "2"
DEFAULT_LONG_EDGE = RENDER_LONG_EDGE
DEFAULT_THUMBNAIL_LONG_EDGE = THUMBNAIL_LONG_EDGE
DEFAULT_TIMEOUT = 60.0
# LibreOffice starts in about 0.7 s and converts a figure deck in about 0.05 s (measured here): a call of 100 decks
# spends about an eighth of its time starting, a call of 20 about two fifths.
DEFAULT_BATCH_SIZE = 100
# LibreOffice silently ignores command-line arguments past about 256: given 400 decks, it converted 243 and exited 0
# (LibreOffice 7.4, measured here). A batch stays well below that.
MAX_BATCH_SIZE = 200
# Render messages: a small set of decks is cut into up to this many (of at least MIN_MESSAGE_BATCH decks) so that
# several workers share it rather than one taking it all.
MESSAGE_SPREAD = 8
MIN_MESSAGE_BATCH = 20

PNG_NAME = "render.png"
THUMBNAIL_NAME = "thumb.png"

REASON_FAILED = "render_failed"
REASON_TIMEOUT = "render_timeout"

# Lossless either way; level 1 encodes a 1600 px slide about 1.4x faster than Pillow's default 6
# for files about 20 % larger (measured on the render benchmark's decks).
PNG_COMPRESS_LEVEL = 1

_NOISE = re.compile(r"javaldx|^convert .* using filter", re.IGNORECASE)
_STALE_PENDING_LOCK_SECONDS = 60.0
# PDFium is not thread-safe: renderers used from threads of one process take turns.
_PDFIUM_LOCK = threading.Lock()
# How often a batch looks for finished PDFs: a small share of one deck's conversion (about 50 ms).
_PIPELINE_POLL_SECONDS = 0.02


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


class LibreOfficeRenderer:
    """Renders decks with as few LibreOffice start-ups as possible.

    One per worker process (not thread-safe). Use as a context manager, or call ``close()``,
    which removes the private profile and scratch space. ``scratch_parent`` defaults to
    ``$TMPDIR/refig-render-<uid>``.
    """

    def __init__(
        self,
        *,
        soffice: str = "soffice",
        timeout: float = DEFAULT_TIMEOUT,
        long_edge: int = DEFAULT_LONG_EDGE,
        thumbnail_long_edge: int = DEFAULT_THUMBNAIL_LONG_EDGE,
        batch_size: int = DEFAULT_BATCH_SIZE,
        scratch_parent: Path | str | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if long_edge < 1 or thumbnail_long_edge < 1:
            raise ValueError("long edges must be positive")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE} (LibreOffice's command line)")
        self.soffice = soffice
        self.timeout = timeout
        self.long_edge = long_edge
        self.thumbnail_long_edge = thumbnail_long_edge
        self.batch_size = batch_size
        parent = Path(scratch_parent) if scratch_parent is not None else default_scratch_parent()
        self._root, lock_path, lock_fd = _scratch_create(parent)
        self.profile_dir = self._root / "profile"
        self._tmp = self._root / "tmp"  # LibreOffice's own temporary files (TMPDIR)
        self._tmp.mkdir()
        self._batches = 0
        self._finalizer = weakref.finalize(self, _scratch_remove, self._root, lock_path, lock_fd)

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    @property
    def scratch_dir(self) -> Path:
        return self._root

    @property
    def provenance(self) -> RendererProvenance:
        """What this renderer's renderings are made with: asked once per process and soffice binary."""
        return renderer_provenance(self.soffice)

    # -- public verbs --------------------------------------------------------------------

    def render(self, pptx_path: Path | str, *, out_dir: Path | str) -> Rendering:
        return self.render_many([Path(pptx_path)], out_dirs=[Path(out_dir)])[0]

    def render_many(self, pptx_paths: Sequence[Path | str], *, out_dirs: Sequence[Path | str]) -> list[Rendering]:
        """Render each deck into its own ``out_dir`` (``render.png``, ``thumb.png``)."""
        results: dict[int, Rendering] = dict(self.render_iter(pptx_paths, out_dirs=out_dirs))
        return [results[i] for i in range(len(pptx_paths))]

    def render_iter(
        self, pptx_paths: Sequence[Path | str], *, out_dirs: Sequence[Path | str]
    ) -> Iterator[tuple[int, Rendering]]:
        """``(index, rendering)`` for each deck as soon as it is done, mostly in order: the caller stores one while
        LibreOffice converts the next. Leaving the loop early stops LibreOffice."""
        if self.closed:
            raise RuntimeError("renderer is closed")
        if len(pptx_paths) != len(out_dirs):
            raise ValueError("pptx_paths and out_dirs must have the same length")
        for start in range(0, len(pptx_paths), self.batch_size):
            chunk = range(start, min(start + self.batch_size, len(pptx_paths)))
            batch = self._render_batch([Path(pptx_paths[i]) for i in chunk], [Path(out_dirs[i]) for i in chunk])
            for i, result in batch:
                yield start + i, result

    # -- one batch -----------------------------------------------------------------------

    def _render_batch(self, inputs: list[Path], out_dirs: list[Path]) -> Iterator[tuple[int, Rendering]]:
        """One LibreOffice call for the batch. LibreOffice converts its files one after another, in order, so a PDF
        is whole once the next one appears: it is rasterised then, while LibreOffice goes on (PDFium and Pillow on
        one core, LibreOffice on another). Files the batch did not convert are then retried alone."""
        self._batches += 1
        work = self._root / f"batch-{self._batches}"
        in_dir, pdf_dir = work / "in", work / "pdf"
        in_dir.mkdir(parents=True)
        pdf_dir.mkdir()
        try:
            for out_dir in out_dirs:
                _clear_outputs(out_dir)
            staged: dict[int, Path] = {}
            for i, src in enumerate(inputs):
                dst = in_dir / f"deck-{i:04d}.pptx"
                try:
                    _link_or_copy(src, dst)
                except OSError:
                    yield i, _failure(REASON_FAILED, "input file could not be read")
                    continue
                staged[i] = dst
            pending = list(staged)
            if len(pending) > 1:
                retry, shared = yield from self._convert_pipelined(pending, staged, pdf_dir, work, out_dirs)
            else:
                retry, shared = pending, 0.0
            for i in retry:  # alone: its own timeout and its own error message
                run = self._convert_one(staged[i], pdf_dir, work)
                yield i, self._png_timed(staged[i], pdf_dir, run, out_dirs[i], shared + run.seconds)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _convert_pipelined(
        self, pending: list[int], staged: dict[int, Path], pdf_dir: Path, work: Path, out_dirs: list[Path]
    ) -> Generator[tuple[int, Rendering], None, tuple[list[int], float]]:
        """The batch call, yielding each deck's rendering once its PDF is whole; returns the decks to retry alone and
        each deck's share of the call's time."""
        retry: list[int] = []
        conversion = _Conversion(self, [staged[i] for i in pending], pdf_dir, work)
        try:
            done = 0  # pending[:done] are rasterised or queued for a retry
            while (run := conversion.wait(_PIPELINE_POLL_SECONDS)) is None:
                written = {entry.name for entry in os.scandir(pdf_dir)}
                newest = max(
                    (k for k, i in enumerate(pending) if _pdf_for(staged[i], pdf_dir).name in written), default=-1
                )
                for k in range(done, newest):  # every PDF before the newest is whole
                    i = pending[k]
                    if _pdf_for(staged[i], pdf_dir).name in written:
                        yield i, self._png_timed(staged[i], pdf_dir, None, out_dirs[i], conversion.share)
                    else:
                        retry.append(i)  # LibreOffice skipped it
                done = max(done, newest)
        finally:
            conversion.stop()
        remaining = pending[done:]
        converted = [i for i in remaining if _pdf_for(staged[i], pdf_dir).exists()]
        if converted and (run.timed_out or (run.returncode or 0) < 0):
            _pdf_for(staged[converted.pop()], pdf_dir).unlink(missing_ok=True)  # the newest PDF of a killed call
        for i in remaining:
            if i in converted:
                yield i, self._png_timed(staged[i], pdf_dir, run, out_dirs[i], conversion.share)
            else:
                retry.append(i)
        return retry, conversion.share

    def _png_timed(
        self, deck: Path, pdf_dir: Path, run: ProcessRun | None, out_dir: Path, converting: float
    ) -> Rendering:
        started = time.monotonic()
        result = self._pdf_to_png(deck, pdf_dir, run, out_dir)
        return _with_seconds(result, converting + time.monotonic() - started)

    def _convert(
        self, decks: list[Path], pdf_dir: Path, work: Path, cancel: threading.Event | None = None
    ) -> ProcessRun:
        cmd = pdf_batch_command(self.soffice, self.profile_dir, pdf_dir, decks)
        # A batch makes progress file by file; a single file gets a hard deadline.
        run = run_watched(
            cmd,
            timeout=self.timeout,
            cwd=work,
            progress_dir=pdf_dir if len(decks) > 1 else None,
            env={**os.environ, "TMPDIR": str(self._tmp)},
            cancel=cancel,
        )
        if run.timed_out or (run.returncode or 0) < 0:
            # A killed LibreOffice may leave a half-written profile and temporary files behind;
            # the next run makes a fresh profile.
            shutil.rmtree(self.profile_dir, ignore_errors=True)
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp.mkdir()
        return run

    def _convert_one(self, deck: Path, pdf_dir: Path, work: Path) -> ProcessRun:
        run = self._convert([deck], pdf_dir, work)
        if run.timed_out or (run.returncode or 0) < 0:
            # Killed while writing: PDFium would happily draw a partial PDF, so it is not used.
            _pdf_for(deck, pdf_dir).unlink(missing_ok=True)
        return run

    def _pdf_to_png(self, deck: Path, pdf_dir: Path, run: ProcessRun | None, out_dir: Path) -> Rendering:
        """``run``: the LibreOffice run that wrote the PDF, for its error message; None while it still runs."""
        pdf = _pdf_for(deck, pdf_dir)
        if not pdf.exists() or pdf.stat().st_size == 0:
            if run is not None and run.timed_out:
                return _failure(REASON_TIMEOUT, f"LibreOffice did not finish within {self.timeout:g} s")
            output = "" if run is None else run.stderr + "\n" + run.stdout
            message = _clean_message(output, deck.parent.parent)
            return _failure(REASON_FAILED, "no PDF written" + (f": {message}" if message else ""))
        try:
            with _PDFIUM_LOCK:
                pages, image = _rasterise(pdf, self.long_edge)
        except pypdfium2.PdfiumError as error:
            message = _clean_message(str(error), deck.parent.parent)
            return _failure(REASON_FAILED, "unreadable PDF" + (f": {message}" if message else ""))
        if image is None:
            return _failure(REASON_FAILED, f"PDF has {pages} pages", pdf_pages=pages)
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


def message_batches(ids: Sequence[int]) -> list[list[int]]:
    """The render messages for `ids`: batches of DEFAULT_BATCH_SIZE, smaller ones when there are few decks."""
    size = max(MIN_MESSAGE_BATCH, min(DEFAULT_BATCH_SIZE, math.ceil(len(ids) / MESSAGE_SPREAD)))
    return [list(ids[start : start + size]) for start in range(0, len(ids), size)]


class _Conversion:
    """A renderer's LibreOffice batch call in a thread, so that the renderer's own thread rasterises finished PDFs
    meanwhile; ``stop()`` kills LibreOffice if it still runs (the caller left early) and waits for the thread."""

    def __init__(self, renderer: LibreOfficeRenderer, decks: list[Path], pdf_dir: Path, work: Path) -> None:
        self._decks = len(decks)
        self._started = time.monotonic()
        self._cancel = threading.Event()
        self._run: ProcessRun | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._target, args=(renderer, decks, pdf_dir, work), name="libreoffice-batch", daemon=True
        )
        self._thread.start()

    def _target(self, renderer: LibreOfficeRenderer, decks: list[Path], pdf_dir: Path, work: Path) -> None:
        try:
            self._run = renderer._convert(decks, pdf_dir, work, cancel=self._cancel)
        except BaseException as error:  # raised in the renderer's thread by wait()
            self._error = error

    def wait(self, seconds: float) -> ProcessRun | None:
        """The finished run, or None if LibreOffice still runs after `seconds`."""
        self._thread.join(seconds)
        if self._thread.is_alive():
            return None
        if self._error is not None:
            raise self._error
        return self._run

    @property
    def share(self) -> float:
        """Each deck's share of the batch call's wall time (so far, while it runs)."""
        seconds = self._run.seconds if self._run is not None else time.monotonic() - self._started
        return seconds / self._decks

    def stop(self) -> None:
        self._cancel.set()
        self._thread.join()


def pdf_batch_command(soffice: str, profile_dir: Path, pdf_dir: Path, decks: list[Path]) -> list[str]:
    """LibreOffice's own batch conversion of `decks` to PDF in `pdf_dir`, with the profile in `profile_dir`."""
    return [
        soffice,
        f"-env:UserInstallation={profile_dir.as_uri()}",
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


# -- helpers ------------------------------------------------------------------------------


def _plain(image: Image.Image) -> Image.Image:
    """A fresh image with the same pixels and an empty ``info`` (so nothing is carried over)."""
    image.load()
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "transparency" in image.info or "A" in image.mode else "RGB")
    return Image.frombytes(image.mode, image.size, image.tobytes())


def _rasterise(pdf: Path, long_edge: int) -> tuple[int, Image.Image | None]:
    """(page count, the only page at ``long_edge`` px on white); no image unless one page.

    The page is drawn into a bitmap of exactly long edge x rounded short edge (``render()``
    would round both up)."""
    document = pypdfium2.PdfDocument(str(pdf))
    try:
        pages = len(document)
        if pages != 1:
            return pages, None
        page = document[0]
        try:
            width_pt, height_pt = page.get_size()
            if width_pt <= 0 or height_pt <= 0:
                raise pypdfium2.PdfiumError("page has no size")
            scale = long_edge / max(width_pt, height_pt)
            width, height = max(1, round(width_pt * scale)), max(1, round(height_pt * scale))
            bitmap = pypdfium2.PdfBitmap.new_native(width, height, pdfium_c.FPDFBitmap_BGR, rev_byteorder=True)
            try:
                bitmap.fill_rect((255, 255, 255, 255), 0, 0, width, height)
                flags = pdfium_c.FPDF_ANNOT | pdfium_c.FPDF_REVERSE_BYTE_ORDER
                pdfium_c.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, flags)
                image = Image.frombytes("RGB", (width, height), bitmap.buffer, "raw", "RGB", bitmap.stride)
            finally:
                bitmap.close()
        finally:
            page.close()
    finally:
        document.close()
    return 1, image


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    """Temporary file in the same directory, then rename: readers see all of it or nothing."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clear_outputs(out_dir: Path) -> None:
    """Old outputs and temporary files left by a write that was killed halfway."""
    for name in (PNG_NAME, THUMBNAIL_NAME):
        (out_dir / name).unlink(missing_ok=True)
        if out_dir.is_dir():
            for leftover in out_dir.glob(f".{name}.*.tmp"):
                leftover.unlink(missing_ok=True)


def default_scratch_parent() -> Path:
    """``$TMPDIR/refig-render-<uid>``: per user, so a shared /tmp never mixes users' renderers."""
    return Path(tempfile.gettempdir()) / f"refig-render-{os.getuid()}"


def _scratch_create(parent: Path) -> tuple[Path, Path, int]:
    """A private directory ``parent/<pid>-<random>`` held by an exclusive ``flock`` on its
    sibling ``.lock`` file for the life of the process; stale siblings are removed first.

    The lock file is locked under a pending name and renamed, so a lock file under its final
    name is always held by a live renderer or by nobody."""
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = parent.lstat()
    if not parent.is_dir() or parent.is_symlink() or status.st_uid != os.getuid():
        raise PermissionError(f"scratch folder {parent} is not a directory of this user")
    _remove_stale_scratch(parent)
    name = f"{os.getpid()}-{secrets.token_hex(6)}"
    pending, lock_path = parent / f".{name}.lock-pending", parent / f"{name}.lock"
    fd = os.open(pending, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(pending, lock_path)
        root = parent / name
        root.mkdir(mode=0o700)
    except BaseException:
        pending.unlink(missing_ok=True)
        os.close(fd)
        raise
    return root, lock_path, fd


def _scratch_remove(root: Path, lock_path: Path, fd: int) -> None:
    shutil.rmtree(root, ignore_errors=True)
    lock_path.unlink(missing_ok=True)
    os.close(fd)


def _remove_stale_scratch(parent: Path) -> list[str]:
    """Remove the scratch directories under ``parent`` whose renderer's process is gone (its
    lock is free), and directories without a lock file. Returns the names removed."""
    removed = []
    for lock_path in parent.glob("*.lock"):
        try:
            fd = os.open(lock_path, os.O_RDWR)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live renderer
            shutil.rmtree(parent / lock_path.stem, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
            removed.append(lock_path.stem)
        finally:
            os.close(fd)
    for entry in parent.iterdir():
        if entry.is_dir() and not entry.with_name(f"{entry.name}.lock").exists():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
        elif entry.name.endswith(".lock-pending"):
            try:
                if time.time() - entry.stat().st_mtime > _STALE_PENDING_LOCK_SECONDS:
                    entry.unlink(missing_ok=True)
            except OSError:
                pass
    return removed


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
