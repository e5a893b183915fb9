"""The WebRL phase loop (`webrl train`): one readable function, `train`.

    webrl train --init runs/sft/final --orm runs/orm/final --run runs/webrl     # rerun to resume

Per phase k (folder `phase-00k/`), each stage resumable and marked done in
`stages.json` only once its outputs are on disk:

  tasks    (rl/task_stage.py) phase 1 (or --no-curriculum): a site-stratified sample of the train split;
           later: offline (or LLM) generation from phase k-1's failures, the
           feasibility filter, then the critic filter V(s0, I) in [0.05, 0.75],
           topped up to a full phase when too few pass (`fill`) -> tasks.json (the filters' counts in stages.json and metrics.jsonl)
  rollout  temperature-1 episodes, batched over parallel envs -> rollouts/episodes.jsonl
           (appended per episode: a kill loses at most the episodes in flight)
  label    ORM P(success) per trajectory (or the evaluators with --reward oracle)
           -> labels.jsonl (with the evaluator's reward beside it, as a diagnostic)
  replay   this phase's successes -> successes.jsonl (the buffer = every phase's
           file, plus the SFT demonstrations as phase 0)
  critic   one teacher-forced pass of π_ref (this phase's starting actor) over the
           new steps and a replay sample: action log-probs (eq. 6, perplexity
           filter) and features; value head trained with BCE (eq. 8; with
           critic_backbone lora, then a LoRA adapter of the backbone with it); eq. 9
           advantages -> critic/, examples.jsonl (rl/critic_stage.py)
  actor    one epoch of the KL-constrained loss (eq. 6) on new + filtered replay
           steps (or a baseline's loss and steps: --method, rl/actor.py)
           -> actor/final (resumable from actor/ckpt-*)
  eval     greedy on a fixed site-stratified subset of the eval split -> eval/

`phase-000/eval` is the starting actor (on the whole eval split when `final_eval`,
else on the subset); after the last phase the final actor is evaluated on the
whole eval split (`final/eval/`).
Metrics: one line per phase in `metrics.jsonl` (names in METRICS, rl/loop_config.py), also as
TensorBoard scalars in `tb/` when a writer is installed (webrl/tensorboard.py).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from dataclasses import asdict, replace
from pathlib import Path

from webrl.files import read_jsonl, write_jsonl_atomic
from webrl.models.training import claim_run_config
from webrl.rl.critic_stage import critic_stage
from webrl.rl.loop_config import LOOP_PRESETS, METRICS, LoopConfig  # noqa: F401 (re-exported)
from webrl.rl.stages import Stages, fault, phase_seed, rollout_seed
from webrl.rl.task_stage import phase_tasks
from webrl.tasks.splits import load_eval_tasks, stratified
from webrl.tensorboard import ScalarLog

# --- small helpers ------------------------------------------------------------------------


class Banner:
    """Stage banners with elapsed time and a remaining-time estimate from finished phases: their
    mean minutes times the phases not yet finished, less the time the current one has run."""

    def __init__(self, phases: int):
        self.t0 = time.perf_counter()
        self.phases = phases
        self.phase_seconds: list[float] = []
        self.phase_start = self.t0  # set by the loop when a phase starts

    def __call__(self, phase: int, stage: str, what: str = "") -> None:
        now = time.perf_counter()
        el = (now - self.t0) / 60
        left = ""
        if self.phase_seconds:
            per = sum(self.phase_seconds) / len(self.phase_seconds)
            rest = max(0.0, per * (self.phases - phase + 1) - (now - self.phase_start)) / 60
            left = f", ~{rest:.0f} min left"
        print(f"== phase {phase}/{self.phases} · {stage} {what}(elapsed {el:.1f} min{left})", flush=True)


# --- the loop -------------------------------------------------------------------------------


def train(cfg: LoopConfig, run_dir: str | Path, progress: bool = True) -> dict:
    """Run (or resume) the WebRL phases into `run_dir`; returns the last metrics line."""
    from webrl.agent.prompt import load_prompt_config

    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    claim_run_config(run / "train_config.json", cfg, "--run")
    prompt = load_prompt_config(cfg.init)
    eval_tasks = stratified(load_eval_tasks(cfg.eval_split), cfg.eval_subset, cfg.seed)
    banner = Banner(cfg.phases)
    line: dict = {}
    tb = ScalarLog(run / "tb")  # the metrics lines as TensorBoard scalars, when a writer is installed

    print("== phase 0: the starting actor" + (f" on the whole {cfg.eval_split} split" if cfg.final_eval else ""))
    evaluate_start(cfg, run, progress)
    done = read_jsonl(run / "metrics.jsonl")
    for phase in range(1, cfg.phases + 1):
        t_phase = time.perf_counter()
        pdir = run / f"phase-{phase:03d}"
        stages = Stages(pdir)
        if "eval" in stages:  # finished before a resume: its minutes still inform the estimate
            banner.phase_seconds += [60 * m["minutes"] for m in done if m.get("phase") == phase and "minutes" in m]
            continue
        banner.phase_start = t_phase
        actor_path = cfg.init if phase == 1 else str(run / f"phase-{phase - 1:03d}" / "actor" / "final")
        model, tok, mcfg = _load_actor(actor_path)

        banner(phase, "tasks")
        tasks, cur = phase_tasks(cfg, run, phase, stages, model, tok, mcfg, prompt)
        banner(phase, "rollout", f"- {len(tasks)} tasks at T={cfg.temperature:g} ")
        episodes = rollout(cfg, tasks, model, tok, mcfg, prompt, pdir, stages, progress)
        banner(phase, "label", f"- {cfg.reward} rewards ")
        labelled = label(cfg, episodes, tasks, pdir, stages)
        banner(phase, "replay")
        buffer = update_replay(cfg, run, phase, labelled, pdir, stages)
        banner(phase, "critic", "- π_ref pass, value head (eq. 8), advantages (eq. 9) ")
        examples, cinfo = critic_stage(cfg, labelled, buffer, model, tok, mcfg, prompt, actor_path, pdir, stages, progress)
        banner(phase, "actor", f"- {len(examples)} steps, {cfg.method}, loss {cfg.loss} ")
        ainfo = actor_stage(cfg, examples, model, tok, mcfg, prompt, pdir, stages, progress)
        del model
        banner(phase, "eval", f"- {len(eval_tasks)} {cfg.eval_split} tasks, greedy ")
        summary = evaluate(cfg, str(pdir / "actor" / "final"), eval_tasks, pdir, prompt, progress)

        line = {"phase": phase, **phase_metrics(labelled, cur, buffer, cinfo, ainfo, summary),
                "minutes": stages.wall_minutes()}  # fmt: skip
        # one line per phase, even when a crash fell between this write and the mark below
        write_jsonl_atomic(run / "metrics.jsonl", [r for r in read_jsonl(run / "metrics.jsonl") if r.get("phase") != phase] + [line])
        tb.write(line, phase)
        stages.mark("eval", {"success": summary["success_rate"]})
        banner.phase_seconds.append(60 * line["minutes"])  # the whole phase's, over every process
    tb.close()

    if cfg.final_eval:
        last = cfg.init if cfg.phases == 0 else str(run / f"phase-{cfg.phases:03d}" / "actor" / "final")
        print(f"== final eval: {cfg.eval_split} split, greedy", flush=True)
        if cfg.phases:
            reuse_episodes(run / f"phase-{cfg.phases:03d}" / "eval", run / "final" / "eval")
        evaluate(cfg, last, load_eval_tasks(cfg.eval_split), run / "final", prompt, progress, folder="eval")
    return line


def reuse_episodes(src: Path, dst: Path) -> int:
    """Start eval `dst` from the finished episodes of eval `src` (same actor, same greedy settings:
    the last phase's subset eval is part of the final whole-split eval, so its tasks are not run
    twice). Does nothing once `dst` is finished or has episodes of its own (plain, or gzipped as in
    a run copied from `webrl archive`); returns how many were copied."""
    from webrl.rollout.runner import read_episodes

    ours = (dst / "done", dst / "episodes.jsonl", dst / "episodes.jsonl.gz")
    if any(f.exists() for f in ours) or not (src / "done").exists():
        return 0
    episodes = read_episodes(src / "episodes.jsonl")
    dst.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(dst / "episodes.jsonl", episodes)
    return len(episodes)


def _load_actor(path: str):
    from webrl.models.build import load_checkpoint
    from webrl.models.device import default_device

    model, tok, mcfg = load_checkpoint(path, trainable=True)
    return model.to(default_device()), tok, mcfg


def evaluate_start(cfg: LoopConfig, run_dir: str | Path, progress: bool = True) -> dict:
    """`phase-000/eval`: the starting actor, greedy, on the whole eval split when `cfg.final_eval`
    (else on the per-phase subset). Resumable; `webrl demo` runs it before the ORM stages and
    reuses its episodes as the ORM's held-out policy trajectories, and `train` then finds it done."""
    from webrl.agent.prompt import load_prompt_config

    tasks = load_eval_tasks(cfg.eval_split)
    tasks = tasks if cfg.final_eval else stratified(tasks, cfg.eval_subset, cfg.seed)
    return evaluate(cfg, cfg.init, tasks, Path(run_dir) / "phase-000", load_prompt_config(cfg.init), progress)


