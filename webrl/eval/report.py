"""`webrl report RUN [RUN ...] --out report.html`: one self-contained HTML page from
`webrl train` run folders and `webrl study` folders (plots as embedded PNGs), plus a
trajectory viewer (`<out>-viewer.html`, linked from the report).

A study folder stands for its runs (named <config>/seed-<s>) and adds its own section
first: the methods x sites table, mean ± std over the seeds finished, and the same as
bars with the spread (eval/study.py). The viewer takes each study config's first seed.

Sections: a study's table, bars and per-phase curves (mean over seeds); test
success before/after per run (a Figure-1 analog), the runs x sites table, error
taxonomy and success by oracle step-count bucket (a study's runs merged per
config), tasks won and lost against the start by task kind, the ORM (accuracy
and confusion from `--orm-eval` files, and its rewards on the loop's own rollouts
against the evaluators, from the phases' labels); then each run's phases, folded: per-site
curves, curriculum statistics, replay-buffer size and the ORM's agreement with
the evaluators. Everything is read from files the runs wrote; what is computed
(the starting actor's rate on the per-phase subset, the won / lost tasks by
kind) comes from their episodes.
Page text (observations, responses) goes into the viewer as JSON and is shown with
`textContent`, never as HTML.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path

from webrl.eval.study import changed, outcomes, results, study_layout, table_cells
from webrl.files import read_json, read_jsonl
from webrl.rollout.summary import summarize
from webrl.rollout.taxonomy import CLASSES as ERROR_CLASSES
from webrl.rollout.taxonomy import classify


def _read(path: Path):
    return read_json(path) if path.exists() else None


def load_run(path: str | Path, browse: bool = True) -> dict:
    """What the report needs from one run folder (`browse`: its episodes go into the viewer)."""
    p = Path(path)
    cfg = _read(p / "train_config.json") or {}
    study_run = p.name.startswith("seed-")  # <config>/seed-<s> of a study: grouped by its config
    an_eval = not cfg and is_eval_folder(p)  # a `webrl eval --out` folder: its summary is the "final" column
    return {
        "name": f"{p.parent.name}/{p.name}" if study_run else p.name, "group": p.parent.name if study_run else p.name,
        "path": p, "method": "eval" if an_eval else cfg.get("method", "webrl"), "config": cfg, "browse": browse,
        "start": _read(p / "phase-000" / "eval" / "summary.json"),
        "final": _read(p / "summary.json") if an_eval else _read(p / "final" / "eval" / "summary.json"),
        "phases": read_jsonl(p / "metrics.jsonl"),
        "phase_evals": {int(d.name.split("-")[1]): _read(d / "eval" / "summary.json")
                        for d in sorted(p.glob("phase-*")) if (d / "eval" / "summary.json").exists()},
        "start_on_subset": start_on_subset(p),
        "labels": [x for d in sorted(p.glob("phase-*")) for x in read_jsonl(d / "labels.jsonl")],
        "invocations": read_jsonl(p / "invocations.jsonl"),
    }  # fmt: skip


def is_eval_folder(p: Path) -> bool:
    """A `webrl eval --out` folder: its summary and episodes (plain, or an archive's `.gz`)."""
    return (p / "summary.json").is_file() and any((p / n).is_file() for n in ("episodes.jsonl", "episodes.jsonl.gz"))


def code_label(invocations: list[dict]) -> str:
    """The commits that ran a run, in order, 8 characters each ("*": uncommitted changes then); "-"
    for runs from before `invocations.jsonl` (webrl/provenance.py)."""
    seen: list[str] = []
    for inv in invocations:
        c = (inv.get("commit") or "?")[:8] + ("*" if inv.get("dirty") else "")
        if c not in seen:
            seen.append(c)
    return ", ".join(seen) or "-"


def start_on_subset(run: Path) -> dict | None:
    """The starting actor's success on the tasks of the per-phase eval (a fixed subset of the eval
    split), from its whole-split episodes (phase-000/eval), as `summarize` gives it. None when the
    phases evaluate the whole split too, or a file is missing. The per-phase curve starts from it,
    so it compares the same tasks."""
    start = read_jsonl(run / "phase-000" / "eval" / "episodes.jsonl")
    later = sorted(d for d in run.glob("phase-*") if d.name != "phase-000" and (d / "eval" / "episodes.jsonl").exists())
    if not start or not later:
        return None
    ids = {str(r["task_id"]) for r in read_jsonl(later[0] / "eval" / "episodes.jsonl")}
    recs = [r for r in start if str(r["task_id"]) in ids]
    return None if len(ids) >= len(start) or len(recs) != len(ids) else summarize(recs)


def expand(paths: list[str | Path]) -> tuple[list[tuple[Path, bool]], list[tuple[Path, list[str], list[int]]]]:
    """Run folders (with whether the viewer takes them) and studies (folder, configs, seeds) from
    the paths given: a `webrl train` run folder, a `webrl eval --out` folder, or a study folder
    standing for its runs."""
    runs, studies = [], []
    for p in map(Path, paths):
        if not p.is_dir():
            raise ValueError(f"{p}: no such folder (give a `webrl train`, `webrl eval --out` or `webrl study` folder)")
        if (p / "train_config.json").exists() or is_eval_folder(p):
            runs.append((p, True))
        elif (layout := study_layout(p)) is not None:
            names, seeds = layout
            studies.append((p, names, seeds))
            for name in names:
                found = [p / name / f"seed-{s}" for s in seeds if (p / name / f"seed-{s}" / "train_config.json").exists()]
                runs += [(r, i == 0) for i, r in enumerate(found)]
        else:
            raise ValueError(f"{p}: neither a `webrl train` run folder (train_config.json), a `webrl eval --out` folder "
                             "(summary.json, episodes.jsonl) nor a `webrl study` folder")  # fmt: skip
    return runs, studies


def plot_study(table: dict) -> str:
    """Bars of each config's overall success on the eval split, mean over seeds with the std as the
    error bar; the start in grey, continued SFT (the same actor steps on demonstrations) in green."""
    import matplotlib.pyplot as plt

    names = [n for n in table if table[n].get("all")]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(names) + 1.5), 3.2))
    means = [100 * table[n]["all"]["mean"] for n in names]
    stds = [100 * table[n]["all"]["std"] for n in names]
    from webrl.eval.study import BAR

    colors = [{"start": "#9aa5b1", BAR: "#6a9f58"}.get(n, "#2f6fdf") for n in names]  # start, SFT bar, methods
    ax.bar(range(len(names)), means, 0.6, yerr=stds, capsize=4, color=colors)
    for x, (m, e, n) in enumerate(zip(means, stds, names, strict=True)):  # the label clears the error bar
        seeds = "" if n == "start" else f"\nn={table[n]['all']['n']}"  # (the start: one actor, however many runs)
        ax.text(x, m + e + 0.5, f"{m:.1f}{seeds}", ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, max([m + e for m, e in zip(means, stds, strict=True)] + [1.0]) * 1.3 + 1)  # room for the labels
    ax.set_xticks(range(len(names)), names, fontsize=8, rotation=15)
    ax.set_ylabel("final success (%), mean ± std")
    return _png(fig)


