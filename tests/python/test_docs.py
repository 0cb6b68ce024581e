"""The README and docs/ as a newcomer reads them (issue 41): every page reachable from
docs/index.md, every relative link and anchor pointing at something that exists, a README
of one screen whose first code block is still the test command, and nothing that points
outside the repository. Pure Python: needs neither a build nor the marsden package."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
TEXTS = [README] + PAGES

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose(text):
    """The text without fenced code blocks and inline code spans, where links are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading):
    """GitHub's anchor for a heading: the rendered text in lower case, without punctuation,
    spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a page defines: its headings (numbered as GitHub numbers repeats) and
    its HTML anchors."""
    text = path.read_text(encoding="utf-8")
    found, seen = set(), {}
    for m in HEADING.finditer(FENCE.sub("", text)):
        s = slug(m.group(2))
        n = seen.get(s, 0)
        seen[s] = n + 1
        found.add(s if n == 0 else f"{s}-{n}")
    found.update(HTML_ANCHOR.findall(text))
    return found


def relative_links(path):
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
            continue
        yield target


def test_every_docs_page_is_linked_from_the_index():
    index = DOCS / "index.md"
    assert index.is_file(), "docs/index.md is missing"
    linked = {(index.parent / t.split("#")[0]).resolve()
              for t in relative_links(index) if t.split("#")[0]}
    missing = [p.name for p in PAGES if p != index and p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link: {', '.join(missing)}"


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file_and_anchor(path):
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path.resolve()
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif ROOT not in dest.parents and dest != ROOT:
            broken.append(f"{target} (outside the repository)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading or anchor '{anchor}' in {dest.name})")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_is_one_screen():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 130, f"README.md has {len(lines)} lines (at most 130)"


def test_readme_first_code_block_is_the_demo_and_the_test_command():
    # .ci/run runs the README's test command, scripts/test.sh: it stays the first block.
    first = re.search(r"```[^\n]*\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first, "README.md has no code block"
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert [c for c in commands if c] == ["bash scripts/demo.sh", "bash scripts/test.sh"]


def test_licence_and_citation_exist():
    assert (ROOT / "LICENSE").is_file()
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    citation = ROOT / "CITATION.cff"
    assert citation.is_file()
    assert "cff-version: 1.2.0" in citation.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_points_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    for outside in ("../shared", "shared/papers", "NOTES.md", "DESIGN.md"):
        assert outside not in text, f"{path.relative_to(ROOT)} mentions {outside}"
