from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED_PPTBENCH = HERE.parents[2] / "shared" / "data" / "pptbench"
# The shared copy when present, else the copy kept in the repository (same files, same SHA-256).
PPTBENCH = SHARED_PPTBENCH if (SHARED_PPTBENCH / "scores.csv").exists() else HERE / "pptbench"

SHARED_PPTX_REAL = HERE.parents[2] / "shared" / "fixtures" / "pptx-real"
# Real PPTX files from python-pptx (MIT) and Apache POI (Apache-2.0); see pptx-real/SOURCE.md.
PPTX_REAL = SHARED_PPTX_REAL if SHARED_PPTX_REAL.is_dir() else HERE / "pptx-real"