def _subset_curve(run: dict) -> dict[int, float]:
    """Phase -> success (%) on the per-phase eval's tasks, phase 0 the start on the same tasks."""
    evals = {k: v["success_rate"] * 100 for k, v in run["phase_evals"].items() if v}
    if run.get("start_on_subset") and 0 in evals:
        evals[0] = run["start_on_subset"]["success_rate"] * 100
    return evals


def subset_change(curve: dict[int, float]) -> dict[int, float]:
    """A `_subset_curve` as points gained since phase 0 (empty without phase 0): each seed draws its
    own stratified subset, so the seeds' starts differ and only the change compares across configs."""
    return {k: v - curve[0] for k, v in curve.items()} if 0 in curve else {}


def plot_study_curves(groups: dict[str, list[dict]]) -> str:
    """Each config's per-phase change in success on the per-phase eval's tasks since phase 0, mean
    over its seeds (a phase counts the seeds that reached it), with the seeds' spread as a band."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.axhline(0, color="grey", linewidth=0.8)
    for i, (name, runs) in enumerate(groups.items()):
        curves = [subset_change(_subset_curve(r)) for r in runs]
        phases = sorted({k for c in curves for k in c})
        if len(phases) < 2:
            continue
        vals = [[c[k] for c in curves if k in c] for k in phases]
        mean = [sum(v) / len(v) for v in vals]
        lo, hi = [min(v) for v in vals], [max(v) for v in vals]
        (line,) = ax.plot(phases, mean, marker="o", linewidth=2.5 if name == "webrl" else 1.2,
                          color="black" if name == "webrl" else plt.get_cmap("tab20")(i % 20), label=f"{name} (n={len(runs)})")  # fmt: skip
        if len(runs) > 1:
            ax.fill_between(phases, lo, hi, color=line.get_color(), alpha=0.12)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("phase (0 = the starting actor)")
    ax.set_ylabel("success change since phase 0 (points)")
    ax.set_title("per-phase eval tasks (each seed its own stratified subset): change since the start,\n"
                 "mean over seeds (band: min-max)", fontsize=9)
    ax.legend(fontsize=7, ncol=2, bbox_to_anchor=(1.01, 1), loc="upper left")
    return _png(fig)


def _study_section(folder: Path, names: list[str], seeds: list[int], index: int, runs: list[dict]) -> str:
    table = results(folder, names, seeds)
    head = f"<h2>Methods × sites, mean ± std over seeds: {html.escape(str(folder))}</h2>"
    if not table:
        return head + "<p>No run of this study has finished yet.</p>"
    groups = {n: [r for r in runs if r["path"].parent == folder / n] for n in names}  # this study's runs only
    curves = _img(plot_study_curves({n: g for n, g in groups.items() if g}), f"study-curves-{index}")
    return head + _img(plot_study(table), f"study-{index}") + _table(*table_cells(table)) + curves


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _img(b64: str, alt: str) -> str:
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _final(run: dict) -> dict | None:
    """The final actor's eval: the whole-split one, else the last trained phase's (None before any)."""
    if run["final"]:
        return run["final"]
    trained = [k for k in run["phase_evals"] if k > 0]
    return run["phase_evals"][max(trained)] if trained else None


def _subset_note(run: dict) -> str:
    """For a run not finished: its "after" is the last phase's subset eval, not the whole split."""
    f = _final(run)
    return "" if run["final"] or not f else f"\nafter: subset of {f.get('episodes', 0)}"


