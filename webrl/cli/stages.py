"""Run a long job's stages each in a fresh (spawned) process: `webrl demo`'s stages, `webrl study`'s runs.

In one long-lived process, the demo's encoder ORM trained at ~2,700 tokens/s after the SFT, its
eval and the ORM data had run there, against ~6,100-10,000 in a fresh process (3x fewer steps in
the same CPU-minute budget: 80.0 % accuracy where a fresh process reached 85.6 % on the same data;
docs/results.md, session 2026-12-02 (5)). Short reproductions did not show it, so the cause is not
known; a fresh process per stage avoids it. Stages communicate through files, as before, so
resuming is unchanged.
"""

from __future__ import annotations


def _stage_main(threads: int, fn, args: tuple) -> None:
    import torch

    if threads:
        torch.set_num_threads(threads)
    fn(*args)


def stage_runner(threads: int):
    """`stage(fn, *args)`: run `fn(*args)` in a fresh (spawned) process with `threads` torch threads
    (0: torch's default) and wait for it; a failure raises SystemExit naming `fn`. `fn` and its
    arguments must be picklable (module-level functions, dataclasses, paths)."""
    import multiprocessing

    def stage(fn, *args) -> None:
        proc = multiprocessing.get_context("spawn").Process(target=_stage_main, args=(threads, fn, args))
        proc.start()
        try:
            proc.join()
        except KeyboardInterrupt:
            proc.terminate()
            proc.join()
            raise
        if proc.exitcode:
            raise SystemExit(f"{fn.__name__} failed (exit code {proc.exitcode}); rerun the same command to resume")

    return stage
