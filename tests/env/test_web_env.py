"""WebEnv over a real (tiny) Flask site: forms, errors, limits, history, isolation."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import notes_task

from webrl.env.page_view import PageView
from webrl.env.web_env import EnvConfig, WebEnv


@pytest.fixture
def env(notes_world):
    e = WebEnv(EnvConfig(), world=notes_world)
    yield e
    e.close()


def ids(info, **match):
    view = PageView("", info)
    return view.find(**match).id


def test_reset_logs_in_and_observes(env):
    obs, info = env.reset(options={"task": notes_task()})
    assert obs.startswith("URL: http://127.0.0.1:7770/notes/")
    assert "Signed in as ann" in obs
    assert '<a id=2>All sites</a>' in obs
    assert '<input id=3 name=q placeholder="Search notes" value="">' in obs
    assert info["elements"][0] == {
        "id": 1, "tag": "a", "text": "Notes", "attrs": {"href": "/notes/"},
        "options": [], "line": 0, "visible": True,
    }  # fmt: skip


def test_form_submission_changes_state_and_scores(env):
    obs, info = env.reset(options={"task": notes_task()})
    steps = [
        f'do(action="Type", argument="Groceries", element="{ids(info, name="title")}")',
        f'do(action="Type", argument="hello milk", element="{ids(info, name="body")}")',
        f'do(action="Select Dropdown Option", argument="Green", element="{ids(info, name="color")}")',
        f'do(action="Click", element="{ids(info, name="pin")}")',
    ]
    for a in steps:
        obs, r, term, trunc, info = env.step(a)
        assert info["action_error"] is None
    assert 'value="Groceries"' in obs and "hello milk</textarea>" in obs and "checked" in obs
    obs, r, term, trunc, info = env.step(f'do(action="Click", element="{ids(info, text="Add note")}")')
    assert "/notes/note/6" in info["url"]
    assert "Color: g" in obs and "Pinned: yes" in obs
    obs, r, term, trunc, info = env.step('exit(message="done")')
    assert term and not trunc and r == 1.0 and info["answer"] == "done"


def test_search_submits_get_form(env):
    obs, info = env.reset(options={"task": notes_task()})
    obs, *_, info = env.step(f'do(action="Search", argument="Note 3", element="{ids(info, name="q")}")')
    assert info["url"].endswith("/notes/?q=Note+3")
    assert "Note 3" in obs and "Note 2" not in obs


def test_wrong_ending_scores_zero(env):
    env.reset(options={"task": notes_task()})
    obs, r, term, *_ = env.step('exit(message="I added it")')
    assert term and r == 0.0


@pytest.mark.parametrize(
    "action, error",
    [
        ('do(action="Click", element="999")', "does not exist"),
        ('do(action="Type", argument="x", element="1")', "cannot type into a <a>"),
        ('do(action="Select Dropdown Option", argument="Blue", element="{color}")', "no single option"),
        ('do(action="Click", element="{nothing}")', "does nothing"),
        ('do(action="Press Enter")', "nothing is focused"),
        ('do(action="Go Forward")', "no page to go forward"),
        ('do(action="Scroll Up")', "top of the page"),
        ("rm -rf /", "no action found"),
    ],
)
def test_invalid_actions_are_noops_with_errors(env, action, error):
    obs0, info = env.reset(options={"task": notes_task()})
    action = action.format(color=ids(info, name="color"), nothing=ids(info, text="Does nothing"))
    obs, r, term, trunc, info = env.step(action)
    assert error in info["action_error"]
    assert f"[Error: {info['action_error']}]" in obs
    assert not term and not trunc
    assert info["url"].endswith("/notes/")


def test_truncation_after_repeats_and_max_steps(notes_world):
    env = WebEnv(EnvConfig(max_steps=30, max_repeats=5), world=notes_world)
    env.reset(options={"task": notes_task()})
    for _ in range(5):
        *_, term, trunc, info = env.step("garbage")
    assert trunc and not term and info["repeats"] == 5
    env = WebEnv(EnvConfig(max_steps=3), world=notes_world)
    _, info = env.reset(options={"task": notes_task()})
    env.step(f'do(action="Click", element="{ids(info, text="Note 0")}")')
    env.step('do(action="Go Backward")')
    *_, trunc, info = env.step(f'do(action="Click", element="{ids(info, text="Note 1")}")')
    assert trunc and info["step"] == 3
    with pytest.raises(RuntimeError):
        env.step('do(action="Go Backward")')


def test_truncation_when_a_cycle_revisits_the_same_page_and_action(notes_world):
    def cycle(max_revisits):
        env = WebEnv(EnvConfig(max_steps=30, max_revisits=max_revisits), world=notes_world)
        _, info = env.reset(options={"task": notes_task()})
        click = f'do(action="Click", element="{ids(info, text="Note 0")}")'
        for step in range(1, 9):  # list -> note -> list -> note ...: never two identical actions in a row
            *_, term, trunc, info = env.step(click if step % 2 else 'do(action="Go Backward")')
            if trunc:
                return step, info
        return None, info

    step, info = cycle(3)
    # the note page is new at step 2, which restarts the count: its 3rd "back" (step 6) ends the episode
    assert step == 6 and info["revisits"] == 3 and info["repeats"] == 0
    assert cycle(0)[0] is None  # rule off


def test_history_and_scroll(env):
    obs, info = env.reset(options={"task": notes_task()})
    obs, *_, info = env.step(f'do(action="Click", element="{ids(info, text="Long page")}")')
    assert "more lines below" in obs and info["viewport"]["count"] > 1
    assert not PageView(obs, info).find("Long page").visible
    first = obs
    obs, *_, info = env.step('do(action="Scroll Down")')
    assert info["viewport"]["index"] == 1 and "lines above" in obs and obs != first
    obs, *_, info = env.step(f'do(action="Click", element="{ids(info, text="Note 0")}")')
    assert "/notes/note/1" in info["url"]
    obs, *_, info = env.step('do(action="Go Backward")')
    assert info["url"].endswith("long=80") and info["viewport"]["index"] == 0
    obs, *_, info = env.step('do(action="Go Forward")')
    assert "/notes/note/1" in info["url"]


def test_isolation_between_interleaved_episodes(notes_world):
    a, b = WebEnv(world=notes_world), WebEnv(world=notes_world)
    _, ia = a.reset(options={"task": notes_task()})
    _, ib = b.reset(options={"task": notes_task()})
    a.step(f'do(action="Type", argument="Only in A", element="{ids(ia, name="title")}")')
    b.step(f'do(action="Type", argument="Only in B", element="{ids(ib, name="title")}")')
    obs_a, *_ = a.step(f'do(action="Click", element="{ids(ia, text="Add note")}")')
    obs_b, *_ = b.step(f'do(action="Click", element="{ids(ib, text="Add note")}")')
    assert a.session.fetch(a.session.url).count("Only in A") == 1
    home_a = a.session.fetch("http://127.0.0.1:7770/notes/")
    home_b = b.session.fetch("http://127.0.0.1:7770/notes/")
    assert "Only in A" in home_a and "Only in B" not in home_a
    assert "Only in B" in home_b and "Only in A" not in home_b
    c = WebEnv(world=notes_world)
    c.reset(options={"task": notes_task()})
    home_c = c.session.fetch("http://127.0.0.1:7770/notes/")
    assert "Only in" not in home_c


def test_huge_and_hostile_inputs_never_raise(env):
    env.reset(options={"task": notes_task()})
    for action in ["x" * 100_000, 'do(action="Type", argument="' + "y" * 100_000 + '", element="9")',
                   "do(" * 2000, 'exit(message=' + "[" * 500 + ")", "\x00\x01", 'do(action="Click", element="-1")']:  # fmt: skip
        obs, r, term, trunc, info = env.step(action)
        assert info["action_error"] and not term
        if trunc:
            env.reset(options={"task": notes_task()})


@settings(max_examples=6000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.text(max_size=80),
    st.builds(lambda k, e, a: f'do(action="{k}", element="{e}", argument={a!r})',
              st.sampled_from(["Click", "Type", "Search", "Select Dropdown Option", "Press Enter",
                               "Go Backward", "Go Forward", "Scroll Down", "Scroll Up"]),
              st.integers(-2, 20), st.text(max_size=12)),
))  # fmt: skip
def test_env_fuzz_never_raises(env, text):
    if env._done:
        env.reset(options={"task": notes_task()})
    obs, r, term, trunc, info = env.step(text)
    assert obs.startswith("URL: ")
    if term or trunc:
        env.reset(options={"task": notes_task()})