def plot_before_after(runs: list[dict]) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(runs) + 2), 3.2))
    xs = range(len(runs))
    before = [(r["start"] or {}).get("success_rate", 0.0) * 100 for r in runs]
    after = [(_final(r) or {}).get("success_rate", float("nan")) * 100 for r in runs]  # nan: no trained phase yet
    ax.bar([x - 0.2 for x in xs], before, 0.4, label="start (SFT)", color="#9aa5b1")
    bars = ax.bar([x + 0.2 for x in xs], after, 0.4, label="after training", color="#2f6fdf")
    for bar, r in zip(bars, runs, strict=True):
        if not r["final"]:  # still running: its "after" is a subset eval, drawn hollow
            bar.set(facecolor="white", edgecolor="#2f6fdf", hatch="//")
    for x, a, b in zip(xs, before, after, strict=True):
        ax.text(x - 0.2, a + 0.5, f"{a:.1f}", ha="center", fontsize=8)
        ax.text(x + 0.2, (0 if b != b else b) + 0.5, "-" if b != b else f"{b:.1f}", ha="center", fontsize=8)
    ax.set_xticks(list(xs), [f"{r['name']}\n({r['method']})" + _subset_note(r) for r in runs], fontsize=8)
    ax.set_ylabel("test success (%)")
    ax.set_ylim(0, max([v for v in before + after if v == v] + [1.0]) * 1.35 + 1)  # room for labels and legend
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    return _png(fig)


