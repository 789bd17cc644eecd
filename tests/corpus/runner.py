"""Runs corpus cases end to end: Conan package -> wheel -> the consumers a user would write.

Steps per case, each timed and logged under <work>/<case>/logs/:
  create       conan create of the adapted recipe (its upstream test_package runs too)
  wheelify     etpkg wheelify with the same profile and options
  auditwheel   auditwheel show reports a manylinux tag
  verify       etpkg verify --quick
  test_package the recipe's test_package/ as a plain CMake project against the installed wheel
               alone (-DCMAKE_IGNORE_PREFIX_PATH=/usr), built and run; it must not load a
               library the wheel ships from anywhere else
  pkg-config   test_package's sources compiled with `pkg-config --cflags --libs` of the case's
               modules, PKG_CONFIG_LIBDIR the wheel's only, and run
  parity       etpkg parity against CMakeDeps/PkgConfigDeps of the same package

Sources come from Debian's source packages (apt-get source with a private apt configuration
holding deb-src lines, so the machine's apt setup is left alone) into a cache checked by sha256.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import yaml  # type: ignore[import-untyped]
from corpus.cases import Case

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parents[1]
RECIPES = CORPUS / "recipes"
STEPS = ("create", "wheelify", "auditwheel", "verify", "test_package", "pkg-config", "parity")
# Steps that need the wheel; verify/test_package/pkg-config/parity do not need each other.
NEEDS_WHEEL = STEPS[2:]

PROFILE = """\
[settings]
arch=x86_64
build_type=Release
compiler=gcc
compiler.cppstd=17
compiler.libcxx=libstdc++11
compiler.version=12
os=Linux
[conf]
tools.build:jobs=2
tools.system.package_manager:mode=check
[platform_tool_requires]
cmake/{cmake}
"""

APT_SYSTEM_SOURCES = Path("/etc/apt")


class CorpusError(Exception):
    """Something the corpus itself needs is missing or wrong (not a step failing)."""


@dataclass
class StepResult:
    step: str
    ok: bool
    seconds: float
    detail: str = ""


@dataclass
class CaseResult:
    case: Case
    steps: dict[str, StepResult] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps.values())

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps.values())


@dataclass(frozen=True)
class Recipe:
    name: str
    version: str
    folder: Path
    debian: str
    tarball: str
    sha256: str

    @property
    def ref(self) -> str:
        return f"{self.name}/{self.version}"


def load_recipe(name: str) -> Recipe:
    config = yaml.safe_load((RECIPES / name / "config.yml").read_text())
    ((version, entry),) = config["versions"].items()
    folder = RECIPES / name / entry["folder"]
    source = yaml.safe_load((folder / "conandata.yml").read_text())["sources"][version]
    return Recipe(name, str(version), folder, source["debian"], source["file"], source["sha256"])


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Corpus:
    """One work area: a Conan home of its own, the source cache, per-case work dirs."""

    def __init__(self, work: Path, sources: Path | None = None, *, fresh: bool = False) -> None:
        self.work = work.resolve()
        self.sources = (
            sources or Path(os.environ.get("ETPKG_CORPUS_SOURCES", "") or self.work / "sources")
        ).resolve()
        self.conan_home = self.work / "conan-home"
        if fresh and self.conan_home.exists():
            shutil.rmtree(self.conan_home)
        self._apt_ready = False
        self.env = dict(os.environ)
        self.env.update(
            CONAN_HOME=str(self.conan_home),
            ETPKG_CORPUS_SOURCES=str(self.sources),
            PYTHONPATH=os.pathsep.join([str(REPO / "python"), self.env.get("PYTHONPATH", "")]),
        )

    # ---------------------------------------------------------------- setup
    def setup(self) -> None:
        for tool in ("conan", "cmake", "ninja", "auditwheel", "pkg-config", "apt-get", "cc", "c++"):
            if shutil.which(tool, path=self.env["PATH"]) is None:
                raise CorpusError(f"{tool} is not on PATH (source ci/env.sh; apt-get install it)")
        self.work.mkdir(parents=True, exist_ok=True)
        if not (self.conan_home / "profiles" / "default").is_file():
            self._new_conan_home()

    def _new_conan_home(self) -> None:
        (self.conan_home / "profiles").mkdir(parents=True, exist_ok=True)
        version = subprocess.run(
            ["cmake", "--version"],
            env=self.env,
            capture_output=True,
            text=True,
            errors="replace",
            check=True,
        ).stdout.split()[2]
        (self.conan_home / "profiles" / "default").write_text(PROFILE.format(cmake=version))
        self._conan(["remote", "remove", "*"], check=False)
        self._conan(["remote", "add", "corpus", str(CORPUS), "--type=local-recipes-index"])

    def _conan(self, args: list[str], *, check: bool = True) -> None:
        proc = subprocess.run(
            ["conan", *args], env=self.env, capture_output=True, text=True, errors="replace"
        )
        if check and proc.returncode:
            raise CorpusError(f"conan {shlex.join(args)} failed: {proc.stderr.strip()[-500:]}")

    def fetch_source(self, recipe: Recipe) -> Path:
        """The recipe's Debian .orig tarball in the cache, downloaded when missing, sha-checked."""
        tarball = self.sources / recipe.tarball
        if not tarball.is_file():
            self.sources.mkdir(parents=True, exist_ok=True)
            apt = self._apt_options()
            proc = subprocess.run(
                ["apt-get", *apt, "source", "--download-only", recipe.debian],
                cwd=self.sources,
                capture_output=True,
                text=True,
            )
            if proc.returncode or not tarball.is_file():
                raise CorpusError(
                    f"apt-get source {recipe.debian} failed: {proc.stderr.strip()[-400:]}"
                )
        if sha256(tarball) != recipe.sha256:
            raise CorpusError(f"{tarball}: sha256 differs from conandata.yml of {recipe.ref}")
        return tarball

    def _apt_options(self) -> list[str]:
        apt = self.work / "apt"
        options = [
            f"-oDir::Etc::SourceList={apt / 'sources.list'}",
            f"-oDir::Etc::SourceParts={apt / 'sources.list.d'}",
            f"-oDir::State::Lists={apt / 'lists'}",
            f"-oDir::Cache={apt / 'cache'}",
        ]
        if not self._apt_ready:
            for d in ("lists/partial", "cache/archives/partial", "sources.list.d"):
                (apt / d).mkdir(parents=True, exist_ok=True)
            (apt / "sources.list").write_text(deb_src_lines(APT_SYSTEM_SOURCES))
            proc = subprocess.run(
                ["apt-get", *options, "update"], capture_output=True, text=True, errors="replace"
            )
            if proc.returncode:
                raise CorpusError(f"apt-get update (deb-src) failed: {proc.stderr.strip()[-400:]}")
            self._apt_ready = True
        return options

    # ---------------------------------------------------------------- a case
    def run_case(self, case: Case, steps: Iterable[str] = STEPS) -> CaseResult:
        wanted = set(steps)
        recipe = load_recipe(case.recipe)
        for dep in self._recipes_needed(case):
            self.fetch_source(load_recipe(dep))
        run = _CaseRun(self, case, recipe)
        result = CaseResult(case)
        for step in STEPS:
            if step not in wanted:
                continue
            if step in NEEDS_WHEEL and run.wheel is None:
                result.steps[step] = StepResult(step, False, 0.0, "no wheel")
                continue
            if step == "wheelify" and not result.steps.get("create", StepResult("", True, 0)).ok:
                result.steps[step] = StepResult(step, False, 0.0, "no package")
                continue
            result.steps[step] = run.step(step)
        return result

    def _recipes_needed(self, case: Case) -> list[str]:
        """The case's recipe and every corpus recipe its requires() may reach (read, not run)."""
        needed: list[str] = []
        todo = [case.recipe]
        while todo:
            name = todo.pop()
            if name in needed or not (RECIPES / name / "config.yml").is_file():
                continue
            needed.append(name)
            text = (load_recipe(name).folder / "conanfile.py").read_text()
            todo += re.findall(r'requires\(f?"([\w.+-]+)/', text)
        return needed


