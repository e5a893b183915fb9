"""The actor prompt (WebRL layout), shared by SFT, rollouts, the critic and the ORM.

Layout, as chat messages (a model with a chat template gets them through it; one
without gets the plain rendering below):

    system     the rules (short; `PromptConfig.system`, None = no system message)
    user       Task: <intent>\n\n<page of round 0, or its placeholder>
    assistant  <response of round 0>
    user       <page of round 1, or its placeholder>
    ...
    user       <current page>          <- the only full page in the prompt
               Task: <intent>          <- repeated after the page (`repeat_intent`)
               Done so far: Click [Blue Mug]; Type "2" in [qty]
                                       <- the kept rounds' actions in a few words (`recap`, opt-in)

Past pages are replaced by a one-line placeholder that keeps their URL path and
any error line (`URL: /shop/cart [page omitted]`); past responses are kept.
The intent is repeated right after the current page (`repeat_intent`): a small model
attends poorly to an instruction 500 tokens back. Measured on 60 shop train tasks
(runs/sft-shop60, docs/results.md): without the repeat the SFT actor reproduced its
own training step 2 (the product page, where the right action depends only on the
task's verb) in 15/56 cases, answering "Add to cart" for price questions.
Truncation to `max_prompt_tokens` drops the oldest rounds first (saying how many),
then cuts the end of the current page: the instruction and the beginning of the
latest page always stay.

Pages are shown in the compact label-first view of agent/view.py (`[Blue Mug](12)`)
unless `compact` is off. Responses: one action, optionally after `# ...` comment
lines. Demonstrations copy the target element first, exactly as the page shows it
(`# Element: [Blue Mug](12)`): a forward copy that ends on the id, the cleanest
grounding signal for a small model, before it writes the action.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from webrl.agent.view import compact_page, element_ref
from webrl.env.actions import ELEMENT_ACTIONS, parse_action

DEFAULT_SYSTEM = (
    "You are a web agent. Reply with one action: do(...) or exit(message=...). "
    'If the task is impossible, reply exit(message="N/A").'
)
STOP_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "</s>")
_URL = re.compile(r"^URL: \w+://[^/\s]+")


@dataclass(frozen=True)
class PromptConfig:
    """How observations and history become the actor's prompt."""

    max_prompt_tokens: int = field(
        default=1536, metadata={"help": "token budget of a prompt; older rounds, then the page's end, are cut"}
    )
    system: str | None = field(
        default=DEFAULT_SYSTEM, metadata={"help": "system message (None: none; the chat template may add its own)"}
    )
    placeholder: str = field(default="[page omitted]", metadata={"help": "stands in for a past round's page"})
    use_chat_template: bool = field(
        default=True, metadata={"help": "render through the tokenizer's chat template when it has one"}
    )
    element_comment: bool = field(
        default=True, metadata={"help": 'demonstrations write "# Element: <label>" before element actions'}
    )
    max_rounds: int = field(
        default=0, metadata={"help": "keep at most this many past rounds (0 = all that fit the token budget)"}
    )
    compact: bool = field(
        default=True,
        metadata={"help": "show pages in the compact label-first view of agent/view.py ([label](id))"},
    )
    repeat_intent: bool = field(
        default=True, metadata={"help": "repeat `Task: <intent>` after the current page, next to the answer"}
    )
    recap: bool = field(
        default=False,
        metadata={"help": "after the repeated intent, a `Done so far:` line with the past rounds' actions in a few "
                  "words (`short_action`), so the plan's progress sits next to the answer too"},
    )

    def __post_init__(self):
        if self.max_rounds < 0:
            raise ValueError(f"PromptConfig.max_rounds must be >= 0 (0 = all), got {self.max_rounds}")
        if self.max_prompt_tokens < 64:
            raise ValueError(f"PromptConfig.max_prompt_tokens must be >= 64, got {self.max_prompt_tokens}")


