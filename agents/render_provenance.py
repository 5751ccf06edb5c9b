"""What made a rendering: LibreOffice's own version string, the PDF rasteriser's version, and the fonts LibreOffice
could draw with. PPTBench: results rendered with another LibreOffice version are not comparable, so every rendering
records these (agents.models.RenderEnvironment).

Read once per process and per soffice binary (functools.cache): a worker's installation does not change under it, and
asking soffice costs about 0.2 s, more than a third of a rendering. Pure module: no Django, DRF or Celery.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

import pypdfium2.version

# Fonts LibreOffice ships beside itself (Debian's package leaves the folder empty; other builds fill it).
LIBREOFFICE_FONT_DIRS = (Path("/usr/lib/libreoffice/share/fonts"), Path("/opt/libreoffice/share/fonts"))
QUERY_TIMEOUT = 60.0  # seconds; a first start on a loaded machine is slow, a hang is not waited for
UNKNOWN = ""  # a version that could not be read: stored as such, never guessed


@dataclass(frozen=True)
class RendererProvenance:
    libreoffice: str  # `soffice --version` as printed, e.g. "LibreOffice 7.4.7.2 40(Build:2)"
    rasteriser: str  # the in-process PDF rasteriser (agents/render.py): pypdfium2 and the PDFium it binds
    fonts_sha256: str  # over every font file fontconfig and LibreOffice see: path, family, style, size
    font_families: tuple[str, ...]
    font_packages: tuple[str, ...]  # installed Debian `fonts-*` packages as "name version"; () without dpkg

    @property
    def key(self) -> str:
        """One digest of everything above: two renderings with the same key were made alike."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()


def _run(command: list[str]) -> str:
    """The command's standard output, or "" when it is missing, fails or hangs."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=QUERY_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def libreoffice_version(soffice: str) -> str:
    lines = [line.strip() for line in _run([soffice, "--version"]).splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("LibreOffice")), lines[0] if lines else UNKNOWN)[:200]


def rasteriser_version() -> str:
    return f"pypdfium2 {pypdfium2.version.PYPDFIUM_INFO.version} / PDFium {pypdfium2.version.PDFIUM_INFO.version}"


def _font_files() -> list[tuple[str, str, str]]:
    """(file, family, style) of every font fontconfig lists, and of LibreOffice's own font folders."""
    rows = []
    for line in _run(["fc-list", "--format", "%{file}\t%{family[0]}\t%{style[0]}\n"]).splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0]:
            rows.append((parts[0], parts[1], parts[2]))
    for folder in LIBREOFFICE_FONT_DIRS:
        if folder.is_dir():
            rows.extend((str(path), path.stem, "") for path in folder.rglob("*") if path.is_file())
    return sorted(set(rows))


def _font_packages() -> tuple[str, ...]:
    listing = _run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n", "fonts-*"])
    installed = (line.split("\t") for line in listing.splitlines())
    return tuple(sorted(f"{p[1]} {p[2]}" for p in installed if len(p) == 3 and p[0].startswith("ii")))


def fonts_fingerprint(files: list[tuple[str, str, str]]) -> str:
    """SHA-256 over the sorted font files with their sizes: a font added, removed or updated changes it."""
    digest = hashlib.sha256()
    for path, family, style in sorted(files):
        try:
            size = os.stat(path).st_size
        except OSError:
            size = -1
        digest.update(f"{path}\t{family}\t{style}\t{size}\n".encode())
    return digest.hexdigest()


@functools.cache
def renderer_provenance(soffice: str = "soffice") -> RendererProvenance:
    """This process's renderer, asked once per soffice binary."""
    files = _font_files()
    return RendererProvenance(
        libreoffice=libreoffice_version(soffice),
        rasteriser=rasteriser_version(),
        fonts_sha256=fonts_fingerprint(files),
        font_families=tuple(sorted({family for _, family, _ in files if family})),
        font_packages=_font_packages(),
    )