class _CaseRun:
    def __init__(self, corpus: Corpus, case: Case, recipe: Recipe) -> None:
        self.corpus = corpus
        self.case = case
        self.recipe = recipe
        self.dir = corpus.work / "cases" / case.name
        self.logs = self.dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.wheel: Path | None = None
        existing = sorted((self.dir / "dist").glob("*.whl"))
        if existing:
            self.wheel = existing[-1]
        # Conan's own context spellings, the same for conan create, wheelify and parity.
        self.conan_args = ["-pr:h", "default", "-pr:b", "default"]
        if case.replace_requires:
            profile = self.dir / "replace.profile"
            profile.write_text("[replace_requires]\n" + "\n".join(case.replace_requires) + "\n")
            self.conan_args += ["-pr:h", str(profile)]
        for option in case.options:
            self.conan_args += ["-o:h", option]
        for conf in case.conf:
            self.conan_args += ["-c:h", conf]

    def step(self, step: str) -> StepResult:
        log = self.logs / f"{step}.log"
        start = time.monotonic()
        with log.open("w") as fh:
            try:
                method = getattr(self, "_" + step.replace("-", "_"))
                detail = method(fh)
                ok = True
            except _StepFailed as e:
                detail, ok = str(e), False
            except (OSError, ValueError, subprocess.SubprocessError) as e:
                detail, ok = f"{type(e).__name__}: {e}", False
            fh.write(f"\n== {'PASS' if ok else 'FAIL'}: {detail}\n")
        return StepResult(step, ok, time.monotonic() - start, detail)

    # Each step raises _StepFailed with a one-line reason, or returns a short detail.
    def _sh(
        self,
        fh: TextIO,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        what: str = "",
    ) -> str:
        fh.write(f"$ {shlex.join(argv)}\n")
        fh.flush()
        proc = subprocess.run(
            list(argv),
            cwd=cwd,
            env=env or self.corpus.env,
            capture_output=True,
            text=True,
            errors="replace",
        )
        fh.write(proc.stdout + proc.stderr)
        if proc.returncode:
            tail = [ln for ln in (proc.stdout + proc.stderr).strip().splitlines() if ln.strip()]
            raise _StepFailed(
                f"{what or argv[0]} rc={proc.returncode}: {tail[-1][:300] if tail else ''}"
            )
        return proc.stdout + proc.stderr

    def _create(self, fh: TextIO) -> str:
        recipe = self.dir / "recipe"
        if recipe.exists():
            shutil.rmtree(recipe)
        shutil.copytree(self.recipe.folder, recipe)
        self._sh(
            fh,
            [
                "conan",
                "create",
                str(recipe),
                "--version",
                self.recipe.version,
                *self.conan_args,
                "--build=missing",
            ],
            what="conan create",
        )
        return self.recipe.ref

    def _wheelify(self, fh: TextIO) -> str:
        dist = self.dir / "dist"
        if dist.exists():
            shutil.rmtree(dist)
        self.wheel = None
        self._sh(
            fh,
            [
                sys.executable,
                "-m",
                "etpkg",
                "wheelify",
                self.recipe.ref,
                *self.conan_args,
                *self.case.wheelify_args,
                "-of",
                str(dist),
            ],
            what="etpkg wheelify",
        )
        wheels = sorted(dist.glob("*.whl"))
        if len(wheels) != 1:
            raise _StepFailed(f"etpkg wheelify made {len(wheels)} wheels")
        self.wheel = wheels[0]
        return self.wheel.name

    def _auditwheel(self, fh: TextIO) -> str:
        assert self.wheel is not None
        if not _has_shared_elf(self.wheel):
            # Header-only and static-only wheels hold nothing auditwheel audits (it exits 1).
            return f"no shared object or program to audit ({self.wheel.name})"
        out = self._sh(fh, ["auditwheel", "show", str(self.wheel)], what="auditwheel show")
        tag = re.search(r'platform tag:\s*"?\s*(manylinux_\d+_\d+_\w+)', " ".join(out.split()))
        if tag is None:
            raise _StepFailed("auditwheel show reports no manylinux tag")
        return tag.group(1)

    def _verify(self, fh: TextIO) -> str:
        assert self.wheel is not None
        work = self.dir / "verify"
        if work.exists():
            shutil.rmtree(work)
        out = self._sh(
            fh,
            [
                sys.executable,
                "-m",
                "etpkg",
                "verify",
                "--quick",
                "--work",
                str(work),
                str(self.wheel),
            ],
            what="etpkg verify",
        )
        return out.strip().splitlines()[-1]

    # ----------------------------------------------------- the wheel, installed
    def _site(self, fh: TextIO) -> tuple[Path, str]:
        """pip-installs the wheel into a private target dir; its import name from top_level."""
        assert self.wheel is not None
        site = self.dir / "site"
        if site.exists():
            shutil.rmtree(site)
        self._sh(
            fh,
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-index",
                "--target",
                str(site),
                str(self.wheel),
            ],
            what="pip install",
        )
        mains = [p.parent.name for p in site.glob("*/__main__.py")]
        if len(mains) != 1:
            raise _StepFailed(f"the wheel holds {len(mains)} packages with a __main__")
        return site, mains[0]

    def _query(self, fh: TextIO, site: Path, module: str, flag: str) -> str:
        # `python -m MODULE` as after pip install: the target dir is a site dir, searched
        # after the standard library (PYTHONPATH would put it first).
        code = (
            "import runpy, site, sys; site.addsitedir(sys.argv[1]); module = sys.argv[2]; "
            "sys.argv[1:3] = []; runpy.run_module(module, run_name='__main__', alter_sys=True)"
        )
        return self._sh(
            fh,
            [sys.executable, "-c", code, str(site), module, flag],
            cwd=self.dir,
            what=f"python -m {module} {flag}",
        ).strip()

    def _run_programs(
        self, fh: TextIO, build: Path, site: Path, env: dict[str, str] | None = None
    ) -> str:
        programs = sorted(
            p
            for p in build.iterdir()
            if p.is_file()
            and os.access(p, os.X_OK)
            and p.suffix not in (".so", ".a")
            and not p.name.startswith(("lib", "cmake", "CMake", "build.ninja"))
        )
        if self.case.ctest and (build / "CTestTestfile.cmake").is_file():
            self._sh(fh, ["ctest", "--output-on-failure"], cwd=build, what="ctest")
            return "ctest passed"
        if not programs:
            raise _StepFailed(f"no program was built in {build.name}")
        tp = self.dir / "recipe" / "test_package"
        for program in programs:
            args = [str(tp / a) if (tp / a).exists() else a for a in self.case.run_args]
            self._sh(fh, [str(program), *args], cwd=build, env=env, what=program.name)
            self._own_libraries_only(fh, program, site, env)
        return ", ".join(p.name for p in programs)

    def _own_libraries_only(
        self, fh: TextIO, program: Path, site: Path, env: dict[str, str] | None
    ) -> None:
        """A library the wheel ships must be loaded from the wheel, never from the system."""
        shipped = {_stem(p.name) for p in site.rglob("*.so*") if p.is_file()}
        out = self._sh(fh, ["ldd", str(program)], env=env, what="ldd")
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if (
                m
                and _stem(m.group(1)) in shipped
                and not Path(m.group(2)).resolve().is_relative_to(site.resolve())
            ):
                raise _StepFailed(f"{program.name} loads {m.group(2)}, not the wheel's")

    def _test_package(self, fh: TextIO) -> str:
        site, module = self._site(fh)
        prefix = self._query(fh, site, module, "--cmake-prefix-path")
        # cmake_find_mode module/both: the wheel's Find module goes first, as CMakeDeps' does
        # (conan_toolchain.cmake puts it on CMAKE_MODULE_PATH).
        prefix_args: list[str] = []
        helps = self._query(fh, site, module, "--help")
        if "--cmake-module-path" in helps:
            modules = self._query(fh, site, module, "--cmake-module-path")
            if modules:
                prefix_args = [f"-DCMAKE_MODULE_PATH={modules}"]
        src = self.dir / "recipe" / "test_package"
        build = self.dir / "tp-build"
        if build.exists():
            shutil.rmtree(build)
        defs = [f"-D{d}" for d in self.case.cmake_defs]
        self._sh(
            fh,
            [
                "cmake",
                "-S",
                str(src),
                "-B",
                str(build),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DCMAKE_PREFIX_PATH={prefix}",
                "-DCMAKE_IGNORE_PREFIX_PATH=/usr",
                *prefix_args,
                *defs,
            ],
            what="cmake configure",
        )
        self._sh(fh, ["cmake", "--build", str(build), "-j2"], what="cmake build")
        # The programs run as test_package's conanfile runs them (env="conanrun"): with the
        # package's runenv_info (openssl's OPENSSL_MODULES), which the wheel's helper prints.
        run_env = self._run_env(fh, site, module, helps)
        return self._run_programs(fh, build, site, dict(self.corpus.env, **run_env))

    def _run_env(self, fh: TextIO, site: Path, module: str, helps: str) -> dict[str, str]:
        if "--run-env" not in helps:
            return {}
        out = self._query(fh, site, module, "--run-env")
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def _pkg_config(self, fh: TextIO) -> str:
        site, module = self._site(fh)
        pcdir = self._query(fh, site, module, "--pkg-config-path")
        env = dict(self.corpus.env, PKG_CONFIG_LIBDIR=pcdir, PKG_CONFIG_PATH="")
        flags = self._sh(
            fh,
            ["pkg-config", "--cflags", "--libs", *self.case.pkgconfig],
            env=env,
            what="pkg-config",
        ).split()
        src = self.dir / "recipe" / "test_package"
        sources = sorted(p for p in src.iterdir() if p.suffix in (".c", ".cpp", ".cc", ".cxx"))
        if self.case.pc_sources:
            sources = [src / name for name in self.case.pc_sources]
        if not sources:
            raise _StepFailed("test_package has no source file")
        build = self.dir / "pc-build"
        if build.exists():
            shutil.rmtree(build)
        build.mkdir()
        cflags = [f for f in flags if f.startswith(("-I", "-D", "-f", "-std", "-pthread"))]
        objects: dict[Path, Path] = {}
        for source in sources:
            c = source.suffix == ".c"
            obj = build / (source.name + ".o")
            out = self._sh(
                fh,
                ["cc" if c else "c++", "-c", str(source), "-o", str(obj), *cflags],
                cwd=build,
                what=f"compile {source.name}",
            )
            # gcc only warns where clang refuses: a C compile given a C++ standard.
            if c and "valid for C++" in out:
                raise _StepFailed(f"{source.name}: a C compile got a C++ flag from the .pc files")
            objects[source] = obj
        # A source defining main() is a program; the others (lz4's lib.c) go into each program.
        mains = [p for p in sources if re.search(r"\bmain\s*\(", p.read_text(errors="replace"))]
        helpers = [objects[p] for p in sources if p not in mains]
        if not mains:  # main() from a macro (doctest, Catch2): one program of every source
            mains, helpers = [src / "test_package"], list(objects.values())
            objects[mains[0]] = helpers.pop(0)
        cxx = any(p.suffix != ".c" for p in sources)
        built = []
        for source in mains:
            self._sh(
                fh,
                [
                    "c++" if cxx else "cc",
                    str(objects[source]),
                    *map(str, helpers),
                    "-o",
                    str(build / source.stem),
                    *flags,
                ],
                cwd=build,
                what=f"link {source.stem}",
            )
            built.append(source.stem)
        # .pc files carry no runpath (PkgConfigDeps' do not either): the programs run the way
        # Conan runs them, with the package's library dirs on LD_LIBRARY_PATH.
        libdirs = sorted({str(p.parent) for p in site.rglob("*.so*") if p.is_file()})
        helps = self._query(fh, site, module, "--help")
        run_env = dict(
            self.corpus.env,
            **self._run_env(fh, site, module, helps),
            LD_LIBRARY_PATH=os.pathsep.join(libdirs),
        )
        return self._run_programs(fh, build, site, run_env)

    def _parity(self, fh: TextIO) -> str:
        assert self.wheel is not None
        (self.dir / "parity").mkdir(exist_ok=True)
        out = self._sh(
            fh,
            [
                sys.executable,
                "-m",
                "etpkg",
                "parity",
                str(self.wheel),
                "--reference",
                self.recipe.ref,
                *self.conan_args,
                "--work",
                str(self.dir / "parity"),
            ],
            what="etpkg parity",
        )
        return out.strip().splitlines()[-1]


