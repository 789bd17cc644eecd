"""Domain errors: every expected failure is one of these, and the CLI prints it as one line."""

from __future__ import annotations


class EtpkgError(Exception):
    """An expected failure with a message that tells the user what to do."""


class PackageError(EtpkgError):
    """The Conan package cannot be found or read."""


class LayoutError(EtpkgError):
    """The package's contents cannot become a wheel (missing or invalid library, conflicts)."""


class ToolError(EtpkgError):
    """A required external tool (patchelf, auditwheel) is missing or failed."""


class CheckError(EtpkgError):
    """The repaired wheel breaks a rule (runpath, absolute build path)."""


class OutputError(EtpkgError):
    """The wheel cannot be written to the output directory."""
