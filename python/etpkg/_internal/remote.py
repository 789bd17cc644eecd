"""Bringing a package from a Conan remote into the local cache (what `conan install
--requires=REF -r REMOTE [--update]` does), so that conan.read_package then finds it there.

The other machine's path: binaries are built once, uploaded to a team's Conan server, and
wheelified elsewhere from a Conan home that holds nothing but the remote. Credentials come the
way Conan takes them (`conan remote login`, CONAN_LOGIN_USERNAME_<REMOTE> /
CONAN_PASSWORD_<REMOTE>); etpkg never prompts. A failure is one line naming the remote.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from etpkg._internal.conan import (
    DEFAULT_SELECTION,
    Selection,
    _first_line,
    _quiet_conan,
    _reference_from_spec,
    profiles,
)
from etpkg._internal.errors import PackageError, RemoteError

log = logging.getLogger(__name__)


def _env_name(remote: str) -> str:
    return re.sub(r"[^A-Z0-9_]", "_", remote.upper())


def connection_failure(text: str) -> str:
    """Why a connection failed, from a requests/urllib3 error's text: "Connection refused"."""
    cause = re.search(r"\[Errno -?\d+\] ([^\"')]+)|(timed out|Name or service not known)", text)
    return (cause.group(1) or cause.group(2)).strip() if cause else "no answer"


def _explain(exc: BaseException, remote: Any, ref: str) -> str:
    """Conan's error about a remote, as one line that says what to do."""
    text = str(exc)
    name, url = remote.name, remote.url
    creds = (
        f"`conan remote login {name} USER` or set CONAN_LOGIN_USERNAME_{_env_name(name)} and "
        f"CONAN_PASSWORD_{_env_name(name)}"
    )
    if "Authentication error" in text or "Wrong user or password" in text:
        return f"Conan remote {name!r} ({url}) rejected the credentials; check them: {creds}"
    if "interactive mode disabled" in text:
        return f"Conan remote {name!r} ({url}) needs credentials: {creds}"
    if "Forbidden" in text or "Permission denied" in text:
        return f"Conan remote {name!r} ({url}) denies this user access to {ref}"
    if "Unable to connect" in text or "Max retries" in text or "ConnectionError" in text:
        return f"cannot reach Conan remote {name!r} at {url}: {connection_failure(text)}"
    if "Unable to find" in text:
        return f"{ref} is not on Conan remote {name!r} ({url}) (nor in the local cache)"
    return f"cannot fetch {ref} from Conan remote {name!r} ({url}): {_first_line(exc)}"


def fetch_package(
    spec: str, remote_name: str, *, update: bool = False, selection: Selection = DEFAULT_SELECTION
) -> str:
    """Installs spec's binary for the selection (default: the default profile), with its
    dependencies, from the remote into the Conan cache; `update` checks the remote for newer
    revisions even when the cache has the package. Returns the reference."""
    from conan.api.conan_api import ConanAPI
    from conan.api.output import ConanOutput
    from conan.errors import ConanException

    with _quiet_conan():
        if not log.isEnabledFor(logging.DEBUG):
            # Conan logs a refused login as an error itself; etpkg's own line says it.
            ConanOutput.define_log_level("quiet")
        try:
            api = ConanAPI()
            # A remote that asks for credentials must fail, never wait on stdin.
            api._api_helpers.set_core_confs(["core:non_interactive=True"])
        except ConanException as exc:
            raise PackageError(f"cannot open the Conan home: {_first_line(exc)}") from exc
        home = Path(api.home_folder)
        try:
            remote = api.remotes.get(remote_name)
        except ConanException as exc:
            raise RemoteError(
                f"no Conan remote named {remote_name!r} in {home}: add it with "
                f"`conan remote add {remote_name} URL`"
            ) from exc
        if remote.disabled:
            raise RemoteError(f"Conan remote {remote_name!r} is disabled in {home}")
        ref, _ = _reference_from_spec(api, spec)
        updates = ["*"] if update else None
        profile_host, profile_build = profiles(api, selection)
        try:
            graph = api.graph.load_graph_requires(
                [ref],
                None,
                profile_host,
                profile_build,
                lockfile=None,
                remotes=[remote],
                update=updates,
            )
            graph.report_graph_error()
            api.graph.analyze_binaries(
                graph, build_mode=None, remotes=[remote], update=updates, lockfile=None
            )
        except ConanException as exc:
            raise RemoteError(_explain(exc, remote, ref)) from exc
        missing = [str(n.ref) for n in graph.nodes if n.ref is not None and n.binary == "Missing"]
        if missing:
            raise RemoteError(
                f"Conan remote {remote_name!r} ({remote.url}) has no binary of "
                f"{', '.join(missing)} for {selection.describe()}; upload one built with it"
            )
        try:
            api.install.install_binaries(graph, remotes=[remote])
        except ConanException as exc:
            raise RemoteError(_explain(exc, remote, ref)) from exc
        log.info("fetched %s from %s", ref, remote.url)
        return ref
