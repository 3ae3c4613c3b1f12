"""Comments and docstrings stay true and terse: every repository path or `chattts_studio.`
module they name exists, and the code's own (core/, gui/) carry no issue numbers or dates,
which belong to docs/ and git. Pure text over the files: no imports of the code."""

import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("core", "gui", "tests")
CODE = ("core", "gui")
# Top-level folders a path may start with; build/ is generated, so what it names is not checked.
TOP = {"core", "gui", "tests", "docs", "resources", ".ci"}
# A path without a top-level folder counts when it ends in one of these (or in /) and its first
# folder is one of the repository's; engine/decode/slots.py, decode/, utils/dl.py (ChatTTS's).
SUFFIXES = {
    ".py", ".md", ".json", ".jsonl", ".txt", ".toml", ".sh", ".ts", ".qm", ".svg", ".png",
    ".wav", ".html", ".js", ".css", ".cfg", ".ini", ".yml", ".yaml", ".desktop",
}  # fmt: skip
SKIPPED_DIRS = {".git", ".venv", "build", "__pycache__", "node_modules", ".mypy_cache"}
# A comment, or a string (whole, so that a # in it is no comment and a quote in a comment no
# string).
LEXEMES = re.compile(
    r"(?P<comment>#[^\n]*)|(?<!\w)[rRbBuUfF]{0,2}(?P<string>"
    r"'''(?:\\[\s\S]|[^\\])*?'''|\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\""
    r"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")"
)
PATH_TOKEN = re.compile(r"[\w.~$*{}<>/-]+")
MODULE = re.compile(r"\bchattts_studio(?:\.\w+)+")
# A stem that stands for any name: FOLDER, NAME.wav, x.py.
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*|[a-z]")

MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)"
)
HISTORY = [
    # issue 34, issues 12 and 13, Issue #7, PR 5, pull request 649
    re.compile(r"\b(?:issues?|PRs?|pull requests?)\s+#?\d+", re.IGNORECASE),
    # (#34), see #34, fixes #34, #34's; a hex colour (#333, #000000) or a rank (the #1) is none
    re.compile(r"(?<![\w&#])(?<!the )(?<!rank )#(?!\d{3}\b|\d{6}\b)\d{1,5}\b(?!-)"),
    # 2026-11-30 or 2026-11
    re.compile(r"\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?\b"),
    # 30 Nov, 1st December
    re.compile(rf"\b(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+{MONTH}\b"),
    # Nov 30, December 1st, November 2026
    re.compile(rf"\b{MONTH}\.?\s+(?:(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?|(?:19|20)\d\d)\b"),
]


def sources(*tops: str) -> list[Path]:
    return sorted(
        p for top in tops for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts
    )


def texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) for each comment and each line of each docstring of one file: a
    triple-quoted string that opens the module or follows a `:` (ast and tokenize would take
    seconds over the tree)."""
    source = path.read_text(encoding="utf-8")
    line, start, end, last = 1, 0, 0, ""  # last: the last character of code before a lexeme
    for match in LEXEMES.finditer(source):
        line += source.count("\n", start, match.start())
        code = source[end : match.start()].strip()
        last, start, end = code[-1] if code else last, match.start(), match.end()
        if match.group("comment") is not None:
            yield line, match.group("comment").lstrip("#")
            continue
        text = match.group("string")
        opens_line = not source[source.rfind("\n", 0, match.start()) + 1 : match.start()].strip()
        if text.startswith(('"""', "'''")) and opens_line and last in ("", ":"):
            for offset, part in enumerate(text[3:-3].split("\n")):
                yield line + offset, part
        last = text[-1]


