"""Labelled trajectories for the ORM (`webrl orm data`).

Behaviours (each a real episode through WebEnv, labelled by the task's
ground-truth evaluator; label_source = "evaluator"):

  oracle   the family's scripted solution
  wrong    the family's plausible-wrong ending (wrong item, wrong field, ...)
  early    the oracle's actions without its second-to-last one (stops a step early),
           then its final action; on a task answered by text, the answer is the one
           the page the agent stopped on gives (see `ANSWER_FROM_PAGE`)
  answer   the oracle's actions with the final answer text changed (a number shifted,
           an answer replaced by "N/A", an "N/A" replaced by text from the page); only for
           tasks whose evaluator reads the answer (string_match)
  misread  the oracle's actions with the final answer replaced by another value of the same
           kind read off the same final page (another price, date, number, code or link
           text): the mistake a policy makes on the right page, whose answer, unlike
           `answer`'s, is on the page
  detour   right page, wrong action: the oracle's second-to-last action replaced by a
           click on a random element of that page, then the final action (an answer, as
           for `early`, read off the page it ends on)
  echo     the oracle's actions with the final answer replaced by a name the task itself
           quotes (the product, the order number, ...): the answer the SFT actor gives
           most when it copies the question instead of reading the page
  loop     the oracle's first k actions (k random, before its last two), then one random
           click repeated until the env truncates the episode (no exit): the stuck,
           repeating failure that small policies produce most
  give_up  the oracle's first k actions (k random, before its last two), sometimes one random
           click, then `exit(message="N/A")`: on a task the site can do, the answer a policy
           learns to give when the ORM rewards it (runs of session 2026-12-02 (7): 15 of an
           ORM's 16 false positives in one phase were such N/A exits, at P(success) 0.70-0.998;
           its data had N/A exits right 337 times and wrong 173, nearly all on the right page)
  wander   the oracle's actions with a click on a random element and `Go Backward` (skipped
           when the click did not change the URL) put in before one of them, ending as
           `early` does: a success the long way round, as a policy's
           successes often are (the phase loop's rollouts: a right order cancelled after
           wandering back to the order page, P(success) 0.000 from an ORM whose data held
           only straight successes); the evaluator labels it, so a click that changed the
           site's state makes it a failure
  overstay the oracle's actions up to its exit, then its last action repeated instead of
           exiting (the same response, as a policy repeats itself: its element id may name
           another element on the page the action led to), until the env cuts the episode
           off for repeating itself: the demo SFT
           actor's commonest success (7 of its 17 greedy test successes, docs/results.md
           2026-12-04 (2): the goal page reached, then "Sort" clicked again and again), which
           an ORM trained on `loop` (always a failure) scores low; the evaluator labels it, so it
           succeeds where the final state is what the task asks (a navigation task) and fails
           where the task wanted an answer or the repeated click changed the state. Not in the
           default set (`SCRIPTED`) until measured: `--behaviours ...,overstay`
  linger   the oracle's actions up to its exit, then one to three clicks on random elements, then
           its exit; only where the exit reads no answer off the page ("Done", "" or the oracle's
           "N/A"), so no answer outlives the page that showed it (see below): the goal reached,
           then wandering on before stopping, as most of the phase loop's true successes do
           (runs of 2026-12-05: a fork, an unsubscribe and a commit history reached, then pages
           clicked through; the demo's ORM scored them 0.004-0.04). The evaluator labels it: a
           change of state done stays done, a page the task asked for is left behind. Opt-in
           (`--behaviours ...,linger`) until measured
  swap     another task's oracle played on this task (same site, another family; one that names
           one of this task's names first, else any): the agent does something else the site can
           do, often to the right item, and says "Done" or answers another question, the phase
           loop's confident false positives (2026-12-05 (6): "Approve all pending reviews of X"
           ended after saving X's product page, P(success) 0.92; "Show me the commit history of
           P" after closing an issue of P, 0.79: a site message and "Done" read as success). The
           evaluator labels it (a swap can succeed: a navigation that lands on the page asked
           for). Where the other oracle's script cannot go on from this task's pages (another account's
           page, say), the agent says "Done" there. In the default set since an A/B on held-out
           train tasks (docs/results.md, session 2026-12-05 (6): accuracy 85.4 -> 87.5 %, AUC
           0.927 -> 0.944; the SFT actor's own T 0.5 episodes AUC 0.875 -> 0.955; swaps passed
           25.5 -> 5.0 %)
  policy   a text policy's rollouts (`policy_t0` greedy, `policy_t1` temperature 1)

Why `early` and `detour` answer from the page: replaying the oracle's answer after
skipping the step that shows it gives an agent that knows what it never saw, labelled
a success that no judge of the final page could confirm (runs/demo-fc2's ORM data: 134
`detour` and 84 `early` successes answered text their final page does not show). The
ORM learnt from them that an unsupported answer is fine, and accepted 87 % of the
`answer` mistakes.

A trajectory record: task_id, site, family, intent, behaviour, responses (the
responses as the actor writes them: `# Element: ...` comments included), final_obs
(the last page the agent saw), label (bool), label_source, reward.
`dedupe` drops repeated (task, responses) pairs; `balance` downsamples the larger
class per site so successes and failures are equally many, dropping the policy's own
rollouts last.
"""

