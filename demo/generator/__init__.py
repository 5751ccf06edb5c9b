"""The synthetic demo study's generator (issue 13), split by concern. Pure: no Django, DRF or Celery.

`demo.generator.writer.generate_demo(out_dir, seed=...)` writes, deterministically (the same seed gives byte-identical
files):

    out_dir/
      DEMO.md, summary.json           what is synthetic, the seed, the true strengths, the defect rates
      manifest.jsonl, images/*.png    the corpus (DESIGN contract 1): drawn overview figures        (figures)
      configurations.toml             ten configurations (contract 2)                               (configurations)
      runs/<slug>/<task_id>/          output.pptx, output.py | output.js, output.jsonl, error.log   (decks, runlogs)
      judge.jsonl                     two judge families x three runs (contract 3)                  (judges)
      battles.csv                     blinded human comparisons of study `demo` (contract 5)        (votes)
      gate_reviews.csv                human gate reviews (PPTBench protocol; `import_gate_reviews`) (gate_reviews)
      ratings.csv                     0–5 ratings by humans and a judge's three runs (PPTArena)     (ratings)

Every figure is first a scene graph (boxes, containers, arrows, dashed paths); the PNG is drawn from it with
Pillow and each configuration's PPTX is rebuilt from it with python-pptx, carrying the behaviours the paper
reports (faithful native slides, reversed arrows, missing or misspelled labels, freeform "connectors",
unattached connectors, shifted layouts, pasted full-slide rasters, multi-slide decks, corrupt files, missing
outputs), as `plans` draws them. Each configuration has a stated true strength (Elo scale, mean 1000) that sets how
often it injects defects and how humans vote. Nothing here is real data: titles start with "[synthetic]", arXiv ids
use the impossible month 13, URLs point to example.org, judge reasons say "synthetic demo judge".
"""
