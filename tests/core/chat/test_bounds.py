"""A chat template that would run for ever or fill the memory is stopped or refused, with one
line naming the template; the window (any other thread) keeps running meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bpeinspect.core.chat import bounds
from bpeinspect.core.chat.template import ChatTemplate
from bpeinspect.core.errors import ChatTemplateError

ROOT = Path(__file__).resolve().parents[3]
ORIGIN = "tokenizer_config.json beside the file"
MESSAGES = [{"role": "user", "content": "hi"}]


def render_within(source: str, seconds: float = 30) -> BaseException | str:
    """What rendering ``source`` gives (its text or its error), in a thread given ``seconds``."""
    got: list = []

    def work() -> None:
        try:
            got.append(ChatTemplate(source, origin=ORIGIN).render(MESSAGES))
        except BaseException as exc:  # noqa: BLE001  (the test looks at it)
            got.append(exc)

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(seconds)
    assert got, f"still rendering after {seconds} s"
    return got[0]


def refused_in_one_line(result: BaseException | str) -> str:
    assert isinstance(result, ChatTemplateError), result
    text = str(result)
    assert "\n" not in text and text.startswith(f"the chat template ({ORIGIN})"), text
    return text


@pytest.mark.parametrize(
    "source",
    [
        "{{ lipsum(1e8) }}",
        "{{ strftime_now('%Y' * 100000000) }}",
        "{{ 'a' * 1000000000 }}",
        "{{ [1] * 1000000000 }}",
        "{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% macro f(n) %}{% if n %}{% set s = f(n-1) %}{{ s }}{{ s }}{% endif %}x{% endmacro %}{{ f(60)|length }}",
        "{{ 'a'|center(1000000000) }}",
        "{{ 'a'.center(1000000000) }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{{ ('x' * 30000000).replace('x', 'yyyyyyyy') }}",
        "{% set ns = namespace(l=[]) %}{% set s = 'x' * 30000000 %}"
        "{% for i in range(1000) %}{% set ns.l = ns.l + [s ~ i] %}{% endfor %}",
        "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
    ],
)
def test_what_would_fill_the_memory_is_refused_before_it_runs(source):
    assert "refused" in refused_in_one_line(render_within(source))


@pytest.mark.parametrize(
    "source",
    [
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
        "{% set x = range(99999)|list %}{% for i in x %}{% for j in x %}{% endfor %}{% endfor %}",
    ],
)
def test_a_template_that_never_ends_is_stopped_at_the_time_limit(source, monkeypatch):
    monkeypatch.setattr(bounds, "TIME_LIMIT", 0.5)
    assert "ran longer than 0.5 s" in refused_in_one_line(render_within(source))


def test_after_a_stopped_render_the_next_one_runs_normally(monkeypatch):
    monkeypatch.setattr(bounds, "TIME_LIMIT", 0.3)
    render_within("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}")
    monkeypatch.setattr(bounds, "TIME_LIMIT", 5)
    for _ in range(200):
        assert render_within("{% for m in messages %}{{ m.content }}{% endfor %}") == "hi"
    time.sleep(0.5)  # a late stop, if one were left, would land here
    assert render_within("{% for m in messages %}{{ m.content }}{% endfor %}") == "hi"


@pytest.mark.timeout(120)
def test_a_huge_power_is_refused_before_it_holds_the_interpreter():
    # 10**100000000 is one C call holding the interpreter lock for minutes: no time limit can
    # stop it, and a window's other threads would freeze; it must never start
    code = (
        "from bpeinspect.core.chat.template import ChatTemplate\n"
        "try:\n    ChatTemplate('{{ 10**100000000 }}', origin='x').render([])\n"
        "except Exception as exc:\n    print(exc)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("10**100000000 ran instead of being refused")
    assert "refused" in done.stdout and "bits" in done.stdout, done.stdout + done.stderr


def test_ordinary_templates_keep_rendering():
    source = "{% for m in messages %}{{ '=' * 80 }}{{ m.role|center(20) }}{{ '%5d' % loop.index }}{% endfor %}"
    assert render_within(source) == "=" * 80 + "user".center(20) + "    1"


# the stop can land in another callback that reports it (hypothesis's gc hook); it is raised again until the block ends
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_quitting_stops_a_render_at_once(monkeypatch):
    monkeypatch.setattr(bounds, "TIME_LIMIT", 600)
    got: list = []
    source = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"

    def work() -> None:
        try:
            ChatTemplate(source, origin=ORIGIN).render(MESSAGES)
        except ChatTemplateError as exc:
            got.append(exc)

    t = threading.Thread(target=work, daemon=True)
    t.start()
    while not bounds._watchdog.active and t.is_alive():
        time.sleep(0.01)
    bounds.stop_all()
    t.join(30)
    assert not t.is_alive() and len(got) == 1


def test_a_block_that_loses_its_time_limit_exception_is_stopped_again():
    """The exception raised in a thread past its limit can land where it is swallowed (a garbage
    collector's callback reports it and goes on): the block is stopped again, not left running."""
    swallowed: list[int] = []
    got: list[BaseException] = []

    def work() -> None:
        try:
            with bounds.time_limit(0.05):
                try:
                    while True:
                        pass
                except bounds.TooLong:
                    swallowed.append(1)
                while True:
                    pass
        except bounds.TooLong as exc:
            got.append(exc)

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive() and swallowed == [1] and len(got) == 1


def test_a_value_may_grow_to_twice_what_the_render_was_given_and_no_further(monkeypatch):
    """The bound on a value follows each render's own input (given to its checks, not kept
    beside the thread): a long message may be repeated once, a short one not past the bound."""
    monkeypatch.setattr(bounds, "MAX_TEXT", 1000)
    doubled = ChatTemplate("{{ messages[0].content * 2 }}", origin=ORIGIN)
    assert doubled.render([{"role": "user", "content": "x" * 900}]) == "x" * 1800  # past 1000: given 900
    tripled = ChatTemplate("{{ messages[0].content * 3 }}", origin=ORIGIN)
    with pytest.raises(ChatTemplateError, match="1,000 characters"):
        tripled.render([{"role": "user", "content": "x" * 400}])  # 1200: past the bound of a short input
    with pytest.raises(ChatTemplateError, match="1,830 characters"):  # twice 900 + "role", "user", "content"
        tripled.render([{"role": "user", "content": "x" * 900}])  # 2700: past twice what it was given


def test_the_checks_take_their_bound_as_an_argument():
    from jinja2.exceptions import SecurityError

    bounds.check_size("x" * 11)
    with pytest.raises(SecurityError, match="more than 10 characters"):
        bounds.check_size("x" * 11, 10)
    with pytest.raises(SecurityError, match="past 10 characters"):
        bounds.check_binop("*", "xx", 6, 10)


def test_a_stopped_block_leaves_the_interpreter_running_at_full_pace_under_a_profile_hook():
    """A block stopped at its limit leaves no pending-exception flag behind: clearing the
    exception instead left the flag set, and code run later under a profile hook (a profiler,
    a coverage tool) spun on it for good."""
    script = textwrap.dedent(
        """
        import sys
        from bpeinspect.core.chat import bounds

        try:
            with bounds.time_limit(0.05):
                while True:
                    pass
        except bounds.TooLong:
            pass
        sys.setprofile(lambda *args: None)
        total = sum(len(str(i)) for i in range(20000))
        sys.setprofile(None)
        print(total)
        """
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the code after the stopped block never finished")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(sum(len(str(i)) for i in range(20000)))]
