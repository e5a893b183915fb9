"""The self-evolving curriculum: new tasks "in breadth" from the phase's failures,
then a feasibility filter and the critic filter (rl/curriculum_filter.py).

Offline generator (the embedded default), per failed seed task, round-robin:
  - same family, new entities: the seed's family instantiated with a fresh seed
    (slot values from the training half only, so no test-split task can appear);
  - sibling family: another family of the same site(s) and kind (info / nav /
    state / multi / infeasible) with fresh entities;
  - added or removed constraint (with `constraint_share` > 0, off by default like the
    re-phrasings): the family one constraint narrower or broader than the seed's
    (`CONSTRAINT_PAIRS`: "Show me the X category." <-> "... sorted by Y", "Save X to my
    places." <-> "... with the note Z", ...), fresh entities;
  - re-phrased (with `rephrase_share` > 0, off by default so that runs stay comparable
    with the studies made before it): either of the above in other words (`REPHRASINGS`:
    "What is the X?" -> "Tell me the X.", "Open the X" -> "Go to the X", ...), the same
    task and evaluator.
Generated tasks carry their family's evaluator (used only with `--reward oracle`
and for diagnostics); rewards come from the ORM by default. Tasks whose intent is
in the test split, or already generated, are never emitted.

LLM generator: any OpenAI-compatible endpoint gets the seed instructions and a
prompt written for this project (below), and returns new instructions one per
line; they keep the seed's site and start page, carry no evaluator (the ORM
scores them), and pass the feasibility filter first.

Feasibility filter (LLM tasks; offline tasks are feasible by construction): a
task is dropped when it quotes a phrase ("..." or a #number) that appears nowhere
in the databases of the sites it uses, when it asks for something no site here can
do (`OUT_OF_REACH`: sending mail or messages outside the sites, calls, printing,
downloads and uploads, screenshots, apps, other websites, outside payment services;
no train or test task matches one, a test checks), or when it is empty or overlong.
Optionally (`feasibility_judge`, an OpenAI-compatible URL) an LLM judge then reads each
remaining task beside real tasks of its site(s) (the rollout pool's) and answers YES or NO (`JUDGE_PROMPT`); only
a clear YES keeps the task (`judge_feasible`).
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections import defaultdict
from dataclasses import replace

from webrl.tasks.family import InfeasibleSlots, SeedDB
from webrl.tasks.registry import families
from webrl.tasks.schema import Task, canonical_site

LLM_PROMPT = """You write tasks for a web agent that uses {site}.
Here are tasks it failed:
{seeds}
Write {n} new tasks of the same kinds for the same site: keep the skills, change
the products, people, places or numbers, and keep each task answerable from the
site. One task per line, no numbering, no explanations.
Tasks:
"""

JUDGE_PROMPT = """You check tasks for a web agent that works only through the web pages of {site}.
Tasks it can do there look like:
{examples}
Can the agent complete the following task on {site} alone, with no other website, app or person?
Task: {intent}
Answer YES or NO.
Answer:"""


# Meaning-preserving rewrites of an instruction's opening (first match; each has variants)
REPHRASINGS: tuple[tuple[re.Pattern, tuple[str, ...]], ...] = tuple((re.compile(p), r) for p, r in (
    (r"^What is the (.+)\?$", ("Tell me the {0}.", "Find out the {0}.")),
    (r"^What was the (.+)\?$", ("Find out the {0}.", "Look up the {0}.")),
    (r"^What are the (.+)\?$", ("List the {0}.", "Tell me the {0}.")),
    (r"^Who (wrote|is assigned to|created) (.+)\?$", ("Tell me who {0} {1}.", "Find out who {0} {1}.")),
    (r"^Show me (.+)$", ("Take me to {0}", "Bring up {0}")),
    (r"^Open (.+)$", ("Go to {0}", "Navigate to {0}")),
    (r"^Find (.+)$", ("Look up {0}", "Search for {0}")),
    (r"^Change (.+)$", ("Update {0}", "Modify {0}")),
    (r"^Update (.+)$", ("Change {0}", "Modify {0}")),
    (r"^Buy (.+)$", ("Purchase {0}", "Order {0}")),
    (r"^Create (.+)$", ("Make {0}", "Add {0}")),
))  # fmt: skip


# (broader family, narrower family): the narrower one asks for the same thing under one more
# constraint or requirement; every slot of the broader one is a slot of the narrower (a test checks)
CONSTRAINT_PAIRS: tuple[tuple[str, str], ...] = (
    ("shop.open_category", "shop.category_sorted"),  # + sorted by an order
    ("shop.place_order", "shop.gift_bundle"),  # + a second item, a recipient and an address
    ("admin.approve_reviews", "admin.moderate_by_rating"),  # + only those rated k stars or more
    ("forum.open_forum", "forum.forum_sorted"),  # + sorted
    ("forum.create_post", "forum.post_and_comment"),  # + a comment on the new post
    ("code.add_member", "code.add_two_members"),  # + a second user
    ("code.fork_project", "code.fork_and_describe"),  # + the fork's description
    ("map.save_place", "map.save_with_note"),  # + a note
)


def constraint_partners(name: str) -> list[tuple[str, str]]:
    """The families one constraint away from family `name`: [(partner, "added constraint" |
    "removed constraint")]."""
    return [(narrow, "added constraint") for broad, narrow in CONSTRAINT_PAIRS if broad == name] + [
        (broad, "removed constraint") for broad, narrow in CONSTRAINT_PAIRS if narrow == name]


def rephrase(intent: str, rng: random.Random) -> str | None:
    """`intent` in other words (a `REPHRASINGS` rewrite of its opening, variant drawn from `rng`),
    or None when no rewrite applies."""
    for pattern, variants in REPHRASINGS:
        if m := pattern.match(intent):
            return rng.choice(variants).format(*m.groups())
    return None


def offline_generate(
    seeds: list[Task], db: SeedDB, n: int, seed: int, exclude: set[str], sibling_share: float = 0.5, prefix: str = "c",
    rephrase_share: float = 0.0, constraint_share: float = 0.0,
) -> list[tuple[Task, dict]]:
    """Up to `n` new tasks with provenance {"seed_task", "how"} (see module docstring)."""
    fams = families()
    by_kind: dict[tuple, list[str]] = defaultdict(list)
    for f in fams.values():
        by_kind[(tuple(f.sites), f.kind)].append(f.name)
    rng = random.Random(seed)
    seeds = [s for s in seeds if s.family in fams]
    out: list[tuple[Task, dict]] = []
    seen = set(exclude)
    misses = 0
    while seeds and len(out) < n and misses < 20 * n:
        s = seeds[len(out) % len(seeds)] if misses == 0 else rng.choice(seeds)
        fam = fams[s.family]
        how = "same-family"
        siblings = [x for x in by_kind[(tuple(fam.sites), fam.kind)] if x != fam.name]
        if siblings and rng.random() < sibling_share:
            fam, how = fams[rng.choice(siblings)], "sibling"
        if constraint_share > 0 and rng.random() < constraint_share and (partners := constraint_partners(s.family)):
            name, how = rng.choice(partners)
            fam = fams[name]
        try:
            task = fam.make(db, rng.randrange(10**9), "train", task_id=f"{prefix}{len(out)}")
        except InfeasibleSlots:
            misses += 1
            continue
        if rephrase_share > 0 and rng.random() < rephrase_share and (words := rephrase(task.intent, rng)):
            task, how = replace(task, intent=words, extra={**task.extra, "original_intent": task.intent}), how + ", rephrased"
        if task.intent in seen:
            misses += 1
            continue
        seen.add(task.intent)
        misses = 0
        out.append((task, {"seed_task": s.task_id, "how": how}))
    return out


def parse_instructions(text: str, limit: int) -> list[str]:
    """New instructions from an LLM's reply: one per line, numbering/bullets stripped, and a pair
    of quotes around the whole line (a quoted phrase at the line's end keeps its quotes)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        if len(line) > 1 and line[0] == line[-1] == '"':
            line = line[1:-1].strip()
        if 8 <= len(line) <= 300 and line not in out:
            out.append(line)
        if len(out) >= limit:
            break
    return out


def site_phrase(sites: tuple[str, ...]) -> str:
    """How the LLM prompt names a seed group's site(s): 'the site "shop"' or 'the sites "shop" and "map"'."""
    names = [f'"{canonical_site(s)}"' for s in sites]
    if len(names) == 1:
        return f"the site {names[0]}"
    return "the sites " + ", ".join(names[:-1]) + " and " + names[-1]


def llm_generate(seeds: list[Task], policy, n: int, exclude: set[str], prefix: str = "l") -> list[tuple[Task, dict]]:
    """New instructions from a text policy (e.g. `OpenAIPolicy`), grouped by the seeds' site(s)
    (a cross-site seed is grouped with the seeds of the same sites). The tasks have no evaluator
    (`eval_types: ["orm"]`): the ORM scores them."""
    from webrl.agent.local_policy import SamplingParams

    by_sites: dict[tuple[str, ...], list[Task]] = defaultdict(list)
    for s in seeds:
        by_sites[tuple(canonical_site(x) for x in s.sites)].append(s)
    out: list[tuple[Task, dict]] = []
    per_site = max(1, n // max(1, len(by_sites)))
    params = SamplingParams(temperature=0.8, max_new_tokens=400, end_of_action=False)
    for sites, group in sorted(by_sites.items()):
        listing = "\n".join(f"- {s.intent}" for s in group[:8])
        reply = policy.generate([LLM_PROMPT.format(site=site_phrase(sites), seeds=listing, n=per_site)], params)[0].text
        for text in parse_instructions(reply, per_site):
            if text in exclude:
                continue
            s = group[len(out) % len(group)]
            task = Task(
                task_id=f"{prefix}{len(out)}", sites=s.sites, start_url=s.start_url, intent=text,
                intent_template="", intent_template_id=-1, instantiation_dict={}, require_login=s.require_login,
                eval={"eval_types": ["orm"]}, family=f"{s.family}~llm", difficulty=s.difficulty,
            )  # fmt: skip
            out.append((task, {"seed_task": s.task_id, "how": "llm"}))
    return out


def site_text(conn: sqlite3.Connection) -> str:
    """All text values of a site's database, lowercased (for the feasibility filter)."""
    parts = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        for row in conn.execute(f'SELECT * FROM "{t}"'):  # table names come from sqlite_master, not users
            parts.extend(str(v) for v in row if isinstance(v, str | int))
    return "\n".join(parts).lower()


def llm_candidates(seeds: list[Task], policy, db: SeedDB, n: int, exclude: set[str], prefix: str = "l"):
    """`llm_generate`'s tasks, and those of them that pass the feasibility filter, each checked
    against the data of every site it uses (a cross-site task: the union of its sites')."""
    cands = llm_generate(seeds, policy, n, exclude, prefix=prefix)
    texts: dict[str, str] = {}
    for t, _ in cands:
        for s in t.sites:
            if canonical_site(s) not in texts:
                texts[canonical_site(s)] = site_text(db[canonical_site(s)])
    ok = [(t, how) for t, how in cands if feasible(t, "\n".join(texts[canonical_site(s)] for s in t.sites))]
    return cands, ok


def judge_verdict(reply: str) -> bool | None:
    """The judge's answer: True for YES, False for NO (the reply's first word, whatever its case and
    the punctuation around it), None for anything else."""
    m = re.match(r"\W*(yes|no)\b", reply, re.IGNORECASE)
    return None if m is None else m.group(1).lower() == "yes"


def judge_feasible(cands: list[tuple[Task, dict]], policy, known: list[Task], n_examples: int = 5) -> list[bool]:
    """The LLM feasibility judge: for each candidate, `JUDGE_PROMPT` with the first `n_examples`
    instructions of `known` (real tasks, e.g. the train split's) on the same site(s) as examples of
    what the site can do, asked of `policy` (an `OpenAIPolicy`) in one batch, greedy; True only
    where it answered YES."""
    from webrl.agent.local_policy import SamplingParams

    if not cands:
        return []
    examples: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for s in known:
        key = tuple(canonical_site(x) for x in s.sites)
        if len(examples[key]) < n_examples and s.intent not in examples[key]:
            examples[key].append(s.intent)
    prompts = []
    for t, _ in cands:
        key = tuple(canonical_site(x) for x in t.sites)
        listing = "\n".join(f"- {x}" for x in examples.get(key, [])) or "- (no example)"
        prompts.append(JUDGE_PROMPT.format(site=site_phrase(key), examples=listing, intent=t.intent))
    params = SamplingParams(temperature=0.0, max_new_tokens=4, end_of_action=False)
    return [judge_verdict(g.text) is True for g in policy.generate(prompts, params)]


OUT_OF_REACH = tuple(re.compile(p) for p in (
    r"\bsend (an? |the )?(e-?mail|text|sms|fax|letter)\b",
    r"\b(e-?mail|text|phone|call|fax) (me|him|her|them|the (seller|author|customer|owner|store|user))\b",
    r"^(e-?mail|call|phone|fax|text) ", r"\b(video|voice|phone) call\b", r"\bprint\b", r"\bdownload\b", r"\bupload\b", r"\battach\b",
    r"\bscreenshot\b", r"\b(install|open) (an? |the )?(mobile )?app\b",
    r"\b(google|amazon|wikipedia|youtube|facebook|twitter)\b",
    r"\b(pay|checkout|check out) with (paypal|bitcoin|crypto|apple pay|google pay)\b",
))  # fmt: skip


def out_of_reach(intent: str) -> str | None:
    """The part of `intent` that asks for something no site here can do (`OUT_OF_REACH`), or None."""
    low = intent.lower()
    return next((m.group(0) for p in OUT_OF_REACH if (m := p.search(low))), None)


def feasible(task: Task, text: str) -> bool:
    """The documented rule (module docstring): quoted phrases and #numbers must exist in the site's
    data, and the task must not ask for what the sites cannot do."""
    intent = task.intent.strip()
    if not intent or len(intent) > 300 or out_of_reach(intent):
        return False
    quoted = re.findall(r'"([^"]{2,80})"', intent) + re.findall(r"#(\d{3,})", intent)
    return all(q.lower() in text for q in quoted)
