"""What a consumer sees from a CMake prefix or a pkg-config directory, normalised so that the
wheel's and Conan's outputs compare: paths relative to the package root that holds them,
library files by their plain name (libz.so, not libz-1a2b3c4d.so.1.2.13), build-tree details
(runpaths, option files, retention wrappers) left out.

run_cmake_probe() configures one probe project (templates/probe.cmake.j2) with Ninja and reads
each probe executable's compile and link commands from `ninja -t commands` without building."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jinja2

from etpkg._internal.errors import ToolError

# auditwheel's grafted copies: libfmt-1a2b3c4d.so.9.1.0; any libfoo.so.1.2: libfoo.so.
_GRAFT_HASH = re.compile(r"-[0-9a-f]{8}(?=\.so)")
_SO_VERSION = re.compile(r"\.so(\.[0-9]+)+$")
# Link options that carry where a binary finds libraries at run time or keep a library linked:
# etpkg's and CMake's own choices, not what a package declares.
_LINK_NOISE = (
    "-rpath",
    "--enable-new-dtags",
    "--disable-new-dtags",
    "--push-state",
    "--pop-state",
    "--no-as-needed",
    "--as-needed",
    "--whole-archive",
    "--no-whole-archive",
)


@dataclass(frozen=True)
class Roots:
    """Directories whose contents count as 'the package' on one side: paths under one are
    written relative to it."""

    dirs: tuple[Path, ...]

    def relative(self, value: str) -> str:
        path = Path(value)
        if not path.is_absolute():
            return value
        for root in sorted(self.dirs, key=lambda d: len(str(d)), reverse=True):
            try:
                return path.resolve().relative_to(root.resolve()).as_posix() or "."
            except ValueError:
                continue
        return value


def library_name(path: str) -> str:
    """libfmt-1a2b3c4d.so.9.1.0 -> libfmt.so; libz.a -> libz.a."""
    name = _GRAFT_HASH.sub("", Path(path).name)
    return _SO_VERSION.sub(".so", name)


def _is_library(token: str) -> bool:
    name = Path(token).name
    return name.endswith((".a", ".so")) or bool(_SO_VERSION.search(name))


@dataclass(frozen=True)
class TargetView:
    type: str
    libraries: frozenset[str] = frozenset()  # link closure: library names, -l<name>
    link_options: frozenset[str] = frozenset()
    include_dirs: frozenset[str] = frozenset()  # relative to the package root
    defines: frozenset[str] = frozenset()
    c_options: frozenset[str] = frozenset()
    cxx_options: frozenset[str] = frozenset()


@dataclass
class CMakeView:
    targets: dict[str, TargetView] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    versions: dict[str, bool] = field(default_factory=dict)  # request -> accepted


@dataclass(frozen=True)
class PcView:
    cflags: frozenset[str]
    libs: frozenset[str]
    requires: frozenset[str]
    version: str
    # The module's own variables (pkg_config_custom_content), paths relative to the package
    # root; the generators' directory variables and pkg-config's built-ins left out.
    variables: frozenset[tuple[str, str]] = frozenset()


# Each generator's own directory variables (Conan's libdir1, etpkg's resdir) and pkg-config's.
_PC_OWN_VARIABLE = re.compile(
    r"(prefix|exec_prefix|(lib|include|bin|res)dir[0-9]*|pcfiledir|pc_sysrootdir|pc_path|"
    r"cxxflags|cxx_std)$"
)


def _template(name: str) -> jinja2.Template:
    text = (resources.files("etpkg._internal.parity") / "templates" / name).read_text("utf-8")
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    ).from_string(text)


def _run(argv: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ToolError(f"{what}: {argv[0]} is not installed") from exc
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        detail = " | ".join(lines[-6:])
        raise ToolError(f"{what} failed: {detail}")
    return proc.stdout


def version_requests(version: str) -> tuple[str, ...]:
    """Requests that tell compatibility policies apart: this version, older and newer minor
    and major versions."""
    parts = [int(p) for p in re.findall(r"[0-9]+", version)[:3]] or [0]
    major = parts[0]
    minor = parts[1] if len(parts) > 1 else 0
    out = [".".join(str(p) for p in parts), f"{major}.{minor + 1}", f"{major + 1}"]
    if minor > 0:
        out.append(f"{major}.{minor - 1}")
    if major > 0:
        out.append(f"{major - 1}")
    return tuple(dict.fromkeys(out))


def run_cmake_probe(
    work: Path,
    name: str,
    mode: str,
    version: str,
    roots: Roots,
    cmake_args: list[str],
    env: dict[str, str],
    *,
    extra_variables: tuple[str, ...] = (),
) -> CMakeView:
    """Configures a consumer of find_package(name mode) and returns what it sees."""
    src, build = work / "src", work / "build"
    src.mkdir(parents=True, exist_ok=True)
    out = (work / "report.txt").as_posix()
    versions = version_requests(version)
    context = {
        "name": name,
        "mode": mode,
        "out": out,
        "versions": versions,
        "name_re": re.escape(name).replace("\\", "\\\\"),
        "upper_re": re.escape(name.upper()).replace("\\", "\\\\"),
        "extra_variables": extra_variables,
    }
    (src / "CMakeLists.txt").write_text(_template("probe.cmake.j2").render(context))
    for i, request in enumerate(versions):
        sub = src / f"version_{i}"
        sub.mkdir(exist_ok=True)
        (sub / "CMakeLists.txt").write_text(
            _template("version.cmake.j2").render({**context, "request": request})
        )
    Path(out).unlink(missing_ok=True)
    what = f"find_package({name} {mode})"
    _run(
        ["cmake", "-G", "Ninja", "-S", str(src), "-B", str(build),
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local",
         *cmake_args],
        work, env, what,
    )  # fmt: skip
    view = CMakeView()
    probes: dict[str, str] = {}
    for line in Path(out).read_text().splitlines():
        kind, *rest = line.split("\t")
        if kind == "target":
            target, type_, probe = rest
            view.targets[target] = TargetView(type_)
            if probe:
                probes[target] = probe
        elif kind == "variable":
            view.variables[rest[0]] = rest[1] if len(rest) > 1 else ""
        elif kind == "version":
            view.versions[rest[0]] = rest[1].upper() not in ("", "0", "FALSE", "OFF", "NO")
    for target, probe in probes.items():
        commands = _run(["ninja", "-C", str(build), "-t", "commands", probe], work, env, what)
        view.targets[target] = _target_view(view.targets[target].type, commands, roots)
    return view


def _target_view(type_: str, commands: str, roots: Roots) -> TargetView:
    libraries: set[str] = set()
    link_options: set[str] = set()
    includes: set[str] = set()
    defines: set[str] = set()
    options: dict[str, set[str]] = {"c": set(), "cxx": set()}
    for line in commands.splitlines():
        argv = shlex.split(line)
        if "-c" in argv:
            lang = "cxx" if any(a.endswith(".cpp") for a in argv) else "c"
            _compile_line(argv[1:], roots, includes, defines, options[lang])
        elif "-o" in argv:
            _link_line(argv[1:], libraries, link_options)
    # The build type's and the probe's own flags appear in every probe: not the package's.
    for opts in options.values():
        opts.difference_update({"-O3", "-O2", "-g", "-DNDEBUG"})
    return TargetView(
        type_,
        frozenset(libraries),
        frozenset(link_options),
        frozenset(includes),
        frozenset(defines - {"NDEBUG"}),
        frozenset(options["c"]),
        frozenset(options["cxx"]),
    )


def _compile_line(
    argv: list[str], roots: Roots, includes: set[str], defines: set[str], options: set[str]
) -> None:
    it = iter(argv)
    for arg in it:
        if arg in ("-o", "-MF", "-MT", "-c"):
            next(it, None)
        elif arg in ("-isystem", "-I", "-iquote", "-idirafter"):
            includes.add(roots.relative(next(it, "")))
        elif arg.startswith("-I"):
            includes.add(roots.relative(arg[2:]))
        elif arg.startswith("-D"):
            defines.add(arg[2:])
        elif arg in ("-MD",) or not arg.startswith("-"):
            continue
        else:
            options.add(arg)


def _link_line(argv: list[str], libraries: set[str], options: set[str]) -> None:
    it = iter(argv)
    for arg in it:
        if arg == "-o":
            next(it, None)
        elif arg.startswith("-l"):
            libraries.add(arg)
        elif arg.startswith("-L"):
            continue  # where to look, not what is linked
        elif arg.startswith("-Wl,"):
            for part in arg[4:].split(","):
                part = part.strip('"')
                if _is_library(part):
                    libraries.add(library_name(part))
                elif (
                    part
                    and not part.startswith("@")
                    and not any(part.startswith(n) for n in _LINK_NOISE)
                    and not part.startswith(("/", "$"))
                ):
                    options.add("-Wl," + part)
        elif _is_library(arg):
            libraries.add(library_name(arg))
        elif arg.startswith("-") and arg not in ("-O3", "-O2", "-g", "-DNDEBUG", "-rdynamic"):
            options.add(arg)


def linked_as(libraries: frozenset[str]) -> frozenset[str]:
    """What the linker links for each item: a shared library named by file as -l<name> (a
    library without SONAME is imported by -l, as CMakeDeps' nosoname does; the wheel's copy
    has one and is linked by path: the same DT_NEEDED)."""
    return frozenset(_as_l(x) if x.endswith(".so") else x for x in libraries)


def _as_l(flag: str) -> str:
    """A library named by file (a path, -l:libx.so.1) as -l<name>: what the linker resolves."""
    name = flag[3:] if flag.startswith("-l:") else flag
    if not _is_library(name):
        return flag
    stem = library_name(name).removeprefix("lib")
    return "-l" + re.sub(r"\.(so|a)$", "", stem)


def normalise_value(
    value: str, roots: Roots, closures: dict[str, frozenset[str]], *, libraries: bool = False
) -> str:
    """A variable's value as a sorted, de-duplicated list: a target named in it stands for its
    link closure, a library file for its name, a path for its package-relative form; in a
    list of libraries a bare name is -l<name>, as CMake links it."""
    items: set[str] = set()
    for item in value.split(";"):
        item = item.strip().strip('"')
        if not item:
            continue
        if item in closures:
            items.update(closures[item])
        elif _is_library(item.strip('"')):
            items.add(library_name(item))
        elif "--push-state" in item or "--whole-archive" in item:
            items.update(
                library_name(p.strip('"\\')) for p in item.split(",") if _is_library(p.strip('"\\'))
            )
        elif libraries and re.fullmatch(r"[A-Za-z0-9_.+]+", item):
            items.add("-l" + item)
        else:
            items.add(roots.relative(item))
    return ";".join(sorted(items))


def pkg_config_names(pc_dir: Path) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in pc_dir.glob("*.pc")))


def run_pkg_config(
    pc_dir: Path,
    name: str,
    roots: Roots,
    env: dict[str, str],
    drop_under: tuple[Path, ...] = (),
) -> PcView:
    """What `pkg-config --cflags/--libs/--print-requires/--modversion name` answers with only
    pc_dir searched; an include dir under one of `drop_under` (a package left out of the
    comparison) is not counted."""
    dropped = tuple(d.resolve() for d in drop_under)
    pc_env = {**env, "PKG_CONFIG_LIBDIR": str(pc_dir), "PKG_CONFIG_PATH": ""}
    pc_env.pop("PKG_CONFIG_SYSROOT_DIR", None)

    def ask(flag: str) -> list[str]:
        out = _run(["pkg-config", flag, name], pc_dir, pc_env, f"pkg-config {flag} {name}")
        return shlex.split(out)

    cflags: set[str] = set()
    for flag in ask("--cflags"):
        if flag.startswith("-I"):
            path = Path(os.path.normpath(flag[2:]))
            if path.is_absolute() and any(path.resolve().is_relative_to(d) for d in dropped):
                continue
            cflags.add("-I" + roots.relative(str(path)))
        else:
            cflags.add(flag)
    libs: set[str] = set()
    options: set[str] = set()
    _link_line([f for f in ask("--libs") if not f.startswith("-L")], libs, options)
    libs = {_as_l(f) for f in libs} | options
    requires = _run(
        ["pkg-config", "--print-requires", name], pc_dir, pc_env, f"pkg-config requires {name}"
    )
    required = {line.split()[0] for line in requires.splitlines() if line.strip()}
    version = _run(["pkg-config", "--modversion", name], pc_dir, pc_env, f"pkg-config {name}")
    variables: set[tuple[str, str]] = set()
    listed = _run(
        ["pkg-config", "--print-variables", name], pc_dir, pc_env, f"pkg-config variables {name}"
    )
    for var in sorted({v.strip() for v in listed.splitlines() if v.strip()}):
        if _PC_OWN_VARIABLE.match(var):
            continue
        value = _run(
            ["pkg-config", f"--variable={var}", name], pc_dir, pc_env, f"pkg-config {var} {name}"
        ).strip()
        words = [
            roots.relative(os.path.normpath(w)) if w.startswith("/") else w for w in value.split()
        ]
        variables.add((var, " ".join(words)))
    return PcView(
        frozenset(cflags), frozenset(libs), frozenset(required), version.strip(),
        frozenset(variables),
    )  # fmt: skip
