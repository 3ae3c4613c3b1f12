"""The README and docs/ as a newcomer reads them: every relative link reaches a file and a
heading that exist, the README stays short with the first steps at its top, every command of
the CLI is named in it and in docs/cli.md, and every figure it gives names the command that
measured it."""

import re
from pathlib import Path

import pytest

from chattts_studio.core.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(path: Path) -> list[str]:
    """The page's lines outside fenced code blocks (a `# comment` in a shell block is no
    heading, and a link in an example is no link)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    """GitHub's anchor for each heading: lower case, punctuation dropped, spaces to hyphens,
    a repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path):
        heading = re.match(r"#{1,6} (.+)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for line in prose(page):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            reached = (page.parent / file).resolve() if file else page
            if not reached.exists():
                broken.append(f"{target}: no such file")
            elif anchor and (reached.suffix != ".md" or anchor not in anchors(reached)):
                broken.append(f"{target}: no such heading in {reached.name}")
    assert not broken, f"{page.name}: {broken}"


def test_the_readme_is_short_and_starts_with_the_first_steps() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 350, len(lines)
    top = "\n".join(lines[:40])
    for needed in ("make run", "make test", "**Use demo weights**", "**Synthesize**"):
        assert needed in top, needed
    assert "noise, not speech" in top


def test_every_cli_command_is_named_in_the_readme_and_in_docs_cli() -> None:
    readme = README.read_text(encoding="utf-8")
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"`{command.name}" in readme, command.name
        assert f"`{command.name}" in cli, command.name


def test_every_figure_in_the_readme_names_the_command_that_made_it() -> None:
    lines = prose(README)
    start = lines.index("### Figures")
    rows = [line for line in lines[start:] if line.startswith("| ") and "---" not in line]
    assert len(rows) > 1  # a header and figures
    for row in rows[1:]:
        made_by = row.rstrip(" |").rsplit(" | ", 1)[-1]
        assert "`" in made_by or "the same" in made_by, row