def plot_phase_curves(run: dict) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    evals = dict(run["phase_evals"])
    sub = run.get("start_on_subset")
    if sub and 0 in evals:  # phases 1.. ran a subset: start the curve from the same tasks
        evals[0] = sub
        n, whole, final = sub["episodes"], run["start"] or {}, run["final"] or {}
        title = f"the same {n} test tasks every phase; whole split: start {_pct(whole.get('success_rate'))} %"
        ax.set_title(title + (f", final {_pct(final.get('success_rate'))} %" if final else ""), fontsize=8)
    phases = sorted(evals)
    sites = sorted({s for k in phases for s in (evals[k] or {}).get("per_site", {})})
    for site in sites:
        ys = [evals[k].get("per_site", {}).get(site, {}).get("success_rate", float("nan")) * 100 for k in phases]
        ax.plot(phases, ys, marker="o", label=site)
    ax.plot(phases, [evals[k]["success_rate"] * 100 for k in phases], marker="s", color="black",
            linewidth=2, label="all")  # fmt: skip
    ax.set_xlabel("phase (0 = start)")
    ax.set_ylabel("eval success (%)")
    ax.set_xticks(phases)
    ax.legend(fontsize=7, ncol=2)
    return _png(fig)


def _natural(c: str) -> tuple:
    """Sort key putting "4-9" before "10+": the leading number first, then the text."""
    digits = c[: len(c) - len(c.lstrip("0123456789"))]
    return (int(digits) if digits else float("inf"), c)


def plot_bars(title: str, series: dict[str, dict[str, float]], ylabel: str) -> str:
    """Grouped bars: series name -> {category: value}."""
    import matplotlib.pyplot as plt

    cats = sorted({c for v in series.values() for c in v}, key=_natural)
    fig, ax = plt.subplots(figsize=(min(10.0, max(4.5, 0.9 * len(cats) * max(1, len(series)) + 1.5)), 3.2))
    width = 0.8 / max(1, len(series))
    cmap = plt.get_cmap("tab20" if len(series) > 10 else "tab10")
    for i, (name, vals) in enumerate(series.items()):
        ax.bar([c + i * width for c in range(len(cats))], [vals.get(c, 0.0) for c in cats], width, label=name,
               color=cmap(i % cmap.N))
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(cats))], cats, fontsize=8, rotation=15)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, **({"bbox_to_anchor": (1.01, 1), "loc": "upper left"} if len(series) > 4 else {}))
    return _png(fig)


def plot_phase_stats(run: dict) -> str:
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.0))
    ph = [m["phase"] for m in run["phases"]]
    for key, label in (("curriculum/generated", "generated"), ("curriculum/feasible", "feasible"),
                       ("curriculum/kept", "kept by critic"), ("curriculum/used", "used")):  # fmt: skip
        a1.plot(ph, [m.get(key, 0) for m in run["phases"]], marker="o", label=label)
    a1.set_title("curriculum per phase", fontsize=9)
    a1.set_xlabel("phase")
    a1.legend(fontsize=7)
    a2.plot(ph, [m.get("buffer/size", 0) for m in run["phases"]], marker="o", label="replay buffer (trajectories)")
    a2.plot(ph, [m.get("replay/kept", 0) for m in run["phases"]], marker="s", label="replay steps used")
    a2b = a2.twinx()
    a2b.plot(ph, [m.get("orm/agreement", float("nan")) for m in run["phases"]], color="black", linestyle="--",
             marker="^", label="ORM agreement")  # fmt: skip
    a2b.set_ylim(0, 1.05)
    a2.set_title("replay buffer and ORM agreement", fontsize=9)
    a2.set_xlabel("phase")
    a2.legend(fontsize=7, loc="upper left")
    a2b.legend(fontsize=7, loc="lower right")
    for a in (a1, a2):
        a.set_xticks(ph)
    return _png(fig)


