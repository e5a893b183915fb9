"""Checks every site's task families must pass, shared by tests/tasks/test_*_families.py.

Imported as `family_checks` (tests/ is on the import path, as for `support`). Each
check takes the families or one family, the seed database and, where episodes are
played, a `WebEnv` over a world that has the family's sites."""

from __future__ import annotations

from support import play

from webrl.tasks.family import KINDS, InfeasibleSlots, SeedDB, TaskFamily, holdout
from webrl.tasks.schema import Task, task_from_json


def feasible(fam: TaskFamily, db: SeedDB, split: str, want: int, max_seed: int = 40) -> list[Task]:
    """The first `want` instances of `fam` in `split` (seeds 0, 1, ... skipping infeasible ones)."""
    out = []
    for seed in range(max_seed):
        try:
            out.append(fam.make(db, seed, split))
        except InfeasibleSlots:
            continue
        if len(out) == want:
            break
    return out


def check_registry(
    families, prefix: str, ids: range, start: str, at_least: int, kinds=KINDS
) -> None:
    """Unique names and template ids in the site's range, every kind present, start pages
    on the site, and every held-out slot a field of the template."""
    assert len(families) >= at_least
    names = [f.name for f in families]
    tids = [f.template_id for f in families]
    assert len(set(names)) == len(names) and len(set(tids)) == len(tids)
    assert all(n.startswith(prefix) for n in names), names
    assert all(i in ids for i in tids), tids
    assert {f.kind for f in families} == set(kinds)
    for f in families:
        assert f.kind in KINDS and f.start_url.startswith(start), f.name
        assert f.held_out, f"{f.name}: no held-out slot"
        assert all("{" + slot + "}" in f.template for slot in f.held_out), f.name


def check_instances(families, db: SeedDB, start: str, spread: tuple[int, int]) -> list[Task]:
    """Two train instances per family: valid task JSON, the site's start page, no
    unfilled slot, a wrong answer unlike the right one, and difficulties (oracle steps)
    from at most `spread[0]` to at least `spread[1]`. Returns the instances for
    site-specific checks."""
    tasks = [t for fam in families for t in feasible(fam, db, "train", 2)]
    for t in tasks:
        assert task_from_json(t.to_json()) == t
        assert t.start_url.startswith(start) and "{" not in t.intent, t.intent
        if t.extra.get("answer") is not None:
            assert t.extra["answer"] != t.extra.get("wrong"), t.intent
    levels = [t.difficulty for t in tasks]
    assert min(levels) <= spread[0] and max(levels) >= spread[1], (min(levels), max(levels))
    return tasks


def check_oracle_and_wrong_ending(env, db: SeedDB, fam: TaskFamily, per_split: int) -> None:
    """On `per_split` instances of each split the oracle scores 1 within 30 actions and
    the family's plausible wrong ending scores 0."""
    tasks = feasible(fam, db, "train", per_split) + feasible(fam, db, "test", per_split)
    assert len(tasks) == 2 * per_split, f"{fam.name}: too few feasible instances"
    for task in tasks:
        reward, actions = play(env, task, fam.oracle)
        assert reward == 1.0, (task.intent, actions)
        assert len(actions) <= 30, (task.intent, len(actions))
        reward, actions = play(env, task, fam.wrong_ending)
        assert reward == 0.0, (task.intent, actions)


def check_held_out(db: SeedDB, fam: TaskFamily, want: int = 12, distinct: int = 1) -> None:
    """Held-out slot values of the train and test instances never meet, each lies in
    its own split by `holdout`, and each split has at least 3 instances with at least
    `distinct` different values."""
    tasks = {split: feasible(fam, db, split, want) for split in ("train", "test")}
    for split, found in tasks.items():
        assert len(found) >= 3, f"{fam.name}: {len(found)} {split} instances"
    for slot in fam.held_out:
        values = {s: {str(t.instantiation_dict[slot]) for t in ts} for s, ts in tasks.items()}
        assert values["train"].isdisjoint(values["test"]), (fam.name, slot)
        for split, vals in values.items():
            assert {holdout(v) for v in vals} == {split}, (fam.name, slot, split)
            assert len(vals) >= distinct, (fam.name, slot, split)


def check_deterministic(families, db: SeedDB, seeds=(0, 7)) -> None:
    """The same seed gives the same task."""
    for fam in families:
        for seed in seeds:
            try:
                task = fam.make(db, seed, "test")
            except InfeasibleSlots:
                continue
            assert fam.make(db, seed, "test") == task, (fam.name, seed)