from __future__ import annotations

import random
import re
import zlib
from collections import defaultdict

from tqdm import tqdm

from webrl.agent.policies import OracleAgent
from webrl.agent.prompt import PromptConfig, annotate
from webrl.env.actions import Action, format_action, parse_action
from webrl.env.page_view import OracleError
from webrl.env.web_env import WebEnv
from webrl.orm.evidence import contains, final_answer, on_page, task_names, words
from webrl.tasks.schema import Task

SCRIPTED = ("oracle", "wrong", "early", "answer", "misread", "detour", "loop", "echo", "give_up", "wander", "swap")
OPT_IN = ("overstay", "linger")  # scripted behaviours built only when asked for by name
RANDOM_CLICK = "<random click>"
REPEAT = "<repeat the previous action>"
ANSWER_FROM_PAGE = "<answer from the page>"
NOT_AVAILABLE = format_action(Action("exit", argument="N/A"))
GO_BACK = format_action(Action("Go Backward"))


def answer_from_page(answer: str, obs: str, rng: random.Random) -> str:
    """What an agent that answers from the page it is on says, when the right answer is
    `answer`: that answer if the page shows it, else another value of its kind from the page
    (`misread_answer`), else "N/A"."""
    if on_page(answer, obs):
        return answer
    return misread_answer(answer, obs, rng) or "N/A"


class ReplayAgent:
    """Plays a fixed list of actions; `RANDOM_CLICK` clicks a random visible element (seeded),
    `ANSWER_FROM_PAGE` exits with `answer_from_page(answer, <the current page>)`."""

    def __init__(self, actions: list[str], seed: int, answer: str = ""):
        self.actions = actions
        self.answer = answer
        self.rng = random.Random(seed)
        self.reset(None)

    def reset(self, task: Task | None) -> None:
        self.i = 0
        self.last = format_action(Action("Scroll Down"))  # what REPEAT repeats before any action
        self.clicked_on: str | None = None  # the URL a RANDOM_CLICK was made on

    def act(self, obs: str, info: dict) -> str:
        self.last = self._next(obs, info)
        return self.last

    def _next(self, obs: str, info: dict) -> str:
        if self.i >= len(self.actions):
            return format_action(Action("exit", argument=""))
        a = self.actions[self.i]
        self.i += 1
        if a == REPEAT:
            return self.last
        if a == ANSWER_FROM_PAGE:
            return format_action(Action("exit", argument=answer_from_page(self.answer, obs, self.rng)))
        if a == GO_BACK and info.get("url") == self.clicked_on:
            return self._next(obs, info)  # the click went nowhere: going back would leave the oracle's page
        if a != RANDOM_CLICK:
            return a
        self.clicked_on = info.get("url", "")
        els = [e for e in info.get("elements", []) if e.get("visible")] or info.get("elements", [])
        if not els:
            return format_action(Action("Scroll Down"))
        return format_action(Action("Click", self.rng.choice(els)["id"]))


