"""`webrl train` (the WebRL phase loop, rl/loop.py), `webrl report` (eval/report.py) and `webrl archive`
(eval/archive.py)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from webrl.cli.argtypes import positive_int
from webrl.files import read_json


def loop_config(args: argparse.Namespace):
    """The `LoopConfig` of a new run: the preset, then the flags given. Raises ValueError on a bad
    preset or value (the message names the field)."""
    from webrl.rl.loop_config import LOOP_PRESETS, LOOP_TRAIN, LoopConfig

    name = args.preset or "cpu"
    if name not in LOOP_PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(LOOP_PRESETS)}")
    fields = dict(LOOP_PRESETS[name])
    for key, value in given_fields(args).items():
        if key.startswith("train."):  # a field of the actor's TrainConfig
            fields["train"] = replace(fields.get("train", LOOP_TRAIN), **{key.removeprefix("train."): value})
        else:
            fields[key] = value
    return LoopConfig(**fields)


def given_fields(args: argparse.Namespace) -> dict:
    """The LoopConfig fields the command line sets explicitly (`train.X`: a field of its actor's
    TrainConfig); everything else comes from the preset."""
    given = {"init": args.init, "orm": args.orm, "demos": args.demos, "phases": args.phases,
             "tasks_per_phase": args.tasks_per_phase, "rollouts_per_task": args.rollouts_per_task,
             "train_tasks": args.train_tasks, "reward": args.reward, "actor_loss": args.actor_loss,
             "method": args.method, "beta": args.beta, "lam": args.lam, "gamma": args.gamma,
             "orm_threshold": args.orm_threshold, "generator": args.generator, "fill": args.curriculum_fill,
             "feasibility_judge": args.feasibility_judge,
             "rephrase_share": args.rephrase_share, "constraint_share": args.constraint_share,
             "critic_backbone": args.critic_backbone, "critic_tune_epochs": args.critic_tune_epochs,
             "eval_subset": args.eval_subset, "eval_split": args.eval_split, "seed": args.seed, "envs": args.envs,
             "temperature": args.temperature, "replay_sample": args.replay_sample,
             "replay_ratio": args.replay_ratio, "workers": args.workers,
             "executor": "ray" if args.ray else None, "train.lr": args.lr, "train.epochs": args.actor_epochs}  # fmt: skip
    fields = {k: v for k, v in given.items() if v is not None}
    if args.ppl_window is not None:  # "inf" as 1e9: train_config.json stays standard JSON
        fields["ppl_lo"], fields["ppl_hi"] = (min(x, 1e9) for x in args.ppl_window)
    if args.no_kl:
        fields["actor_loss"] = "sft"
    if args.critic_replay:
        fields["critic_replay"] = True
    for flag, key in (("no_replay", "replay"), ("no_curriculum", "curriculum"), ("no_ppl_filter", "ppl_filter"),
                      ("no_final_eval", "final_eval")):  # fmt: skip
        if getattr(args, flag):
            fields[key] = False
    return fields


def check_inputs(cfg) -> None:
    """The files a new run reads, checked before it claims its folder (a run that failed on a typo
    would leave a train_config.json behind that refuses the corrected command): ValueError."""
    from webrl.models.build import check_model_path, is_lora_checkpoint

    check_model_path(cfg.init, "--init")
    if cfg.critic_backbone == "lora" and not is_lora_checkpoint(cfg.init):
        raise ValueError(f"--critic-backbone lora trains a LoRA adapter beside the actor's, but --init {cfg.init} "
                         "is not a LoRA checkpoint (a fully fine-tuned model): use --critic-backbone head")
    if cfg.orm:
        check_model_path(cfg.orm, "--orm")
    if cfg.demos and not Path(cfg.demos).is_file():
        raise ValueError(f"--demos {cfg.demos}: no such file (the SFT run's demos.jsonl, e.g. runs/sft/demos.jsonl)")


def resume_conflicts(args: argparse.Namespace, cfg) -> list[str]:
    """The settings given on a `--resume` command line that differ from the run's saved ones
    (`--resume` continues with the saved settings: a flag that would change them is an error)."""
    from webrl.rl.loop_config import LOOP_PRESETS

    out = []
    given = given_fields(args)
    for key, value in given.items():
        saved = getattr(cfg.train, key.removeprefix("train.")) if key.startswith("train.") else getattr(cfg, key)
        if saved != value:
            out.append(f"{key}={value!r} (the run has {saved!r})")
    if args.preset is not None:  # a preset given: its settings that no other flag overrides
        if args.preset not in LOOP_PRESETS:
            return [*out, f"preset={args.preset!r} (unknown; choose one of {', '.join(LOOP_PRESETS)})"]
        tuned = {k.removeprefix("train."): v for k, v in given.items() if k.startswith("train.")}
        differ = [k for k, v in LOOP_PRESETS[args.preset].items() if k not in given
                  and getattr(cfg, k) != (replace(v, **tuned) if k == "train" else v)]  # fmt: skip
        if differ:
            out.append(f"preset={args.preset!r} (its {', '.join(differ)} differ from the run's; "
                       "--resume needs no --preset)")
    return out


def cmd_train(args: argparse.Namespace) -> int:
    from webrl.rl.loop import LoopConfig, train

    run = Path(args.run)
    if args.no_kl and args.actor_loss not in (None, "sft"):
        print(f"error: --no-kl trains the SFT loss on the buffer; it contradicts --actor-loss {args.actor_loss}",
              file=sys.stderr)  # fmt: skip
        return 2
    saved = run / "train_config.json"
    if saved.exists():
        if not args.resume:
            print(f"error: {run} already holds a run; pass --resume to continue it (or pick a new --run)",
                  file=sys.stderr)  # fmt: skip
            return 2
        cfg = LoopConfig.from_json(read_json(saved))
        if bad := resume_conflicts(args, cfg):
            print(f"error: --resume continues {run} with the settings in {saved}; these flags would change them: "
                  f"{'; '.join(bad)}. Drop them, or start a new --run", file=sys.stderr)  # fmt: skip
            return 2
    else:
        try:
            cfg = loop_config(args)
            check_inputs(cfg)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if args.start_eval and not (run / "phase-000" / "eval").exists():
        from webrl.cli.start_eval import START_KEYS, share_start_eval, start_eval_source

        src = start_eval_source([Path(p) for p in args.start_eval], cfg)
        if src is None:
            print(f"note: no --start-eval run has a finished start eval with this run's {', '.join(START_KEYS)} "
                  "and tasks; evaluating the starting actor here", flush=True)  # fmt: skip
        elif share_start_eval(src, run):
            print(f"phase 0: the starting actor's eval is {src}'s", flush=True)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    line = train(cfg, run, progress=not args.no_progress)
    print(json.dumps(line))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from webrl.eval.report import build_report

    try:
        out = build_report(args.runs, args.out, args.orm_eval or [], args.png_dir)
    except ValueError as e:  # a path that is neither a run nor a study folder
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out} and {out.with_name(out.stem + '-viewer.html')}")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from webrl.eval.archive import archive

    try:
        m = archive(args.src, args.out, int(args.max_mb * 2**20))
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"archived {args.src} -> {args.out}: {m['files']} files, {m['bytes'] / 2**20:.2f} MB"
          + "".join(f"\n  left out {x['path']} ({x['bytes'] / 2**20:.1f} MB > --max-mb)" for x in m["left_out"]))
    return 0


def add_commands(sub) -> None:
    t = sub.add_parser("train", help="the WebRL phase loop: curriculum, rollouts, ORM, critic, actor, eval")
    t.add_argument("--run", required=True, help="run folder (everything the run makes goes here)")
    t.add_argument("--resume", action="store_true", help="continue the run in --run from its last finished stage")
    t.add_argument("--start-eval", action="append", default=[], metavar="RUN",
                   help="a finished `webrl train` run whose eval of the same starting actor (same init, eval "
                        "split, step limit, envs and tasks) this run reuses instead of running its own; repeatable")
    t.add_argument("--preset", default=None, help="cpu-tiny | cpu | gpu (sizes of phases and evals; default cpu)")
    t.add_argument("--init", default=None, help="starting actor checkpoint (e.g. runs/sft/final)")
    t.add_argument("--orm", default=None, help="ORM checkpoint (e.g. runs/orm/model/final)")
    t.add_argument("--demos", default=None, help="SFT demonstrations JSONL, replayed as phase 0")
    t.add_argument("--phases", type=int, default=None, help="number of phases (preset: 3; cpu-tiny 2)")
    t.add_argument("--tasks-per-phase", type=int, default=None, help="tasks rolled out per phase")
    t.add_argument("--rollouts-per-task", type=int, default=None,
                   help="episodes sampled per task and phase (default 1)")
    t.add_argument("--train-tasks", default=None, metavar="FILE",
                   help="task file (.json/.jsonl) rolled out instead of the train split in phase 1 and with "
                        "--no-curriculum; may be the eval split itself (does the update learn its own tasks?)")
    t.add_argument("--temperature", type=float, default=None, help="rollout sampling temperature (preset: cpu 0.5, gpu 1.0)")
    t.add_argument("--reward", default=None, help="orm (default) | oracle (ground-truth evaluators, an ablation)")
    t.add_argument("--orm-threshold", type=float, default=None,
                   help="reward = 1 iff the ORM's P(success) > this (preset: cpu 0.7; gpu 0.5 = P(YES) > P(NO))")
    t.add_argument("--method", default=None,
                   help="webrl (default) | filtered_bc | awr | digirl | sft (continued SFT): baselines, same budget")
    t.add_argument("--actor-loss", default=None, help="eq6 | released | sft | awr (default: the method's)")
    t.add_argument("--beta", type=float, default=None, help="β of eq. 6")
    t.add_argument("--lam", type=float, default=None, help="λ of eq. 9 (0 = Monte-Carlo advantages r_T - V(s_t))")
    t.add_argument("--gamma", type=float, default=None,
                   help="discount in eq. 9 (default 1: the paper's eq. 9 has none; the released code used 0.9)")
    t.add_argument("--lr", type=float, default=None, help="actor learning rate (preset: 2e-4 on cpu; also the critic adapter's with "
                        "--critic-backbone lora)")
    t.add_argument("--actor-epochs", type=float, default=None,
                   help="epochs of the actor update over each phase's examples (default 1)")
    t.add_argument("--no-kl", action="store_true", help="ablation: SFT on the buffer instead of eq. 6")
    t.add_argument("--no-replay", action="store_true", help="ablation: no replay buffer")
    t.add_argument("--no-curriculum", action="store_true", help="ablation: train-split tasks only")
    t.add_argument("--no-ppl-filter", action="store_true", help="ablation: replay without the perplexity window")
    t.add_argument("--ppl-window", nargs=2, type=float, metavar=("LO", "HI"), default=None,
                   help="the replay's perplexity window (default 1/0.95 2; e.g. 1 1.0526 keeps the confident "
                        "steps, 2 inf the unlikely ones)")  # fmt: skip
    t.add_argument("--replay-sample", type=float, default=None,
                   help="replay steps scored per new step before the perplexity filter (preset: cpu 1, else 4)")
    t.add_argument("--replay-ratio", type=float, default=None,
                   help="replay steps kept: at most this x the phase's new steps (default 2, the paper's)")
    t.add_argument("--critic-replay", action="store_true",
                   help="fit the value head on the kept replay steps too (target 1), not on this phase's rollouts only")
    t.add_argument("--critic-backbone", default=None, choices=["head", "lora"],
                   help="head (default): fit the value head on π_ref's cached features; lora: then train a LoRA "
                        "adapter of the backbone with the head (eq. 8 through the backbone; a LoRA actor only)")
    t.add_argument("--critic-tune-epochs", type=positive_int, default=None, metavar="N",
                   help="with --critic-backbone lora: passes of the backbone+head training (default 1)")
    t.add_argument("--generator", default=None, help="offline (default) | http://HOST:PORT/v1 (LLM generator)")
    t.add_argument("--feasibility-judge", default=None, metavar="URL",
                   help="with --generator URL: also ask this OpenAI-compatible endpoint (it may be the same) whether "
                        "each generated task can be done on its site; only a clear YES keeps it")
    t.add_argument("--rephrase-share", type=float, default=None, metavar="P",
                   help="offline curriculum: re-phrase this share of the generated tasks (same task, other words; "
                        "default 0)")
    t.add_argument("--constraint-share", type=float, default=None, metavar="P",
                   help="offline curriculum: for this share of the seeds whose family has a partner one constraint "
                        "narrower or broader (rl/curriculum.py CONSTRAINT_PAIRS), generate from the partner (default 0)")
    t.add_argument("--curriculum-fill", default=None, metavar="nearest|train",
                   help="when too few generated tasks pass the critic window: top the phase up with the other "
                        "candidates nearest the window (nearest, default) or with unused train-split tasks (train)")
    t.add_argument("--eval-split", default=None, help="split of the per-phase and final evals: test | train | a task JSON/JSONL file (default test)")
    t.add_argument("--eval-subset", type=int, default=None, help="per-phase eval tasks (0 = the whole split)")
    t.add_argument("--no-final-eval", action="store_true", help="skip the whole-split eval of the final actor")
    t.add_argument("--envs", type=positive_int, default=None, help="parallel envs")
    t.add_argument("--workers", type=int, default=None,
                   help="worker processes for rollouts and evals (--envs each), sharing the actor served on a "
                        "loopback port (default 1: all in this process)")
    t.add_argument("--ray", action="store_true", help="run the --workers as tasks on a local Ray runtime")
    t.add_argument("--seed", type=int, default=None, help="seed")
    t.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    t.add_argument("--no-progress", action="store_true", help="hide progress bars")
    t.set_defaults(func=cmd_train)

    r = sub.add_parser("report", help="one HTML page with plots from run or study folders, plus a trajectory viewer")
    r.add_argument("runs", nargs="+", help="`webrl train` run folders, `webrl eval --out` folders, or `webrl study` folders (all their runs)")
    r.add_argument("--out", default="report.html", help="output HTML (the viewer goes next to it: NAME-viewer.html)")
    r.add_argument("--orm-eval", action="append", help="an `orm eval` orm_eval.json to include (repeatable)")
    r.add_argument("--png-dir", default=None, help="also write every plot as a PNG file in this folder")
    r.set_defaults(func=cmd_report)

    a = sub.add_parser("archive", help="a slim copy of a run, study or demo folder (no weights, no page text) "
                                       "that tables and reports regenerate from; small enough to commit")
    a.add_argument("src", help="a run, study or demo folder")
    a.add_argument("--out", required=True, help="archive folder (outside SRC; archiving again refreshes it)")
    a.add_argument("--max-mb", type=float, default=4.0, help="leave out files larger than this after slimming")
    a.set_defaults(func=cmd_archive)
