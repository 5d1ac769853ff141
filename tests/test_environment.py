"""pyproject.toml and environment.yml must list the same dependencies with the same pins."""
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
# Conda spells a few packages differently from PyPI; nothing else may differ.
CONDA_ONLY = {"python", "pip"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + project.get("optional-dependencies", {}).get("peers", [])
    return {_name(d): d.replace(" ", "") for d in deps}


def environment_requirements() -> dict[str, str]:
    entries = re.findall(r"^\s*-\s+([^#\s][^#]*?)\s*$", (ROOT / "environment.yml").read_text(), re.M)
    deps = [e for e in entries if e not in ("conda-forge", "pip:", "-e .") and not e.endswith(":")]
    conda_pins = {_name(d): d.replace(" ", "") for d in deps}
    return {n: d for n, d in conda_pins.items() if n not in CONDA_ONLY}


def test_same_packages_in_both_files():
    assert sorted(pyproject_requirements()) == sorted(environment_requirements())


def test_same_version_constraints_in_both_files():
    assert pyproject_requirements() == environment_requirements()


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    assert pyproject_requirements()["torch"] == "torch==2.13.0"


def test_environment_installs_the_course_library_itself():
    assert re.search(r"^\s*-\s+-e \.\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_peer_libraries_are_pinned_exactly():
    peers = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["peers"]
    assert peers and all(re.fullmatch(r"[\w.\-\[\],]+==[\w.]+", p) for p in peers)


def test_installed_torch_is_the_pinned_cpu_build():
    from importlib.metadata import version

    assert version("torch").split("+")[0] == "2.13.0"