def _shift_number(m: re.Match, rng: random.Random) -> str:
    s = m.group(0)
    digits = [i for i, c in enumerate(s) if c.isdigit()]
    i = rng.choice(digits)
    d = (int(s[i]) + rng.randint(1, 9)) % 10
    return s[:i] + str(d) + s[i + 1 :]


def wrong_answer(message: str, page_texts: list[str], rng: random.Random) -> str | None:
    """A plausible but different final answer (None when the task has no answer text)."""
    if not message:
        return None
    if message.strip().upper() == "N/A":
        texts = [t for t in page_texts if t and t != message]
        return rng.choice(texts) if texts else "0"
    if re.search(r"\d", message):
        return re.sub(r"\d+(?:\.\d+)?", lambda m: _shift_number(m, rng), message, count=1)
    return "N/A"


# answer shapes, most specific first: a value of the first shape the answer matches is swapped
# for another value of that shape on the page
_SHAPES = [re.compile(p) for p in (r"\$\d[\d,]*(?:\.\d+)?", r"\b\d{4}-\d{2}-\d{2}\b", r"\b[A-Z]{2,}(?:-[A-Z0-9]+)+\b",
                                   r"(?<![\w.$-])\d+(?:\.\d+)?(?![\w-])")]
_LINK = re.compile(r"\[([^\]]+)\]\(\d+\)")


def misread_answer(message: str, final_page: str, rng: random.Random) -> str | None:
    """Another value of the answer's kind from the final page's content (compact view, below its
    first heading: not the site's header and navigation), or None when it has none. Link texts
    stand in for answers that are not a price, date, code or number."""
    from webrl.agent.view import compact_page

    message = message.strip()
    if not message or message.upper() == "N/A":
        return None
    page = compact_page(final_page)
    page = page[page.find("\n# ") + 1 :] if "\n# " in page else page
    shape = next((r for r in _SHAPES if r.fullmatch(message)), None)
    if shape is not None:
        values = shape.findall(_LINK.sub(r"\1", page))
    else:
        values = [v.strip() for v in _LINK.findall(page)]
    values = sorted({v for v in values if v and v.lower() != message.lower()})
    return rng.choice(values) if values else None


def perturbations(
    oracle_actions: list[str], page_texts: list[str], seed: int, answer_checked: bool = True, final_page: str = "",
    intent: str = "",
) -> dict[str, list[str]]:
    """The scripted mistakes built from the oracle's action list (see module docstring;
    `give_up` unless the oracle itself answers "N/A");
    `answer`, `misread` and `echo` only when the task's evaluator reads the answer
    (`answer_checked`); `misread` takes its value from `final_page` (the oracle's final
    observation), `echo` from `intent`. `early` and `detour` end in `ANSWER_FROM_PAGE` when
    the oracle answers with text (not "N/A") that the evaluator reads."""
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    n = len(oracle_actions)
    last = parse_action(oracle_actions[-1]).action if n else None
    message = (last.argument or "").strip() if last is not None and last.kind == "exit" else ""
    reads = answer_checked and message and message.upper() != "N/A"
    if n >= 2:
        end = ANSWER_FROM_PAGE if reads else oracle_actions[-1]
        out["early"] = oracle_actions[: n - 2] + [end]
        out["detour"] = oracle_actions[: n - 2] + [RANDOM_CLICK, end]
        k = random.Random(seed + 1).randint(0, n - 2)  # its own stream: the other behaviours stay as they were
        out["loop"] = oracle_actions[:k] + [RANDOM_CLICK] + [REPEAT] * 8
        if message.upper() != "N/A":  # a task the site can do: N/A is wrong wherever the agent stops
            rng4 = random.Random(seed + 4)  # own stream, as `loop`
            k = rng4.randint(0, n - 2)
            out["give_up"] = oracle_actions[:k] + [RANDOM_CLICK] * rng4.randint(0, 1) + [NOT_AVAILABLE]
        k = random.Random(seed + 5).randint(0, n - 1)  # own stream, as `loop`
        out["wander"] = oracle_actions[:k] + [RANDOM_CLICK, GO_BACK] + oracle_actions[k:-1] + [end]
        if last is not None and last.kind == "exit":
            out["overstay"] = oracle_actions[:-1] + [REPEAT] * 8
    if last is not None and last.kind == "exit" and not reads:
        clicks = random.Random(seed + 6).randint(1, 3)  # own stream, as `loop`
        out["linger"] = oracle_actions[:-1] + [RANDOM_CLICK] * clicks + [oracle_actions[-1]]
    if answer_checked and last is not None and last.kind == "exit":
        msg = wrong_answer(last.argument or "", page_texts, rng)
        if msg is not None:
            out["answer"] = oracle_actions[:-1] + [format_action(Action("exit", argument=msg))]
        msg = misread_answer(last.argument or "", final_page, random.Random(seed + 2))  # own stream, as `loop`
        if msg is not None:
            out["misread"] = oracle_actions[:-1] + [format_action(Action("exit", argument=msg))]
    if reads:
        names = [m for m in task_names(intent) if not contains(words(m), message) and not contains(words(message), m)]
        if names:
            echo = random.Random(seed + 3).choice(names)  # own stream, as `loop`
            out["echo"] = oracle_actions[:-1] + [format_action(Action("exit", argument=echo))]
    return out


