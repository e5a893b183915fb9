"""The WebRL phase loop (`webrl train`): one readable function, `train`.

    webrl train --init runs/sft/final --orm runs/orm/final --run runs/webrl     # rerun to resume

Per phase k (folder `phase-00k/`), each stage resumable and marked done in
`stages.json` only once its outputs are on disk:

  tasks    phase 1 (or --no-curriculum): a site-stratified sample of the train split;
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
           filter) and features; value head trained with BCE (eq. 8); eq. 9
           advantages -> critic/, examples.jsonl
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
import random
import time
from collections import defaultdict
from dataclasses import asdict, replace
from pathlib import Path

import torch

from webrl.files import read_jsonl, write_jsonl_atomic
from webrl.models.training import claim_run_config
from webrl.rl.loop_config import LOOP_PRESETS, METRICS, LoopConfig  # noqa: F401 (re-exported)
from webrl.rl.stages import Stages
from webrl.tasks.splits import load_eval_tasks
from webrl.tensorboard import ScalarLog

# --- small helpers ------------------------------------------------------------------------


def phase_seed(seed: int, pdir: Path) -> int:
    """The seed of a phase's own random draws (rollout sampling, replay and demonstration samples):
    the run's seed + 1000 × the phase number of `pdir` ("phase-002" -> 2; 0 for another name), so
    each phase draws afresh and a rerun of a phase draws the same."""
    name = pdir.name
    return seed + 1000 * (int(name.split("-")[1]) if name.startswith("phase-") and name[6:].isdigit() else 0)


def _fault(point: str) -> None:
    """Fault injection for the resume tests: WEBRL_FAULT=<point> kills the process here."""
    if os.environ.get("WEBRL_FAULT") == point:
        os._exit(137)


def stratified(tasks: list, n: int, seed: int) -> list:
    """`n` tasks spread over sites in proportion (all when n <= 0 or n >= len)."""
    if n <= 0 or n >= len(tasks):
        return list(tasks)
    by_site: dict[str, list] = defaultdict(list)
    for t in tasks:
        by_site[t.site].append(t)
    rng = random.Random(seed)
    out = []
    for site in sorted(by_site):
        group = by_site[site]
        k = max(1, round(n * len(group) / len(tasks)))
        out += rng.sample(group, min(k, len(group)))
    return sorted(out[:n] if len(out) > n else out, key=lambda t: str(t.task_id))


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


def phase_tasks(cfg: LoopConfig, run: Path, phase: int, stages: Stages, model, tok, mcfg, prompt) -> tuple[list, dict]:
    """Stage `tasks`: this phase's tasks and the curriculum counts (module docstring)."""
    from webrl.tasks.schema import load_tasks, save_tasks

    pdir = run / f"phase-{phase:03d}"
    if "tasks" in stages:
        return load_tasks(pdir / "tasks.json"), stages.done["tasks"]
    if phase == 1 or not cfg.curriculum:
        tasks = stratified(train_pool(cfg), cfg.tasks_per_phase, cfg.seed + phase)
        cur = {"curriculum/generated": 0, "curriculum/feasible": 0, "curriculum/kept": 0}
    else:
        tasks, cur = generate_tasks(cfg, run, phase, model, tok, mcfg, prompt)
    tasks = repeat_tasks(tasks, cfg.rollouts_per_task)
    save_tasks(tasks, pdir / "tasks.json")
    stages.mark("tasks", cur)
    return tasks, cur


def repeat_tasks(tasks: list, k: int) -> list:
    """Each task `k` times, the copies named TASK#0 … TASK#k-1 (episodes are keyed by task id)."""
    if k <= 1:
        return list(tasks)
    return [replace(t, task_id=f"{t.task_id}#{i}") for t in tasks for i in range(k)]


def train_pool(cfg: LoopConfig) -> list:
    """The rollout pool of phase 1 and --no-curriculum: `cfg.train_tasks` when given (it may overlap
    the eval split on purpose: a check that the update learns the tasks it trains on; never a test
    task), else the train split less any task of the eval split (an eval split drawn from the train
    split, like SFT's `heldout_tasks.json`, stays unseen by the rollouts)."""
    from webrl.tasks.splits import load_split

    if cfg.train_tasks:  # LoopConfig checked it holds no test task
        return load_eval_tasks(cfg.train_tasks)
    pool = load_split("train")
    if cfg.eval_split == "test":
        return pool
    held = load_eval_tasks(cfg.eval_split)
    ids, intents = {str(t.task_id) for t in held}, {t.intent for t in held}
    return [t for t in pool if str(t.task_id) not in ids and t.intent not in intents]


