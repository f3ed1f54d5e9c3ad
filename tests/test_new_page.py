"""`make new PAGE=<section>/<slug>` scaffolds a page that runs and passes as it is, for every section."""

from sandbox import BIN, ROOT, run


def test_every_section_template_makes_a_passing_page(project):
    (project.path / "templates").mkdir()
    for template in (ROOT / "templates").iterdir():
        (project.path / "templates" / template.name).write_bytes(template.read_bytes())
    sections = sorted(p.stem for p in (ROOT / "templates").glob("*.md"))
    assert sections == ["best-practices", "interview-questions", "production-issues", "use-cases"], sections
    for section in sections:
        code, out = run(project, str(BIN / "python"), "templates/new_page.py", f"{section}/first-page")
        assert code == 0 and f"created docs/{section}/first-page.md" in out, out
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs")
    assert code == 0 and "passed" in out and "failed" not in out, out
    code, out = run(project, str(BIN / "python"), "templates/new_page.py", "interview-questions/Bad Name")
    assert code == 1 and "PAGE must be <section>/<slug>" in out, out
