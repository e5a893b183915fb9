"""Classification metrics of an ORM against ground-truth labels (pure functions).

A "positive" is a predicted success, P > `threshold` (0.5 by default: P(yes) > P(no), the
paper's rule; the `cpu` loop preset rewards P > 0.7, and `webrl orm eval --threshold 0.7` scores
the ORM as that loop uses it). False positives are reported on their own: they are the errors
that teach the agent wrong behaviour.
"""

from __future__ import annotations

from collections import defaultdict


def confusion(probs: list[float], labels: list[bool], threshold: float = 0.5) -> dict[str, int]:
    c = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for p, y in zip(probs, labels, strict=True):
        pred = p > threshold
        c[("t" if pred == bool(y) else "f") + ("p" if pred else "n")] += 1
    return c


def loop_rewards(rows: list[dict]) -> dict | None:
    """The phase loop's training rewards against the evaluators, over `labels.jsonl` rows
    ({p_success, reward, true_reward}; rows without an evaluator, true_reward None, left out):
    rollouts, true successes, rewarded, rewarded rightly, false positives, missed successes and
    the AUC of P(success). None when no row has an evaluator."""
    xs = [x for x in rows if x.get("true_reward") is not None]
    if not xs:
        return None
    truth = [x["true_reward"] >= 1.0 for x in xs]
    c = confusion([x["reward"] for x in xs], truth)  # the loop's own decisions (reward 1 or 0)
    return {"rollouts": len(xs), "true_successes": sum(truth), "rewarded": c["tp"] + c["fp"],
            "true_positives": c["tp"], "false_positives": c["fp"], "missed": c["fn"],
            "auc": auc([x["p_success"] for x in xs], truth)}  # fmt: skip


def _div(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def auc(probs: list[float], labels: list[bool]) -> float | None:
    """ROC AUC: the chance that a random success scores above a random failure (ties count half);
    independent of the 0.5 threshold and of the class ratio. None without both classes."""
    order = sorted(range(len(probs)), key=lambda i: probs[i])
    ranks = [0.0] * len(probs)
    i = 0
    while i < len(order):  # average ranks (1-based) over runs of equal scores
        j = i
        while j + 1 < len(order) and probs[order[j + 1]] == probs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    n_pos = sum(bool(y) for y in labels)
    n_neg = len(labels) - n_pos
    if not n_pos or not n_neg:
        return None
    pos_ranks = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return round((pos_ranks - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg), 4)


def classification(probs: list[float], labels: list[bool], threshold: float = 0.5) -> dict:
    """n, accuracy, precision, recall, f1, false_positive_rate (FP / actual failures), auc, confusion
    (a positive: P > `threshold`; the AUC does not depend on it)."""
    c = confusion(probs, labels, threshold)
    prec = _div(c["tp"], c["tp"] + c["fp"])
    rec = _div(c["tp"], c["tp"] + c["fn"])
    f1 = _div(2 * prec * rec, prec + rec) if prec is not None and rec is not None else None
    return {
        "n": len(labels), "accuracy": _div(c["tp"] + c["tn"], len(labels)), "precision": prec, "recall": rec,
        "f1": f1, "false_positive_rate": _div(c["fp"], c["fp"] + c["tn"]), "auc": auc(probs, labels), "confusion": c,
    }  # fmt: skip


def reliability(probs: list[float], labels: list[bool], bins: int = 10) -> list[dict]:
    """Calibration table: per P-bin, count, mean predicted P and observed success rate; plus ECE
    as the count-weighted mean |mean P - observed| (in the last row's `ece`)."""
    rows = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, p in enumerate(probs) if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        if idx:
            mean_p = sum(probs[i] for i in idx) / len(idx)
            obs = sum(bool(labels[i]) for i in idx) / len(idx)
            rows.append({"bin": f"[{lo:.1f},{hi:.1f})", "n": len(idx), "mean_p": round(mean_p, 4), "observed": round(obs, 4)})
    ece = sum(r["n"] * abs(r["mean_p"] - r["observed"]) for r in rows) / max(1, len(probs))
    return rows + [{"ece": round(ece, 4)}]


def report(probs: list[float], trajs: list[dict], threshold: float = 0.5) -> dict:
    """Overall and per-site (and per-behaviour) metrics at `threshold` plus the reliability table."""
    labels = [bool(t["label"]) for t in trajs]
    out = {"threshold": threshold, "overall": classification(probs, labels, threshold),
           "reliability": reliability(probs, labels)}
    for key in ("site", "behaviour"):
        groups: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(trajs):
            groups[t.get(key, "?")].append(i)
        out[f"per_{key}"] = {
            k: classification([probs[i] for i in idx], [labels[i] for i in idx], threshold)
            for k, idx in sorted(groups.items())
        }
    return out


def format_report(rep: dict) -> str:
    def row(name: str, m: dict) -> str:
        f = lambda v: "  -  " if v is None else f"{v:.3f}"  # noqa: E731
        return f"{name:<14}{m['n']:>6}  {f(m['accuracy'])}  {f(m['precision'])}  {f(m['recall'])}  {f(m['f1'])}  {f(m['false_positive_rate'])}  {f(m.get('auc'))}"

    head = f"{'':<14}{'n':>6}  acc    prec   rec    f1     fpr    auc   (positive: P > {rep.get('threshold', 0.5):g})"
    lines = [head, row("overall", rep["overall"])]
    lines += [row(k, m) for k, m in rep["per_site"].items()]
    lines += [""] + [row(k, m) for k, m in rep["per_behaviour"].items()]
    return "\n".join(lines)