def _table(header: list[str], rows: list[list]) -> str:
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="wide"><table><tr>{th}</tr>{body}</table></div>'


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def build_report(run_paths: list[str | Path], out: str | Path, orm_evals: list[str | Path] = (),
                 png_dir: str | Path | None = None) -> Path:
    """Write the report and its viewer (and, with `png_dir`, every plot as a PNG file there, for a
    paper or a README); returns the report path."""
    import matplotlib

    matplotlib.use("Agg")
    missing = [str(p) for p in orm_evals if not Path(p).is_file()]
    if missing:  # before any work: a typo should not cost a report without its ORM section
        raise ValueError(f"--orm-eval {', '.join(missing)}: no such file (give the orm_eval.json that "
                         "`webrl orm eval --out DIR` writes, or the eval.json of a `webrl demo` run's orm/ folder)")
    orm_reports = [(Path(p), rep) for p in orm_evals for rep in _orm_reports(Path(p))]  # (their errors first)
    found, studies = expand(run_paths)
    runs = [load_run(p, browse) for p, browse in found]
    out = Path(out)
    viewer = out.with_name(out.stem + "-viewer.html")
    parts = [f"<h1>WebRL report</h1><p>Runs: {html.escape(', '.join(str(r['path']) for r in runs))}. "
             f'Episodes: <a href="{html.escape(viewer.name)}">trajectory viewer</a>.</p>']  # fmt: skip
    parts += [_study_section(folder, names, seeds, i, runs) for i, (folder, names, seeds) in enumerate(studies)]
    parts.append("<h2>Test success before and after training</h2>" + _img(plot_before_after(runs), "before-after"))
    sites = sorted({s for r in runs for s in ((_final(r) or {}).get("per_site") or {})})
    rows = []
    for r in runs:
        f = _final(r) or {}
        final_label = _pct(f.get("success_rate")) + ("" if r["final"] or not f else f" (subset of {f.get('episodes', 0)})")
        rows.append([r["name"], r["method"], _pct((r["start"] or {}).get("success_rate")), final_label,
                     *[_pct(f.get("per_site", {}).get(s, {}).get("success_rate")) for s in sites],
                     code_label(r.get("invocations", []))])  # fmt: skip
    parts.append("<h2>Runs × sites (success %, final actor)</h2>"
                 + _table(["run", "method", "start", "final", *sites, "code"], rows))  # fmt: skip
    errors = _by_config(runs, lambda f: {c: float(f.get("errors", {}).get("counts", {}).get(c, 0)) for c in ERROR_CLASSES})
    parts.append("<h2>Error taxonomy (failed episodes, final actor)</h2>"
                 + _img(plot_bars("failed episodes by class (a study's config: mean over its seeds)", errors, "episodes"),
                        "errors"))  # fmt: skip
    buckets = _by_config(runs, lambda f: {b: 100 * v.get("success_rate", 0.0) for b, v in (f.get("per_step_bucket") or {}).items()})
    parts.append("<h2>Success by oracle step count</h2>"
                 + _img(plot_bars("success by the oracle's step count", buckets, "success (%)"), "buckets"))  # fmt: skip
    if changes := kind_changes(runs):
        parts.append("<h2>Tasks won and lost against the start, by kind</h2><p>The task family's kind — info: answer "
                     "a question; nav: reach a page; state: change the site; multi: several of these; infeasible: "
                     "the right answer is \"N/A\".</p>"
                     + (_img(plot_kind_changes(changes), "kinds") if any(changes.values())
                        else "<p>No task changed its outcome against the start.</p>"))  # fmt: skip
    parts += [_orm_section(path, rep) for path, rep in orm_reports]
    if loop_rows := loop_orm_rows(runs):
        parts.append("<h2>ORM on the loop's own rollouts</h2><p>Every phase's <code>labels.jsonl</code> keeps the ORM's "
                     "P(success) next to the evaluator's reward: how the rewards the actor trained on compare with the "
                     "truth (a study's config: its seeds together; rollouts without an evaluator left out).</p>"
                     + _table(["run", "rollouts", "true successes", "rewarded", "rewarded rightly", "false positives",
                               "missed successes", "AUC"], loop_rows))  # fmt: skip
    # each run's phases last, folded when there are many (a study's), the first one open
    parts += [_run_block(r, len(runs) <= 2 or i == 0) for i, r in enumerate(runs) if r["phase_evals"] or r["phases"]]
    page = _HTML.format(title="WebRL report", style=_STYLE, body="\n".join(parts))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    viewer.write_text(build_viewer(runs))
    if png_dir is not None:
        write_pngs(page, Path(png_dir))
    return out


