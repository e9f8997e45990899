"""What runs is what was tested: the packages installed are the versions in requirements.lock, and the lock
satisfies every range pyproject states (a new dependency with no locked version fails here, not on a user)."""

from __future__ import annotations

import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LOCK = ROOT / "requirements.lock"


def locked() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not name==version"
            pins[canonicalize_name(name)] = version
    return pins


def test_installed_versions_are_the_locked_ones():
    differ = {}
    for name, version in locked().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        if installed != version:
            differ[name] = (version, installed)
    assert not differ, f"installed versions differ from requirements.lock (locked, installed): {differ}; run make setup"


def test_the_lock_satisfies_every_range_pyproject_states():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    wanted += tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    pins = locked()
    missing, outside = [], []
    for text in wanted:
        requirement = Requirement(text)
        version = pins.get(canonicalize_name(requirement.name))
        if version is None:
            missing.append(requirement.name)
        elif not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{requirement} (locked {version})")
    assert not missing, f"not in requirements.lock (run make lock): {missing}"
    assert not outside, f"requirements.lock is outside pyproject's ranges: {outside}"