def placeholder(obs: str, cfg: PromptConfig) -> str:
    """A past page as one line (URL path + placeholder), plus its error line if any."""
    lines = obs.splitlines()
    url = _URL.sub("URL: ", lines[0]) if lines and lines[0].startswith("URL:") else ""
    out = f"{url} {cfg.placeholder}".strip()
    errors = [ln for ln in lines[1:4] if ln.startswith("[Error:")]
    return "\n".join([out, *errors])


def fold(response: str) -> str:
    """One line per step: the raw response with its newlines folded."""
    return " | ".join(line.strip() for line in response.strip().splitlines() if line.strip())


_ELEMENT_COMMENT = re.compile(r"#\s*Element:\s*\[(.*?)\]\((\d+)\)")


def _quoted(text: str, width: int) -> str:
    return json.dumps(text[:width], ensure_ascii=False)


def short_action(response: str, width: int = 60) -> str:
    """A response as the action it takes, in a few words: `Click [Add to cart]`, `Type "4" in [qty]`,
    `Exit "$12.99"`, `Go Backward`; the element named by the response's own `# Element: [label](id)`
    comment when its id is the action's (else `#id`); `Invalid: <response>` when it does not parse.
    Used by the actor's recap line (`PromptConfig.recap`) and the encoder ORM's short actions, where
    segment A fell from a median of 205 to 123 tokens on a train-split holdout (docs/results.md,
    session 2026-12-02 (5))."""
    a = parse_action(response).action
    if a is None:
        return f"Invalid: {fold(response)[:width]}"
    if a.kind == "exit":
        return f"Exit {_quoted(a.argument or '', width)}"
    words = [a.kind]
    if a.argument is not None:
        words.append(_quoted(a.argument, width) + (" in" if a.element is not None else ""))
    if a.element is not None:
        named = {int(i): label for label, i in _ELEMENT_COMMENT.findall(response)}
        words.append(f"[{named[a.element][:width]}]" if a.element in named else f"#{a.element}")
    return " ".join(words)


def build_messages(
    intent: str, history: list[tuple[str, str]], obs: str, cfg: PromptConfig, omitted: int = 0
) -> list[dict[str, str]]:
    """Chat messages for the current step. `history` is [(page, response)] of past rounds."""
    msgs = [{"role": "system", "content": cfg.system}] if cfg.system else []
    head = f"Task: {intent}\n\n"
    if omitted:
        head += f"[{omitted} earlier round{'s' if omitted > 1 else ''} omitted]\n\n"
    for page, response in history:
        msgs.append({"role": "user", "content": head + placeholder(page, cfg)})
        msgs.append({"role": "assistant", "content": response})
        head = ""
    page = compact_page(obs) if cfg.compact else obs
    tail = f"\n\nTask: {intent}" if cfg.repeat_intent else ""
    if cfg.recap and history:
        tail += "\nDone so far: " + "; ".join(short_action(r) for _, r in history)
    msgs.append({"role": "user", "content": head + page + tail})
    return msgs


def has_chat_template(tokenizer, cfg: PromptConfig) -> bool:
    return cfg.use_chat_template and bool(getattr(tokenizer, "chat_template", None))


def render(tokenizer, messages: list[dict[str, str]], cfg: PromptConfig) -> str:
    """Prompt text ending where the assistant's response starts."""
    if has_chat_template(tokenizer, cfg):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    parts = []
    for m in messages:
        if m["role"] == "assistant":
            parts.append(f"Action:\n{m['content']}{tokenizer.eos_token or ''}\n\n")
        else:
            parts.append(f"{m['content']}\n\n")
    return "".join(parts) + "Action:\n"


def completion_text(tokenizer, response: str, cfg: PromptConfig) -> str:
    """What the model is trained to write after the prompt: the response and its end token."""
    if has_chat_template(tokenizer, cfg):
        msgs = [{"role": "user", "content": "x"}]
        prompt = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        full = tokenizer.apply_chat_template(
            [*msgs, {"role": "assistant", "content": response}], tokenize=False
        )
        if full.startswith(prompt):
            tail = full[len(prompt) :]
            for stop in STOP_TOKENS:  # end right after the end-of-turn token
                if stop in tail:
                    return tail[: tail.index(stop) + len(stop)]
            return tail
    return response + (tokenizer.eos_token or "")


