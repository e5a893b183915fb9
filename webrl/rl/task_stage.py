"""Stage `tasks` of the phase loop (rl/loop.py): the phase's tasks.

Phase 1 (and every phase with `--no-curriculum`): a site-stratified sample of the rollout pool
(`train_pool`). Later phases: the self-evolving curriculum (rl/curriculum.py) grows candidates
from the previous phase's failures, the feasibility filter (LLM candidates) and the critic filter
V(s0, I) in [critic_lo, critic_hi] (rl/curriculum_filter.py, with the previous phase's critic:
`critic_values`) choose among them, and `fill` tops the phase up when too few pass.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from webrl.files import read_jsonl
from webrl.rl.loop_config import LoopConfig
from webrl.rl.stages import Stages
from webrl.tasks.splits import load_eval_tasks, stratified


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
    from webrl.rl.curriculum import judge_feasible, llm_candidates, offline_generate
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
    judged_out = None
    if cfg.generator == "offline":
        cands = offline_generate(seeds, db, n_cand, cfg.seed + phase, used, prefix=prefix,
                                 rephrase_share=cfg.rephrase_share, constraint_share=cfg.constraint_share)  # fmt: skip
        ok = cands
    else:
        from webrl.agent.openai_policy import OpenAIPolicy

        cands, ok = llm_candidates(seeds, OpenAIPolicy(cfg.generator, tokenizer=tok), db, n_cand, used, prefix=prefix)
        if cfg.feasibility_judge:  # then the LLM judge: only a clear YES keeps a task
            verdicts = judge_feasible(ok, OpenAIPolicy(cfg.feasibility_judge, tokenizer=tok), train_pool(cfg))
            judged_out = verdicts.count(False)
            ok = [c for c, keep in zip(ok, verdicts, strict=True) if keep]
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
    if judged_out is not None:
        cur["curriculum/judged_out"] = judged_out
    return tasks, cur


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
