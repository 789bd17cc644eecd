"""What verify reports (public through etpkg: Report, CheckResult)."""

from __future__ import annotations

from dataclasses import dataclass

from etpkg._internal.model import Sdk


@dataclass(frozen=True)
class CheckResult:
    """One contract checked: its name, whether it holds, and what was seen (or went wrong)."""

    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass(frozen=True)
class Report:
    """What `etpkg verify` found: the SDK read from the wheel and one result per check."""

    sdk: Sdk
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if not r.ok)