def passages(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of each whole comment (a run of comment lines, one after another)
    and each whole docstring, joined by spaces: a number or a date split over two lines is
    found as one."""
    run: list[str] = []
    first = previous = 0
    for number, line in texts(path):
        if run and number != previous + 1:
            yield first, " ".join(run)
            run = []
        if not run:
            first = number
        run.append(line.strip())
        previous = number
    if run:
        yield first, " ".join(run)


@cache
def repository() -> tuple[frozenset[str], frozenset[str]]:
    """Every file and folder of the checkout as a relative POSIX path, and every folder's name."""
    paths, names = set(), set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        rel = Path(folder).relative_to(ROOT)
        if rel.parts:
            paths.add(rel.as_posix())
            names.add(rel.name)
        paths.update((rel / f).as_posix() for f in files)
    return frozenset(paths), frozenset(names)


def dead_path(token: str, in_tests: bool) -> bool:
    """Whether a path-like token names a repository path that does not exist (False for what is
    not one: steps/s, text/plain, a placeholder, a glob, a path on the user's machine)."""
    path = token.rstrip(".-").removeprefix("./")
    parts = path.rstrip("/").split("/")
    if "/" not in path or not parts[0] or any(c in path for c in "~$*{}<>") or "..." in path:
        return False
    if parts[0] == "build" or any(PLACEHOLDER.fullmatch(p.split(".")[0]) for p in parts):
        return False
    paths, names = repository()
    clean = path.rstrip("/")
    if parts[0] in TOP:
        return clean not in paths and not (in_tests and f"tests/{clean}" in paths)
    if parts[0] not in names or not (path.endswith("/") or Path(clean).suffix in SUFFIXES):
        return False
    return clean not in paths and not any(p.endswith(f"/{clean}") for p in paths)


def module_file(parts: list[str]) -> Path | None:
    """The file (or folder) of chattts_studio.<parts>, laid out as it installs."""
    if not parts or parts[0] not in ("core", "gui", "resources"):
        return None
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py", base):
        if candidate.exists():
            return candidate
    return None


def dead_module(name: str) -> bool:
    """chattts_studio.core.x.y names a module, or a name defined in one (.y.Class.method)."""
    parts = name.split(".")[1:]
    if not parts:
        return False
    for cut in range(len(parts), max(len(parts) - 3, 0), -1):
        found = module_file(parts[:cut])
        if found is None:
            continue
        if cut == len(parts):
            return False
        if found.is_file():
            words = re.findall(r"\w+", found.read_text(encoding="utf-8"))
            return parts[cut] not in words
        return True
    return True


def dead_references(path: Path, line: str) -> list[str]:
    in_tests = path.relative_to(ROOT).parts[0] == "tests"
    found = [m.group(0) for m in MODULE.finditer(line) if dead_module(m.group(0))]
    for match in PATH_TOKEN.finditer(line):
        before = line[match.start() - 1] if match.start() else ""
        if before not in (":", "/") and dead_path(match.group(0), in_tests):
            found.append(match.group(0).rstrip(".-"))
    return found


def history(line: str) -> list[str]:
    """Issue numbers and dates in one line (a file name such as runs/2026-11-30-h200.json
    is a name, not a date)."""
    line = " ".join(word for word in line.split() if "/" not in word)
    return [m.group(0) for pattern in HISTORY for m in pattern.finditer(line)]


def findings(tops: tuple[str, ...], check, whole: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """What `check` finds in each line (`whole`: each whole comment or docstring)."""
    out = []
    for path in sources(*tops):
        for number, line in passages(path) if whole else texts(path):
            for hit in check(path, line):
                out.append(f"{path.relative_to(ROOT)}:{number}: {hit}")
    return out


def test_the_checks_tell_references_from_prose() -> None:
    code = ROOT / "core" / "paths.py"
    for dead in (
        "see core/engine/no_such.py",
        "(tests/test_no_such.py)",
        "`docs/no_such.md`,",
        "engine/decode/no_such.py.",
        "chattts_studio.core.no_such",
        "chattts_studio.core.paths.no_such_name",
    ):
        assert dead_references(code, dead), dead
    for alive in (
        "core/engine/decode/streaming.py and engine/decode/streaming.py, decode/streaming.py",
        "gui/window/ docs/performance.md resources/i18n/*.ts tests/... build/anything.py",
        "FOLDER/manifest.out.jsonl takes/NAME.wav ~/x/y.py /tmp/a/b.py core/x.py",
        "steps/s, text/plain, I/O, min/max, utils/dl.py, https://example.com/core/a.py",
        "chattts_studio.core.paths chattts_studio.core.paths.data_dir chattts_studio.resources",
    ):
        assert not dead_references(code, alive), (alive, dead_references(code, alive))
    for dated in (
        "issue 34",
        "issues 12 and 13",
        "(#34)",
        "Issue #7's lever",
        "on 2026-11-30",
        "on 30 Nov",
        "Nov 30",
        "in November 2026",
    ):
        assert history(dated), dated
    for plain in (
        "noqa: E501",
        "type: ignore[arg-type]",
        "colour #333 and #1e1e1e and #000000",
        "the #1 cost",
        "runs/2026-11-30-h200.json",
        "May be None",
        "24 steps",
    ):
        assert not history(plain), plain


def test_comments_and_docstrings_name_paths_and_modules_that_exist() -> None:
    dead = findings(SCANNED, dead_references)
    assert not dead, "dead paths in comments and docstrings:\n" + "\n".join(dead)


def test_code_comments_and_docstrings_carry_no_issue_numbers_or_dates() -> None:
    found = findings(CODE, lambda path, line: history(line), whole=True)
    assert not found, "issue numbers or dates (docs/ and git keep them):\n" + "\n".join(found)


def test_a_number_or_a_date_split_over_two_lines_is_found(tmp_path: Path) -> None:
    code = tmp_path / "split.py"
    code.write_text(
        '"""A module whose text says\nissue\n34 over two lines."""\n\n'
        "x = 1  # measured on 30\n# Nov, then again\n\n# apart: issue\n\n# 7 is no issue number\n",
        encoding="utf-8",
    )
    found = [hit for _, text in passages(code) for hit in history(text)]
    assert found == ["issue 34", "30 Nov"], found