def rollout(cfg: LoopConfig, tasks: list, model, tok, mcfg, prompt, pdir: Path, stages: Stages, progress: bool) -> list[dict]:
    """Stage `rollout`: temperature-T episodes; resumable per episode."""
    from webrl.agent.local_policy import LocalPolicy, SamplingParams
    from webrl.env.web_env import EnvConfig
    from webrl.models.lora import adapters_merged
    from webrl.rollout.llm import run_eval_llm
    from webrl.rollout.runner import read_episodes
    from webrl.rollout.workers import served_workers

    out = pdir / "rollouts"
    if "rollout" in stages:
        return read_episodes(out / "episodes.jsonl")
    seed = phase_seed(cfg.seed, pdir)
    policy = LocalPolicy(model, tok, max_batch_tokens=cfg.max_batch_tokens, autocast_bf16=mcfg.autocast_bf16,
                         seed=seed)  # fmt: skip
    count = {"n": len(read_episodes(out / "episodes.jsonl"))}
    # each episode step samples with a seed of its own (step_sampling): a rollout does not depend on its batch mates
    sampling = SamplingParams(temperature=cfg.temperature,
                              seed=rollout_seed(seed, cfg.temperature, out / "config.json", count["n"]))  # fmt: skip

    def on_episode(_rec: dict) -> None:
        count["n"] += 1
        stages.tick()
        fault(f"rollout:{count['n']}")

    # forward-only: merged adapters are ~3x faster on CPU; with workers, served on loopback for the stage
    with adapters_merged(model), served_workers(policy, cfg.workers, cfg.init, cfg.executor, "actor") as workers:
        _, records = run_eval_llm(tasks, policy, prompt, sampling, n_envs=cfg.envs,
                                  env_config=EnvConfig(max_steps=cfg.rollout_max_steps), out_dir=out,
                                  progress=progress, on_record=on_episode, workers=workers)  # fmt: skip
    model.train()
    stages.mark("rollout", {"episodes": len(records)})
    return records


