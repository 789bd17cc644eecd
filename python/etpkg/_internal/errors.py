"""Error types (public through etpkg): every expected failure is one of these, and the CLI
prints it as one line `etpkg: error: ...` and exits 1."""

from __future__ import annotations


class EtpkgError(Exception):
    """An expected failure with a message that tells the user what to do."""


class PackageError(EtpkgError):
    """The Conan package cannot be found or read, or what it declares cannot become a wheel."""


class LayoutError(PackageError):
    """The package's contents cannot become a wheel (missing library, conflicting files)."""


class ElfError(LayoutError):
    """A file that must be an ELF shared library is not one, or not for the package's arch."""


class RemoteError(PackageError):
    """A Conan remote cannot give the package: unreachable, credentials refused, or it lacks
    the reference or its binary."""


class ToolError(EtpkgError):
    """A required external tool (patchelf, auditwheel) is missing or failed; the message keeps
    the tool's own last meaningful line."""


class PolicyError(EtpkgError):
    """The wheel needs a newer manylinux policy than the target chosen for it, or the target
    names no policy; the message names the files and symbol versions above it."""


class CheckError(EtpkgError):
    """The repaired wheel breaks a rule (runpath, absolute build path)."""


class OutputError(EtpkgError):
    """The wheel cannot be written to the output directory."""


class PublishError(EtpkgError):
    """A wheel cannot be published: not an intact etpkg wheel, or the package index cannot be
    reached, refuses the credentials or already has a different file of that name."""


class WheelError(EtpkgError):
    """The wheel given to verify is unreadable or corrupt (zip, RECORD, manifest)."""


class VerifyError(EtpkgError):
    """verify cannot run (a tool it installs or needs is unavailable); a failed consumer check
    is reported as a check result instead."""
