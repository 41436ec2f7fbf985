"""The project stands on its own: no absolute paths of a development machine, no pointers to material outside
the repository, and every Markdown document a file names exists in the repository."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (".py", ".md", ".ipynb", ".toml", ".yml", ".cfg", ".txt")
# The development folder's name and a development machine's path are assembled here, so that this file,
# which must name them to look for them, does not itself point anywhere a user cannot go.
DEV_FOLDER = "shared" + "/"
DEV_PATH = "/" + "/".join(("work", "main"))
FORBIDDEN = [
    (re.compile(r"(?<![\w.])/(work|home|root|Users|tmp)/[\w.-]+"), "an absolute path"),
    (re.compile(re.escape(DEV_FOLDER) + "(reference|seeds|data)"), "the development folder " + DEV_FOLDER),
    (re.compile(r"\bseed[ _]?`?0\d\d", re.IGNORECASE), "an internal seed number (cite the work by name, REFERENCES.md)"),
]
# names that look like paths but are not: URLs' paths, Drake's/OpenSim's installation layout in prose
ALLOWED = [re.compile(r"https?://\S+")]


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / f for f in out.splitlines() if f.endswith(TEXT) or f in ("run", ".ci/run")]


def findings(text: str) -> list[str]:
    for rx in ALLOWED:
        text = rx.sub("", text)
    return [f"{what}: {m.group(0)!r}" for rx, what in FORBIDDEN for m in rx.finditer(text)]


def test_checker_finds_what_it_looks_for():
    assert findings("Seed 003 says") == ["an internal seed number (cite the work by name, REFERENCES.md): 'Seed 003'"]
    assert findings(f"see {DEV_PATH}/x and {DEV_FOLDER}reference/A.txt, seed 000") == [
        f"an absolute path: '{DEV_PATH}'", f"the development folder {DEV_FOLDER}: '{DEV_FOLDER}reference'",
        "an internal seed number (cite the work by name, REFERENCES.md): 'seed 000'"]
    assert findings("https://example.org/home/page and np.ones((2, 3))") == []


def test_no_absolute_paths_or_outside_pointers():
    bad = []
    for path in tracked_files():
        if path.name == "test_self_contained.py":
            continue
        for finding in findings(path.read_text(errors="replace")):
            bad.append(f"{path.relative_to(ROOT)}: {finding}")
    assert not bad, "\n".join(bad)


def test_named_markdown_documents_exist():
    known = {p.name for p in ROOT.rglob("*.md") if ".venv" not in p.parts}
    bad = []
    for path in tracked_files():
        for name in set(re.findall(r"\b([A-Za-z_][\w-]*\.md)\b", path.read_text(errors="replace"))):
            if name not in known:
                bad.append(f"{path.relative_to(ROOT)} names {name}")
    assert not bad, "\n".join(bad)


def unresolved_module_names(text: str) -> list[str]:
    """Dotted ``moco_lab.…`` names in ``text`` that are neither a module nor an attribute of one."""
    import importlib

    bad = []
    for name in sorted(set(re.findall(r"\bmoco_lab(?:\.[A-Za-z_]\w*)+", text))):
        parts = name.split(".")
        obj = None
        for i in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                bad.append(name)
                break
    return bad


def test_module_checker_finds_a_moved_module():
    text = "see `moco_lab.moment_arms` (moved), moco_lab.analysis.moment_arms and ml's moco_lab.Study.solve."
    assert unresolved_module_names(text) == ["moco_lab.moment_arms"]


def test_documents_name_modules_that_exist():
    """A module or function named in the docs (README, lesson and dashboard guides) can be imported."""
    bad = {}
    for path in tracked_files():
        if path.suffix == ".md":
            missing = unresolved_module_names(path.read_text(encoding="utf-8"))
            if missing:
                bad[str(path.relative_to(ROOT))] = missing
    assert not bad, bad


# ---------------------------------------------------------------------- names of the package's own objects
DOTTED = re.compile(r"(?<![\w./])(moco_lab|ml)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w/])")


def _resolves(dotted: str) -> bool:
    """``moco_lab.a.b.C.d`` names a module or an attribute that exists."""
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
    for name in parts[i:]:
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def _prose_and_code():
    """(file, text) of the package's modules, the Markdown guides and the lessons' and dashboards' cells."""
    import json

    for path in sorted((ROOT / "moco_lab").rglob("*.py")):
        yield path, path.read_text()
    for path in sorted([*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md")]):
        yield path, path.read_text()
    for path in sorted([*(ROOT / "lessons").glob("*.ipynb"), *(ROOT / "widgets").glob("*.ipynb")]):
        cells = json.loads(path.read_text())["cells"]
        yield path, "\n".join("".join(c["source"]) for c in cells)


def stale_names(files) -> list[str]:
    bad = set()
    for path, text in files:
        for m in DOTTED.finditer(text):
            dotted = "moco_lab" + m.group(2)
            if not _resolves(dotted):
                bad.add(f"{path.relative_to(ROOT) if path.is_absolute() else path}: {m.group(0)}")
    return sorted(bad)


def test_every_dotted_name_of_the_package_exists():
    """Docstrings, guides, lessons and dashboards name ``moco_lab.x.y`` / ``ml.x`` objects that exist: modules that
    moved (``moco_lab.widgets`` became ``moco_lab.ui.solve_panel``) or functions a guide promises leave no stale name."""
    bad = stale_names(_prose_and_code())
    assert not bad, "\n".join(bad)


def test_stale_names_are_found():
    text = "see :class:`~moco_lab.trajectory.Solution`, ml.examples.nothing_here and ml.sweep; FORMAT moco_lab.study/1"
    where = ROOT / "notes.txt"
    assert stale_names([(where, text)]) == ["notes.txt: ml.examples.nothing_here", "notes.txt: moco_lab.trajectory.Solution"]


# ---------------------------------------------------------------------- links between the Markdown documents
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {_slug(line.lstrip("#")) for line in lines if re.match(r"#{1,6} ", line)}


def broken_links(paths) -> list[str]:
    """Relative links (``[text](file#anchor)``, ``[text](#anchor)``) whose file or heading does not exist."""
    bad = []
    for path in paths:
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: outside the repository
            file, _, anchor = target.partition("#")
            goal = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)}: {target}"
            if not goal.exists():
                bad.append(where + " (no such file)")
            elif anchor and goal.suffix == ".md" and anchor not in _anchors(goal):
                bad.append(where + " (no such heading)")
    return bad