def generate_tasks(cfg: LoopConfig, run: Path, phase: int, model, tok, mcfg, prompt) -> tuple[list, dict]:
    """Curriculum from phase-1's failures: generate -> feasibility -> critic filter."""
    from webrl.rl.curriculum import llm_candidates, offline_generate
    from webrl.rl.curriculum_filter import phase_selection, window_selection
    from webrl.sites.world import WorldApp
    from webrl.tasks.family import SeedDB
    from webrl.tasks.schema import load_tasks
    from webrl.tasks.splits import load_split

    prev = run / f"phase-{phase - 1:03d}"
    prev_tasks = {str(t.task_id): t for t in load_tasks(prev / "tasks.json")}
    labels = read_jsonl(prev / "labels.jsonl")
    seeds = [prev_tasks[str(x["task_id"])] for x in labels if x["reward"] < 1.0 and str(x["task_id"]) in prev_tasks]
    if not seeds:  # nothing failed: grow from every task of the last phase
        seeds = list(prev_tasks.values())
    used = {t.intent for t in load_split("test")}  # never a test task, whatever the eval split
    if cfg.eval_split != "test":
        used |= {t.intent for t in load_eval_tasks(cfg.eval_split)}
    for p in sorted(run.glob("phase-*/tasks.json")):
        used |= {t.intent for t in load_tasks(p)}
    world = WorldApp()
    db = SeedDB(world.store.snapshot)
    n_cand = max(cfg.tasks_per_phase, int(cfg.candidates * cfg.tasks_per_phase))
    prefix = f"p{phase}-"
    if cfg.generator == "offline":
        cands = offline_generate(seeds, db, n_cand, cfg.seed + phase, used, prefix=prefix,
                                 rephrase_share=cfg.rephrase_share, constraint_share=cfg.constraint_share)  # fmt: skip
        ok = cands
    else:
        from webrl.agent.openai_policy import OpenAIPolicy

        cands, ok = llm_candidates(seeds, OpenAIPolicy(cfg.generator, tokenizer=tok), db, n_cand, used, prefix=prefix)
    values = critic_values(cfg, prev / "critic", [t for t, _ in ok], model, tok, mcfg, prompt, world)
    n, seed = cfg.tasks_per_phase, cfg.seed + phase
    select = phase_selection if cfg.fill == "nearest" else window_selection
    keep = select(values, n, seed, cfg.critic_lo, cfg.critic_hi)
    tasks = [replace(ok[i][0], extra={**ok[i][0].extra, "curriculum": ok[i][1], "critic_value": round(values[i], 4)})
             for i in keep]  # fmt: skip
    in_window = sum(cfg.critic_lo <= v <= cfg.critic_hi for v in values)
    filled = len(tasks) - min(in_window, n)
    if cfg.fill == "train" and len(tasks) < n:  # the rest from the train pool, tasks no phase has rolled out yet
        pool = [t for t in train_pool(cfg) if t.intent not in used]
        top = stratified(pool, n - len(tasks), seed)
        tasks += [replace(t, extra={**t.extra, "curriculum": {"how": "fill: train"}}) for t in top]
        filled = len(top)
    cur = {"curriculum/generated": len(cands), "curriculum/feasible": len(ok), "curriculum/kept": in_window,
           "curriculum/used": len(tasks), "curriculum/filled": filled,
           "curriculum/mean_value": round(sum(values) / max(1, len(values)), 4)}  # fmt: skip
    return tasks, cur


