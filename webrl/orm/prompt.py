"""The ORM's input (WebRL layout) and its two answer tokens.

Two layouts. `layout="near"` puts what decides the answer next to it:

    Task: <intent>

    Final page:
    <the last observation, in the actor's compact view>

    Actions:
    1. <response of step 1, newlines folded to " | ">
    ...

    Question: Did the agent complete the task "<intent>"? Answer yes or no.
    Answer:<yes|no>

`layout="paper"` (the default) is the order of the paper's ORM prompt (intent,
actions, page, a question without the intent):

    Task: <intent>

    Actions:
    1. <response of step 1, newlines folded to " | ">
    ...

    Final page:
    <the last observation, in the actor's compact view>

    Question: Did the agent complete the task? Answer yes or no.
    Answer:<yes|no>

The near layout was tried because the actor learnt far better with its intent
repeated next to the answer; for the ORM it measured worse (51 % accuracy, 73 %
false positives in runs/demo2 vs 64 % / 39 % for the paper layout in runs/orm2,
on data from different SFT policies; docs/results.md), so it is not the default.

P(success) = softmax over the logits of the two answer tokens at the answer
position; reward = 1 iff P(yes) > P(no). Truncation to `max_prompt_tokens` never
touches the task, the question or the answer slot: it first drops the oldest
actions (the last `keep_actions` always stay, with a count of those omitted), then
cuts the end of the final page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from webrl.agent.prompt import fold
from webrl.agent.view import compact_page

QUESTION = "Question: Did the agent complete the task? Answer yes or no.\nAnswer:"
QUESTION_WITH_TASK = 'Question: Did the agent complete the task "{intent}"? Answer yes or no.\nAnswer:'
LAYOUTS = ("near", "paper")
# Tried in order: the first pair whose words are one token each (else whose first tokens differ).
ANSWER_WORDS = ((" yes", " no"), ("yes", "no"), (" YES", " NO"), ("YES", "NO"), ("Y", "N"))


@dataclass(frozen=True)
class ORMPromptConfig:
    """How a trajectory becomes the ORM's prompt."""

    max_prompt_tokens: int = field(default=768, metadata={"help": "token budget (actions, then the page end, are cut)"})
    keep_actions: int = field(default=3, metadata={"help": "latest actions never dropped by truncation"})
    compact: bool = field(default=True, metadata={"help": "final page in the compact view (agent/view.py)"})
    layout: str = field(
        default="paper", metadata={"help": "paper: intent, actions, page, question | near: page, actions, question with the intent"}
    )

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"ORMPromptConfig.layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.max_prompt_tokens < 64:
            raise ValueError(f"ORMPromptConfig.max_prompt_tokens must be >= 64, got {self.max_prompt_tokens}")
        if self.keep_actions < 1:
            raise ValueError(f"ORMPromptConfig.keep_actions must be >= 1, got {self.keep_actions}")


def render(intent: str, responses: list[str], page: str, omitted: int = 0, layout: str = "paper") -> str:
    actions = ["Actions:"]
    if omitted:
        actions.append(f"[{omitted} earlier action{'s' if omitted > 1 else ''} omitted]")
    actions += [f"{omitted + i + 1}. {fold(r)}" for i, r in enumerate(responses)] or ["(none)"]
    final = ["Final page:", page]
    if layout == "paper":
        return "\n".join([f"Task: {intent}", "", *actions, "", *final, "", QUESTION])
    return "\n".join([f"Task: {intent}", "", *final, "", *actions, "", QUESTION_WITH_TASK.format(intent=intent)])


def orm_prompt(tokenizer, intent: str, responses: list[str], final_obs: str, cfg: ORMPromptConfig) -> str:
    """The ORM prompt for one trajectory, within `cfg.max_prompt_tokens` (see module docstring)."""
    page = compact_page(final_obs) if cfg.compact else final_obs

    def n_tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    start = 0
    text = render(intent, responses, page, 0, cfg.layout)
    n = n_tokens(text)
    while n > cfg.max_prompt_tokens and start < len(responses) - cfg.keep_actions:
        start += 1
        text = render(intent, responses[start:], page, start, cfg.layout)
        n = n_tokens(text)
    if n <= cfg.max_prompt_tokens:
        return text
    ids = tokenizer(page, add_special_tokens=False)["input_ids"]
    mark = "\n[page cut]"
    keep = max(0, len(ids) - (n - cfg.max_prompt_tokens) - n_tokens(mark) - 2)
    return render(intent, responses[start:], tokenizer.decode(ids[:keep]) + mark, start, cfg.layout)


def answer_token_ids(tokenizer) -> tuple[int, int]:
    """(yes_id, no_id): the tokens whose logits decide the ORM's answer."""
    firsts = []
    for yes, no in ANSWER_WORDS:
        a = tokenizer(yes, add_special_tokens=False)["input_ids"]
        b = tokenizer(no, add_special_tokens=False)["input_ids"]
        if len(a) == 1 and len(b) == 1 and a != b:
            return a[0], b[0]
        if a and b and a[0] != b[0]:
            firsts.append((a[0], b[0]))
    if firsts:
        return firsts[0]
    raise ValueError("the tokenizer cannot tell the ORM's answers apart: no yes/no pair starts with distinct tokens")


def answer_word(tokenizer, label: bool) -> str:
    """The answer text whose first token is the label's answer token."""
    yes_id, no_id = answer_token_ids(tokenizer)
    return tokenizer.decode([yes_id if label else no_id])
