"""pyproject.toml and environment.yml must list the same dependencies with the same pins."""
import re
from pathlib import Path

import tomllib

from course_lib.app.check import TORCH_VERSION

ROOT = Path(__file__).resolve().parent.parent
# Conda spells a few packages differently from PyPI; nothing else may differ.
CONDA_ONLY = {"python", "pip"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for extra in project.get("optional-dependencies", {}).values() for d in extra]
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
    assert pyproject_requirements()["torch"] == f"torch=={TORCH_VERSION}"


# Where a reader copies the torch pin from: install lines and troubleshooting notes.
TORCH_DOCS = ["README.md", "docs/TEACHING.md", "docs/LIBRARY.md"]


def test_every_torch_pin_written_out_is_the_one_constant():
    """pip, conda and the docs need the version spelled out; each spelling agrees with TORCH_VERSION."""
    written = {}
    for name in ["pyproject.toml", "environment.yml", "constraints.txt", *TORCH_DOCS]:
        for version in re.findall(r"\btorch==([\w.+]+)", (ROOT / name).read_text(encoding="utf-8")):
            written.setdefault(version, []).append(name)
    assert written and set(written) == {TORCH_VERSION}, written
    assert all(any(names.count(doc) for names in written.values()) for doc in TORCH_DOCS)


def test_environment_installs_the_course_library_itself():
    assert re.search(r"^\s*-\s+-e \.\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_peer_libraries_are_pinned_exactly():
    peers = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["peers"]
    assert peers and all(re.fullmatch(r"[\w.\-\[\],]+==[\w.]+", p) for p in peers)


def torch_build(version_py: str) -> dict[str, str | None]:
    """The accelerator fields of torch's generated `torch/version.py` (read, not imported: no model load)."""
    fields = dict(re.findall(r"^(cuda|hip|rocm|xpu)\s*(?::[^=]*)?=\s*(.+?)\s*$", version_py, re.M))
    return {name: None if value == "None" else value.strip("'\"") for name, value in fields.items()}


def test_installed_torch_is_the_pinned_cpu_build():
    from importlib.metadata import distribution

    torch = distribution("torch")
    assert torch.version.split("+")[0] == TORCH_VERSION
    build = torch_build(Path(torch.locate_file("torch/version.py")).read_text(encoding="utf-8"))
    assert build.get("cuda", "missing") is None, f"torch {torch.version} is a CUDA build ({build}): install the CPU wheel"
    assert not any(build.values()), f"torch {torch.version} is built for an accelerator: {build}"


def test_a_cuda_build_of_torch_fails_the_check():
    cuda = f"__version__ = '{TORCH_VERSION}+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n"
    assert torch_build(cuda) == {"cuda": "12.8", "hip": None}
    cpu = f"__version__ = '{TORCH_VERSION}+cpu'\ncuda: Optional[str] = None\nrocm: Optional[str] = None\n"
    assert not any(torch_build(cpu).values()) and torch_build(cpu)["cuda"] is None


def floor(requirement: str) -> tuple[int, ...]:
    """The version after `>=` in a requirement, as numbers."""
    return tuple(int(part) for part in requirement.split(">=")[1].split(",")[0].split("."))


def test_sentence_transformers_floor_has_the_api_the_code_calls():
    # course_lib calls get_embedding_dimension(); sentence-transformers 5.4 renamed it from
    # get_sentence_embedding_dimension, so an older release fails on the first model load.
    calls = [p for p in (ROOT / "course_lib").rglob("*.py") if ".get_embedding_dimension()" in p.read_text()]
    assert calls and floor(pyproject_requirements()["sentence-transformers"]) >= (5, 4)


def constraints() -> dict[str, str]:
    """constraints.txt as {canonical name: pinned version}."""
    from packaging.utils import canonicalize_name

    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("==") for line in lines if line.strip() and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pins}


def test_constraints_pin_every_dependency_within_its_floor():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pinned = constraints()
    for line in pyproject_requirements().values():
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is a dependency but constraints.txt does not pin it"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (line, pinned[name])


def test_constraints_are_plain_pins_and_used_by_make_setup():
    lines = [ln for ln in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9][\w.\-]*==[\w.]+", ln) for ln in lines)  # no URL, path, +cpu
    assert constraints()["torch"] == TORCH_VERSION and "onnxruntime" in constraints()
    assert re.search(r"pip install .*-c constraints\.txt -e \.\[peers,serve,e5\]", (ROOT / "Makefile").read_text())


def test_the_onnx_query_encoder_is_an_extra_make_setup_installs():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "onnxruntime>=1.31" in extras["serve"]