def evaluate_start(cfg: LoopConfig, run_dir: str | Path, progress: bool = True) -> dict:
    """`phase-000/eval`: the starting actor, greedy, on the whole eval split when `cfg.final_eval`
    (else on the per-phase subset). Resumable; `webrl demo` runs it before the ORM stages and
    reuses its episodes as the ORM's held-out policy trajectories, and `train` then finds it done."""
    from webrl.agent.prompt import load_prompt_config

    tasks = load_eval_tasks(cfg.eval_split)
    tasks = tasks if cfg.final_eval else stratified(tasks, cfg.eval_subset, cfg.seed)
    return evaluate(cfg, cfg.init, tasks, Path(run_dir) / "phase-000", load_prompt_config(cfg.init), progress)


def critic_values(cfg: LoopConfig, critic_dir: Path, tasks: list, model, tok, mcfg, prompt, world) -> list[float]:
    """V(s0, I) of each task: its start page through the critic's backbone adapter and head."""
    from webrl.agent.prompt import build_prompt
    from webrl.env.web_env import WebEnv
    from webrl.models.critic import Step, load_critic, score_steps, values
    from webrl.models.lora import adapters_merged, load_adapter, use_adapter

    if not tasks:
        return []
    head, backbone = load_critic(critic_dir)
    env = WebEnv(world=world)
    prompts = []
    for t in tasks:
        obs, _ = env.reset(options={"task": t})
        prompts.append(tuple(tok(build_prompt(tok, t.intent, [], obs, prompt), add_special_tokens=False)["input_ids"]))
    env.close()
    steps = [Step(p, ()) for p in prompts]
    if not (Path(backbone) / "adapter_config.json").exists():  # a fully fine-tuned actor: its own model
        from webrl.models.build import load_checkpoint
        from webrl.models.device import module_device

        critic_model = load_checkpoint(backbone)[0].to(module_device(model))
        feats, _, _ = score_steps(critic_model, steps, tok.pad_token_id, cfg.max_batch_tokens, mcfg.autocast_bf16)
        del critic_model
        return values(head, feats).tolist()
    load_adapter(model, backbone, "critic")  # LoRA: the critic's backbone adapter beside the actor's
    try:
        with use_adapter(model, "critic"), adapters_merged(model):
            feats, _, _ = score_steps(model, steps, tok.pad_token_id, cfg.max_batch_tokens, mcfg.autocast_bf16)
    finally:
        model.delete_adapter("critic")
    return values(head, feats).tolist()


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
    policy = LocalPolicy(model, tok, max_batch_tokens=cfg.max_batch_tokens, autocast_bf16=mcfg.autocast_bf16,
                         seed=phase_seed(cfg.seed, pdir))  # fmt: skip
    count = {"n": len(read_episodes(out / "episodes.jsonl"))}

    def on_episode(_rec: dict) -> None:
        count["n"] += 1
        stages.tick()
        _fault(f"rollout:{count['n']}")

    # forward-only: merged adapters are ~3x faster on CPU; with workers, served on loopback for the stage
    with adapters_merged(model), served_workers(policy, cfg.workers, cfg.init, cfg.executor, "actor") as workers:
        _, records = run_eval_llm(tasks, policy, prompt, SamplingParams(temperature=cfg.temperature), n_envs=cfg.envs,
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


def _steps_of(episodes: list[dict], tok, prompt) -> tuple[list, list[tuple[int, int]]]:
    """Prompt/action ids of every step, and (episode index, step index) of each."""
    from webrl.agent.prompt import build_prompt, completion_text
    from webrl.models.critic import Step

    steps, where = [], []
    for k, ep in enumerate(episodes):
        history: list[tuple[str, str]] = []
        for i, s in enumerate(ep["steps"]):
            p = tok(build_prompt(tok, ep["intent"], history, s["obs"], prompt), add_special_tokens=False)["input_ids"]
            a = tok(completion_text(tok, s["response"], prompt), add_special_tokens=False)["input_ids"]
            steps.append(Step(tuple(p), tuple(a)))
            where.append((k, i))
            history.append((s["obs"], s["response"]))
    return steps, where


def critic_stage(cfg, labelled, buffer, model, tok, mcfg, prompt, actor_path, pdir: Path, stages: Stages, progress):
    """Stage `critic` (module docstring). Returns (RL examples for the actor, info)."""
    from tqdm import tqdm

    from webrl.models.critic import ValueHead, save_critic, score_steps, values
    from webrl.rl.actor import RLExample
    from webrl.rl.advantages import mc_returns, webrl_advantages
    from webrl.rl.critic import critic_targets, train_value_head
    from webrl.rl.losses import perplexity
    from webrl.rl.replay import demo_sample, sample_episodes, select_replay

    path = pdir / "examples.jsonl"
    if "critic" in stages:
        return [RLExample(**{**r, "ids": tuple(r["ids"])}) for r in read_jsonl(path)], stages.done["critic"]
    new = [e for e in labelled if e["steps"]]
    seed = phase_seed(cfg.seed, pdir)  # a fresh replay / demonstration sample each phase
    rng = random.Random(seed)
    new_steps, new_where = _steps_of(new, tok, prompt)
    replay_eps: list[dict] = []
    if cfg.replay and buffer:  # whole trajectories (eq. 9 needs V of each next step), up to the step budget
        replay_eps = sample_episodes(buffer, int(cfg.replay_sample * max(1, len(new_steps))), rng)
    rep_steps, rep_where = _steps_of(replay_eps, tok, prompt)
    # continued SFT trains on demonstration steps alone, as many as the update below would train
    # (at most the new steps + replay_ratio x them): sample that many, scored in the same π_ref pass
    demo_eps = demo_sample(buffer, int((1 + cfg.replay_ratio) * len(new_steps)), seed) if cfg.method == "sft" else []
    dem_steps, _ = _steps_of(demo_eps, tok, prompt)
    all_steps = new_steps + rep_steps + dem_steps
    bar = tqdm(total=len(all_steps), desc="π_ref pass", unit="step", disable=not progress, leave=False)
    from webrl.models.lora import adapters_merged

    with adapters_merged(model):
        feats, ref_logp, n_tok = score_steps(model, all_steps, tok.pad_token_id, cfg.max_batch_tokens,
                                             mcfg.autocast_bf16, bar.update)
    bar.close()
    # replay selection: the perplexity window under π_ref, at most replay_ratio × new steps
    n_new, n_rep = len(new_steps), len(rep_steps)
    rep = slice(n_new, n_new + n_rep)
    ppl = perplexity(ref_logp[rep].unsqueeze(1) / n_tok[rep].clamp(min=1).unsqueeze(1),
                     torch.ones(len(rep_steps), 1)) if rep_steps else torch.zeros(0)  # fmt: skip
    if cfg.ppl_filter:
        rep_keep = select_replay(ppl, n_new, cfg.replay_ratio, seed, cfg.ppl_lo, cfg.ppl_hi)
    else:
        rep_keep = sorted(rng.sample(range(len(rep_steps)), min(len(rep_steps), int(cfg.replay_ratio * n_new))))
    # critic: eq. 8 on this phase's on-policy steps (+ the kept replay steps with `critic_replay`):
    # V estimates the current actor's success; replayed successes are a selected sample of it
    idx, y = critic_targets([float(new[k]["reward"]) for k, _ in new_where], rep_keep, cfg.critic_replay)
    head = ValueHead(feats.shape[1], seed=cfg.seed)
    losses = train_value_head(head, feats[idx], y, cfg.critic_epochs, cfg.critic_lr, seed=cfg.seed) if idx else [0.0]
    backbone, tuned = actor_path, None
    if cfg.critic_backbone == "lora" and idx:  # then eq. 8 through a LoRA adapter of the backbone, head warm
        backbone = str(pdir / "critic" / "backbone")
        tuned, feats = tune_critic_backbone(cfg, model, tok, mcfg, head, all_steps, idx, y, actor_path, backbone,
                                            progress)  # fmt: skip
    save_critic(head, backbone, pdir / "critic")
    v = values(head, feats)
    # eq. 9 advantages per trajectory, then the examples
    examples: list[RLExample] = []
    groups: list[tuple[list[int], float, list]] = []  # (global step indices, final reward, where)
    for eps, where, offset, keep in ((new, new_where, 0, None), (replay_eps, rep_where, n_new, set(rep_keep))):
        by_ep: dict[int, list[int]] = defaultdict(list)
        for j, (k, _) in enumerate(where):
            by_ep[k].append(offset + j)
        for k, js in by_ep.items():
            groups.append((js, float(eps[k]["reward"]), keep))
    for js, r, keep in groups:
        vals = v[js]
        adv = webrl_advantages(vals, r, cfg.lam, cfg.gamma)
        mc = mc_returns(r, len(js), cfg.gamma)
        for t, g in enumerate(js):
            if keep is not None and (g - n_new) not in keep:
                continue
            s = all_steps[g]
            nxt = float(vals[t + 1]) if t + 1 < len(js) else 0.0
            examples.append(RLExample(
                ids=s.prompt_ids + s.action_ids, prompt_len=len(s.prompt_ids), task_id=str(g),
                advantage=float(adv[t]), ref_logp=float(ref_logp[g]), value=float(vals[t]), next_value=nxt,
                reward=r if t == len(js) - 1 else 0.0, mc_return=float(mc[t]),
            ))  # fmt: skip
    if cfg.method == "sft":  # the same budget, demonstrations only
        first = n_new + n_rep
        examples = [RLExample(ids=s.prompt_ids + s.action_ids, prompt_len=len(s.prompt_ids), task_id=f"demo-{j}",
                              ref_logp=float(ref_logp[first + j]), mc_return=1.0)
                    for j, s in enumerate(dem_steps)][: len(examples)]  # fmt: skip
    from webrl.rl.actor import method_examples

    examples = method_examples(cfg.method, [e for e in examples if e.n_tokens <= cfg.train.max_seq_tokens], cfg.loss)
    write_jsonl_atomic(path, [asdict(e) for e in examples])
    info = {"critic/loss": round(losses[-1], 4), "replay/kept": len(rep_keep), "replay/scored": len(rep_steps),
            "critic/mean_value": round(float(v[:n_new].mean()), 4) if n_new else None}  # fmt: skip
    if tuned:
        info["critic/tune_loss"] = round(tuned[-1], 4)
    stages.mark("critic", info)
    return examples, info


def tune_critic_backbone(cfg, model, tok, mcfg, head, steps, idx, targets, actor_path, out: str, progress):
    """`critic_backbone="lora"`: an adapter "critic" loaded from π_ref's (`actor_path`) beside the actor's,
    trained with the warm `head` on the prompts of `steps[idx]` against `targets` (rl/critic.py
    tune_critic), saved to `out` as a checkpoint (the next phase's curriculum filter loads it);
    returns (loss per epoch, the features of every step through it). The actor is untouched."""
    from tqdm import tqdm

    from webrl.models.build import save_checkpoint
    from webrl.models.critic import score_steps
    from webrl.models.lora import adapters_merged, load_adapter, use_adapter
    from webrl.rl.critic import tune_critic

    if not hasattr(model, "peft_config"):
        raise ValueError(f"critic_backbone lora needs a LoRA actor; {actor_path} is fully fine-tuned "
                         "(use critic_backbone head)")  # fmt: skip
    load_adapter(model, actor_path, "critic", trainable=True)
    try:
        with use_adapter(model, "critic"):
            bar = tqdm(total=cfg.critic_tune_epochs * len(idx), desc="critic backbone", unit="step",
                       disable=not progress, leave=False)  # fmt: skip
            losses = tune_critic(model, head, [steps[i].prompt_ids for i in idx], targets, tok.pad_token_id,
                                 cfg.critic_tune_epochs, cfg.train.lr, cfg.critic_lr, cfg.train.max_batch_tokens,
                                 cfg.seed, mcfg.autocast_bf16, bar.update)  # fmt: skip
            bar.close()
            save_checkpoint(model, tok, mcfg, out)
            with adapters_merged(model):
                feats, _, _ = score_steps(model, steps, tok.pad_token_id, cfg.max_batch_tokens, mcfg.autocast_bf16)
    finally:
        model.delete_adapter("critic")
    return losses, feats


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
    fault = os.environ.get("WEBRL_FAULT", "")
    train_cfg = cfg.train
    if fault.startswith("actor:"):  # resume test: stop right after the first checkpoint
        train_cfg = replace(train_cfg, save_minutes=0.0)
    line = fit(examples, train_cfg, model, tok, mcfg, out, "actor", extra, progress,
               loss_fn=make_loss_fn(cfg.loss, cfg.beta), on_checkpoint=lambda step: (stages.tick(), _fault(f"actor:{step}")))  # fmt: skip
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

