"""`etpkg publish WHEEL... -r REPOSITORY`: upload wheels etpkg made to a package index, through
twine (its package reader, credentials and repository client; never its prompts).

Before anything is sent, every wheel is checked to be one etpkg made and left intact: each
archive member matches RECORD, the CMake config carries etpkg's manifest, WHEEL names etpkg as
generator, and the SBOM lists every file with its hash (the SBOM contract of verify). One bad
wheel uploads nothing. Each file is then one upload request, which an index stores whole or
not at all. A file the index already has is skipped when the index serves the very same bytes
(SHA-256 from its simple page) and refused otherwise: an index takes a file name once.

REPOSITORY is an upload URL (pypiserver's root, a devpi index, a Warehouse `/legacy/`) or a
repository name of ~/.pypirc; credentials come from -u/-p, TWINE_USERNAME/TWINE_PASSWORD,
~/.pypirc or a keyring, as twine takes them. Every failure is one PublishError line naming the
index and what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name, parse_wheel_filename

from etpkg._internal.errors import PublishError, WheelError
from etpkg._internal.remote import connection_failure

log = logging.getLogger(__name__)

_CREDENTIALS = "-u/-p, TWINE_USERNAME/TWINE_PASSWORD or ~/.pypirc"


@dataclass(frozen=True)
class Published:
    wheel: Path
    url: str  # the upload URL
    skipped: bool = False  # the index already served this very file


def check_wheel(wheel: Path) -> None:
    """Refuses anything but an intact wheel made by etpkg."""
    from etpkg._internal.verify.contracts.sbom import problems as sbom_problems
    from etpkg._internal.verify.wheel import read_sdk

    if wheel.suffix != ".whl" or not wheel.is_file():
        raise PublishError(f"{wheel}: no such wheel file")
    try:
        read_sdk(wheel)  # RECORD hashes, etpkg's manifest
        with zipfile.ZipFile(wheel) as zf:
            found = sbom_problems(zf)
            generator = _generator(zf)
    except (WheelError, zipfile.BadZipFile) as exc:
        raise PublishError(f"not publishing {wheel.name}: {exc}") from exc
    if not generator.startswith("etpkg "):
        raise PublishError(f"not publishing {wheel.name}: its WHEEL names {generator!r}, not etpkg")
    if found:
        raise PublishError(f"not publishing {wheel.name}: {found[0]}")


def _generator(zf: zipfile.ZipFile) -> str:
    for name in zf.namelist():
        if re.fullmatch(r"[^/]+\.dist-info/WHEEL", name):
            for line in zf.read(name).decode("utf-8", "replace").splitlines():
                if line.startswith("Generator:"):
                    return line.split(":", 1)[1].strip()
    return "no generator"


def default_index_url(repository_url: str) -> str | None:
    """The simple index beside an upload URL, where that is known: pypiserver serves both at
    its root (upload at /, pages at /simple/)."""
    parts = urlsplit(repository_url)
    if parts.path in ("", "/"):
        return repository_url.rstrip("/") + "/simple/"
    return None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """twine prints its progress with rich to stdout: detail for -v (on stderr), else dropped;
    etpkg's stdout is for its own results."""
    out = sys.stderr if log.isEnabledFor(logging.INFO) else io.StringIO()
    with contextlib.redirect_stdout(out):
        yield


def _settings(repository: str, username: str | None, password: str | None) -> Any:
    from twine import exceptions
    from twine.settings import Settings

    url = repository if "://" in repository else None
    try:
        settings = Settings(
            repository_name=repository if url is None else "pypi",
            repository_url=url,
            # twine's command line reads these variables, its Settings do not.
            username=username or os.environ.get("TWINE_USERNAME"),
            password=password or os.environ.get("TWINE_PASSWORD"),
            non_interactive=True,
            disable_progress_bar=True,
        )
        settings.check_repository_url()
    except exceptions.TwineException as exc:
        raise PublishError(f"package index {repository!r}: {_first_line(exc)}") from exc
    return settings


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def index_sha256(index_url: str, wheel_name: str, session: Any) -> str | None:
    """The SHA-256 the index's simple page gives for this file name, or None when it lists
    no such file (or cannot be read)."""
    import requests

    project = canonicalize_name(parse_wheel_filename(wheel_name)[0])
    try:
        resp = session.get(f"{index_url.rstrip('/')}/{project}/", timeout=30)
    except requests.RequestException:
        return None
    if resp.status_code != 200:
        return None
    match = re.search(re.escape(wheel_name) + r"[^\"'#]*#sha256=([0-9a-f]{64})", resp.text)
    return match.group(1) if match else None


