"""A fresh venv with the etrt wheel installed, as a user has it, for tests that run the real CLI
or the README's commands. torch, numpy and the rest come from the project venv through a .pth
file after the venv's own site-packages (the tested CPU torch 2.13, standing in for the one a
user installs first): no resolver ever fetches another torch."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Venv:
    prefix: Path
    site: Path

    @property
    def python(self) -> Path:
        return self.prefix / "bin" / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """An activated venv: its bin first; nothing of the project's Python, Conan or etrt
        settings; pip may not reach any index (what it needs must already be there)."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "VIRTUAL_ENV", "ETRT_", "CONAN", "CMAKE_", "PKG_CONFIG"))
        }
        env.pop("LD_LIBRARY_PATH", None)
        env["PATH"] = f"{self.prefix / 'bin'}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(self.prefix)
        env["PIP_NO_INDEX"] = "1"
        env.update(extra)
        return env


def make_venv(prefix: Path, *, pip: bool = False) -> Venv:
    """A new venv at prefix that also sees the project venv's packages (see the module doc)."""
    argv = [sys.executable, "-m", "venv", *([] if pip else ["--without-pip"]), prefix]
    subprocess.run(argv, check=True)
    query = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(
        subprocess.run(
            [prefix / "bin" / "python", "-c", query], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    (site / "zz_project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    if pip:  # ensurepip's old setuptools would shadow the project's (torch needs >= 77)
        subprocess.run(
            [prefix / "bin" / "python", "-m", "pip", "uninstall", "-q", "-y", "setuptools"],
            check=True,
        )
    return Venv(prefix, site)


def install_wheel(venv: Venv, wheel: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", venv.python, "install", "--quiet",
         "--no-deps", "--no-index", wheel],
        check=True,
    )  # fmt: skip