def label(cfg: LoopConfig, episodes: list[dict], tasks: list, pdir: Path, stages: Stages) -> list[dict]:
    """Stage `label`: the training reward of every rollout (+ the evaluator's, as a diagnostic).
    Returns the episodes with `reward` replaced by the training reward and `true_reward` added."""
    from webrl.orm.data import from_episode
    from webrl.orm.model import rewards

    path = pdir / "labels.jsonl"
    if "label" not in stages:
        has_eval = {str(t.task_id): "orm" not in t.eval.get("eval_types", []) for t in tasks}
        if cfg.reward == "orm":
            from webrl.orm.model import load_orm

            orm = load_orm(cfg.orm, max_batch_tokens=cfg.max_batch_tokens)
            probs = orm.prob_success([from_episode(e, "rollout") for e in episodes])
            del orm
        else:
            probs = [float(e["reward"]) for e in episodes]
        rows = [{"task_id": e["task_id"], "p_success": round(p, 4), "reward": r,
                 "true_reward": e["reward"] if has_eval.get(str(e["task_id"]), True) else None}
                for e, p, r in zip(episodes, probs, rewards(probs, cfg.orm_threshold), strict=True)]  # fmt: skip
        write_jsonl_atomic(path, rows)
        stages.mark("label")
    by_id = {str(r["task_id"]): r for r in read_jsonl(path)}
    return [{**e, "reward": by_id[str(e["task_id"])]["reward"], "success": by_id[str(e["task_id"])]["reward"] >= 1.0,
             "true_reward": by_id[str(e["task_id"])]["true_reward"]} for e in episodes]  # fmt: skip


def update_replay(cfg: LoopConfig, run: Path, phase: int, labelled: list[dict], pdir: Path, stages: Stages) -> list[dict]:
    """Stage `replay`: write this phase's successes; return the buffer of *earlier* phases
    (phase 0 = the SFT demonstrations), each record tagged with its phase."""
    if "replay" not in stages:
        write_jsonl_atomic(pdir / "successes.jsonl", [{**e, "phase": phase} for e in labelled if e["success"]])
        stages.mark("replay")
    buffer = []
    if cfg.demos and Path(cfg.demos).exists():
        buffer += [{**d, "phase": 0, "reward": 1.0, "success": True} for d in read_jsonl(Path(cfg.demos))]
    for p in range(1, phase):
        buffer += read_jsonl(run / f"phase-{p:03d}" / "successes.jsonl")
    return buffer


