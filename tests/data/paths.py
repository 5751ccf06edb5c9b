from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED_PPTBENCH = HERE.parents[2] / "shared" / "data" / "pptbench"
# The shared copy when present, else the copy kept in the repository (same files, same SHA-256).
PPTBENCH = SHARED_PPTBENCH if (SHARED_PPTBENCH / "scores.csv").exists() else HERE / "pptbench"
