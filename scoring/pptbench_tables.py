"""PPTBench's own analyses beyond the leaderboard (issue 29): paper Tables 3, 7, 8, 9 and 10 and the data of
Figures 4 (left), 5 and 6, each from frames shaped like its released ``results/`` files.

Pure: numpy / pandas / scipy only — no Django, DRF or Celery.

The paper-facing tables (7, 8, 9) are rounded as the paper prints them (the notes say so); the figure tables keep
full precision. Intervals are percentile bootstraps over tasks: ``resamples`` draws from
``np.random.default_rng(seed)``, quantiles STABILITY_CI_QUANTILES (0.025 / 0.975).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from agents.configurations import EFFORT_ORDER, effort_rank
from corpus.protocol import (
    PPTBENCH_CI_RESAMPLES,
    PPTBENCH_CI_SEED,
    PPTBENCH_TOP_ISSUES,
    STABILITY_CI_QUANTILES,
)

from .pptbench import JUDGE_ROUNDS, gate_repeatability, leaderboard
from .stability import score_matrix

ISSUE_COLUMNS = [
    "issue_type",
    "dimension",
    "severity",
    "cases",
    "category_ratio",
    "total_penalty",
    "single_round_pct",
]
HIGH_VS_HIGHEST_COLUMNS = ["family", "model", "highest", "n", "delta_detail", "ci_low", "ci_high", "delta_pass"]
MENU_COLUMNS = ["menu", "units", "mean", "ci_low", "ci_high", "median"]
GATE_ROUNDS_COLUMNS = ["rounds", "cases", "share"]
SWEEP_COLUMNS = [
    "family",
    "model",
    "effort",
    "effort_rank",
    "candidate_id",
    "mean_score",
    "gate_pass_rate",
    "passed",
    "mean_on_passed",
]
OUTCOME_COLUMNS = ["family", "model", "effort", "candidate_id", "artifact_failure", "gate_failure", "pass"]
GENERATION_COLUMNS = [
    "family",
    "effort",
    "candidate_id",
    "valid",
    "valid_artifacts",
    "invalid_artifacts",
    "failed_tasks",
    "task_count",
    "total_tokens",
    "average_tokens_per_task",
    "total_cost_usd",
    "average_cost_per_task_usd",
    "usage_status",
]
JUDGE_REPEAT_COLUMNS = ["judge", "cases", "repeats", "gate_rate", "unanimous_rate", "fleiss_kappa", "flipped"]
CORRELATION_COLUMNS = ["metric", "configurations", "pearson_r", "spearman_rho"]
DOMAIN_COLUMNS = ["domain", "tasks", "mean_score", "pass_rate", "best_candidate", "best_mean"]
PROCESS_METRICS = ("review_turns", "revision_turns")
MEAN_EFFORT = "mean"  # the effort column of a family's row averaged over its efforts (Figure 6)
_UPPER_PREFIXES = ("gpt", "glm")


# ---------------------------------------------------------------------------------------------------------- names
def family_name(model: str) -> str:
    """The paper's name for a model id: ``claude-opus-5`` → ``Claude Opus 5``, ``gpt-5.6-sol`` → ``GPT-5.6 Sol``."""
    words = model.split("-")
    if words[0] in _UPPER_PREFIXES and len(words) > 1:
        words = [f"{words[0].upper()}-{words[1]}", *words[2:]]
    return " ".join(word[:1].upper() + word[1:] for word in words)


def candidates(ids, order: tuple[str, ...] = EFFORT_ORDER) -> pd.DataFrame:
    """candidate_id → model, effort, effort_rank and family, for ids shaped ``<model>__<effort>``."""
    ids = pd.Series(list(dict.fromkeys(ids)), dtype=object)
    parts = ids.str.rsplit("__", n=1)
    # An id without "__" (a configuration of this app's own study) is a model with no effort named.
    frame = pd.DataFrame({"candidate_id": ids, "model": parts.str[0], "effort": parts.str[1].fillna("")})
    frame["effort_rank"] = [effort_rank(e, order) for e in frame["effort"]]
    frame["family"] = frame["model"].map(family_name)
    return frame


