"""Reading a finished cpu-tiny run: the HTML report in headless Chromium, the study table, and
both regenerated from the run's archive (the run: tests/rl/conftest.py, `killed_run`)."""

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from webrl.cli.main import main  # noqa: E402
from webrl.files import read_jsonl  # noqa: E402


def test_report_opens_in_chromium_with_every_plot(killed_run, tmp_path):
    pytest.importorskip("matplotlib")
    from webrl.env.chromium_engine import chromium_available, find_chromium

    if not chromium_available():
        pytest.skip("needs Chromium and playwright (`make test` installs both)")
    from playwright.sync_api import sync_playwright

    run, _, _ = killed_run
    shot_run = tmp_path / "with-shots"  # a copy whose final episodes carry screenshots
    import shutil

    shutil.copytree(run, shot_run)
    out = tmp_path / "report.html"
    from webrl.orm.metrics import report as orm_report

    orm_eval = tmp_path / "orm_eval.json"  # an `orm eval` result, as it writes one
    orm_trajs = [{"label": True, "site": "shop"}, {"label": False, "site": "shop"}, {"label": False, "site": "map"}]
    orm_rep = orm_report([0.9, 0.2, 0.7], orm_trajs)  # as `webrl demo` writes it: + the loop's threshold
    orm_rep["at_loop_threshold"] = orm_report([0.9, 0.2, 0.7], orm_trajs, threshold=0.75)
    orm_eval.write_text(json.dumps(orm_rep))
    study = tmp_path / "study"  # a `webrl study` folder: two seeds of one config, one of another
    for name, seed in (("webrl", 0), ("webrl", 1), ("no_replay", 0)):
        shutil.copytree(run, study / name / f"seed-{seed}")
    assert main(["report", str(tmp_path / "nothing"), "--out", str(out)]) == 2
    assert main(["report", str(run), "--out", str(out), "--orm-eval", str(tmp_path / "no.json")]) == 2
    assert not out.exists()  # refused before writing anything
    assert main(["report", str(run), str(shot_run), str(study), "--out", str(out), "--orm-eval", str(orm_eval),
                 "--png-dir", str(tmp_path / "png")]) == 0  # fmt: skip
    pngs = {p.name: p.read_bytes() for p in (tmp_path / "png").iterdir()}
    assert {"study-0.png", "study-curves-0.png", "phases-webrl_seed-1.png", "before-after.png"} <= set(pngs)
    assert all(b.startswith(b"\x89PNG") and len(b) > 1000 for b in pngs.values())
    text = out.read_text()
    assert "<td>1.000</td>" in text  # overall AUC: the success outscores both failures
    assert "(positive: P &gt; 0.5)" in text and "(positive: P &gt; 0.75)" in text
    assert "Methods × sites, mean ± std over seeds" in text and "<td>webrl</td>" in text and "(n=2)" in text
    data = out.with_name("report-viewer.html").read_text().split('type="application/json">')[1].split("</script>")[0]
    viewed = json.loads(data)
    sources = {e["source"].split(" · ")[0] for e in viewed}
    from webrl.rollout.taxonomy import CLASSES

    assert all((e["error_class"] is None) == bool(e["success"]) and e["error_class"] in (None, *CLASSES) for e in viewed)
    assert {"run", "with-shots", "webrl/seed-0", "no_replay/seed-0"} <= sources  # a study's first seeds
    assert "webrl/seed-1" not in sources
    # in a thread of its own: the sync API refuses a thread where an event loop runs, and an earlier
    # test in the same worker process may have left one on the main thread
    def check(errors: list) -> None:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
            page = browser.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(out.as_uri())
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
            sizes = page.eval_on_selector_all("img.plot", "els => els.map(e => [e.alt, e.naturalWidth, e.naturalHeight])")
            alts = {a for a, _, _ in sizes}
            assert {"before-after", "errors", "buckets", "phases-run", "stats-run", "study-0", "study-curves-0",
                    "phases-webrl/seed-1"} <= alts  # fmt: skip
            # 5 runs: each one's phases folded but the first, whose block is open
            assert page.eval_on_selector_all("details", "els => els.map(e => e.open)") == [True] + [False] * 4
            assert all(w > 100 and h > 100 for _, w, h in sizes), sizes
            assert "Runs × sites" in page.content()
            # the viewer, for a run without and with screenshots
            eps = [json.loads(x) for x in (shot_run / "phase-001" / "rollouts" / "episodes.jsonl").read_text().splitlines()]
            eps[0]["steps"][0]["screenshot"] = str(shot)
            hostile = '<!--<script>document.title="x"</script> & </script>'  # page text or a response may hold this
            eps[0]["steps"][0]["response"] = hostile
            (shot_run / "phase-001" / "rollouts" / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in eps))
            assert main(["report", str(run), str(shot_run), "--out", str(out)]) == 0
            page.goto(out.with_name("report-viewer.html").as_uri())
            options = page.eval_on_selector_all("#pick option", "els => els.map(e => e.textContent)")
            assert len(options) >= 16  # 2 runs x 2 phases x 4 rollouts
            assert not any("webrl/seed-" in t for t in options)  # this call had no study
            assert page.locator(".step").count() >= 1 and page.locator("img.shot").count() == 0
            shot_idx = next(i for i, t in enumerate(options) if "with-shots · phase-001" in t)
            page.select_option("#pick", str(shot_idx))
            assert page.locator("img.shot").count() == 1
            assert page.eval_on_selector("img.shot", "e => e.naturalWidth") > 100
            assert hostile in page.text_content("body") and page.title() == "WebRL trajectories"  # shown as text
            summary = page.text_content("#summary")  # a failure names its error class
            assert re.search(r" · (success|failure: (fail_to_attempt|fail_to_recover|stuck_midway|wrong_page|other))$", summary), summary
            assert page.locator("pre").first.text_content().startswith("URL: ")
            browser.close()

    errors: list = []
    with ThreadPoolExecutor(1) as pool:
        pool.submit(check, errors).result()
    assert not errors, errors