def publish(
    wheels: Sequence[Path],
    repository: str,
    *,
    username: str | None = None,
    password: str | None = None,
    index_url: str | None = None,
) -> list[Published]:
    """Checks every wheel, then uploads each in turn; returns what was uploaded or skipped."""
    import requests
    from twine import exceptions
    from twine.package import PackageFile

    if not wheels:
        raise PublishError("no wheel to publish")
    for wheel in wheels:
        check_wheel(wheel)
    done: list[Published] = []
    with _quiet():
        settings = _settings(repository, username, password)
        url = str(settings.repository_config["repository"])
        index = index_url or default_index_url(url)
        try:
            repo = settings.create_repository()
        except exceptions.TwineException as exc:
            raise PublishError(_with_done(f"package index {url} {_missing(exc)}", done)) from exc
        try:
            for wheel in wheels:
                package = PackageFile.from_filename(str(wheel), None)
                try:
                    resp = repo.upload(package)
                except requests.ConnectionError as exc:
                    why = connection_failure(str(exc))
                    raise PublishError(
                        _with_done(f"cannot reach package index {url}: {why}", done)
                    ) from exc
                except requests.RequestException as exc:
                    raise PublishError(
                        _with_done(f"upload to package index {url} failed: {exc}", done)
                    ) from exc
                done.append(_outcome(resp, wheel, url, index, settings.username, repo, done))
        finally:
            repo.close()
    return done


def _missing(exc: BaseException) -> str:
    if "Credential not found" in str(exc) or "NonInteractive" in type(exc).__name__:
        return f"needs credentials: give them with {_CREDENTIALS}"
    return f"cannot be used: {_first_line(exc)}"


def _with_done(message: str, done: Sequence[Published]) -> str:
    if not done:
        return message + "; nothing was uploaded"
    names = ", ".join(p.wheel.name for p in done)
    return f"{message}; published before it failed: {names}"


def _outcome(
    resp: Any,
    wheel: Path,
    url: str,
    index: str | None,
    username: str | None,
    repo: Any,
    done: Sequence[Published],
) -> Published:
    status = int(resp.status_code)
    what = f"HTTP {status} {resp.reason}"
    if status == 200 and not resp.is_redirect:
        log.info("uploaded %s to %s", wheel.name, url)
        return Published(wheel, url)
    if resp.is_redirect:
        raise PublishError(
            _with_done(f"package index {url} redirects uploads ({what}); give the final URL", done)
        )
    if status in (401, 403):
        who = f"user {username!r}" if username else "no user"
        message = f"package index {url} refused the credentials of {who} ({what})"
        raise PublishError(_with_done(f"{message}: check those given with {_CREDENTIALS}", done))
    theirs = index_sha256(index, wheel.name, repo.session) if index else None
    if theirs is not None:
        if theirs == hashlib.sha256(wheel.read_bytes()).hexdigest():
            log.info("%s: the index already serves this very file", wheel.name)
            return Published(wheel, url, skipped=True)
        raise PublishError(
            _with_done(
                f"package index {url} already has a different {wheel.name} ({what}); a file "
                "name is uploaded once: publish a new version",
                done,
            )
        )
    text = " ".join(str(resp.text or "").split())[:200]
    raise PublishError(
        _with_done(f"package index {url} refused {wheel.name}: {what}: {text}".rstrip(": "), done)
    )


def report(results: Sequence[Published]) -> str:
    lines = [
        f"{r.wheel.name}: already on {r.url} (the same file)"
        if r.skipped
        else f"{r.wheel.name}: uploaded to {r.url}"
        for r in results
    ]
    return "\n".join(lines)


def add_publish_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "publish",
        help="upload wheels etpkg made to a package index (twine)",
        description="Check that each wheel is an intact wheel made by etpkg, then upload it "
        "to a package index through twine; a file the index already serves is skipped.",
    )
    p.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL")
    p.add_argument(
        "-r",
        "--repository",
        required=True,
        help="upload URL (e.g. a pypiserver's root) or a repository name of ~/.pypirc",
    )
    p.add_argument("-u", "--username", help="default: TWINE_USERNAME, ~/.pypirc")
    p.add_argument("-p", "--password", help="default: TWINE_PASSWORD, ~/.pypirc, keyring")
    p.add_argument(
        "--index-url",
        help="the index's simple pages, to tell a file already there (default: <URL>/simple/ "
        "for an upload URL at a server's root, as pypiserver has)",
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="log each upload")
    p.set_defaults(func=_command)


def _command(args: Any) -> int:
    results = publish(
        args.wheels,
        args.repository,
        username=args.username,
        password=args.password,
        index_url=args.index_url,
    )
    print(report(results))
    return 0
