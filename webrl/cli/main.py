"""`webrl` command line: one subcommand per job (see `webrl --help`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from webrl.cli.argtypes import nonneg_int, positive_int
from webrl.cli.demo_cmds import add_commands as add_demo_commands
from webrl.cli.model_cmds import add_commands, add_eval_args, is_llm_agent
from webrl.cli.orm_cmds import add_commands as add_orm_commands
from webrl.cli.study_cmds import add_commands as add_study_commands
from webrl.cli.train_cmds import add_commands as add_train_commands
from webrl.tasks.schema import TaskError


def _load_tasks(split: str, sites: str | None, limit: int | None):
    from webrl.tasks.schema import SITE_ALIASES, SITES, canonical_site, load_tasks
    from webrl.tasks.splits import load_split

    if limit is not None and limit < 0:
        raise ValueError(f"--limit must be >= 0 (0 = every task), got {limit}")
    tasks = load_tasks(split) if split.endswith((".json", ".jsonl")) else load_split(split)
    foreign = sorted({s for t in tasks for s in t.sites if canonical_site(s) not in SITES})
    if foreign:  # the command line runs the default world
        raise ValueError(f"{split}: tasks on site(s) {', '.join(foreign)}, which this world does not serve; its "
                         f"sites: {', '.join(SITES)} (or WebArena's names: {', '.join(SITE_ALIASES)})")  # fmt: skip
    if sites:
        wanted = {s.strip() for s in sites.split(",") if s.strip()}
        known = {t.site for t in tasks}
        if unknown := sorted(wanted - known):
            raise ValueError(f"--sites {','.join(unknown)}: no task of {split} is on that site; its sites: "
                             f"{', '.join(sorted(known))}")  # fmt: skip
        tasks = [t for t in tasks if t.site in wanted]
    return tasks[:limit] if limit else tasks


def _make_env(args: argparse.Namespace):
    """The WebEnv that `--backend` asks for (None, after a message, if it cannot be made)."""
    from webrl.env.web_env import EnvConfig, WebEnv
    from webrl.sites.world import WorldApp

    if args.backend == "http":
        if args.screenshots:
            print("error: --screenshots needs --backend chromium", file=sys.stderr)
            return None
        return WebEnv(EnvConfig(max_steps=args.max_steps, max_revisits=args.max_revisits))
    if args.backend != "chromium":
        print(f"error: unknown backend {args.backend!r}; use http or chromium", file=sys.stderr)
        return None
    from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig

    if args.screenshots and not args.out:
        print("error: --screenshots needs --out DIR (they are saved under DIR/screenshots)", file=sys.stderr)
        return None
    shots = str(Path(args.out) / "screenshots") if args.screenshots else None
    world = WorldApp()
    backend = ChromiumBackend(
        world, base_url=args.base_url, config=ChromiumConfig(executable=args.chromium, screenshot_dir=shots)
    )
    config = EnvConfig(max_steps=args.max_steps, max_revisits=args.max_revisits, base_url=backend.base_url)
    return WebEnv(config, world, backend=backend)


def cmd_eval(args: argparse.Namespace) -> int:
    from webrl.agent.policies import OracleAgent, RandomAgent
    from webrl.rollout.runner import run_eval
    from webrl.rollout.summary import format_table

    tasks = _load_tasks(args.split, args.sites, args.limit)
    if args.agent not in ("oracle", "random") and is_llm_agent(args.agent):
        from webrl.cli.model_cmds import eval_llm

        return eval_llm(args, tasks)
    if args.agent == "oracle":
        def make_agent():
            return OracleAgent()
    elif args.agent == "random":
        def make_agent():
            return RandomAgent(seed=args.seed)
    else:
        print(f"error: unknown agent {args.agent!r}; use oracle, random, a checkpoint PATH or http://HOST:PORT/v1",
              file=sys.stderr)  # fmt: skip
        return 2
    env = _make_env(args)
    if env is None:
        return 2
    out = Path(args.out) if args.out else None
    try:
        summary, _ = run_eval(
            tasks, make_agent, env, out, progress=not args.no_progress,
            extra_config={"agent": args.agent, "split": args.split, "seed": args.seed, "backend": args.backend},
        )  # fmt: skip
    finally:
        env.close()
    print(format_table(summary, title=f"agent={args.agent} split={args.split}"))
    if out:
        print(f"episodes: {out / 'episodes.jsonl'}  summary: {out / 'summary.json'}")
    if args.json:
        print(json.dumps(summary))
    return 0


def cmd_bench_replay(args: argparse.Namespace) -> int:
    from webrl.env.web_env import EnvConfig
    from webrl.eval.replay import replay_records
    from webrl.files import load_jsonl

    tasks = {t.task_id: t for name in args.tasks.split(",") if name for t in _load_tasks(name, None, None)}
    records = []
    for f in args.episodes.split(","):
        if not Path(f).is_file():
            print(f"error: --episodes: no file {f}", file=sys.stderr)
            return 2
        records += load_jsonl(Path(f))
    given = {"max_steps": args.max_steps, "max_repeats": args.max_repeats, "max_revisits": args.max_revisits}
    cfg = EnvConfig(**{k: v for k, v in given.items() if v is not None})
    print(json.dumps(replay_records(records, tasks, cfg)))
    return 0


def cmd_bench_env(args: argparse.Namespace) -> int:
    from webrl.env.web_env import EnvConfig
    from webrl.eval.bench import bench_env

    tasks = _load_tasks(args.split, args.sites, args.limit)
    if args.backend == "chromium":
        from webrl.eval.bench import bench_browser

        result = bench_browser(tasks, repeats=args.repeats, parallel=args.parallel, executable=args.chromium)
    elif args.backend == "http":
        result = bench_env(tasks, EnvConfig(evaluate=False), repeats=args.repeats)
    else:
        print(f"error: unknown backend {args.backend!r}; use http or chromium", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from webrl.sites.world import WorldApp
    from webrl.tasks.family import SeedDB
    from webrl.tasks.registry import families
    from webrl.tasks.schema import save_tasks
    from webrl.tasks.splits import load_split, write_splits

    if args.tasks_cmd == "list":
        from webrl.rollout.oracle import split_stats

        counts: dict[str, dict[str, int]] = {}
        splits = {split: load_split(split) for split in ("test", "train")}
        for split, tasks in splits.items():
            for t in tasks:
                counts.setdefault(t.family, {"test": 0, "train": 0})[split] += 1
        print(f"{'family':<34} {'kind':<11} {'test':>5} {'train':>6}  template")
        for name, fam in families().items():
            c = counts.get(name, {"test": 0, "train": 0})
            print(f"{name:<34} {fam.kind:<11} {c['test']:>5} {c['train']:>6}  {fam.template}")
        for split, tasks in splits.items():
            stats = split_stats(tasks)
            print(f"\n{split}: {stats['tasks']} tasks, {stats['infeasible']} infeasible (answer N/A)")
            for key in ("per_site", "per_eval_type", "per_step_bucket"):
                label = key.removeprefix("per_").replace("_", " ")
                print(f"  by {label:<11} " + "  ".join(f"{k} {v}" for k, v in stats[key].items()))
        return 0
    if args.tasks_cmd == "export":
        tasks = _load_tasks(args.split, args.sites, args.limit)
        save_tasks(tasks, args.out)
        print(f"wrote {len(tasks)} tasks to {args.out}")
        return 0
    if args.tasks_cmd == "build":
        from webrl.env.web_env import WebEnv
        from webrl.rollout.oracle import with_measured_difficulty

        world = WorldApp()
        env = WebEnv(world=world)
        sizes = write_splits(SeedDB(world.store.snapshot), lambda ts: with_measured_difficulty(ts, env))
        print(json.dumps(sizes))
        return 0
    if args.tasks_cmd == "check":
        from webrl.tasks.evaluators import offline_limits
        from webrl.tasks.schema import SITE_ALIASES, load_tasks

        tasks = load_tasks(args.file)
        known = set(WorldApp().specs) | set(SITE_ALIASES)
        bad = 0
        for t in tasks:
            limits = offline_limits(t, known)
            if limits:
                bad += 1
                print(f"task {t.task_id}: " + "; ".join(limits))
        print(f"{len(tasks)} tasks parsed; {len(tasks) - bad} evaluable offline, {bad} with limits above")
        return 0
    if args.tasks_cmd == "generate":
        from webrl.tasks.registry import family, site_families
        from webrl.tasks.splits import instances

        if bool(args.family) == bool(args.site):
            print("error: give exactly one of --family NAME or --site SITE", file=sys.stderr)
            return 2
        fams = [family(args.family)] if args.family else site_families(args.site)
        if not fams:
            print(f"error: no task families for site {args.site!r}", file=sys.stderr)
            return 2
        db = SeedDB(WorldApp().store.snapshot)
        tasks = instances(fams, db, args.gen_split, args.n, set(), first_seed=args.seed)
        save_tasks(tasks, args.out)
        print(f"wrote {len(tasks)} tasks to {args.out}")
        return 0
    return 2


def cmd_sites_serve(args: argparse.Namespace) -> int:
    from webrl.sites.server import SiteServer

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0-65535 (0 = any free port), got {args.port}")
    try:
        server = SiteServer(host=args.host, port=args.port, threads=args.threads)
    except (OSError, ValueError) as e:
        raise OSError(f"cannot serve on {args.host}:{args.port} ({e}); pick another --port (0 = any free one) "
                      "or --host") from e  # fmt: skip
    print(f"serving {', '.join(server.world.specs)} on {server.url}/ (Ctrl-C stops)", flush=True)
    server.serve_forever()
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="webrl", description="WebRL: train and evaluate LLM web agents.")
    sub = p.add_subparsers(dest="cmd", required=True)

    def task_args(sp, default_split="test"):
        sp.add_argument("--split", default=default_split, help="test | train | a task JSON/JSONL file")
        sp.add_argument("--sites", default=None, help="comma-separated site filter, e.g. shop,forum")
        sp.add_argument("--limit", type=nonneg_int, default=None, help="only the first N tasks")

    e = sub.add_parser("eval", help="run an agent over a split and print per-site success")
    e.add_argument("--agent", default="oracle", help="oracle | random | checkpoint PATH | http://HOST:PORT/v1")
    task_args(e)
    e.add_argument("--backend", default="http", help="http (in process) | chromium (real browser)")
    e.add_argument("--screenshots", action="store_true", help="chromium: save a PNG per step under OUT/screenshots")
    e.add_argument("--chromium", default=None, help="Chromium binary (default: $WEBRL_CHROMIUM, then Debian's)")
    e.add_argument("--base-url", default="http://127.0.0.1:7770",
                   help="chromium: the site server (started there if none runs; port 0 = any free port)")  # fmt: skip
    e.add_argument("--out", default=None, help="directory for episodes.jsonl + summary.json (resumable)")
    e.add_argument("--seed", type=int, default=0,
                   help="seed of the random agent; for a model at --temperature > 0, of its samples "
                        "(each episode step draws from its own seed, so an episode does not depend on --envs)")
    e.add_argument("--max-steps", type=int, default=30, help="steps before an episode is cut off")
    e.add_argument("--max-revisits", type=int, default=3,
                   help="cut off an episode that sends the same action on the same page this many times "
                        "without reaching a new page in between (0 = off; webrl/env/early_stop.py)")
    e.add_argument("--json", action="store_true", help="print the summary JSON as the last line")
    e.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_eval_args(e)
    e.set_defaults(func=cmd_eval)

    b = sub.add_parser("bench", help="benchmarks that print JSON")
    bsub = b.add_subparsers(dest="bench_cmd", required=True)
    be = bsub.add_parser("env", help="env steps/s and reset latency over oracle trajectories")
    task_args(be)
    be.add_argument("--repeats", type=positive_int, default=3, help="replays of each trajectory")
    be.add_argument("--backend", default="http", help="http | chromium")
    be.add_argument("--parallel", type=positive_int, default=4, help="chromium: episodes run at once (browser contexts)")
    be.add_argument("--chromium", default=None, help="Chromium binary (default: $WEBRL_CHROMIUM, then Debian's)")
    be.set_defaults(func=cmd_bench_env)
    br = bsub.add_parser("replay", help="recorded episodes replayed under other env rules: steps saved, outcomes changed")
    br.add_argument("--episodes", required=True, help="comma list of eval/rollout episodes.jsonl files")
    br.add_argument("--tasks", default="train,test", help="comma list of splits or task files the episodes ran")
    br.add_argument("--max-steps", type=int, default=None, help="step cap (default: EnvConfig's, 30)")
    br.add_argument("--max-repeats", type=int, default=None, help="invalid/identical actions in a row (default 5)")
    br.add_argument("--max-revisits", type=int, default=None, help="same action on the same page (default 3; 0: off)")
    br.set_defaults(func=cmd_bench_replay)
    add_commands(sub, bsub)  # sft, eval-demos, serve-model, bench model
    add_orm_commands(sub)  # orm data|train|eval
    add_train_commands(sub)  # train
    add_demo_commands(sub)  # demo
    add_study_commands(sub)  # study

    t = sub.add_parser("tasks", help="task splits and families")
    tsub = t.add_subparsers(dest="tasks_cmd", required=True)
    tsub.add_parser("list", help="families per site with split counts").set_defaults(func=cmd_tasks)
    ex = tsub.add_parser("export", help="write a split as WebArena-style JSON")
    task_args(ex)
    ex.add_argument("--out", required=True, help="output JSON file")
    ex.set_defaults(func=cmd_tasks)
    tsub.add_parser("build", help="regenerate the split files from the families").set_defaults(func=cmd_tasks)
    ck = tsub.add_parser("check", help="parse a task file (ours or WebArena's) and say what cannot be evaluated offline")
    ck.add_argument("file", help="task JSON/JSONL file")
    ck.set_defaults(func=cmd_tasks)
    g = tsub.add_parser("generate", help="fresh instances of one family, or of all a site's families")
    g.add_argument("--family", default=None, help="family name (see `webrl tasks list`)")
    g.add_argument("--site", default=None, help="round-robin over this site's families")
    g.add_argument("--n", type=positive_int, default=10, help="how many")
    g.add_argument("--seed", type=int, default=1000, help="first seed (the splits use seeds from 0)")
    g.add_argument("--split", dest="gen_split", default="train", help="train | test | any (slot pool)")
    g.add_argument("--out", required=True, help="output JSON file")
    g.set_defaults(func=cmd_tasks)

    s = sub.add_parser("sites", help="the self-hosted websites")
    ssub = s.add_subparsers(dest="sites_cmd", required=True)
    sv = ssub.add_parser("serve", help="serve every site over HTTP on loopback")
    sv.add_argument("--host", default="127.0.0.1", help="bind address (keep it on loopback)")
    sv.add_argument("--port", type=int, default=7770, help="port")
    sv.add_argument("--threads", type=int, default=8, help="worker threads of the server")
    sv.set_defaults(func=cmd_sites_serve)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one `webrl` command. An error about the input (a bad value, file or folder: ValueError,
    OSError, KeyError, TaskError) is printed as one line and exits 2; WEBRL_DEBUG=1 shows its traceback."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TaskError, ValueError, OSError, KeyError) as e:
        if os.environ.get("WEBRL_DEBUG"):
            raise
        print(f"error: {e.args[0] if isinstance(e, KeyError) and e.args else e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
