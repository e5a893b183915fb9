"""Stage `critic` of the phase loop (rl/loop.py): one teacher-forced pass of π_ref over the phase's
new steps and a replay sample gives π_ref's action log-probs (eq. 6, the perplexity filter) and the
critic's features; the value head is fit with BCE (eq. 8; with `critic_backbone="lora"` a LoRA
adapter of the backbone is then trained with it); eq. 9 advantages make the actor's examples.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

import torch

from webrl.files import read_jsonl, write_jsonl_atomic
from webrl.rl.stages import Stages, phase_seed


def steps_of(episodes: list[dict], tok, prompt) -> tuple[list, list[tuple[int, int]]]:
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
    new_steps, new_where = steps_of(new, tok, prompt)
    replay_eps: list[dict] = []
    if cfg.replay and buffer:  # whole trajectories (eq. 9 needs V of each next step), up to the step budget
        replay_eps = sample_episodes(buffer, int(cfg.replay_sample * max(1, len(new_steps))), rng)
    rep_steps, rep_where = steps_of(replay_eps, tok, prompt)
    # continued SFT trains on demonstration steps alone, as many as the update below would train
    # (at most the new steps + replay_ratio x them): sample that many, scored in the same π_ref pass
    demo_eps = demo_sample(buffer, int((1 + cfg.replay_ratio) * len(new_steps)), seed) if cfg.method == "sft" else []
    dem_steps, _ = steps_of(demo_eps, tok, prompt)
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
    trained with the warm `head` on the prompts of `steps[idx]` (those within the actor's
    `max_seq_tokens`) against `targets` (rl/critic.py
    tune_critic), saved to `out` as a checkpoint (the next phase's curriculum filter loads it);
    returns (loss per epoch, the features of every step through it). The actor is untouched."""
    from tqdm import tqdm

    from webrl.models.build import save_checkpoint
    from webrl.models.critic import Step, score_steps
    from webrl.models.lora import adapters_merged, load_adapter, use_adapter
    from webrl.rl.critic import tune_critic

    if not hasattr(model, "peft_config"):
        raise ValueError(f"critic_backbone lora needs a LoRA actor; {actor_path} is fully fine-tuned "
                         "(use critic_backbone head)")  # fmt: skip
    # the prompts the actor's update would also fit in one sequence (its examples' length limit)
    fit = [k for k, i in enumerate(idx) if len(steps[i].prompt_ids) <= cfg.train.max_seq_tokens]
    load_adapter(model, actor_path, "critic", trainable=True)
    try:
        with use_adapter(model, "critic"):
            bar = tqdm(total=cfg.critic_tune_epochs * len(fit), desc="critic backbone", unit="step",
                       disable=not progress, leave=False)  # fmt: skip
            losses = tune_critic(model, head, [steps[idx[k]].prompt_ids for k in fit], targets[fit],
                                 tok.pad_token_id, cfg.critic_tune_epochs, cfg.train.lr, cfg.critic_lr,
                                 cfg.train.max_batch_tokens, cfg.seed, mcfg.autocast_bf16, bar.update) if fit else []  # fmt: skip
            bar.close()
            save_checkpoint(model, tok, mcfg, out)
            with adapters_merged(model):  # features only: the prompts, without their actions' tokens
                feats, _, _ = score_steps(model, [Step(s.prompt_ids, ()) for s in steps], tok.pad_token_id,
                                          cfg.max_batch_tokens, mcfg.autocast_bf16)  # fmt: skip
    finally:
        model.delete_adapter("critic")
    return losses, feats