def write_pngs(page: str, folder: Path) -> list[Path]:
    """The report's embedded plots as files: <alt>.png, the alt text made a file name."""
    import re

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for alt, b64 in re.findall(r'<img class="plot" alt="([^"]*)" src="data:image/png;base64,([^"]+)">', page):
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", html.unescape(alt)).strip("_") or "plot"
        paths.append(folder / f"{name}.png")
        paths[-1].write_bytes(base64.b64decode(b64))
    return paths


def _by_config(runs: list[dict], values) -> dict[str, dict[str, float]]:
    """`values(final eval summary)` per run, a study's runs merged per config (mean over seeds;
    a study's run still going is left out, a lone run shows its last subset eval)."""
    groups: dict[str, list[dict[str, float]]] = {}
    for r in runs:
        f = r["final"] if r["group"] != r["name"] else _final(r)
        if f is not None:
            groups.setdefault(r["group"], []).append(values(f))
    return {name: {k: sum(v.get(k, 0.0) for v in vs) / len(vs) for k in {k for v in vs for k in v}}
            for name, vs in groups.items()}  # fmt: skip


def kind_changes(runs: list[dict]) -> dict[str, dict[str, list[int]]]:
    """Config (a study's seeds merged) -> task kind (the family's `kind`; "other" for a family not
    in the registry) -> [won, lost]: the tasks each finished run's final actor solves and its start
    does not, and the reverse (summed over seeds)."""
    from webrl.rollout.runner import read_episodes
    from webrl.tasks.registry import families

    kinds = {name: fam.kind for name, fam in families().items()}
    out: dict[str, dict[str, list[int]]] = {}
    for r in runs:
        if not r["final"]:
            continue
        family = {e["task_id"]: e.get("family", "") for e in read_episodes(r["path"] / "final" / "eval" / "episodes.jsonl")}
        won, lost = changed(outcomes(r["path"] / "phase-000" / "eval"), outcomes(r["path"] / "final" / "eval"))
        acc = out.setdefault(r["group"], {})
        for ids, col in ((won, 0), (lost, 1)):
            for tid in ids:
                acc.setdefault(kinds.get(family[tid], "other"), [0, 0])[col] += 1
    return out


def plot_kind_changes(changes: dict[str, dict[str, list[int]]]) -> str:
    """Per config, tasks won (up) and lost (down) against the start, one colour per task kind."""
    import matplotlib.pyplot as plt

    from webrl.tasks.family import KINDS

    names = list(changes)
    kinds = [k for k in (*KINDS, "other") if any(k in c for c in changes.values())]
    fig, ax = plt.subplots(figsize=(min(10.0, max(5.0, 0.8 * len(names) + 2.5)), 3.6))
    width = 0.8 / max(1, len(kinds))
    for j, kind in enumerate(kinds):
        xs = [i + (j - (len(kinds) - 1) / 2) * width for i in range(len(names))]
        won = [changes[n].get(kind, [0, 0])[0] for n in names]
        lost = [-changes[n].get(kind, [0, 0])[1] for n in names]
        ax.bar(xs, won, width, color=f"C{j}", label=kind)
        ax.bar(xs, lost, width, color=f"C{j}", alpha=0.45)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xticks(range(len(names)), names, fontsize=8, rotation=15)
    ax.set_ylabel("tasks won (up) / lost (down)")
    ax.set_title("paired with the start, by task kind (a study's seeds summed)", fontsize=9)
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    return _png(fig)