def run_scripted(env: WebEnv, task: Task, agent, prompt: PromptConfig, behaviour: str) -> dict:
    """One episode of a scripted agent as an ORM trajectory record."""
    obs, info = env.reset(options={"task": task})
    agent.reset(task)
    responses, actions, reward, texts = [], [], 0.0, []
    for _ in range(env.config.max_steps):
        action = agent.act(obs, info)
        actions.append(action)
        responses.append(annotate(action, info, prompt))
        texts = [e["text"] for e in info.get("elements", []) if e.get("text")]
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    rec = trajectory(task, behaviour, responses, obs, reward)
    rec["_actions"], rec["_texts"] = actions, texts
    return rec


def trajectory(task: Task, behaviour: str, responses: list[str], final_obs: str, reward: float) -> dict:
    return {
        "task_id": task.task_id, "site": task.site, "family": task.family, "intent": task.intent,
        "behaviour": behaviour, "responses": responses, "final_obs": final_obs,
        "label": reward >= 1.0, "label_source": "evaluator", "reward": reward,
    }  # fmt: skip


def from_episode(rec: dict, behaviour: str) -> dict:
    """An ORM trajectory from an eval/rollout episode record (needs its steps and final_obs)."""
    return {
        "task_id": rec["task_id"], "site": rec["site"], "family": rec["family"], "intent": rec["intent"],
        "behaviour": behaviour, "responses": [s["response"] for s in rec["steps"]],
        "final_obs": rec.get("final_obs") or (rec["steps"][-1]["obs"] if rec["steps"] else ""),
        "label": rec["reward"] >= 1.0, "label_source": "evaluator", "reward": rec["reward"],
    }  # fmt: skip


def from_episodes(recs: list[dict], behaviour: str) -> list[dict]:
    """ORM trajectories from eval/rollout episode records, skipping episodes that never stepped
    or whose browser failed (their reward says nothing about the agent)."""
    return [from_episode(r, behaviour) for r in recs if r.get("steps") and not r.get("backend_error")]


