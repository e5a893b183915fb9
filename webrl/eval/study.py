"""A study's results table: mean ± std over seeds of each config's finished runs, and paired
comparisons with the starting actor and with continued SFT (tasks won and lost, exact sign test).

Pure reads of the run folders `webrl study` makes (OUT/<config>/seed-<s>/, each a `webrl
train` run), shared by `webrl study` (OUT/results.json, OUT/results.md) and `webrl report`
(the methods x sites table and bars of a study folder).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from webrl.files import read_json, read_jsonl


def stats(xs: list[float]) -> dict:
    """{"mean", "std" (sample; 0 for one value), "n"}; 6 digits, so that the table's percentages are
    rounded once (8/165 = 4.848 %: 4.8, not 4.85 -> 4.9)."""
    return {"mean": round(statistics.mean(xs), 6), "std": round(statistics.stdev(xs), 6) if len(xs) > 1 else 0.0,
            "n": len(xs)}  # fmt: skip


def sign_test(won: int, lost: int) -> float:
    """Exact two-sided sign test on paired outcomes (McNemar's exact test): the probability, if a
    discordant task were equally likely to go either way, of a split at least as uneven as won:lost.
    Tasks both actors solve, or both fail, carry no information and are not counted."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def outcomes(eval_dir: Path) -> dict[int, bool]:
    """task_id -> success of an eval folder's episodes.jsonl ({} when there is none)."""
    from webrl.rollout.runner import read_episodes

    return {r["task_id"]: bool(r["success"]) for r in read_episodes(eval_dir / "episodes.jsonl")}


def changed(start: dict[int, bool], final: dict[int, bool]) -> tuple[list[int], list[int]]:
    """(won, lost) task ids: tasks of both evals that the final actor solves and the start does
    not, and the reverse."""
    common = sorted(start.keys() & final.keys(), key=str)
    return [t for t in common if final[t] and not start[t]], [t for t in common if start[t] and not final[t]]


def paired(start: dict[int, bool], final: dict[int, bool]) -> tuple[int, int]:
    """(won, lost) counts of `changed`."""
    won, lost = changed(start, final)
    return len(won), len(lost)


def eta_note(minutes: list[float], left: int) -> str:
    """The run header's time-left note, "; about N min left" (or "N h"): the mean wall minutes of
    the runs finished so far times the runs left; "" before any has finished. A rough guide only:
    configs differ in cost."""
    if not minutes or left <= 0:
        return ""
    m = sum(minutes) / len(minutes) * left
    return f"; about {m:.0f} min left" if m < 90 else f"; about {m / 60:.1f} h left"


def final_summary(run: Path) -> Path | None:
    """The finished run's final eval: the whole-split one (`final_eval`), else its last phase's
    subset eval; None while the run is still going (a half-run's subset eval is not its result)."""
    if not (run / "train_config.json").exists():
        return None
    cfg = read_json(run / "train_config.json")
    ev = run / "final" / "eval" if cfg.get("final_eval", True) else run / f"phase-{cfg['phases']:03d}" / "eval"
    return ev / "summary.json" if (ev / "done").exists() and (ev / "summary.json").exists() else None


def run_minutes(run: Path, summary: Path) -> float | None:
    """A finished run's wall minutes: its phases' (metrics.jsonl) plus its final eval's
    (`wall_minutes` of the eval summary), with the stages it took from another run at what they
    cost there (`shared_minutes` in a phase's stages.json, cli/start_eval.py), so a run that shared
    its phase 1 counts as one that rolled it out; None when the eval did not record its time (runs
    made before it did), so that a phases-only figure is never shown as a run's time. (Runs made
    before phases kept their time across processes, `phase-k/wall_seconds`, logged a resumed
    phase's last process only: for them the figure is a floor.)"""
    s = read_json(summary)
    lines = read_jsonl(run / "metrics.jsonl")
    if "wall_minutes" not in s or not lines:
        return None
    phases = sum(m.get("minutes", 0.0) for m in lines)
    for stages in run.glob("phase-*/stages.json"):
        phases += sum(v.get("shared_minutes", 0.0) for v in read_json(stages).values() if isinstance(v, dict))
    return round(phases + (s["wall_minutes"] if summary.parent.parent.name == "final" else 0.0), 2)


def _add(acc: dict[str, list[float]], summary: Path) -> None:
    """Append an eval summary's success rates, overall ("all") and per site, and its mean episode
    length ("steps") to `acc`."""
    s = read_json(summary)
    acc.setdefault("all", []).append(s["success_rate"])
    if "mean_steps" in s:
        acc.setdefault("steps", []).append(s["mean_steps"])
    for site, v in s.get("per_site", {}).items():
        acc.setdefault(site, []).append(v["success_rate"])


BAR = "continued_sft"  # the baseline every method has to beat: SFT with the same actor steps
FULL = "webrl"  # the full method: an ablation's effect is its run against webrl's of the same seed (same phase 1)
PAIRED = ("vs_start", "vs_bar", "vs_full")  # a row's paired comparisons, not sites


def results(out: str | Path, names: list[str], seeds: list[int]) -> dict:
    """mean ± std over the seeds that finished, per config, overall and per site; the `start` row is
    the starting actor (the SFT checkpoint; the first config's phase-0 evals). Each config's row also
    holds "vs_start": the tasks its final actors won and lost against their own start eval, summed
    over seeds, and the sign test's p-value; when `continued_sft` has finished runs, "vs_bar": the
    same against its final actor of the same seed (seeds both finished); and when `webrl` has, "vs_full":
    the same against webrl's (what an ablation changed, paired: a seed's configs share phase 1)."""
    out = Path(out)
    table: dict[str, dict] = {}
    start: dict[str, list[float]] = {}
    for name in names:
        finals: dict[str, list[float]] = {}
        won = lost = 0
        for s in seeds:
            run = out / name / f"seed-{s}"
            f, a = final_summary(run), run / "phase-000" / "eval" / "summary.json"
            if f is None:
                continue
            _add(finals, f)
            if (m := run_minutes(run, f)) is not None:
                finals.setdefault("minutes", []).append(m)
            w, lo = paired(outcomes(a.parent), outcomes(f.parent))
            won, lost = won + w, lost + lo
            if a.exists() and name == names[0]:
                _add(start, a)
        if finals:
            table[name] = {k: stats(v) for k, v in finals.items()}
            table[name]["vs_start"] = {"won": won, "lost": lost, "p": float(f"{sign_test(won, lost):.3g}")}
    if BAR in table:
        for name in table:
            if name != BAR:
                table[name]["vs_bar"] = _paired_over_seeds(out, BAR, name, seeds)
    if FULL in table:
        for name in table:
            if name != FULL:
                table[name]["vs_full"] = _paired_over_seeds(out, FULL, name, seeds)
    if start:
        table = {"start": {k: stats(v) for k, v in start.items()}, **table}
    return table


def _paired_over_seeds(out: Path, base: str, name: str, seeds: list[int]) -> dict | None:
    """Tasks config `name`'s final actors won and lost against config `base`'s, seed by seed
    (seeds both finished), summed, with the sign test's p; None when no seed has both."""
    won = lost = n = 0
    for s in seeds:
        a, b = final_summary(out / base / f"seed-{s}"), final_summary(out / name / f"seed-{s}")
        if a is not None and b is not None:
            w, lo = paired(outcomes(a.parent), outcomes(b.parent))
            won, lost, n = won + w, lost + lo, n + 1
    return {"won": won, "lost": lost, "p": float(f"{sign_test(won, lost):.3g}")} if n else None


def _cell(m: dict | None) -> str:
    if not m:
        return "-"
    spread = f" ± {100 * m['std']:.1f}" if m["n"] > 1 else ""
    return f"{100 * m['mean']:.1f}{spread} (n={m['n']})"


def _steps_cell(m: dict | None) -> str:
    return f"{m['mean']:.2f}" if m else "-"


def _minutes_cell(m: dict | None) -> str:
    return f"{m['mean']:.0f}" if m else "-"


def _paired_cell(v: dict | None) -> str:
    if not v:
        return "-"
    return f"+{v['won']} / −{v['lost']}, " + ("p < 0.001" if v["p"] < 0.001 else f"p {v['p']:.2g}")


def table_cells(table: dict) -> tuple[list[str], list[list[str]]]:
    """(header, rows): one row per config, "mean ± std (n=seeds)" in %, no spread for one seed, the
    mean episode length (mean over seeds; shortening and looping show here first), the wall minutes
    of a run (phases and final eval, mean over the seeds that recorded them), and the tasks won /
    lost against the start with the sign test's p (summed over seeds), then against continued SFT and
    against webrl, where the study ran them (a column each)."""
    sites = sorted({s for row in table.values() for s in row if s not in ("all", "steps", "minutes", *PAIRED)})
    refs = [(k, ref) for k, ref in (("vs_bar", BAR), ("vs_full", FULL)) if any(k in row for row in table.values())]
    rows = [[name, _cell(row.get("all")), *(_cell(row.get(s)) for s in sites), _steps_cell(row.get("steps")),
             _minutes_cell(row.get("minutes")), _paired_cell(row.get("vs_start")), *(_paired_cell(row.get(k)) for k, _ in refs)]
            for name, row in table.items()]  # fmt: skip
    return ["config", "all", *sites, "mean steps", "wall min", "tasks won / lost vs start",
            *(f"won / lost vs {ref}" for _, ref in refs)], rows  # fmt: skip


def format_results(table: dict) -> str:
    """The table as markdown (`table_cells`)."""
    header, rows = table_cells(table)
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def study_layout(folder: str | Path) -> tuple[list[str], list[int]] | None:
    """(configs, seeds) of a study folder: from its study_config.json, else the
    <config>/seed-<s>/train_config.json folders found (configs sorted, "webrl" first);
    None when the folder holds no study runs."""
    p = Path(folder)
    saved = p / "study_config.json"
    if saved.exists():
        cfg = read_json(saved)
        return list(cfg["configs"]), list(cfg["seeds"])
    runs = sorted(p.glob("*/seed-*/train_config.json"))
    if not runs:
        return None
    names = sorted({r.parent.parent.name for r in runs}, key=lambda n: (n != "webrl", n))
    seeds = sorted({int(n) for n in (r.parent.name.removeprefix("seed-") for r in runs) if n.isdigit()})
    return names, seeds