class _StepFailed(Exception):
    pass


def _has_shared_elf(wheel: Path) -> bool:
    """Whether the wheel holds an ELF shared object or executable (ET_DYN/ET_EXEC)."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            with zf.open(info) as fh:
                head = fh.read(18)
            if head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") in (2, 3):
                return True
    return False


def _stem(soname: str) -> str:
    """libz.so.1 / libz-1a2b3c4d.so.1 / libz.so -> libz (auditwheel's hash suffix dropped)."""
    base = soname.split(".so")[0]
    return re.sub(r"-[0-9a-f]{8}$", "", base)


# -------------------------------------------------------------------- the table
def table(results: Sequence[CaseResult]) -> str:
    head = "| case | shapes | " + " | ".join(STEPS) + " | seconds |"
    rule = "|" + "---|" * (len(STEPS) + 3)
    rows = [head, rule]
    for r in results:
        cells = []
        for step in STEPS:
            s = r.steps.get(step)
            cells.append("" if s is None else f"{'pass' if s.ok else 'FAIL'} {s.seconds:.0f}")
        rows.append(
            f"| {r.case.name} | {', '.join(r.case.shapes)} | "
            + " | ".join(cells)
            + f" | {r.seconds:.0f} |"
        )
    passed = sum(r.ok for r in results)
    rows.append("")
    rows.append(f"{passed}/{len(results)} cases pass every step.")
    return "\n".join(rows)


def failures(results: Sequence[CaseResult]) -> str:
    lines = []
    for r in results:
        for s in r.steps.values():
            if not s.ok:
                lines.append(f"- {r.case.name} / {s.step}: {s.detail}")
    return "\n".join(lines)


def deb_src_lines(etc_apt: Path) -> str:
    """The machine's own `deb` entries as `deb-src` lines (one-line style), for a private apt.

    Reads sources.list and sources.list.d/*.list / *.sources (deb822); mirrors, suites and
    keyrings are the machine's, only the type changes.
    """
    lines: list[str] = []
    one_line = [etc_apt / "sources.list", *sorted((etc_apt / "sources.list.d").glob("*.list"))]
    for path in one_line:
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.split()[:1] == ["deb"]:
                    lines.append("deb-src" + line.strip()[3:])
    for path in sorted((etc_apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.strip() and not line.startswith("#") and ":" in line:
                    key, value = line.split(":", 1)
                    fields[key.strip().lower()] = value.strip()
            if "deb" not in fields.get("types", "").split():
                continue
            signed = f"[signed-by={fields['signed-by']}] " if "signed-by" in fields else ""
            for uri in fields.get("uris", "").split():
                for suite in fields.get("suites", "").split():
                    lines.append(f"deb-src {signed}{uri} {suite} {fields.get('components', '')}")
    if not lines:
        raise CorpusError(f"no deb entries in {etc_apt} to derive deb-src lines from")
    return "\n".join(lines) + "\n"