def scripted_trajectories(
    tasks: list[Task], env: WebEnv, prompt: PromptConfig, behaviours=SCRIPTED, seed: int = 0, progress: bool = True
) -> list[dict]:
    """Every scripted behaviour on every task."""
    out = []
    for task in tqdm(tasks, desc="orm data (scripted)", unit="task", disable=not progress, leave=False):
        oracle = run_scripted(env, task, OracleAgent(), prompt, "oracle")
        if "wrong" in behaviours:
            out.append(_public(run_scripted(env, task, OracleAgent(wrong=True), prompt, "wrong")))
        checked = "string_match" in task.eval.get("eval_types", [])
        mistakes = perturbations(oracle["_actions"], oracle["_texts"], _seed(seed, task.task_id), checked,
                                 final_page=oracle["final_obs"], intent=task.intent)
        answer = final_answer(oracle["_actions"]) or ""
        for name, actions in mistakes.items():
            if name in behaviours:
                agent = ReplayAgent(actions, seed=_seed(seed, task.task_id, name), answer=answer)
                out.append(_public(run_scripted(env, task, agent, prompt, name)))
        if "swap" in behaviours and (other := swap_partner(task, tasks, random.Random(_seed(seed, task.task_id, "swap")))):
            out.append(_public(run_scripted(env, task, SwappedOracle(other), prompt, "swap")))
        if "oracle" in behaviours:
            out.append(_public(oracle))
    return out


class SwappedOracle(OracleAgent):
    """The oracle of `other`, whatever task the episode is for (the `swap` behaviour)."""

    def __init__(self, other: Task):
        super().__init__()
        self.other = other

    def reset(self, task: Task | None) -> None:
        super().reset(self.other)

    def act(self, obs: str, info: dict) -> str:
        try:
            return super().act(obs, info)
        except OracleError:  # its script needs a page this task's start never leads to: it calls it done
            return format_action(Action("exit", argument="Done"))


def swap_partner(task: Task, tasks: list[Task], rng: random.Random) -> Task | None:
    """A task of the same site and another family for `swap`: one whose intent names one of this
    task's names when there is one (the same item, another action), else any; None when none."""
    others = [t for t in tasks if t.site == task.site and t.family != task.family]
    names = [n.lower() for n in task_names(task.intent) if len(n) >= 3]  # not "4" of "Add 4 units"
    same_item = [t for t in others if any(n in t.intent.lower() for n in names)]
    return rng.choice(same_item or others) if others else None


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _public(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if not k.startswith("_")}


def dedupe(trajs: list[dict]) -> list[dict]:
    """First occurrence of each (task, responses, final page)."""
    seen, out = set(), []
    for t in trajs:
        key = (t["task_id"], tuple(t["responses"]), t["final_obs"])
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


POLICY_BEHAVIOURS = ("policy_t0", "policy_t1")


def balance(trajs: list[dict], seed: int = 0, keep_first: tuple[str, ...] = POLICY_BEHAVIOURS) -> list[dict]:
    """Per site, downsample the larger class to the size of the smaller (order kept). The
    behaviours in `keep_first` are dropped last: a policy's own failures are the ones the ORM
    meets in the phase loop, the scripted ones are plentiful stand-ins.

    Dropping failures raises every kind of ending's success share alike: on the train split's
    scripted data "Done" exits go from 26 % successes to 53 %, and an ORM that cannot read a
    state change off the page learns to pass them (docs/results.md, session 2026-12-02 (2))."""
    rng = random.Random(seed)
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, t in enumerate(trajs):
        groups[(t["site"], bool(t["label"]))].append(i)
    keep: set[int] = set()
    for site in sorted({s for s, _ in groups}):  # sorted: the same draws in every process
        pos, neg = groups[(site, True)], groups[(site, False)]
        n = min(len(pos), len(neg))
        for group in (pos, neg):
            first = [i for i in group if trajs[i].get("behaviour") in keep_first]
            rest = [i for i in group if trajs[i].get("behaviour") not in keep_first]
            chosen = rng.sample(first, n) if len(first) >= n else first + rng.sample(rest, n - len(first))
            keep |= set(chosen)
    return [t for i, t in enumerate(trajs) if i in keep]


def stats(trajs: list[dict]) -> dict:
    """Counts per site and per behaviour, successes and failures."""
    out: dict = {"total": len(trajs), "positive": sum(bool(t["label"]) for t in trajs)}
    for key in ("site", "behaviour"):
        table: dict = defaultdict(lambda: [0, 0])
        for t in trajs:
            table[t[key]][0 if t["label"] else 1] += 1
        out[f"by_{key}"] = {k: {"success": v[0], "failure": v[1]} for k, v in sorted(table.items())}
    return out
