"""Sharing what runs that start alike would compute identically.

Runs that start from the same actor evaluate it greedily on the same tasks before their first
phase: on 2 CPU cores ~10-20 minutes each for the same episodes. `webrl study` shares one such
eval between its runs, and `webrl train --start-eval RUN` takes one from a finished run.

Phase 1 of a study's configs with the same seed is the same up to its replay stage too: its tasks
are drawn from the train pool by the seed (the curriculum starts at phase 2), its rollouts are
sampled from the starting actor with the phase's seed, and its labels come from the same ORM. The
configs differ only in what they do with them (replay, critic, actor update). `share_first_phase`
gives a run those three stages of another run's phase 1 when every setting that feeds them is
equal (`rollout_settings`: all but `UPDATE_ONLY`), saving its tasks and rollout minutes (~3 of a
~45-minute cpu run) and making the configs' comparison paired by construction."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from webrl.files import copytree_atomic, read_json, read_jsonl, write_json_atomic

# what the starting actor's eval depends on, besides which tasks it covers (`start_tasks`)
START_KEYS = ("init", "eval_split", "eval_max_steps", "envs")


def start_tasks(cfg: dict) -> tuple:
    """Which tasks a run's start eval covers (`rl/loop.py: evaluate_start`): the whole eval split
    with a final eval or a whole-split subset (0), else the seed's stratified subset."""
    if cfg.get("final_eval", True) or not cfg.get("eval_subset"):
        return ("all",)
    return ("subset", cfg["eval_subset"], cfg.get("seed", 0))


def claimed_otherwise(run: Path, cfg) -> bool:
    """`run` already holds a run begun with other settings (its `train_config.json` differs from
    `cfg`, so `train` will refuse it): nothing computed under `cfg` may be shared into it, or a
    later rerun with the folder's own settings would resume on stages made under `cfg`'s."""
    from webrl.models.training import changed_settings

    return bool(changed_settings(run / "train_config.json", cfg))


def share_start_eval(src: Path, dst: Path) -> bool:
    """Give run `dst` the finished eval of the starting actor from run `src` (one eval serves
    every run that starts alike). False when `dst` has its own or `src` has none."""
    s, d = src / "phase-000" / "eval", dst / "phase-000" / "eval"
    if d.exists() or not (s / "done").exists():
        return False
    d.parent.mkdir(parents=True, exist_ok=True)
    copytree_atomic(s, d)
    return True


def start_eval_source(runs: list[Path], cfg) -> Path | None:
    """The first of `runs` whose finished start eval `cfg`'s run can share: same starting actor,
    eval split, step limit, envs and tasks (a greedy eval does not depend on the seed otherwise)."""
    want = cfg.to_json()
    for run in runs:
        saved = run / "train_config.json"
        if not saved.exists() or not (run / "phase-000" / "eval" / "done").exists():
            continue
        got = read_json(saved)
        if all(got.get(k) == want[k] for k in START_KEYS) and start_tasks(got) == start_tasks(want):
            return run
    return None


# settings that act only after phase 1's label stage (replay, critic, actor update, later phases'
# curriculum, evals): runs that differ only in these roll out the same phase 1. A setting missing
# here keeps runs from sharing (safe); one wrongly here would share rollouts a run would not have made.
UPDATE_ONLY = frozenset({
    "method", "actor_loss", "beta", "lam", "gamma", "replay", "ppl_filter", "ppl_lo", "ppl_hi", "replay_ratio",
    "replay_sample", "curriculum", "generator", "candidates", "critic_lo", "critic_hi", "fill", "critic_replay",
    "critic_epochs", "critic_lr", "critic_backbone", "critic_tune_epochs", "rephrase_share", "constraint_share",
    "feasibility_judge",
    "phases", "eval_max_steps", "eval_subset", "final_eval", "train",
})  # fmt: skip
SHARED_STAGES = ("tasks", "rollout", "label")
PHASE_1 = "phase-001"


def rollout_settings(cfg: dict) -> dict:
    """The settings of a saved `train_config.json` (or `LoopConfig.to_json()`) that phase 1's
    tasks, rollouts and labels depend on."""
    return {k: v for k, v in cfg.items() if k not in UPDATE_ONLY}


def _shareable(pdir: Path) -> bool:
    """Phase folder `pdir` has labelled its rollouts, and they still hold their pages (an archived
    run's episodes lose them, `eval/archive.py`, and the critic stage needs them)."""
    done, eps = pdir / "stages.json", pdir / "rollouts" / "episodes.jsonl"
    if not done.exists() or not eps.exists() or not all(k in read_json(done) for k in SHARED_STAGES):
        return False
    return all("obs" in step for ep in read_jsonl(eps) for step in ep.get("steps", []))


def first_phase_source(runs: list[Path], cfg) -> Path | None:
    """The first of `runs` whose phase 1 has labelled rollouts that `cfg`'s run would make alike."""
    want = rollout_settings(json.loads(json.dumps(cfg.to_json())))
    for run in runs:
        saved = run / "train_config.json"
        if not saved.exists():
            continue
        try:  # read back through the config class: settings added to the code since are at their defaults
            theirs = json.loads(json.dumps(type(cfg).from_json(read_json(saved)).to_json()))
        except (TypeError, ValueError):  # another code's or a broken config: not shareable
            continue
        if rollout_settings(theirs) != want:
            continue
        if _shareable(run / PHASE_1):
            return run
    return None


def share_first_phase(src: Path, dst: Path) -> bool:
    """Give run `dst` the tasks, rollouts and labels of `src`'s phase 1 (its `stages.json` marks
    them done, `shared_from` naming `src`, minutes 0: they cost `dst` nothing; `shared_minutes`:
    what they cost `src`, which a run's wall minutes count so that runs compare alike). False when `dst`
    has started phase 1 itself, or `src` has not labelled its rollouts or is an archive without
    their pages. The phase folder appears whole or not at all."""
    s, d = src / PHASE_1, dst / PHASE_1
    if d.exists() or not _shareable(s):
        return False
    done = read_json(s / "stages.json")
    tmp = d.with_name(f".{PHASE_1}.share")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name in ("tasks.json", "labels.jsonl"):
        shutil.copy2(s / name, tmp / name)
    shutil.copytree(s / "rollouts", tmp / "rollouts")
    write_json_atomic(tmp / "stages.json", {k: {**done[k], "minutes": 0.0, "shared_from": str(src),
                                                "shared_minutes": done[k].get("shared_minutes", done[k].get("minutes", 0.0))}
                                            for k in SHARED_STAGES})  # fmt: skip
    os.replace(tmp, d)
    return True
