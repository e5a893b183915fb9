"""Model subcommands of `webrl`: sft, eval-demos, serve-model, bench model, and `eval --agent PATH|URL`.

Kept apart from cli/main.py so the base install (no torch) never imports them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import replace
from pathlib import Path

from webrl.cli.argtypes import positive_int


def is_llm_agent(name: str) -> bool:
    return name.startswith(("http://", "https://")) or Path(name).exists()


def _policy(agent: str, args: argparse.Namespace):
    """(policy, prompt config) for a checkpoint path or an OpenAI-compatible URL."""
    from webrl.agent.prompt import load_prompt_config

    if agent.startswith(("http://", "https://")):
        from webrl.agent.openai_policy import OpenAIPolicy

        tok = None
        if args.tokenizer:
            from webrl.models.build import check_model_path, load_tokenizer

            check_model_path(args.tokenizer, "--tokenizer")
            tok = load_tokenizer(args.tokenizer)
        policy = OpenAIPolicy(agent, model=args.model, tokenizer=tok)
        prompt_dir = args.tokenizer or policy.model
        return policy, load_prompt_config(prompt_dir)
    from webrl.agent.local_policy import LocalPolicy
    from webrl.models.build import check_model_path

    check_model_path(agent, "--agent")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    return LocalPolicy.from_checkpoint(agent, max_batch_tokens=args.max_batch_tokens), load_prompt_config(agent)


def eval_llm(args: argparse.Namespace, tasks) -> int:
    """`webrl eval --agent PATH|URL`: batched LLM evaluation with the error taxonomy."""
    from webrl.agent.local_policy import SamplingParams
    from webrl.env.web_env import EnvConfig
    from webrl.rollout.llm import run_eval_llm
    from webrl.rollout.summary import format_table
    from webrl.rollout.taxonomy import format_taxonomy

    if args.workers < 1:
        print(f"error: --workers must be >= 1, got {args.workers}", file=sys.stderr)
        return 2
    if args.backend not in ("http", "chromium"):
        print(f"error: unknown backend {args.backend!r}; use http or chromium", file=sys.stderr)
        return 2
    if args.backend == "http" and args.screenshots:
        print("error: --screenshots needs --backend chromium", file=sys.stderr)
        return 2
    if args.backend == "chromium" and args.workers > 1:
        print("error: --backend chromium runs the episodes in this process (one browser, a context per env): "
              "drop --workers", file=sys.stderr)  # fmt: skip
        return 2
    if args.screenshots and not args.out:
        print("error: --screenshots needs --out DIR (they are saved under DIR/screenshots)", file=sys.stderr)
        return 2
    policy, prompt = _policy(args.agent, args)
    sampling = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                              seed=args.seed if args.temperature > 0 else None)  # a seed per episode step (step_sampling)
    out = Path(args.out) if args.out else None
    env_config = EnvConfig(max_steps=args.max_steps, max_revisits=args.max_revisits)
    backend, extra = None, {"agent": args.agent, "split": args.split, "seed": args.seed}
    if args.backend == "chromium":
        from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig

        shots = str(out / "screenshots") if args.screenshots else None
        browser = ChromiumConfig(executable=args.chromium, screenshot_dir=shots, max_sessions=max(8, args.envs))
        backend = ChromiumBackend(base_url=args.base_url, config=browser)  # a browser context per env
        env_config = replace(env_config, base_url=backend.base_url)
        extra["backend"] = "chromium"  # (an http eval's config stays as it was: its episodes resume)
    with _workers(args, policy) as workers:
        summary, _ = run_eval_llm(
            tasks, policy, prompt, sampling, n_envs=args.envs, env_config=env_config, out_dir=out,
            progress=not args.no_progress, extra_config=extra, workers=workers, backend=backend,
        )  # fmt: skip
    print(format_table(summary, title=f"agent={args.agent} split={args.split}"))
    print(format_taxonomy(summary["errors"]))
    print("by oracle steps: " + "  ".join(f"{b}: {v['success_rate'] * 100:.1f}% ({v['episodes']})"
                                          for b, v in summary["per_step_bucket"].items()))  # fmt: skip
    if out:
        print(f"episodes: {out / 'episodes.jsonl'}  summary: {out / 'summary.json'}")
    if args.json:
        print(json.dumps(summary))
    return 0


@contextlib.contextmanager
def _workers(args: argparse.Namespace, policy):
    """`--workers N` (N > 1): the `Workers` to spread episodes over; for a local checkpoint, the
    model is served on a loopback port of this process for the time of the run (workers share it)."""
    if args.workers <= 1:
        yield None
        return
    from webrl.rollout.workers import Endpoint, Workers

    executor, address = ("ray", None if args.ray == "local" else args.ray) if args.ray else ("process", None)
    if args.agent.startswith(("http://", "https://")):
        yield Workers(args.workers, Endpoint(args.agent, policy.model, args.tokenizer), executor, address)
        return
    if address:
        raise SystemExit("error: --ray ADDRESS with a local checkpoint: its nodes cannot reach a loopback server; "
                         "serve it where they can (webrl serve-model PATH --host HOST) and pass --agent http://HOST:PORT/v1")
    from webrl.rollout.workers import served_workers

    with served_workers(policy, args.workers, str(Path(args.agent).resolve()), executor) as workers:
        yield workers


def add_eval_args(e: argparse.ArgumentParser) -> None:
    g = e.add_argument_group("LLM agents (--agent PATH or http://HOST:PORT/v1)")
    g.add_argument("--envs", type=positive_int, default=16, help="episodes in flight (one batched generate per round)")
    g.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    g.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass")
    g.add_argument("--max-new-tokens", type=int, default=128, help="cap on a response's tokens")
    g.add_argument("--workers", type=int, default=1,
                   help="worker processes, each with its own sites and --envs episodes in flight, sharing one "
                        "model: the URL's, or a local checkpoint served on a loopback port for the run")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run the --workers as Ray tasks: a local Ray runtime, or the cluster at ADDRESS "
                        "(pip install 'webrl[dist]'; its nodes need webrl and a route to the model's URL)")
    add_policy_args(g)


def add_policy_args(p) -> None:
    """The flags `_policy` reads: a local checkpoint's batching and threads, a URL's model and tokenizer."""
    p.add_argument("--max-batch-tokens", type=int, default=16384, help="local: padded tokens per forward pass")
    p.add_argument("--threads", type=int, default=0, help="local: torch threads (0 = default)")
    p.add_argument("--model", default=None, help="URL: model id (default: the first served)")
    p.add_argument("--tokenizer", default=None, help="URL: local copy of the model for its tokenizer and prompt config")


def cmd_sft(args: argparse.Namespace) -> int:
    import torch

    from webrl.models.config import preset
    from webrl.rl.sft import SFT_PRESETS, train_sft

    if args.preset not in SFT_PRESETS:
        raise ValueError(f"--preset {args.preset!r}: choose one of {', '.join(SFT_PRESETS)}")
    over = {k: v for k, v in {"base": args.base, "threads": args.threads}.items() if v}
    model_cfg = preset(args.preset, **over)
    if args.top_layers is not None:
        if model_cfg.lora is None:
            print(f"error: --top-layers needs a LoRA preset; {args.preset!r} fine-tunes all weights", file=sys.stderr)
            return 2
        model_cfg = replace(model_cfg, lora=replace(model_cfg.lora, top_layers=args.top_layers))
    if model_cfg.threads:
        torch.set_num_threads(model_cfg.threads)
    fields = {"minutes": args.minutes, "max_steps": args.max_steps, "epochs": args.epochs, "lr": args.lr,
              "limit": args.limit, "sites": args.sites, "split": args.split, "clock": args.clock,
              "seed": args.seed, "per_family": args.per_family, "frozen_cache_gb": args.frozen_cache_gb,
              "detach_context": args.detach_context, "focal_gamma": args.focal_gamma}  # fmt: skip
    cfg = replace(SFT_PRESETS[args.preset], **{k: v for k, v in fields.items() if v is not None})
    prompt = {"max_prompt_tokens": args.max_prompt_tokens, "max_rounds": args.max_rounds, "recap": args.recap}
    cfg = replace(cfg, prompt=replace(cfg.prompt, **{k: v for k, v in prompt.items() if v is not None}))
    check_sft_tasks(cfg)  # before the run folder is claimed
    line = train_sft(cfg, model_cfg, args.out, progress=not args.no_progress)
    print(json.dumps(line))
    print(f"final checkpoint: {Path(args.out) / 'final'}")
    return 0


def check_sft_tasks(cfg) -> None:
    """ValueError unless `--split` loads, `--sites` names sites of it, and some task is left to train on."""
    from webrl.rl.sft import select_tasks
    from webrl.tasks.splits import load_eval_tasks

    pool = load_eval_tasks(cfg.split)
    known = {t.site for t in pool}
    if cfg.sites and (unknown := sorted(set(cfg.sites.split(",")) - known)):
        raise ValueError(f"--sites {','.join(unknown)}: no task of {cfg.split} is on that site; its sites: "
                         f"{', '.join(sorted(known))}")  # fmt: skip
    if cfg.limit is not None and cfg.limit < 0:
        raise ValueError(f"--limit must be >= 0, got {cfg.limit}")
    if not select_tasks(pool, cfg):
        raise ValueError(f"--split {cfg.split}: no task to train on (after --sites / --per-family / --limit)")


def cmd_serve_model(args: argparse.Namespace) -> int:
    from webrl.agent.local_policy import LocalPolicy
    from webrl.agent.server import ModelServer, ServerLimits
    from webrl.models.build import check_model_path

    check_model_path(args.path, "serve-model PATH")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    policy = LocalPolicy.from_checkpoint(args.path, max_batch_tokens=args.max_batch_tokens)
    limits = ServerLimits(max_tokens=args.max_tokens_cap, max_n=args.max_n, max_batch=args.max_batch)
    server = ModelServer(policy, args.name or args.path, args.host, args.port, limits)
    print(f"serving {args.path} as {args.name or args.path!r} on {server.url} (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def cmd_bench_model(args: argparse.Namespace) -> int:
    from webrl.eval.model_bench import bench_model

    result = bench_model(args)
    text = json.dumps(result)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(text)
    return 0


def cmd_eval_demos(args: argparse.Namespace) -> int:
    from webrl.eval.demo_match import run_demo_match
    from webrl.files import load_jsonl

    path = Path(args.demos)
    if not path.is_file():
        print(f"error: --demos {path} not found (an SFT run folder's demos.jsonl)", file=sys.stderr)
        return 2
    demos = load_jsonl(path)
    bad = [i for i, d in enumerate(demos) if not {"task_id", "family", "intent", "steps"} <= d.keys()]
    if bad:
        print(f"error: {path} line {bad[0] + 1} is not a demonstration (needs task_id, family, intent, steps)",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.tasks:
        try:
            wanted = {str(t["task_id"]) for t in json.loads(Path(args.tasks).read_text())}
        except (OSError, ValueError, TypeError, KeyError) as e:
            print(f"error: --tasks {args.tasks}: not a JSON list of tasks with task_id ({e})", file=sys.stderr)
            return 2
        demos = [d for d in demos if str(d["task_id"]) in wanted]
        if not demos:
            print(f"error: no demonstration in {path} is for a task of {args.tasks}", file=sys.stderr)
            return 2
    demos = demos[: args.limit] if args.limit else demos
    policy, prompt = _policy(args.agent, args)
    rep = {"agent": args.agent, "demos": str(path), "tasks": len(demos),
           **run_demo_match(policy, demos, prompt, progress=not args.no_progress)}  # fmt: skip
    if args.fit:  # an endpoint scores through echo (OpenAIPolicy.score)
        from webrl.eval.demo_match import fit_report

        rep["fit"] = fit_report(policy, demos, prompt, progress=not args.no_progress)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rep, indent=1) + "\n")
    steps = " ".join(f"{k}:{v['match']:.2f}({v['steps']})" for k, v in rep["per_step"].items())
    print(f"matched {rep['overall']['match']:.3f} of {rep['overall']['steps']} demonstration steps; by step: {steps}")
    if "fit" in rep:
        f = rep["fit"]
        share = "-" if f["worst_token_share"] is None else f"{f['worst_token_share']:.2f}"
        print(f"teacher-forced: NLL {f['mean_token_nll']:.4f}/token, {f['mean_response_nll']:.3f}/response; "
              f"{f['p_response_over_half']:.3f} of responses with P > 0.5; the worst token carries "
              f"{share} of a response's NLL")  # fmt: skip
    return 0


def add_commands(sub, bench_sub) -> None:
    """Register sft, eval-demos, serve-model and bench model on the `webrl` parser."""
    s = sub.add_parser("sft", help="supervised fine-tuning on the train split's oracle demonstrations")
    s.add_argument("--preset", default="cpu", help="cpu-tiny | cpu (SmolLM2 + LoRA) | gpu")
    s.add_argument("--out", required=True, help="run folder (rerun the same command to resume)")
    s.add_argument("--base", default=None, help="another base model: a local HF directory or a hub id")
    s.add_argument("--minutes", type=float, default=None, help="training time budget in minutes (default: none; the cpu preset trains 2 epochs); it becomes "
                   "a step count at the end of warmup (OUT/plan.json): --minutes 0 --max-steps N reproduces the run")
    s.add_argument("--clock", default=None, help='"wall" or "cpu" (CPU seconds / threads) for --minutes')
    s.add_argument("--max-steps", type=int, default=None, help="optimizer steps (default: from epochs)")
    s.add_argument("--epochs", type=float, default=None, help="passes over the examples")
    s.add_argument("--lr", type=float, default=None, help="peak learning rate")
    s.add_argument("--split", default=None, help="demonstration tasks: train | FILE.json")
    s.add_argument("--sites", default=None, help="comma-separated site filter")
    s.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    s.add_argument("--per-family", type=int, default=None,
                   help="only the first N tasks of each family (more epochs per family in the same time)")
    s.add_argument("--seed", type=int, default=None, help="data order seed")
    s.add_argument("--top-layers", type=int, default=None, help="LoRA on the top N decoder layers only (0 = all; cpu 12)")
    s.add_argument("--frozen-cache-gb", type=float, default=None,
                   help="memory for caching the frozen bottom layers' output per example, so later epochs skip "
                        "them (default 4; 0 = off)")
    s.add_argument("--detach-context", action=argparse.BooleanOptionalAction, default=None,
                   help="backpropagate through the response tokens only, the context run without autograd "
                        "(same loss, cheaper steps; needs --top-layers > 0)")
    s.add_argument("--focal-gamma", type=float, default=None,
                   help="weight each response token's loss by (1 - p)^gamma, moving the gradient to the tokens "
                        "that decide the action (default 0: plain mean NLL)")
    s.add_argument("--max-prompt-tokens", type=int, default=None, help="prompt token budget (cpu 1024)")
    s.add_argument("--max-rounds", type=int, default=None, help="past rounds kept in the prompt (cpu 6; 0 = all)")
    s.add_argument("--recap", action=argparse.BooleanOptionalAction, default=None,
                   help="a 'Done so far:' line of the past actions after the repeated intent (off in the presets)")
    s.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    s.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    s.set_defaults(func=cmd_sft)

    m = sub.add_parser("eval-demos", help="greedy on demonstration steps' own prompts: does the actor reproduce them?")
    m.add_argument("--agent", required=True, help="checkpoint folder or OpenAI-compatible URL")
    m.add_argument("--demos", required=True, help="demonstrations JSONL (an SFT run folder's demos.jsonl)")
    m.add_argument("--tasks", default=None, help="only the demonstrations of these tasks (e.g. an SFT run's trained_tasks.json)")
    m.add_argument("--limit", type=int, default=None, help="only the first N demonstrations")
    m.add_argument("--fit", action=argparse.BooleanOptionalAction, default=True,
                   help="also score the demonstrated responses (teacher forcing): NLL per token and per response "
                        "(an endpoint agent: through echo with logprobs, as vLLM and serve-model offer)")
    m.add_argument("--out", default=None, help="write the report JSON here")
    add_policy_args(m)
    m.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    m.set_defaults(func=cmd_eval_demos)

    v = sub.add_parser("serve-model", help="OpenAI-compatible /v1/completions for a checkpoint")
    v.add_argument("path", help="checkpoint folder (ours or any HF causal LM) or hub id")
    v.add_argument("--host", default="127.0.0.1", help="bind address (keep it on loopback unless you mean it)")
    v.add_argument("--port", type=int, default=8000, help="port (0 = any free port)")
    v.add_argument("--name", default=None, help="model id to serve under (default: the path)")
    v.add_argument("--max-batch", type=int, default=64, help="prompts generated together across requests")
    v.add_argument("--max-batch-tokens", type=int, default=16384, help="padded tokens per forward pass")
    v.add_argument("--max-tokens-cap", type=int, default=512, help="largest max_tokens accepted")
    v.add_argument("--max-n", type=positive_int, default=8, help="largest n accepted")
    v.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    v.set_defaults(func=cmd_serve_model)

    bm = bench_sub.add_parser("model", help="model throughput: SFT tokens/s vs bare loop, padding, batching, FLOP/s")
    bm.add_argument("--checkpoint", default=None, help="checkpoint to bench (default: a fresh --preset model)")
    bm.add_argument("--preset", default="cpu", help="model preset when no checkpoint is given")
    bm.add_argument("--split", default="test", help="tasks whose demonstrations make the batches")
    bm.add_argument("--tasks", type=positive_int, default=16, help="how many tasks to use")
    bm.add_argument("--train-steps", type=int, default=3, help="timed training steps per loop")
    bm.add_argument("--batches", default="1,16", help="agent batch sizes to time (envs in flight)")
    bm.add_argument("--parts", default="sft,prefill,agent", help="which measurements: sft,prefill,agent")
    bm.add_argument("--eval-split", default=None, help="also time a full eval of this split (e.g. test)")
    bm.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    bm.add_argument("--out", default=None, help="also write the JSON here")
    bm.set_defaults(func=cmd_bench_model)