def actor_stage(cfg, examples, model, tok, mcfg, prompt, pdir: Path, stages: Stages, progress) -> dict:
    """Stage `actor`: one epoch of the actor loss on the examples (resumable through fit's checkpoints)."""
    from webrl.models.training import fit
    from webrl.rl.actor import make_loss_fn

    if "actor" in stages:
        return stages.done["actor"]
    out = pdir / "actor"
    if not examples:  # nothing to learn from: the actor carries over unchanged
        from webrl.models.build import save_checkpoint

        save_checkpoint(model, tok, mcfg, out / "final")
        (out / "final" / "prompt_config.json").write_text(json.dumps(asdict(prompt), indent=1) + "\n")
        stages.mark("actor", {"actor/steps": 0})
        return stages.done["actor"]
    extra = {"prompt_config.json": asdict(prompt)}
    train_cfg = cfg.train
    if os.environ.get("WEBRL_FAULT", "").startswith("actor:"):  # resume test: stop right after the first checkpoint
        train_cfg = replace(train_cfg, save_minutes=0.0)
    line = fit(examples, train_cfg, model, tok, mcfg, out, "actor", extra, progress,
               loss_fn=make_loss_fn(cfg.loss, cfg.beta), on_checkpoint=lambda step: (stages.tick(), fault(f"actor:{step}")))  # fmt: skip
    info = epoch_means(read_jsonl(out / "metrics.jsonl"), "actor/") | {"actor/steps": line.get("step", 0)}
    stages.mark("actor", info)
    return info


def epoch_means(lines: list[dict], prefix: str) -> dict:
    """Means over a whole fit of the `prefix` metrics in its `metrics.jsonl` lines, each line (the mean
    of the steps since the line before) weighted by those steps. A resumed fit logs again the steps
    after its checkpoint: the last line of a step wins."""
    by_step = {line["step"]: line for line in lines}
    sums: dict[str, float] = defaultdict(float)
    prev = total = 0
    for step in sorted(by_step):
        weight, prev = step - prev, step
        total += weight
        for k, v in by_step[step].items():
            if k.startswith(prefix) and isinstance(v, int | float):
                sums[k] += weight * v
    return {k: round(v / total, 5) for k, v in sums.items()}


def evaluate(cfg: LoopConfig, actor: str, tasks: list, pdir: Path, prompt, progress: bool, folder: str = "eval") -> dict:
    """Greedy eval of a checkpoint (resumable); returns its summary."""
    from webrl.agent.local_policy import LocalPolicy, SamplingParams
    from webrl.env.web_env import EnvConfig
    from webrl.rollout.llm import run_eval_llm
    from webrl.rollout.workers import served_workers

    out = pdir / folder
    if (out / "summary.json").exists() and (out / "done").exists():
        return json.loads((out / "summary.json").read_text())
    policy = LocalPolicy.from_checkpoint(actor, max_batch_tokens=cfg.max_batch_tokens)
    with served_workers(policy, cfg.workers, actor, cfg.executor) as workers:
        summary, _ = run_eval_llm(tasks, policy, prompt, SamplingParams(temperature=0.0), n_envs=cfg.envs,
                                  env_config=EnvConfig(max_steps=cfg.eval_max_steps), out_dir=out, progress=progress,
                                  extra_config={"actor": actor}, workers=workers)  # fmt: skip
    (out / "done").write_text("")
    print(f"   {folder}: success {summary['success_rate']:.3f} on {summary['episodes']} tasks "
          + " ".join(f"{s} {v['success_rate']:.2f}" for s, v in summary.get("per_site", {}).items()), flush=True)
    return summary


def phase_metrics(labelled, cur, buffer, cinfo, ainfo, summary) -> dict:
    n = max(1, len(labelled))
    with_truth = [e for e in labelled if e.get("true_reward") is not None]
    agree = [e["reward"] == (1.0 if e["true_reward"] >= 1.0 else 0.0) for e in with_truth]
    called = [e["true_reward"] >= 1.0 for e in with_truth if e["reward"] >= 1.0]  # rewarded: truly a success?
    return {
        "rollout/success": round(sum(e["success"] for e in labelled) / n, 4),
        "rollout/true_success": round(sum(e["true_reward"] >= 1.0 for e in with_truth) / max(1, len(with_truth)), 4),
        "orm/positive_rate": round(sum(e["reward"] for e in labelled) / n, 4),
        "orm/agreement": round(sum(agree) / max(1, len(agree)), 4),
        "orm/precision": round(sum(called) / len(called), 4) if called else None,
        "orm/false_positives": len(called) - sum(called),
        **{k: v for k, v in cur.items() if k.startswith("curriculum/")},
        "buffer/size": len(buffer) + sum(e["success"] for e in labelled),
        **cinfo, **ainfo,
        "eval/success": summary["success_rate"],
        "eval/per_site": {s: v["success_rate"] for s, v in summary.get("per_site", {}).items()},
    }  # fmt: skip