def test_study_table_from_finished_runs(killed_run, tmp_path, capsys):
    from webrl.eval.study import format_results, outcomes, paired, results, sign_test

    run, sft, _ = killed_run
    import shutil

    for name, seed in (("webrl", 0), ("webrl", 1), ("no_replay", 0)):
        shutil.copytree(run, tmp_path / name / f"seed-{seed}")
    # a run still going (its last phase's eval not done) is not counted, whatever subset evals it has
    shutil.copytree(run, tmp_path / "no_replay" / "seed-1")
    cfg = json.loads((run / "train_config.json").read_text())
    (tmp_path / "no_replay" / "seed-1" / f"phase-{cfg['phases']:03d}" / "eval" / "done").unlink()
    shutil.rmtree(tmp_path / "no_replay" / "seed-1" / "final", ignore_errors=True)
    table = results(tmp_path, ["webrl", "no_replay"], [0, 1])
    assert set(table) == {"start", "webrl", "no_replay"}
    assert table["webrl"]["all"]["n"] == 2 and table["webrl"]["all"]["std"] == 0.0 and table["no_replay"]["all"]["n"] == 1
    # the same actor trained into identical copies: each final eval against its own start eval
    f0 = outcomes(tmp_path / "webrl" / "seed-0" / "final" / "eval") or outcomes(
        tmp_path / "webrl" / "seed-0" / f"phase-{cfg['phases']:03d}" / "eval")
    s0 = outcomes(tmp_path / "webrl" / "seed-0" / "phase-000" / "eval")
    w, lo = paired(s0, f0)
    assert table["webrl"]["vs_start"] == {"won": 2 * w, "lost": 2 * lo, "p": float(f"{sign_test(2 * w, 2 * lo):.3g}")}
    md = format_results(table)
    assert md.startswith("| config | all |") and "| webrl |" in md and md.splitlines()[0].endswith("| mean steps | wall min | tasks won / lost vs start | won / lost vs webrl |")
    assert table["no_replay"]["vs_full"] == {"won": 0, "lost": 0, "p": 1.0}  # a copy of webrl's seed-0 run
    # a run's wall minutes: its phases' (metrics.jsonl) plus its final eval's, by hand from the files
    r0 = tmp_path / "webrl" / "seed-0"
    final = r0 / "final" / "eval" / "summary.json"
    phases = sum(json.loads(x)["minutes"] for x in (r0 / "metrics.jsonl").read_text().splitlines())
    want = phases + (json.loads(final.read_text())["wall_minutes"] if final.exists() else 0.0)
    assert table["webrl"]["minutes"]["n"] == 2 and abs(table["webrl"]["minutes"]["mean"] - want) < 0.01
    assert "minutes" not in table["start"]
    assert table["webrl"]["steps"]["n"] == 2 and "steps" not in md.splitlines()[0].split("| mean steps")[0]
    assert md.split("| start |")[1].splitlines()[0].endswith("| - |")  # the start has nothing to pair with
    assert " ± 0.0 (n=2)" in md.split("| webrl |")[1].splitlines()[0]
    assert " ± " not in md.split("| no_replay |")[1].splitlines()[0]  # one seed: no spread to show
    # --table writes the table of the finished runs and runs nothing (no --init needed)
    assert main(["study", "--out", str(tmp_path), "--table"]) == 0  # configs and seeds: the folder's
    assert json.loads((tmp_path / "results.json").read_text())["no_replay"]["all"]["n"] == 1
    assert main(["study", "--out", str(tmp_path / "none"), "--table"]) == 2
    assert main(["study", "--out", str(tmp_path)]) == 2  # running needs --init
    assert main(["study", "--out", str(tmp_path), "--init", "x", "--archive", str(tmp_path / "a")]) == 2  # inside
    # the command resumes finished runs (no-ops) and writes the table
    archived = tmp_path.parent / f"{tmp_path.name}-archive"
    assert main(["study", "--out", str(tmp_path), "--init", str(sft / "final"), "--preset", "cpu-tiny", "--demos", str(sft / "demos.jsonl"),
                 "--seeds", "1", "--configs", "webrl", "--threads", str(torch.get_num_threads()), "--no-progress",
                 "--archive", str(archived)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert (tmp_path / "results.md").exists() and "| webrl |" in printed
    # --archive: the slim copy was refreshed after the run, and its table is the study's
    assert (archived / "ARCHIVE.json").exists() and (archived / "results.md").read_text() == (tmp_path / "results.md").read_text()
    assert not list(archived.rglob("*.safetensors")) and not list(archived.rglob("*.pt"))
    assert f"#### study: webrl, seed 0 -> {tmp_path / 'webrl' / 'seed-0'} (run 1 of 1)\n" in printed  # done: no ETA
    saved = json.loads((tmp_path / "study_config.json").read_text())  # what ran, for a rerun and the report
    assert saved["configs"] == ["webrl"] and saved["seeds"] == [0] and saved["args"]["preset"] == "cpu-tiny"
    # run in parts: a later invocation with other configs adds to the study, not replaces it
    cfg_path = tmp_path / "no_replay" / "seed-0" / "train_config.json"  # (a copy of a webrl run: make it no_replay's)
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), "replay": False}))
    assert main(["study", "--out", str(tmp_path), "--init", str(sft / "final"), "--preset", "cpu-tiny", "--demos", str(sft / "demos.jsonl"),
                 "--seeds", "1", "--configs", "no_replay", "--threads", str(torch.get_num_threads()), "--no-progress"]) == 0  # fmt: skip
    saved = json.loads((tmp_path / "study_config.json").read_text())
    assert saved["configs"] == ["webrl", "no_replay"] and saved["seeds"] == [0]
    assert "| webrl |" in (tmp_path / "results.md").read_text() and "| no_replay |" in (tmp_path / "results.md").read_text()