def _gated(scores: pd.DataFrame) -> pd.Series:
    gate = scores["majority_gate"]
    if gate.dtype != bool:
        gate = gate.astype(str).str.strip().str.lower().isin(("true", "1"))
    return gate.astype(bool)


def _ci(values: np.ndarray) -> tuple[float, float]:
    low, high = np.quantile(values, STABILITY_CI_QUANTILES)
    return float(low), float(high)


# ---------------------------------------------------------------------------------------------------------- Table 7
def issue_penalties(summary: pd.DataFrame, *, top: int = PPTBENCH_TOP_ISSUES) -> pd.DataFrame:
    """Paper Table 7: the `top` issue types by total penalty, with cases, category ratio (mean largest affected
    fraction, 3 decimals), total penalty (1 decimal) and single-round share (percent, 1 decimal)."""
    frame = summary.sort_values(["total_penalty", "issue_type"], ascending=[False, True], kind="stable").head(top)
    return pd.DataFrame(
        {
            "issue_type": frame["issue_type"],
            "dimension": frame["dimension"],
            "severity": frame["severity"],
            "cases": frame["case_count"].astype(int),
            "category_ratio": frame["mean_max_ratio"].astype(float).round(3),
            "total_penalty": frame["total_penalty"].astype(float).round(1),
            "single_round_pct": (100 * frame["single_round_rate"].astype(float)).round(1),
        }
    ).reset_index(drop=True)[ISSUE_COLUMNS]


# ---------------------------------------------------------------------------------------------------------- Table 8
def high_vs_highest(
    scores: pd.DataFrame, *, resamples: int = PPTBENCH_CI_RESAMPLES, seed: int = PPTBENCH_CI_SEED
) -> pd.DataFrame:
    """Paper Table 8, per family run at high and at a higher effort: on the tasks neither gates (majority gate), N and
    Δ detail = mean(total score at the highest effort − at high) with a paired 95 % bootstrap CI over those tasks
    (each family from the same seed); Δp = pass rate at the highest effort − at high over every task, in points.
    Rounded as printed: Δ and CI 2 decimals, Δp 1 decimal."""
    frame = scores.assign(_gated=_gated(scores))
    names = candidates(frame["candidate_id"])
    rows = []
    for model, group in names.groupby("model", sort=True):
        if "high" not in set(group["effort"]):
            continue
        highest = group.sort_values("effort_rank").iloc[-1]
        if highest["effort_rank"] <= effort_rank("high"):
            continue
        high = frame[frame["candidate_id"] == f"{model}__high"].set_index("task_id")
        top = frame[frame["candidate_id"] == highest["candidate_id"]].set_index("task_id")
        tasks = high.index.intersection(top.index)
        both = tasks[~high.loc[tasks, "_gated"].to_numpy() & ~top.loc[tasks, "_gated"].to_numpy()]
        diff = (top.loc[both, "total_score"] - high.loc[both, "total_score"]).to_numpy(float)
        if len(diff):
            draws = np.random.default_rng(seed).integers(0, len(diff), size=(resamples, len(diff)))
            low, up = _ci(diff[draws].mean(axis=1))
            delta = float(diff.mean())
        else:
            delta, low, up = float("nan"), float("nan"), float("nan")
        pass_delta = 100 * (float((~top["_gated"]).mean()) - float((~high["_gated"]).mean()))
        rows.append(
            (
                family_name(model),
                model,
                highest["effort"],
                len(diff),
                round(delta, 2),
                round(low, 2),
                round(up, 2),
                round(pass_delta, 1) + 0.0,  # + 0.0: no "-0.0"
            )
        )
    return pd.DataFrame(rows, columns=HIGH_VS_HIGHEST_COLUMNS)