def test_every_link_between_the_documents_works():
    """The README's guide list, the guides' links back and to each other and to their sections all resolve."""
    bad = broken_links([p for p in tracked_files() if p.suffix == ".md"])
    assert not bad, "\n".join(bad)


def test_broken_links_are_found(tmp_path):
    md = ".m" + "d"  # assembled, so that this file names no Markdown document that does not exist
    (tmp_path / f"a{md}").write_text(f"# Top\n## A section\n[ok](b{md}#b-part) [ok](#a-section) [web](https://x.org/y)\n"
                                     f"[gone](c{md}) [no heading](b{md}#nothing) [self](#none)\n")
    (tmp_path / f"b{md}").write_text("# B part\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links([tmp_path / f"a{md}"]) == [f"a{md}: c{md} (no such file)",
                                                       f"a{md}: b{md}#nothing (no such heading)",
                                                       f"a{md}: #none (no such heading)"]
    finally:
        ROOT = saved


def test_lessons_store_what_a_learner_sees():
    """Every lesson and worked solution stores its learner-mode outputs (the metadata conftest.py reads to compare
    only the cells tagged nbval-check-output) and no printed mode line says fast mode; across the lessons many cells
    print the same text in both modes and are compared (a lesson whose every printout depends on the mesh has none:
    its asserts carry it)."""
    import json

    notebooks = sorted((ROOT / "lessons").glob("*.ipynb")) + sorted((ROOT / "lessons" / "solutions").glob("*.ipynb"))
    assert len(notebooks) > 20
    compared = 0
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        assert (nb["metadata"].get("moco_lab") or {}).get("stored_outputs") == "learner", path.name
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        compared += sum("nbval-check-output" in c["metadata"].get("tags", []) for c in code)
        printed = "".join("".join(o.get("text", "")) for c in code for o in c.get("outputs", []))
        assert "fast mode: True" not in printed, path.name
    assert compared > 50