def count_tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def build_prompt(tokenizer, intent: str, history: list[tuple[str, str]], obs: str, cfg: PromptConfig) -> str:
    """The prompt for one step, truncated to `cfg.max_prompt_tokens` (see module docstring)."""
    start = max(0, len(history) - cfg.max_rounds) if cfg.max_rounds else 0
    while True:
        text = render(tokenizer, build_messages(intent, history[start:], obs, cfg, start), cfg)
        n = count_tokens(tokenizer, text)
        if n <= cfg.max_prompt_tokens or start >= len(history):
            break
        start += 1
    if n <= cfg.max_prompt_tokens:
        return text
    if cfg.compact:
        obs = compact_page(obs)
        cfg = replace(cfg, compact=False)  # already rewritten: the cut below works on the view
    ids = tokenizer(obs, add_special_tokens=False)["input_ids"]
    mark = "\n[page cut]"
    keep = max(0, len(ids) - (n - cfg.max_prompt_tokens) - count_tokens(tokenizer, mark) - 2)
    cut = tokenizer.decode(ids[:keep]) + mark
    return render(tokenizer, build_messages(intent, history[start:], cut, cfg, start), cfg)


def stop_token_ids(tokenizer) -> list[int]:
    """Token ids that end a response: eos and the usual end-of-turn tokens present in the vocab."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    vocab = tokenizer.get_vocab()
    ids |= {vocab[t] for t in STOP_TOKENS if t in vocab}
    return sorted(ids)


def end_of_action(text: str) -> int | None:
    """Where a response is complete: just after the newline that ends its first action line
    (`do(...)` / `exit(...)`), or None while no action line has been finished."""
    pos = 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        if line.lstrip().startswith(("do(", "exit(")) and line.endswith("\n"):
            return pos
    return None


def trim_response(text: str) -> str:
    """The response up to its first complete action line (later lines dropped), stripped."""
    end = end_of_action(text)
    return (text[:end] if end is not None else text).strip()


def element_label(el: dict) -> str:
    """Short text naming an element, as it appears next to its id on the page."""
    attrs = el.get("attrs", {})
    text = el.get("text", "")
    clickable = el["tag"] in ("a", "button") or attrs.get("type") in ("submit", "button", "reset", "image")
    if clickable and text:
        return text
    if attrs.get("name"):
        return f"name={attrs['name']}"
    return text or el["tag"]


def annotate(response: str, info: dict, cfg: PromptConfig) -> str:
    """A demonstration response with `# Element: <label>` before an element action."""
    parsed = parse_action(response)
    if not cfg.element_comment or parsed.action is None or parsed.action.kind not in ELEMENT_ACTIONS:
        return response
    for el in info.get("elements", []):
        if el["id"] == parsed.action.element:
            return f"# Element: {element_ref(el) if cfg.compact else element_label(el)}\n{response}"
    return response


PROMPT_FILE = "prompt_config.json"


def save_prompt_config(cfg: PromptConfig, directory) -> None:
    """Write `prompt_config.json` (next to a checkpoint: the prompt it was trained with)."""
    import json
    from dataclasses import asdict
    from pathlib import Path

    Path(directory).mkdir(parents=True, exist_ok=True)
    (Path(directory) / PROMPT_FILE).write_text(json.dumps(asdict(cfg), indent=1) + "\n")


def load_prompt_config(directory) -> PromptConfig:
    """The prompt config saved with a checkpoint (`prompt_config.json`, else the `prompt` of its
    `sft_config.json`), or the default for a directory without one (or a non-directory)."""
    import json
    from pathlib import Path

    d = Path(str(directory))
    for name, key in ((PROMPT_FILE, None), ("sft_config.json", "prompt")):
        f = d / name
        if f.is_file():
            data = json.loads(f.read_text())
            data = data.get(key) if key else data
            if isinstance(data, dict):
                data.setdefault("repeat_intent", False)  # saved before the field existed: trained without
                data.setdefault("recap", False)
                return PromptConfig(**data)
    return PromptConfig()
