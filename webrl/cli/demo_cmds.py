"""`webrl demo`: the whole pipeline on the embedded default, one resumable command.

    base model -> SFT -> SFT eval (test split) -> ORM data -> ORM -> ORM eval -> WebRL phases
               -> final eval -> SFT vs WebRL per site, tasks won / lost, the ORM's rewards vs the evaluators

The SFT eval is the phase loop's `phase-000/eval`, run before the ORM so that its
greedy episodes on the test tasks serve as the ORM eval's policy trajectories
(no second set of test rollouts); `webrl train` then finds it done.

Every stage writes under `--run` (default runs/demo) and is skipped when its
output is there, so rerunning the command resumes. `make demo` runs it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from webrl.cli.stages import stage_runner
from webrl.eval.study import final_summary
from webrl.files import read_json, write_json_atomic

# cpu-preset minutes per stage on 2 idle cores of the faster machines, for the "left" estimate
# (measured: fresh-clone `make demo`s, docs/results.md "Session 2026-12-05 (4)" and "2026-12-06":
# SFT = 2 epochs, ~29 min; its eval ~21-23; ORM data ~1.5 of the ORM's 20 minutes; "train" = 3
# phases (~26) + the final eval (~11.5); the 2026-12-06 machine took 1.17x these)
BUDGET = {"sft": 30, "sft-eval": 22, "orm-data": 2, "orm": 18, "orm-eval": 1, "train": 37}
# stages held to a time budget whatever the machine (`--orm-budget`: data + training = 20 min)
FIXED = ("orm-data", "orm")
STAGES = ["sft", "sft-eval", "orm-data", "orm", "orm-eval", "train"]


def minutes_left(budget: dict[str, float], stages: list[str], taken: dict[str, float], at: int,
                 fixed: tuple[str, ...] = FIXED, done: frozenset[str] = frozenset()) -> float:  # fmt: skip
    """The estimate of what is left from stage `at` on: the remaining stages' budget minutes (less
    those in `done`, found finished by a resume), scaled by how this machine did on the stages that
    ran in this process (their measured minutes over their budget). Stages found done (a resume:
    under half a minute) do not count, nor do the `fixed` ones, which take their budget on any
    machine; until a stage has run the scale is 1. Clamped to [0.5, 3] so that one odd stage cannot
    make the estimate absurd."""
    ran = {s: m for s, m in taken.items() if m >= 0.5 and budget.get(s, 0) > 0 and s not in fixed}
    scale = min(3.0, max(0.5, sum(ran.values()) / sum(budget[s] for s in ran))) if ran else 1.0
    rest = [s for s in stages[at:] if s not in done]
    return sum(budget.get(s, 0) * (1.0 if s in fixed else scale) for s in rest)


class Progress:
    """Stage banners: elapsed time, and for the cpu preset an estimate of what is left, recalibrated
    after every stage by this machine's speed on the stages so far (`minutes_left`)."""

    def __init__(self, stages: list[str], budget: dict[str, int] | None, fixed: tuple[str, ...] = FIXED):
        self.t0 = time.perf_counter()
        self.stages = stages
        self.budget = budget
        self.fixed = fixed  # stages held to their budget on any machine
        self.taken: dict[str, float] = {}  # minutes each stage took in this process
        self.done: set[str] = set()  # stages a resume found finished
        self._current: tuple[str, float] | None = None

    def __call__(self, stage: str, done: bool = False) -> None:
        """The banner of `stage`; `done`: a resume found its output there, so it is skipped."""
        now = time.perf_counter()
        if self._current is not None:
            self.taken[self._current[0]] = (now - self._current[1]) / 60
        self._current = (stage, now)
        if done:
            self.done.add(stage)
        i = self.stages.index(stage)
        el = (now - self.t0) / 60
        left = ""
        if self.budget:
            est = minutes_left(self.budget, self.stages, self.taken, i, self.fixed, frozenset(self.done))
            left = f"; ~{est:.0f} min left on 2 CPU cores"
        what = "done before, skipped; " if done else ""
        print(f"\n##### demo stage {i + 1}/{len(self.stages)}: {stage} ({what}elapsed {el:.1f} min{left})", flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    import torch

    from webrl.models.config import preset
    from webrl.orm.encoder import ENCODER_FILE, ENCODER_PRESETS, train_encoder_orm
    from webrl.orm.train import ORM_PRESETS, train_orm
    from webrl.rl.loop import LOOP_PRESETS, LoopConfig, evaluate_start, train
    from webrl.rl.sft import SFT_PRESETS, train_sft

    if args.orm_steps < 0:
        print(f"error: --orm-steps must be >= 0 (0 = the time budget), got {args.orm_steps}", file=sys.stderr)
        return 2
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    stages = STAGES if args.until is None else STAGES[: STAGES.index(args.until) + 1]
    stage = stage_runner(args.threads)
    # a fixed step count (--orm-steps) makes the ORM's minutes follow the machine's pace, as SFT's do
    fixed = tuple(s for s in FIXED if not (args.orm_steps and s == "orm"))
    show = Progress(stages, BUDGET if args.preset == "cpu" else None, fixed)
    mcfg = preset(args.preset)
    progress = not args.no_progress

    sft = run / "sft"
    sft_done = (sft / "final" / "webrl_model.json").exists()
    show("sft", done=sft_done)
    if not sft_done:
        stage(train_sft, replace(SFT_PRESETS[args.preset], clock="cpu"), mcfg, sft, progress)
    if args.until == "sft":
        return _stopped(run, "sft")

    orm = run / "orm" / "model"
    loop = LoopConfig(**{**LOOP_PRESETS[args.preset], "init": str(sft / "final"), "orm": str(orm / "final"),
                         "demos": str(sft / "demos.jsonl"), **({"phases": args.phases} if args.phases else {})})  # fmt: skip
    # = the phase loop's phase-000 eval, run now so the ORM eval can reuse its episodes
    show("sft-eval", done=(run / "webrl" / "phase-000" / "eval" / "done").exists())
    stage(evaluate_start, loop, run / "webrl", progress)
    if args.until == "sft-eval":
        return _stopped(run, "sft-eval")

    data = run / "orm" / "train.jsonl"
    test_data = run / "orm" / "test.jsonl"
    show("orm-data", done=data.exists() and test_data.exists())
    if not data.exists():
        stage(_orm_data, "train", data, sft / "final", args.orm_policy_tasks, progress)
    if not test_data.exists():  # scripted behaviours + the SFT actor's greedy episodes from sft-eval
        stage(_orm_data, "test", test_data, sft / "final", 0, progress,
              run / "webrl" / "phase-000" / "eval" / "episodes.jsonl")  # fmt: skip
    if args.until == "orm-data":
        return _stopped(run, "orm-data")

    orm_done = any((orm / "final" / f).exists() for f in ("webrl_model.json", ENCODER_FILE))
    show("orm", done=orm_done)
    if not orm_done:
        ocfg = ENCODER_PRESETS[args.preset] if args.orm_kind == "encoder" else ORM_PRESETS[args.preset]
        stats_file = data.with_suffix(".stats.json")
        data_s = read_json(stats_file).get("seconds") if stats_file.exists() else None
        minutes = orm_minutes(args.orm_budget, data_s, ocfg.minutes)
        if args.orm_steps:
            print(f"orm: {args.orm_steps} optimizer steps (--orm-steps), no time budget", flush=True)
            minutes = 0.0
        elif minutes != ocfg.minutes:
            print(f"orm: {minutes:.1f} min of training = the {args.orm_budget:g}-min ORM budget less "
                  f"{data_s / 60:.1f} min of data building and {ORM_STAGE_OVERHEAD:g} for loading and "
                  "saving" + (f" (at least {ORM_MIN_MINUTES:g})" if minutes == ORM_MIN_MINUTES else ""),
                  flush=True)  # fmt: skip
        ocfg = replace(ocfg, data=str(data), clock="cpu", minutes=minutes,
                       **({"max_steps": args.orm_steps} if args.orm_steps else {}))  # fmt: skip
        if args.orm_kind == "encoder":
            stage(train_encoder_orm, ocfg, orm, progress)
        else:
            stage(train_orm, ocfg, mcfg, orm, progress)
    if args.until == "orm":
        return _stopped(run, "orm")

    orm_eval_done = (run / "orm" / "eval.json").exists()
    show("orm-eval", done=orm_eval_done)
    if not orm_eval_done:
        stage(_orm_eval, test_data, orm / "final", run / "orm" / "eval.json", loop.orm_threshold)
    if args.until == "orm-eval":
        return _stopped(run, "orm-eval")

    show("train", done=final_summary(run / "webrl") is not None)
    stage(train, loop, run / "webrl", progress)
    print(comparison(run / "webrl"))
    return 0


def _stopped(run: Path, stage: str) -> int:
    print(f"\ndemo: stopped after stage {stage} (--until); rerun without --until to go on from there: {run}", flush=True)
    return 0


def _orm_eval(test_data: Path, orm: Path, out: Path, loop_threshold: float = 0.5) -> None:
    """The trained ORM on the held-out test-task trajectories: `webrl orm eval`'s report (a positive:
    P > 0.5, the paper's rule), with throughput and, when the phase loop rewards above another
    threshold (the cpu preset's 0.7), the same metrics there under `at_loop_threshold`."""
    from webrl.files import load_jsonl
    from webrl.orm.metrics import format_report, report
    from webrl.orm.model import load_orm

    trajs = load_jsonl(test_data)
    t0 = time.perf_counter()
    probs = load_orm(orm).prob_success(trajs)
    rep = report(probs, trajs)
    rep["throughput"] = {"trajectories_per_s": round(len(trajs) / (time.perf_counter() - t0), 2)}
    if loop_threshold != 0.5:
        at = report(probs, trajs, loop_threshold)
        rep["at_loop_threshold"] = {k: v for k, v in at.items() if k != "reliability"}
    write_json_atomic(out, rep)
    print(format_report(rep))
    if "at_loop_threshold" in rep:
        print("\n" + format_report(rep["at_loop_threshold"]))


ORM_STAGE_OVERHEAD = 1.0
ORM_MIN_MINUTES = 5.0  # the ORM's training minutes however little of the budget the data left
# minutes of the ORM stage outside its timed steps, kept out of its training budget: the 2026-12-06
# demo's stage took 19.7 wall-min for an 18.74-min budget (0.55 loading, tokenising and saving;
# 0.4 from a pace 2 % slower after the step count was planned), 21.0 with its 1.26 of data


def orm_minutes(budget: float, data_s: float | None, preset_minutes: float, floor: float = ORM_MIN_MINUTES,
                overhead: float = ORM_STAGE_OVERHEAD) -> float:
    """The ORM's training minutes under a budget for data building + training (issue: <= 20 min on
    the cpu preset): what the train-split data and the stage's `overhead` left of `budget`, at
    least `floor`. The preset's own minutes when there is no budget (0), no time-budgeted preset
    (0 minutes: cpu-tiny, gpu) or no recorded data time (a run folder from before the data stage
    recorded it)."""
    if budget <= 0 or preset_minutes <= 0 or data_s is None:
        return preset_minutes
    return round(max(floor, budget - data_s / 60 - overhead), 2)


def _orm_data(split: str, out: Path, policy: Path, n_policy: int, progress: bool,
              extra: Path | None = None) -> None:
    """Scripted behaviours on the split's tasks + the SFT policy (T=0 and T=1) on a sample of them
    + the greedy episodes in `extra` (an eval's episodes.jsonl) as `policy_t0`, at their natural
    success ratio (a per-site balance trained a worse ORM: docs/results.md, session 2026-12-02 (2))."""
    from webrl.agent.local_policy import LocalPolicy, SamplingParams
    from webrl.agent.prompt import load_prompt_config
    from webrl.env.web_env import EnvConfig, WebEnv
    from webrl.files import load_jsonl, write_jsonl_atomic
    from webrl.orm.data import dedupe, from_episodes, scripted_trajectories, stats
    from webrl.rollout.llm import run_eval_llm
    from webrl.tasks.splits import load_split, stratified

    t0 = time.perf_counter()
    tasks = load_split(split)
    prompt = load_prompt_config(policy)
    env = WebEnv()
    trajs = scripted_trajectories(tasks, env, prompt, progress=progress)
    env.close()
    if n_policy:
        pol = LocalPolicy.from_checkpoint(str(policy))
        sample = stratified(tasks, n_policy, seed=7)
        for temp in (0.0, 1.0):
            _, recs = run_eval_llm(sample, pol, prompt, SamplingParams(temperature=temp), n_envs=16,
                                   env_config=EnvConfig(max_steps=12), progress=progress)  # fmt: skip
            trajs += from_episodes(recs, f"policy_t{temp:g}")
    if extra is not None:
        trajs += from_episodes(load_jsonl(extra), "policy_t0")
    trajs = dedupe(trajs)
    info = {**stats(trajs), "seconds": round(time.perf_counter() - t0, 1)}
    write_json_atomic(out.with_suffix(".stats.json"), info)  # before the data, whose existence ends the stage
    write_jsonl_atomic(out, trajs)


def comparison(run: Path) -> str:
    """SFT (phase-000 full eval) vs the final actor, per site; then the tasks each won and lost (exact
    sign test) and, with ORM rewards, how those rewards compared with the evaluators on the rollouts."""
    from webrl.eval.study import outcomes, paired, sign_test
    from webrl.files import read_jsonl
    from webrl.orm.metrics import loop_rewards

    a = read_json(run / "phase-000" / "eval" / "summary.json")
    final = run / "final" / "eval" / "summary.json"
    if not final.exists():
        return "(no final eval)"
    b = read_json(final)
    lines = [f"{'site':<8}{'SFT':>8}{'WebRL':>8}", "-" * 24]
    for site in a.get("per_site", {}):
        lines.append(f"{site:<8}{a['per_site'][site]['success_rate']:>8.3f}"
                     f"{b.get('per_site', {}).get(site, {}).get('success_rate', 0.0):>8.3f}")  # fmt: skip
    lines.append(f"{'all':<8}{a['success_rate']:>8.3f}{b['success_rate']:>8.3f}")
    won, lost = paired(outcomes(run / "phase-000" / "eval"), outcomes(run / "final" / "eval"))
    lines.append(f"tasks WebRL won / lost against SFT: +{won} / -{lost} (exact sign test p {sign_test(won, lost):.2g})")
    cfg = read_json(run / "train_config.json") if (run / "train_config.json").exists() else {}
    m = loop_rewards([x for d in sorted(run.glob("phase-*")) for x in read_jsonl(d / "labels.jsonl")])
    if cfg.get("reward", "orm") == "orm" and m is not None:
        lines.append(f"ORM rewards on the {m['rollouts']} rollouts: {m['rewarded']} rewarded, {m['true_positives']} "
                     f"of them true successes (of {m['true_successes']}); "
                     + ("AUC -" if m["auc"] is None else f"AUC {m['auc']:.2f}"))  # fmt: skip
    return "\n".join(lines)


def add_commands(sub) -> None:
    d = sub.add_parser("demo", help="the whole pipeline: SFT -> ORM -> WebRL phases -> SFT vs WebRL (resumable)")
    d.add_argument("--run", default="runs/demo", help="run folder (rerun to resume)")
    d.add_argument("--preset", default="cpu", help="cpu (SmolLM2 + LoRA) | cpu-tiny (a fast smoke run) | gpu")
    d.add_argument("--phases", type=int, default=None, help="WebRL phases (preset: 3; cpu-tiny 2)")
    d.add_argument("--orm-kind", default="encoder", choices=("encoder", "lm"),
                   help="encoder: all-MiniLM-L6-v2 + head (default) | lm: the SmolLM2 + LoRA judge")
    d.add_argument("--orm-policy-tasks", type=int, default=0,
                   help="train tasks the SFT policy rolls out (T 0 and 1) for the ORM's data (0 = none, the default: the 6.7 "
                        "minutes its 24 tasks took trained a better ORM instead; docs/results.md, 2026-12-05 (5))")
    d.add_argument("--orm-budget", type=float, default=20.0,
                   help="minutes for the ORM's train data + training: training gets what the data building and a "
                        "minute for loading and saving left (at least 5; cpu preset only; 0 = the preset's "
                        "training minutes)")
    d.add_argument("--orm-steps", type=int, default=0,
                   help="the ORM's optimizer steps instead of a time budget (0 = the budget): another demo's "
                        "orm/model/plan.json `planned_steps` rebuilds that demo's ORM (same data, seed and threads; "
                        "bit for bit on the same kind of CPU)")
    d.add_argument("--until", default=None, choices=STAGES,
                   help="stop after this stage (e.g. orm-eval: the SFT actor, its test eval and the ORM, which a "
                        "`webrl study` starts from); rerun without it to go on")
    d.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    d.add_argument("--no-progress", action="store_true", help="hide progress bars")
    d.set_defaults(func=cmd_demo)