def loop_orm_rows(runs: list[dict]) -> list[list]:
    """Per run (a study's config: its seeds pooled), the ORM's rewards on the loop's rollouts against
    the evaluators: [name, rollouts, true successes, rewarded, rewarded rightly, false positives,
    missed successes, AUC of P(success)]. Runs rewarded by the evaluators (`--reward oracle`) and
    rollouts without an evaluator (`true_reward` None) are left out."""
    from webrl.orm.metrics import loop_rewards

    pooled: dict[str, list[dict]] = {}
    for r in runs:
        if r["config"].get("reward", "orm") == "orm":
            pooled.setdefault(r["group"], []).extend(r["labels"])
    rows = []
    for name, xs in pooled.items():
        m = loop_rewards(xs)
        if m is not None:
            rows.append([name, m["rollouts"], m["true_successes"], m["rewarded"], m["true_positives"],
                         m["false_positives"], m["missed"], "-" if m["auc"] is None else f"{m['auc']:.3f}"])  # fmt: skip
    return rows


def _orm_reports(path: Path) -> list[dict]:
    """An `orm eval` result: the report at its threshold, and at the loop's when it has one."""
    rep = read_json(path)
    if not isinstance(rep, dict) or "overall" not in rep:
        raise ValueError(f"--orm-eval {path}: not an `orm eval` result (no 'overall'); give the orm_eval.json that "
                         "`webrl orm eval --out DIR` writes")  # fmt: skip
    return [r for r in (rep, rep.get("at_loop_threshold")) if r]


def _orm_section(path: Path, r: dict) -> str:
    rows = [[k, m["n"], _pct(m["accuracy"]), _pct(m["precision"]), _pct(m["recall"]), _pct(m["false_positive_rate"]),
             "-" if m.get("auc") is None else f"{m['auc']:.3f}", json.dumps(m["confusion"])]
            for k, m in [("overall", r["overall"]), *r["per_site"].items()]]  # fmt: skip
    return (f"<h2>ORM: {html.escape(str(path))} (positive: P &gt; {r.get('threshold', 0.5):g})</h2>"
            + _table(["", "n", "acc %", "prec %", "rec %", "FPR %", "AUC", "confusion"], rows))  # fmt: skip


PHASE_KEYS = ["phase", "rollout/success", "rollout/true_success", "orm/agreement", "orm/precision",
              "curriculum/generated", "curriculum/kept", "curriculum/mean_value", "buffer/size", "critic/loss",
              "actor/loss", "actor/kl", "eval/success", "minutes"]  # fmt: skip


def _run_block(r: dict, open_: bool) -> str:
    """One run's phases: per-site curves, curriculum / replay / ORM plots and the metrics table."""
    block = []
    if r["phase_evals"]:
        block.append(f"<h3>Per-phase success per site: {html.escape(r['name'])}</h3>"
                     + _img(plot_phase_curves(r), f"phases-{r['name']}"))  # fmt: skip
    if r["phases"]:
        block.append(f"<h3>Curriculum, replay and ORM per phase: {html.escape(r['name'])}</h3>"
                     + _img(plot_phase_stats(r), f"stats-{r['name']}")
                     + _table(PHASE_KEYS, [[m.get(k, "-") for k in PHASE_KEYS] for m in r["phases"]]))  # fmt: skip
    return (f"<details{' open' if open_ else ''}><summary>Phases of {html.escape(r['name'])} ({html.escape(r['method'])}): "
            f"per-site curves, curriculum, replay, ORM</summary>{''.join(block)}</details>")  # fmt: skip


def _episodes(run: dict) -> list[dict]:
    """Episodes to browse: the final eval (an eval folder's own episodes), plus the rollouts."""
    p = run["path"]
    out = []
    final = p / "episodes.jsonl" if run["method"] == "eval" else p / "final" / "eval" / "episodes.jsonl"
    for label, f in [("final eval", final),
                     *[(f"{d.name} rollouts", d / "rollouts" / "episodes.jsonl") for d in sorted(p.glob("phase-*"))]]:  # fmt: skip
        for e in read_jsonl(f):
            out.append({"source": f"{run['name']} · {label}", "task_id": e.get("task_id"), "intent": e.get("intent"),
                        "site": e.get("site"), "success": e.get("success"),
                        "error_class": classify({"success": bool(e.get("success")), **e}), "steps": [
                            {**({"obs": s["obs"]} if "obs" in s else {}), "response": s.get("response"),
                             "action": s.get("action"), "error": s.get("error"), "url": s.get("url"),
                             "screenshot": _screenshot(s.get("screenshot"))}
                            for s in e.get("steps", [])]})  # fmt: skip
    return out