# ---------------------------------------------------------------------------------------------------------- Table 9
def _resampled_config_means(matrix: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """draws × configurations means over tasks drawn with replacement (tasks × counts, one matrix product a block)."""
    n = matrix.shape[1]
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, matrix.shape[0]))
    for lo in range(0, resamples, 1000):
        size = min(1000, resamples - lo)
        draws = rng.integers(0, n, size=(size, n))
        counts = np.bincount((draws + n * np.arange(size)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        out[lo : lo + size] = counts @ matrix.T / n
    return out


def configuration_menus(
    scores: pd.DataFrame, *, resamples: int = PPTBENCH_CI_RESAMPLES, seed: int = PPTBENCH_CI_SEED
) -> pd.DataFrame:
    """Paper Table 9: the aggregate score when the unit of the menu is each configuration (equal weight) or each model
    family — its mean over efforts, its highest effort, its best effort. Mean and median of the units' mean scores,
    with a 95 % bootstrap CI of the mean over tasks (the menu re-applied in every draw: a family's best effort is the
    best in that draw). Rounded to 2 decimals as printed."""
    long = pd.DataFrame({"task_id": scores["task_id"], "model": scores["candidate_id"], "score": scores["total_score"]})
    ids, _tasks, matrix, _dropped = score_matrix(long)
    names = candidates(ids).set_index("candidate_id").loc[list(ids)]
    full = matrix.mean(axis=1)
    draws = _resampled_config_means(matrix, resamples=resamples, seed=seed)
    families = sorted(names["model"].unique())
    members = [np.flatnonzero(names["model"].to_numpy() == f) for f in families]
    highest = [m[np.argmax(names["effort_rank"].to_numpy()[m])] for m in members]

    def by_family(values: np.ndarray, how: str) -> np.ndarray:  # values: (..., configurations)
        if how == "highest":
            return values[..., highest]
        pick = np.mean if how == "mean" else np.max
        return np.stack([pick(values[..., m], axis=-1) for m in members], axis=-1)

    menus = [
        (f"{len(ids)} configurations, equal weight", len(ids), full, draws),
        *(
            (f"{len(families)} families, {label}", len(families), by_family(full, how), by_family(draws, how))
            for how, label in (("mean", "mean over efforts"), ("highest", "highest effort"), ("best", "best effort"))
        ),
    ]
    rows = []
    for name, units, point, resampled in menus:
        low, high = _ci(resampled.mean(axis=1))
        rows.append(
            (
                name,
                units,
                round(float(point.mean()), 2),
                round(low, 2),
                round(high, 2),
                round(float(np.median(point)), 2),
            )
        )
    return pd.DataFrame(rows, columns=MENU_COLUMNS)


# ---------------------------------------------------------------------------------------------------------- figures
def gate_rounds(scores: pd.DataFrame, *, rounds: int = JUDGE_ROUNDS) -> pd.DataFrame:
    """Figure 4 (left): how many of the judge rounds triggered a hard gate, over every (task, candidate)."""
    counts = scores["gate_count"].astype(int).value_counts().reindex(range(rounds + 1), fill_value=0)
    return pd.DataFrame({"rounds": counts.index, "cases": counts.to_numpy(), "share": counts.to_numpy() / len(scores)})


def effort_sweep(scores: pd.DataFrame) -> pd.DataFrame:
    """Figure 5: per configuration, in family and effort order, the mean score over every task (gated as 0), the
    gate-pass rate (not majority-gated) and the mean score on the passed tasks."""
    frame = scores.assign(_passed=~_gated(scores))
    g = frame.groupby("candidate_id", sort=False)
    passed = g["_passed"].sum()
    on_passed = frame[frame["_passed"]].groupby("candidate_id")["total_score"].mean()
    table = candidates(frame["candidate_id"]).set_index("candidate_id")
    table["mean_score"] = g["total_score"].mean()
    table["gate_pass_rate"] = g["_passed"].mean()
    table["passed"] = passed.astype(int)
    table["mean_on_passed"] = on_passed.reindex(table.index)
    table = table.reset_index().sort_values(["family", "effort_rank", "effort"], kind="stable")
    return table[SWEEP_COLUMNS].reset_index(drop=True)


def outcomes(scores: pd.DataFrame, generation: pd.DataFrame | None) -> pd.DataFrame:
    """Figure 6: per configuration the shares of tasks with an artifact failure (invalid artifact or failed task, from
    generation-metrics.csv), a gate failure (majority-gated otherwise) and a pass; then per family the mean of those
    shares over its efforts (effort ``mean``). Without generation metrics the artifact share is NaN and gate failure
    holds every gated task."""
    sweep = effort_sweep(scores).set_index("candidate_id")
    gated = 1 - sweep["gate_pass_rate"]
    if generation is not None and len(generation):
        g = generation.set_index("candidate_id")
        artifact = ((g["invalid_artifacts"] + g["failed_tasks"]) / g["task_count"]).reindex(sweep.index)
    else:
        artifact = pd.Series(np.nan, index=sweep.index)
    table = sweep[["family", "model", "effort"]].copy()
    table["artifact_failure"] = artifact
    table["gate_failure"] = gated - artifact.fillna(0)
    table["pass"] = sweep["gate_pass_rate"]
    table = table.reset_index()
    means = (
        table.groupby(["family", "model"], as_index=False)[["artifact_failure", "gate_failure", "pass"]]
        .mean()
        .assign(effort=MEAN_EFFORT, candidate_id="")
    )
    return pd.concat([table, means], ignore_index=True)[OUTCOME_COLUMNS]


def generation_table(generation: pd.DataFrame) -> pd.DataFrame:
    """generation-metrics.csv in family and effort order, with ``valid`` printed as the paper does ("488/500")."""
    names = candidates(generation["candidate_id"]).set_index("candidate_id")
    frame = generation.set_index("candidate_id").join(names[["family", "effort", "effort_rank"]])
    frame["valid"] = [f"{v}/{n}" for v, n in zip(frame["valid_artifacts"], frame["task_count"])]
    frame = frame.reset_index().sort_values(["family", "effort_rank"], kind="stable")
    return frame[GENERATION_COLUMNS].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------------- Table 3
def judge_repeatability(repeats: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Paper Table 3, per judge: repeated gate decisions on the same (task, candidate) — the unanimous rate, Fleiss' κ
    with the repeats as raters (statsmodels) and the flipped cases, plus the share of decisions that gated. A judge's
    cases are those with its usual number of repeats; a case with another count is left out and said so."""
    rows, notes = [], []
    for judge, group in repeats.groupby("judge", sort=True):
        per_case = group.groupby(["candidate_id", "task_id"])["gate"].agg(["sum", "size"])
        usual = int(per_case["size"].mode().max())
        kept = per_case[per_case["size"] == usual]
        if len(kept) < len(per_case):
            notes.append(f"{judge}: {len(per_case) - len(kept)} case(s) without exactly {usual} repeats left out")
        cases = pd.DataFrame({"candidate_id": judge, "gate_count": kept["sum"].astype(int).to_numpy()})
        result = gate_repeatability(cases, rounds=usual).iloc[0]
        gate_rate = float(kept["sum"].sum() / (usual * len(kept)))
        rows.append(
            (judge, len(kept), usual, gate_rate, result["unanimous_rate"], result["fleiss_kappa"], result["flipped"])
        )
    return pd.DataFrame(rows, columns=JUDGE_REPEAT_COLUMNS), notes


# ---------------------------------------------------------------------------------------------------------- Table 10
def process_correlations(scores: pd.DataFrame, process: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 10 (correlations): across configurations, Pearson r and Spearman ρ between the mean score (every
    task, gated as 0) and the mean review / revision turns over the tasks the process file gives."""
    from scipy import stats as scipy_stats  # on use: not at every process start

    means = scores.groupby("candidate_id")["total_score"].mean()
    turns = process.groupby("candidate_id")[list(PROCESS_METRICS)].mean()
    joined = turns.join(means.rename("score"), how="inner")
    rows = []
    for metric in PROCESS_METRICS:
        pair = joined[[metric, "score"]].dropna()
        if len(pair) >= 3 and pair[metric].nunique() > 1 and pair["score"].nunique() > 1:
            r = float(scipy_stats.pearsonr(pair[metric], pair["score"]).statistic)
            rho = float(scipy_stats.spearmanr(pair[metric], pair["score"]).statistic)
        else:
            r = rho = float("nan")
        rows.append((metric, len(pair), r, rho))
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def domain_results(scores: pd.DataFrame, domains: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 10 (per domain): tasks, the mean score pooled over every configuration, the pass rate (not
    majority-gated), and the best configuration's mean on the domain's tasks."""
    frame = scores.assign(_passed=~_gated(scores)).merge(domains[["task_id", "domain"]], on="task_id", how="inner")
    rows = []
    for domain, group in frame.groupby("domain", sort=True):
        per_config = group.groupby("candidate_id")["total_score"].mean().sort_values(ascending=False, kind="stable")
        rows.append(
            (
                domain,
                group["task_id"].nunique(),
                float(group["total_score"].mean()),
                float(group["_passed"].mean()),
                per_config.index[0],
                float(per_config.iloc[0]),
            )
        )
    return pd.DataFrame(rows, columns=DOMAIN_COLUMNS)


# ---------------------------------------------------------------------------------------------------------- checks
def leaderboard_differences(scores: pd.DataFrame, published: pd.DataFrame, *, atol: float = 1e-9) -> list[str]:
    """Where the leaderboard recomputed from `scores` differs from PPTBench's leaderboard.csv (empty: it matches)."""
    ours = leaderboard(scores).set_index("candidate_id")
    theirs = published.set_index("candidate_id")
    problems = []
    if set(ours.index) != set(theirs.index):
        missing, extra = sorted(set(theirs.index) - set(ours.index)), sorted(set(ours.index) - set(theirs.index))
        return [f"candidates differ: only in leaderboard.csv {missing}, only in the scores {extra}"]
    for column in theirs.columns:
        if column not in ours:
            problems.append(f"column {column}: not computed here")
            continue
        a, b = ours[column].astype(float), theirs.loc[ours.index, column].astype(float)
        off = ~(np.isclose(a, b, rtol=0, atol=atol) | (a.isna() & b.isna()))
        for candidate in a.index[off]:
            problems.append(
                f"{candidate} {column}: computed {float(a[candidate])!r}, published {float(b[candidate])!r}"
            )
    return problems


def bootstrap_differences(result, published: dict) -> list[str]:
    """Where a scoring.stability.RankingStability differs from PPTBench's bootstrap.json (empty: every value equal)."""
    problems = []
    for key, ours in (("seed", result.seed), ("iterations", result.iterations), ("task_count", result.task_count)):
        if published.get(key) != ours:
            problems.append(f"{key}: computed {ours!r}, published {published.get(key)!r}")
    if result.full_ranking.to_dict("records") != published.get("full_ranking"):
        problems.append("full_ranking differs")
    entries = published.get("sample_sizes", [])
    expected = {
        "stability": [{c: e.get(c) for c in result.stability.columns} for e in entries],
        "models": [{"sample_size": e["sample_size"], **m} for e in entries for m in e.get("model_intervals", [])],
        "pairs": [{"sample_size": e["sample_size"], **p} for e in entries for p in e.get("adjacent_pairs", [])],
    }
    for name, rows in expected.items():
        ours = getattr(result, name).to_dict("records")
        if len(ours) != len(rows):
            problems.append(f"{name}: {len(ours)} rows computed, {len(rows)} published")
            continue
        unequal = sum(a != b for a, b in zip(ours, rows))
        if unequal:
            problems.append(f"{name}: {unequal} of {len(rows)} rows differ")
    return problems
