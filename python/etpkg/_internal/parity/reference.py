"""The reference side of the parity probe: `conan install --requires=REF -g CMakeDeps -g
PkgConfigDeps` into a directory, and what CMakeDeps writes for each package of the graph."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etpkg._internal.errors import PackageError, ToolError

CONFIG = "CONFIG"
MODULE = "MODULE"


@dataclass(frozen=True)
class ReferencePackage:
    """One package of the installed graph as CMakeDeps and PkgConfigDeps name it."""

    name: str
    version: str
    package_folder: Path | None
    cmake_file_name: str
    module_file_name: str
    find_mode: str  # config, module, both, none
    pkg_config_name: str
    components: tuple[str, ...]
    libs: tuple[str, ...] = ()  # every component's libs and system_libs (-l names)
    pc_names: tuple[str, ...] = ()  # components' pkg_config_name and every pkg_config_aliases
    extra_variables: tuple[str, ...] = ()  # the names cmake_extra_variables sets

    @property
    def cmake_probes(self) -> tuple[tuple[str, str], ...]:
        """(file name, CONFIG|MODULE) for each file CMakeDeps writes for this package."""
        out = []
        if self.find_mode in ("config", "both"):
            out.append((self.cmake_file_name, CONFIG))
        if self.find_mode in ("module", "both"):
            out.append((self.module_file_name, MODULE))
        return tuple(out)

    def owns_pc(self, stem: str) -> bool:
        return (
            stem == self.pkg_config_name
            or stem.startswith(f"{self.pkg_config_name}-")
            or stem in self.pc_names
        )


@dataclass(frozen=True)
class Reference:
    folder: Path  # the generators' output
    packages: tuple[ReferencePackage, ...]


def _package(node: dict[str, Any]) -> ReferencePackage:
    name = str(node["name"])
    cpp = node.get("cpp_info") or {}
    root = cpp.get("root") or {}
    props = root.get("properties") or {}
    file_name = str(props.get("cmake_file_name") or name)
    folder = node.get("package_folder")
    return ReferencePackage(
        name=name,
        version=str(node.get("version") or ""),
        package_folder=Path(folder) if folder else None,
        cmake_file_name=file_name,
        module_file_name=str(props.get("cmake_module_file_name") or file_name),
        find_mode=str(props.get("cmake_find_mode") or "config").lower(),
        pkg_config_name=str(props.get("pkg_config_name") or name),
        components=tuple(k for k in cpp if k != "root"),
        pc_names=tuple(
            str(name)
            for comp in cpp.values()
            if isinstance(comp, dict)
            for props in [comp.get("properties") or {}]
            for name in [props.get("pkg_config_name"), *_listed(props.get("pkg_config_aliases"))]
            if name
        ),
        extra_variables=tuple(str(k) for k in props.get("cmake_extra_variables") or {}),
        libs=tuple(
            dict.fromkeys(
                str(lib)
                for comp in cpp.values()
                if isinstance(comp, dict)
                for key in ("libs", "system_libs")
                for lib in comp.get(key) or ()
            )
        ),
    )


def install(ref: str, out: Path, conan_args: list[str], env: dict[str, str]) -> Reference:
    """Runs the generators for ref (its binary must be in the Conan cache)."""
    argv = [
        "conan", "install", f"--requires={ref}", "-g", "CMakeDeps", "-g", "PkgConfigDeps",
        "-of", str(out), "--format=json", *conan_args,
    ]  # fmt: skip
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ToolError("conan is not installed") from exc
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if "ERROR" in ln]
        raise PackageError(
            f"conan install --requires={ref} failed: {lines[-1] if lines else proc.stderr[-300:]}"
        )
    graph = json.loads(proc.stdout)["graph"]
    packages = [
        _package(node)
        for key, node in graph["nodes"].items()
        if key != "0" and node.get("context") == "host"
    ]
    return Reference(out, tuple(packages))


def _listed(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    return list(value or [])
