"""README.md starts with the two commands users and CI run; CI must run the same test command."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_readme_starts_with_quickstart_then_tests():
    quickstart, tests = readme_commands()[:2]
    assert "examples/quickstart.py" in quickstart
    assert "pytest" in tests
    assert (ROOT / "examples" / "quickstart.py").exists()


def test_ci_runs_exactly_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci_lines


def test_public_names_all_resolve():
    import gkeml_sdk

    for name in gkeml_sdk.__all__:
        assert getattr(gkeml_sdk, name) is not None


def test_readme_python_snippet_runs(capsys):
    code = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[0]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "kind: JobSet" in out and "spot" in out


def test_every_package_goes_into_the_wheel():
    import tomllib

    from setuptools import find_packages

    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for package in ("gkeml_sdk", "gkeml_magics")
        for p in (ROOT / package).rglob("*.py")
    }
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert set(find_packages(where=str(ROOT), include=find["find"]["include"])) == found
