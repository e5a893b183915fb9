"""`webrl study`: methods and ablations x seeds with `webrl train`, then a results table.

    webrl study --init runs/demo/sft/final --orm runs/demo/orm/model/final \\
                --demos runs/demo/sft/demos.jsonl --out runs/study --seeds 3

Every (config, seed) is one resumable `webrl train` run in OUT/<config>/seed-<s>/;
finished runs are skipped, so rerunning the command resumes the study; a study can be run in
parts (some configs or seeds first), OUT/study_config.json keeping the union. Each run starts in a
fresh process (`cli/stages.py`: in one long-lived process the demo's ORM trained 3x slower). The starting
actor's whole-split eval (`phase-000/eval`) is run once, by the first run, and copied
into the others (same actor, eval split, step limit, envs and tasks; `cli/start_eval.py`), in this
invocation or a later one. The table (OUT/results.json,
OUT/results.md, rewritten after every finished run; `--table` writes it from the
runs finished so far, running nothing) gives mean ± std over seeds of the
final actor's success (the whole-split eval, else the last phase's subset eval)
over the finished runs, overall and per site; the `start` row is the starting actor
(the first config's phase-0 evals).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from webrl.cli.argtypes import positive_int
from webrl.cli.stages import stage_runner
from webrl.cli.start_eval import (
    claimed_otherwise,
    first_phase_source,
    share_first_phase,
    share_start_eval,
    start_eval_source,
)
from webrl.eval.archive import archive
from webrl.eval.study import eta_note, final_summary, format_results, results, study_layout
from webrl.files import copytree_atomic, read_json, write_json_atomic

INF = 1e9
CONFIGS: dict[str, dict] = {
    "webrl": {},
    "filtered_bc": {"method": "filtered_bc"},
    "awr": {"method": "awr"},
    "digirl": {"method": "digirl"},
    "no_replay": {"replay": False},
    "no_kl": {"actor_loss": "sft"},
    "no_replay_no_kl": {"replay": False, "actor_loss": "sft"},
    "no_curriculum": {"curriculum": False},
    "critic_replay": {"critic_replay": True},
    "critic_lora": {"critic_backbone": "lora"},
    "continued_sft": {"method": "sft"},
    "beta_0.1": {"beta": 0.1},
    "beta_10": {"beta": 10.0},
    "ppl_low": {"ppl_lo": 1.0, "ppl_hi": 1 / 0.95},
    "ppl_high": {"ppl_lo": 1 / 0.5, "ppl_hi": INF},
    "ppl_all": {"ppl_lo": 1.0, "ppl_hi": INF},
    "replay_x4": {"replay_sample": 4.0},
    "released": {"actor_loss": "released"},
}
# `no_kl` (SFT on the buffer) trains exactly what `filtered_bc` trains on this shared machinery:
# the default runs that computation once, under the baseline's name
DEFAULT = "webrl,continued_sft,filtered_bc,awr,digirl,no_replay,no_replay_no_kl,no_curriculum"


def adopt_run(src: Path, slots: dict) -> Path:
    """Copy the finished `webrl train` run `src` into the study slot (`slots`: OUT/<config>/seed-<s> ->
    the LoopConfig the study would run there) whose config equals the one `src` ran with, e.g. `webrl
    demo`'s runs/demo/webrl as `webrl` seed 0 instead of ~50 minutes rerunning it. A filled slot
    is never overwritten. Raises ValueError (unfinished run, no slot with its settings, slot taken)."""

    from webrl.models.training import changed_settings

    if final_summary(src) is None:
        raise ValueError(f"--adopt {src}: not a finished `webrl train` run (no final eval with a done mark)")
    if not (src / "train_config.json").exists():
        raise ValueError(f"--adopt {src}: no train_config.json to match against this study's configs")
    diffs = {}
    for dst, cfg in slots.items():
        diffs[dst] = changed_settings(src / "train_config.json", cfg)
        if diffs[dst]:
            continue
        if dst.resolve() == src.resolve() or final_summary(dst) is not None:
            return dst  # already there, or that slot has its own finished run
        if dst.exists():
            raise ValueError(f"--adopt {src}: {dst} already holds a started run; remove it to adopt")
        dst.parent.mkdir(parents=True, exist_ok=True)
        copytree_atomic(src, dst)
        return dst
    near = min(diffs, key=lambda d: len(diffs[d])) if diffs else None
    hint = f"; the closest, {near}, differs in {', '.join(diffs[near])}" if near is not None else ""
    raise ValueError(f"--adopt {src}: its train_config.json matches no (config, seed) of this study{hint}")


def config_names(text: str) -> list[str]:
    """`--configs`: a comma list of CONFIGS names, or `all` (every config but no_kl, which is
    filtered_bc's run under another name)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    return [n for n in CONFIGS if n != "no_kl"] if names == ["all"] else names


def cmd_study(args: argparse.Namespace) -> int:
    from webrl.rl.loop import LOOP_PRESETS, LoopConfig, train

    names = config_names(args.configs)
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        print(f"error: unknown config(s) {unknown}; choose from {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    seeds = list(range(args.seeds))
    out = Path(args.out)
    if args.table:
        if not out.is_dir():
            print(f"error: {out}: no such folder", file=sys.stderr)
            return 2
        layout = study_layout(out)
        if layout is None:
            print(f"error: {out} holds no study runs (<config>/seed-<s>/train_config.json)", file=sys.stderr)
            return 2
        print(format_results(write_results(out, *layout)))
        return 0
    if args.archive and (Path(args.archive).resolve() == out.resolve() or out.resolve() in Path(args.archive).resolve().parents):
        print(f"error: --archive {args.archive} must lie outside the study folder {out}", file=sys.stderr)
        return 2
    if not args.init:
        print("error: --init (the starting actor's checkpoint) is required to run the study", file=sys.stderr)
        return 2
    base = {**LOOP_PRESETS[args.preset], "init": args.init, "orm": args.orm, "demos": args.demos or "",
            **({"reward": "oracle"} if not args.orm else {}),
            **{k: v for k, v in {"phases": args.phases, "tasks_per_phase": args.tasks_per_phase,
                                 "eval_subset": args.eval_subset, "eval_split": args.eval_split}.items()
               if v is not None}}  # fmt: skip
    from webrl.cli.train_cmds import check_inputs
    from webrl.models.build import is_lora_checkpoint

    if args.configs.strip() == "all" and not is_lora_checkpoint(args.init):  # it trains a LoRA adapter
        names = [n for n in names if "critic_backbone" not in CONFIGS[n]]
        print(f"study: --configs all leaves critic_lora out: {args.init} is not a LoRA checkpoint", flush=True)
    for name in names:  # the flags' errors now, not at some config's first run hours in
        try:
            check_inputs(LoopConfig(**{**base, **CONFIGS[name]}))
        except ValueError as e:
            print(f"error: config {name}: {e}", file=sys.stderr)
            return 2
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    out.mkdir(parents=True, exist_ok=True)
    given = {k: v for k, v in vars(args).items() if k not in ("func", "command", "table")}
    saved = out / "study_config.json"  # a study run in parts (some configs first) keeps every part's
    prev = read_json(saved) if saved.exists() else {"configs": [], "seeds": []}
    all_names = list(prev["configs"]) + [n for n in names if n not in prev["configs"]]
    all_seeds = sorted(set(prev["seeds"]) | set(seeds))
    write_json_atomic(saved, {"configs": all_names, "seeds": all_seeds, "args": given})
    extra = tuple(Path(p) for p in args.start_eval)
    slots = {out / name / f"seed-{s}": LoopConfig(**{**base, **CONFIGS[name], "seed": s}) for s in seeds for name in names}
    for src in args.adopt:
        try:
            print(f"adopted {src} as {adopt_run(Path(src), slots)}", flush=True)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    stage = stage_runner(args.threads)  # each run in a fresh process, as `webrl demo`'s stages
    todo = [(s, name) for s in seeds for name in names]
    left = sum(final_summary(out / name / f"seed-{s}") is None for s, name in todo)
    minutes: list[float] = []  # wall minutes of the runs this invocation worked on
    for k, (s, name) in enumerate(todo, 1):
        run = out / name / f"seed-{s}"  # a finished run resumes to a no-op
        done = final_summary(run) is not None
        print(f"\n#### study: {name}, seed {s} -> {run} (run {k} of {len(todo)}"
              + ("" if done else f"; {left} to finish{eta_note(minutes, left)}") + ")", flush=True)  # fmt: skip
        cfg = LoopConfig(**{**base, **CONFIGS[name], "seed": s})
        # the --start-eval runs first (e.g. the demo's), then this study's: a study run in parts evaluates its start once
        others = [*extra, *sorted(p.parent for p in out.glob("*/seed-*/train_config.json"))]
        src = start_eval_source(others, cfg)
        other = claimed_otherwise(run, cfg)  # a folder begun with other settings: `train` refuses it, share nothing
        if src is not None and src != run and not other:
            share_start_eval(src, run)
        src = first_phase_source(others, cfg)  # (never over a phase 1 the run has begun itself)
        if src is not None and not other and share_first_phase(src, run):
            print(f"phase 1: tasks, rollouts and labels shared from {src} (the same seed and rollout settings)", flush=True)
        t0 = time.monotonic()
        stage(train, cfg, run, not args.no_progress)
        if not done:
            minutes.append((time.monotonic() - t0) / 60)
            left -= 1
        write_results(out, all_names, all_seeds)  # the table so far, after every finished run
        if args.archive:
            archive(out, args.archive, exclude=unfinished_runs(out))
    print(format_results(write_results(out, all_names, all_seeds)))
    if args.archive:
        print(f"archive: {args.archive} (webrl study --out {args.archive} --table and webrl report read it)")
    return 0


def unfinished_runs(out: Path) -> list[Path]:
    """The run folders under study folder `out` (relative to it) without a finished final eval:
    the archive leaves them out, so a study stopped mid-run archives no partial records."""
    runs = sorted(p.parent for p in out.glob("*/seed-*/train_config.json"))
    return [r.relative_to(out) for r in runs if final_summary(r) is None]


def write_results(out: Path, names: list[str], seeds: list[int]) -> dict:
    """OUT/results.json and OUT/results.md from the runs finished so far; returns the table."""
    table = results(out, names, seeds)
    write_json_atomic(out / "results.json", table)
    (out / "results.md").write_text(format_results(table) + "\n")
    return table


def add_commands(sub) -> None:
    s = sub.add_parser("study", help="methods and ablations x seeds (resumable), then a mean ± std results table")
    s.add_argument("--out", required=True, help="study folder")
    s.add_argument("--init", default=None, help="starting actor (the SFT checkpoint; not needed with --table)")
    s.add_argument("--orm", default="", help="ORM checkpoint (none: the evaluators give the rewards)")
    s.add_argument("--demos", default="", help="SFT demonstrations JSONL (replay phase 0)")
    s.add_argument("--preset", default="cpu", help="cpu-tiny | cpu | gpu")
    s.add_argument("--seeds", type=positive_int, default=3, help="seeds per config")
    s.add_argument("--configs", default=DEFAULT,
                   help=f"comma list from: {', '.join(CONFIGS)}, or all (default: {DEFAULT}: the methods and "
                        "the main ablations; all adds the beta sweep, the perplexity windows, critic_replay, "
                        "critic_lora (a LoRA --init only), replay_x4 and released; no_kl is the same run as "
                        "filtered_bc)")  # fmt: skip
    s.add_argument("--phases", type=int, default=None, help="phases per run (preset: 3; cpu-tiny 2)")
    s.add_argument("--tasks-per-phase", type=int, default=None, help="tasks per phase")
    s.add_argument("--eval-subset", type=int, default=None, help="per-phase eval tasks")
    s.add_argument("--eval-split", default=None,
                   help="split or task file of the per-phase and final evals (default test). To choose "
                        "settings, study on held-out train tasks (an SFT run's heldout_tasks.json: the "
                        "rollouts and the curriculum never draw them), then confirm on test")
    s.add_argument("--start-eval", action="append", default=[], metavar="RUN",
                   help="a finished `webrl train` run (e.g. runs/demo/webrl) whose whole-split eval of the same "
                        "starting actor the study reuses instead of running its own (13-31 min on 2 cores); used "
                        "only when its init, eval split, step limit and envs match; also a source of phase 1's "
                        "tasks, rollouts and labels for the runs whose rollout settings equal its own; repeatable")
    s.add_argument("--adopt", action="append", default=[], metavar="RUN",
                   help="a finished `webrl train` run whose settings equal one (config, seed) of this study "
                        "(e.g. runs/demo/webrl = webrl seed 0): copied in as that run instead of rerunning it; "
                        "repeatable")  # fmt: skip
    s.add_argument("--archive", default=None, metavar="DIR",
                   help="after every finished run, refresh a slim copy of the study here (`webrl archive`: no "
                        "weights, no page text; finished runs only), e.g. a folder inside the repository, so the tables "
                        "and the report survive losing the run folders")
    s.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    s.add_argument("--table", action="store_true",
                   help="only write and print the table of the runs finished so far (runs nothing; the configs "
                        "and seeds are the folder's)")
    s.add_argument("--no-progress", action="store_true", help="hide progress bars")
    s.set_defaults(func=cmd_study)
