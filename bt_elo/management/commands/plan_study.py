"""python manage.py plan_study: how many votes a study needs, from simulated studies (bt_elo.stability.plan_study)."""

import time
from pathlib import Path

import pandas as pd
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from bt_elo import plots
from bt_elo.stability import ALLOCATIONS, DEFAULT_PAIR_FLOOR, plan_study
from corpus.protocol import PAPER_CONFIGURATIONS, PAPER_FIGURES, PAPER_TIE_RATE, PAPER_VOTES


def _budgets(text: str) -> list[int]:
    try:
        budgets = sorted({int(b) for b in text.replace(";", ",").split(",") if b.strip()})
    except ValueError:
        raise CommandError(f"--budgets: expected vote counts separated by commas, got {text!r}") from None
    if not budgets or budgets[0] < 1:
        raise CommandError("--budgets: at least one positive vote count")
    return budgets


class Command(BaseCommand):
    help = (
        "Simulate studies (Bradley–Terry with ties and per-figure effects) and print, per vote budget, the expected "
        "95 % CI half-width of Elo, the probability of recovering the true order and of each adjacent swap."
    )

    def add_arguments(self, parser):
        parser.add_argument("--configurations", type=int, default=PAPER_CONFIGURATIONS)
        parser.add_argument("--figures", type=int, default=PAPER_FIGURES)
        parser.add_argument(
            "--strength-spread", type=float, default=300.0, help="Elo between the best and the worst (equally spaced)"
        )
        parser.add_argument("--tie-rate", type=float, default=PAPER_TIE_RATE, help="share of votes that are ties")
        parser.add_argument("--cluster-sd", type=float, default=100.0, help="sd of per-figure shifts, Elo")
        parser.add_argument("--budgets", default=f"1000,2000,{PAPER_VOTES},8000", help="vote counts, comma-separated")
        parser.add_argument("--simulations", type=int, default=100)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--allocation", choices=(*ALLOCATIONS, "both"), default="both")
        parser.add_argument("--floor", type=int, default=DEFAULT_PAIR_FLOOR, help="adaptive: votes per pair first")
        parser.add_argument("--plot", type=Path, help="also write the curves as a PNG")

    def handle(self, *args, **o):
        allocations = ALLOCATIONS if o["allocation"] == "both" else (o["allocation"],)
        plans = []
        for allocation in tqdm(allocations, desc="simulating", unit="allocation", file=self.stderr._out):
            start = time.perf_counter()
            try:
                plans.append(
                    plan_study(
                        configurations=o["configurations"],
                        figures=o["figures"],
                        strength_spread=o["strength_spread"],
                        tie_rate=o["tie_rate"],
                        cluster_sd=o["cluster_sd"],
                        budgets=_budgets(o["budgets"]),
                        simulations=o["simulations"],
                        seed=o["seed"],
                        allocation=allocation,
                        floor=o["floor"],
                    )
                )
            except ValueError as error:
                raise CommandError(str(error)) from None
            self.stderr.write(f"{allocation}: {o['simulations']} studies in {time.perf_counter() - start:.1f} s")
        summary = pd.concat([p.summary for p in plans], ignore_index=True)
        swaps = pd.concat([p.swaps for p in plans], ignore_index=True)
        self.stdout.write(f"Method: {plans[0].method}.")
        with pd.option_context("display.width", 160, "display.precision", 3, "display.max_rows", 500):
            self.stdout.write(summary.to_string(index=False))
            self.stdout.write("\nAdjacent swap probability (true order best first):")
            self.stdout.write(
                swaps.pivot_table(
                    index=["upper", "lower", "true_gap"], columns=["allocation", "budget"], values="swap_probability"
                ).to_string()
            )
        if o["plot"]:
            o["plot"].write_bytes(plots.study_plan_plot(summary, swaps, "png"))
            self.stderr.write(f"plot written to {o['plot']}")