def _screenshot(path) -> str | None:
    """A step's screenshot as base64: PNG files only (checked by their signature, so an episode
    file naming any other file cannot pull it into the page), at most 2 MB."""
    if not path or not Path(path).is_file() or Path(path).stat().st_size > 2_000_000:
        return None
    data = Path(path).read_bytes()
    return base64.b64encode(data).decode() if data.startswith(b"\x89PNG\r\n\x1a\n") else None


def script_json(value) -> str:
    """`value` as JSON safe inside a <script> element: <, > and & as \\u escapes, so no text in it
    (a response reading "<!--<script>" or "</script>") can end or re-open the element; JSON.parse
    gives the same strings back."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_viewer(runs: list[dict]) -> str:
    eps = [e for r in runs if r.get("browse", True) for e in _episodes(r)]
    data = script_json(eps)
    return _HTML.format(title="WebRL trajectories", style=_STYLE, body=_VIEWER.replace("__DATA__", data))


_STYLE = """body{font-family:system-ui,sans-serif;margin:24px;max-width:1100px;color:#222}
h2{margin-top:28px;font-size:17px}table{border-collapse:collapse;font-size:13px;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f2f4f7}
img.plot{max-width:100%;border:1px solid #eee;margin:6px 0}pre{white-space:pre-wrap;background:#f7f7f7;
padding:8px;font-size:12px;max-height:420px;overflow:auto}.step{border-top:2px solid #ddd;padding:6px 0}
.ok{color:#1a7f37}.bad{color:#c62828}select{max-width:100%}div.wide{overflow-x:auto}
h3{font-size:14px;margin:14px 0 4px}details{border-top:1px solid #e3e6ea;padding:4px 0}
summary{cursor:pointer;font-weight:600;font-size:15px;padding:4px 0}"""

_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><style>{style}</style></head>
<body>{body}</body></html>"""

_VIEWER = """<h1>Trajectory viewer</h1>
<p><select id="pick"></select> <span id="summary"></span></p><div id="steps"></div>
<script id="episodes" type="application/json">__DATA__</script>
<script>
const EPS = JSON.parse(document.getElementById('episodes').textContent);
const pick = document.getElementById('pick'), stepsEl = document.getElementById('steps');
EPS.forEach((e, i) => { const o = document.createElement('option'); o.value = i;
  o.textContent = `${e.success ? '✓' : '✗'} ${e.source} · ${e.task_id} · ${e.intent}`; pick.appendChild(o); });
function add(parent, tag, text, cls) { const el = document.createElement(tag); el.textContent = text;
  if (cls) el.className = cls; parent.appendChild(el); return el; }
function show(i) {
  const e = EPS[i]; stepsEl.replaceChildren();
  const s = document.getElementById('summary');
  s.textContent = e ? `${e.site} · ${e.steps.length} steps · ${e.success ? 'success' : 'failure: ' + e.error_class}`
    : 'no episodes';
  if (!e) return;
  s.className = e.success ? 'ok' : 'bad';
  e.steps.forEach((st, k) => {
    const d = add(stepsEl, 'div', '', 'step');
    add(d, 'b', `step ${k + 1} · ${st.url || ''}`);
    if (st.screenshot) { const im = document.createElement('img'); im.className = 'shot';
      im.src = 'data:image/png;base64,' + st.screenshot; im.style.maxWidth = '100%'; d.appendChild(im); }
    if (st.obs) add(d, 'pre', st.obs); else if (!('obs' in st)) add(d, 'div', '(page text not kept: an archived run)');
    add(d, 'pre', 'response: ' + (st.response || ''));
    add(d, 'div', 'parsed: ' + (st.action || '(none)'));
    if (st.error) add(d, 'div', 'error: ' + st.error, 'bad');
  });
}
pick.addEventListener('change', () => show(pick.value));
show(0);
</script>"""