def test_an_archived_study_regenerates_its_table_and_report(killed_run, tmp_path, monkeypatch):
    """`webrl archive` of a study: no weights, no page text, and the table and the report come out the
    same from it (large episode files read through their .gz)."""
    pytest.importorskip("matplotlib")
    import shutil

    from webrl.eval import archive as arch
    from webrl.eval.study import results

    run, _, _ = killed_run
    study, out = tmp_path / "study", tmp_path / "archive"
    for name, seed in (("webrl", 0), ("webrl", 1), ("no_replay", 0)):
        shutil.copytree(run, study / name / f"seed-{seed}")
    monkeypatch.setattr(arch, "GZIP_OVER", 2000)  # so the episode files here take the .gz path
    assert main(["archive", str(study), "--out", str(study / "a")]) == 2  # inside the source: refused
    assert main(["archive", str(study), "--out", str(out)]) == 0
    size = lambda root: sum(f.stat().st_size for f in root.rglob("*") if f.is_file())  # noqa: E731
    assert size(out) < size(study) / 10
    assert list(out.rglob("episodes.jsonl.gz")) and not list(out.rglob("*.safetensors")) and not list(out.rglob("tb"))
    eps = read_jsonl(out / "webrl" / "seed-0" / "phase-001" / "rollouts" / "episodes.jsonl")
    full = read_jsonl(run / "phase-001" / "rollouts" / "episodes.jsonl")
    assert [e["task_id"] for e in eps] == [e["task_id"] for e in full]
    assert all("final_obs" not in e and all("obs" not in st for st in e["steps"]) for e in eps)
    assert [st["response"] for st in eps[0]["steps"]] == [st["response"] for st in full[0]["steps"]]
    names, seeds = ["webrl", "no_replay"], [0, 1]
    assert results(out, names, seeds) == results(study, names, seeds)
    assert main(["report", str(out), "--out", str(tmp_path / "r.html")]) == 0
    assert main(["report", str(study), "--out", str(tmp_path / "s.html")]) == 0
    imgs = lambda f: (tmp_path / f).read_text().count('<img class="plot"')  # noqa: E731
    assert imgs("r.html") == imgs("s.html") > 3
    def viewer_steps(name: str) -> list[dict]:
        data = (tmp_path / name).read_text().split('type="application/json">')[1].split("</script>")[0]
        return [st for e in json.loads(data.replace("<\\/", "</")) for st in e["steps"]]

    archived, full = viewer_steps("r-viewer.html"), viewer_steps("s-viewer.html")
    assert len(archived) == len(full) > 0 and [st["response"] for st in archived] == [st["response"] for st in full]
    assert all("obs" not in st for st in archived) and all(st["obs"].startswith("URL: ") for st in full)  # pages: not kept
