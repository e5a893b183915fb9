"""`webrl orm data|train|eval`: the outcome reward model's data, training and measurement."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from webrl.cli.argtypes import positive_int
from webrl.cli.model_cmds import add_policy_args
from webrl.files import read_text_or_gz, write_json_atomic
from webrl.orm.data import OPT_IN, SCRIPTED
from webrl.orm.prompt import LAYOUTS

BEHAVIOURS = (*SCRIPTED, *OPT_IN, "policy")


def _tasks(split: str, sites: str | None, limit: int | None):
    from webrl.tasks.schema import load_tasks
    from webrl.tasks.splits import load_split

    tasks = load_tasks(split) if split.endswith((".json", ".jsonl")) else load_split(split)
    if sites:
        tasks = [t for t in tasks if t.site in set(sites.split(","))]
    return tasks[:limit] if limit else tasks


def cmd_orm_data(args: argparse.Namespace) -> int:
    from webrl.agent.prompt import load_prompt_config
    from webrl.env.web_env import WebEnv
    from webrl.files import write_jsonl_atomic
    from webrl.orm.data import balance, dedupe, scripted_trajectories, stats
    from webrl.rl.sft import SFT_PRESETS

    behaviours = [b.strip() for b in args.behaviours.split(",") if b.strip()]
    bad = [b for b in behaviours if b not in BEHAVIOURS]
    if bad:
        print(f"error: unknown behaviour(s) {bad}; choose from {', '.join(BEHAVIOURS)}", file=sys.stderr)
        return 2
    if "policy" in behaviours and not args.policy:
        print("error: behaviour 'policy' needs --policy CHECKPOINT|URL (e.g. runs/sft/final)", file=sys.stderr)
        return 2
    tasks = _tasks(args.split, args.sites, args.limit)
    if args.policy and not args.policy.startswith(("http://", "https://")):
        from webrl.models.build import check_model_path

        check_model_path(args.policy, "--policy")
    prompt = load_prompt_config(args.policy) if args.policy else SFT_PRESETS["cpu"].prompt
    t0 = time.perf_counter()
    env = WebEnv()
    trajs = scripted_trajectories(tasks, env, prompt, [b for b in behaviours if b in SCRIPTED + OPT_IN], args.seed,
                                  progress=not args.no_progress)  # fmt: skip
    env.close()
    if "policy" in behaviours:
        trajs += _policy_trajectories(args, tasks)
    n_raw = len(trajs)
    trajs = dedupe(trajs)
    n_unique = len(trajs)
    if args.balance:
        trajs = balance(trajs, args.seed)
    out = Path(args.out)
    info = {"split": args.split, "tasks": len(tasks), "behaviours": behaviours, "raw": n_raw, "unique": n_unique,
            "balanced": args.balance, "seconds": round(time.perf_counter() - t0, 1), **stats(trajs)}  # fmt: skip
    write_json_atomic(out.with_suffix(".stats.json"), info)
    write_jsonl_atomic(out, trajs)
    print(json.dumps({k: info[k] for k in ("tasks", "raw", "unique", "total", "positive", "seconds")}))
    print(f"wrote {out} and {out.with_suffix('.stats.json')}")
    return 0


def _policy_trajectories(args: argparse.Namespace, tasks) -> list[dict]:
    from webrl.agent.local_policy import SamplingParams
    from webrl.cli.model_cmds import _policy
    from webrl.env.web_env import EnvConfig
    from webrl.orm.data import from_episodes
    from webrl.rollout.llm import run_eval_llm
    from webrl.tasks.splits import stratified

    policy, prompt = _policy(args.policy, args)
    sample = stratified(tasks, args.policy_tasks, args.seed)
    out = []
    for temp in (0.0, 1.0):
        _, records = run_eval_llm(sample, policy, prompt, SamplingParams(temperature=temp), n_envs=args.envs,
                                  env_config=EnvConfig(max_steps=args.max_steps), progress=not args.no_progress)  # fmt: skip
        out += from_episodes(records, f"policy_t{temp:g}")
    return out


def cmd_orm_train(args: argparse.Namespace) -> int:
    import torch

    from webrl.files import load_jsonl
    from webrl.models.config import preset
    from webrl.orm.train import ORM_PRESETS, train_orm
    from webrl.tasks.splits import load_split

    test_ids = {str(t.task_id) for t in load_split("test")}
    rows = load_jsonl(Path(args.data)) if Path(args.data).is_file() else []
    if rows:
        from webrl.orm.train import check_trajectories

        check_trajectories(rows, args.data)  # a line that is no trajectory: named, before the leak check
    leaked = {str(t["task_id"]) for t in rows} & test_ids
    if leaked:
        print(f"error: {args.data} holds trajectories of {len(leaked)} test-split task(s) (e.g. {sorted(leaked)[0]}); "
              "train the ORM on train-split data only", file=sys.stderr)  # fmt: skip
        return 2
    fields = {"minutes": args.minutes, "max_steps": args.max_steps, "epochs": args.epochs, "lr": args.lr,
              "clock": args.clock, "seed": args.seed, "data": args.data}  # fmt: skip
    fields = {k: v for k, v in fields.items() if v is not None}
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.kind == "encoder":
        from webrl.orm.encoder import ENCODER_PRESETS, train_encoder_orm

        if args.layout:
            print("error: --layout is for the LM judge (--kind lm); the encoder has one input layout", file=sys.stderr)
            return 2
        enc = {k: v for k, v in {"base": args.base, "freeze_layers": args.freeze_layers, "bf16": args.bf16,
                                 "pool": args.pool, "max_tokens": args.max_tokens,
                                 "history_tokens": args.history_tokens, "state": args.state,
                                 "missing": args.missing, "short_actions": args.short_actions,
                                 "skip_easy": args.skip_easy, "skip_keep": args.skip_keep,
                                 "chrome_share": args.chrome_share, "page_ids": args.page_ids}.items()
               if v is not None}  # fmt: skip
        if args.max_tokens is not None:  # batches and the sequence cap follow the pair length
            enc["max_seq_tokens"] = args.max_tokens
        cfg = replace(ENCODER_PRESETS[args.preset], **fields, **enc)
        line = train_encoder_orm(cfg, args.out, progress=not args.no_progress)
        print(json.dumps(line))
        print(f"final checkpoint: {Path(args.out) / 'final'}")
        return 0
    enc_only = (args.freeze_layers, args.bf16, args.pool, args.max_tokens, args.history_tokens, args.state,
                args.missing, args.short_actions, args.skip_easy, args.skip_keep, args.chrome_share,
                args.page_ids)
    if any(v is not None for v in enc_only):
        print("error: --freeze-layers, --bf16, --pool, --max-tokens, --history-tokens, --state, --missing, "
              "--short-actions, --skip-easy, --skip-keep, --chrome-share and --page-ids are for the encoder ORM (--kind encoder)", file=sys.stderr)  # fmt: skip
        return 2
    over = {k: v for k, v in {"base": args.base, "threads": args.threads}.items() if v}
    model_cfg = preset(args.preset, **over)
    cfg = replace(ORM_PRESETS[args.preset], **fields)
    if args.layout:
        cfg = replace(cfg, prompt=replace(cfg.prompt, layout=args.layout))
    line = train_orm(cfg, model_cfg, args.out, progress=not args.no_progress)
    print(json.dumps(line))
    print(f"final checkpoint: {Path(args.out) / 'final'}")
    return 0


def cmd_orm_eval(args: argparse.Namespace) -> int:
    from webrl.orm.metrics import format_report, report
    from webrl.orm.model import JudgeORM, load_orm
    from webrl.orm.train import check_trajectories

    if bool(args.orm) == bool(args.judge):
        print("error: give exactly one of --orm CHECKPOINT or --judge URL", file=sys.stderr)
        return 2
    if not 0.0 <= args.threshold < 1.0:
        print(f"error: --threshold must be in [0, 1), got {args.threshold}", file=sys.stderr)
        return 2
    if args.orm:
        from webrl.models.build import check_model_path

        check_model_path(args.orm, "--orm")
    trajs = []
    for f in args.data.split(","):
        text = read_text_or_gz(Path(f.removesuffix(".gz")))  # an archive's `episodes.jsonl.gz` too
        if text is None:
            print(f"error: --data: no file {f} (nor {f.removesuffix('.gz')}.gz)", file=sys.stderr)
            return 2
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as e:
            print(f"error: --data {f}: not JSONL ({e.msg}, line {e.lineno})", file=sys.stderr)
            return 2
        if rows and "steps" in rows[0] and "responses" not in rows[0]:  # episodes of `eval`/`train` rollouts
            from webrl.orm.data import from_episodes

            rows = from_episodes(rows, Path(f).parent.name)
        trajs += rows
    check_trajectories(trajs, args.data)
    if args.orm:
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        scorer = load_orm(args.orm)
    else:
        tok = None
        if args.tokenizer:
            from webrl.models.build import load_tokenizer

            tok = load_tokenizer(args.tokenizer)
        scorer = JudgeORM(args.judge, model=args.model, tokenizer=tok)
    t0 = time.perf_counter()
    probs = []
    from tqdm import tqdm

    for k in tqdm(range(0, len(trajs), args.batch), desc="judging", unit="batch", disable=args.no_progress):
        probs += scorer.prob_success(trajs[k : k + args.batch])
    seconds = time.perf_counter() - t0
    rep = report(probs, trajs, args.threshold)
    rep["throughput"] = {"trajectories": len(trajs), "seconds": round(seconds, 2),
                         "trajectories_per_s": round(len(trajs) / seconds, 2)}  # fmt: skip
    rep["scorer"] = args.orm or args.judge
    print(format_report(rep))
    print(json.dumps({"threshold": args.threshold, "accuracy": rep["overall"]["accuracy"], "false_positive_rate": rep["overall"]["false_positive_rate"],
                      "auc": rep["overall"]["auc"], **rep["throughput"]}))  # fmt: skip
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "orm_eval.json").write_text(json.dumps(rep, indent=1) + "\n")
        with (out / "scores.jsonl").open("w") as f:
            for t, p in zip(trajs, probs, strict=True):
                f.write(json.dumps({"task_id": t["task_id"], "behaviour": t.get("behaviour"), "label": t["label"],
                                    "p_success": round(p, 4)}) + "\n")  # fmt: skip
    return 0


def add_commands(sub) -> None:
    """Register `webrl orm data|train|eval`."""
    o = sub.add_parser("orm", help="outcome reward model: build data, train, evaluate")
    osub = o.add_subparsers(dest="orm_cmd", required=True)

    d = osub.add_parser("data", help="labelled trajectories (evaluator labels) from scripted and policy behaviours")
    d.add_argument("--out", required=True, help="output JSONL (a .stats.json is written next to it)")
    d.add_argument("--split", default="train", help="train | test | FILE.json (test: for `orm eval` only)")
    d.add_argument("--behaviours", default=",".join(SCRIPTED),
                   help=f"comma list of {', '.join(BEHAVIOURS)} (default: all but {', '.join(OPT_IN)} and policy)")
    d.add_argument("--policy", default=None, help="checkpoint or URL for the 'policy' behaviour (T=0 and T=1)")
    d.add_argument("--policy-tasks", type=int, default=48, help="site-stratified tasks the policy rolls out (0 = all)")
    d.add_argument("--max-steps", type=int, default=12, help="policy rollouts: steps before truncation")
    d.add_argument("--sites", default=None, help="comma-separated site filter")
    d.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    d.add_argument("--balance", action=argparse.BooleanOptionalAction, default=False,
                   help="downsample to equal successes and failures per site (default off: the natural "
                        "ratio trained a better ORM, AUC 0.89 vs 0.82; docs/results.md)")  # fmt: skip
    d.add_argument("--seed", type=int, default=0, help="perturbation seed")
    d.add_argument("--envs", type=positive_int, default=16, help="parallel envs for policy rollouts")
    add_policy_args(d)
    d.add_argument("--no-progress", action="store_true", help="hide progress bars")
    d.set_defaults(func=cmd_orm_data)

    t = osub.add_parser("train", help="fine-tune the ORM on `orm data` output (rerun to resume)")
    t.add_argument("--data", required=True, help="trajectories JSONL (train split only)")
    t.add_argument("--out", required=True, help="run folder")
    t.add_argument("--kind", default="lm", choices=("lm", "encoder"),
                   help="lm: the causal-LM judge (SmolLM2 + LoRA under --preset cpu) | "
                        "encoder: all-MiniLM-L6-v2 + a two-way head (orm/encoder.py)")  # fmt: skip
    t.add_argument("--preset", default="cpu", help="cpu-tiny | cpu | gpu (of the chosen --kind)")
    t.add_argument("--base", default=None, help="another backbone: a local HF directory (lm: or a hub id)")
    t.add_argument("--minutes", type=float, default=None, help="training time budget (preset: cpu 12 for lm, 10 for encoder); it becomes a step count at "
                   "the end of warmup (OUT/plan.json): --minutes 0 --max-steps N reproduces the run")
    t.add_argument("--clock", default=None, help='"wall" or "cpu" (CPU seconds / threads) for --minutes')
    t.add_argument("--max-steps", type=int, default=None, help="optimizer steps (default: from epochs)")
    t.add_argument("--epochs", type=float, default=None, help="passes over the examples")
    t.add_argument("--lr", type=float, default=None, help="peak learning rate")
    t.add_argument("--seed", type=int, default=None, help="data order seed")
    t.add_argument("--layout", default=None, choices=LAYOUTS,
                   help="prompt layout: paper (default) | near (page, actions, question with the intent)")
    t.add_argument("--freeze-layers", type=int, default=None,
                   help="encoder: bottom layers frozen, their output cached per example (preset: cpu 2)")
    t.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                   help="encoder: bf16 autocast while training (preset: cpu on)")
    t.add_argument("--pool", default=None, choices=("task", "pair"),
                   help="encoder: mean-pool segment A (task, default) or the whole pair")
    t.add_argument("--max-tokens", type=int, default=None,
                   help="encoder: pair length in tokens (preset: cpu 256, gpu 512)")
    t.add_argument("--history-tokens", type=int, default=None,
                   help="encoder: tokens for the task, evidence and actions (segment A; preset: cpu 128, gpu 160)")
    t.add_argument("--state", action=argparse.BooleanOptionalAction, default=None,
                   help="encoder: evidence lines on where the episode ended (site message, names in the title, "
                        "values typed, answer line, steps; cpu/gpu presets: on)")
    t.add_argument("--missing", action=argparse.BooleanOptionalAction, default=None,
                   help="encoder: an evidence line listing the task's words the final page does not show (cpu/gpu presets: on)")
    t.add_argument("--short-actions", action=argparse.BooleanOptionalAction, default=None,
                   help="encoder: actions in a few words ('Click [Add to cart]') instead of the raw responses")
    t.add_argument("--skip-easy", type=float, default=None, metavar="LOSS",
                   help="encoder: selective backprop, skip most examples whose last loss was under LOSS (0 = off)")
    t.add_argument("--skip-keep", type=float, default=None,
                   help="encoder: chance that an example under --skip-easy is trained on anyway (default 0.2)")
    t.add_argument("--chrome-share", type=float, default=None, metavar="SHARE",
                   help="encoder: drop each site's navigation lines (those on >= SHARE of its training pages) "
                        "from the page segment (0 = off)")
    t.add_argument("--page-ids", action=argparse.BooleanOptionalAction, default=None,
                   help="encoder: keep the element ids in the page segment ([Blue Mug](12); default on)")
    t.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    t.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    t.set_defaults(func=cmd_orm_train)

    e = osub.add_parser("eval", help="accuracy, precision, recall, F1, FPR, calibration per site")
    e.add_argument("--data", required=True,
                   help="held-out trajectories JSONL (e.g. `orm data --split test`), or episodes.jsonl of an "
                        "eval / rollout (labelled by their evaluator rewards; an archive's episodes.jsonl.gz too); "
                        "comma-separate several files")  # fmt: skip
    e.add_argument("--orm", default=None, help="ORM checkpoint (from `orm train`)")
    e.add_argument("--judge", default=None, help="or an OpenAI-compatible endpoint as the judge, http://HOST:PORT/v1")
    e.add_argument("--model", default=None, help="judge: model id (default: the first served)")
    e.add_argument("--tokenizer", default=None, help="judge: local copy of the model for its tokenizer")
    e.add_argument("--batch", type=int, default=64, help="trajectories per scoring call")
    e.add_argument("--threshold", type=float, default=0.5,
                   help="a positive is P(success) > this (0.5: the paper's rule; the cpu loop preset rewards > 0.7)")
    e.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    e.add_argument("--out", default=None, help="folder for orm_eval.json and scores.jsonl")
    e.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    e.set_defaults(func=cmd_orm_eval)
