"""Domain errors: the CLI turns each into one "error: ..." line."""

from __future__ import annotations


class EtrtError(Exception):
    """Base of every error etrt reports to a user."""


class ExportError(EtrtError):
    """The model or graph cannot be turned into an etrt program."""


class ProgramFormatError(EtrtError):
    """A program file is not a valid etrt program."""


class SpecError(EtrtError):
    """A model spec given on the command line cannot be loaded."""


# Missing operators that come from a library's choice a user can change, and the change: said
# with the refusal, since exporting anyway only moves the failure to the first run.
WORKAROUNDS = {
    # transformers' mixture-of-experts layers (Mixtral, Qwen2-MoE, OLMoE, ...) default to
    # grouped_mm, on CPU its custom fallback op (and aten::histc to count tokens per expert);
    # "batched_mm" gathers each token's experts' weights into batched products instead.
    "transformers::grouped_mm_fallback": (
        "transformers' mixture-of-experts layers run their experts through grouped_mm: build the"
        ' model with experts_implementation="batched_mm" (from_pretrained or the config), or set'
        ' model.config._experts_implementation = "batched_mm" before exporting'
    ),
}


class MissingOpsError(ExportError):
    """Operators without an etrt kernel, refused by name; `listed` names them and their nodes,
    `ops` the operators alone.

    The advice names the Python argument; the CLI says its flag instead."""

    def __init__(self, listed: str, ops: tuple[str, ...] = ()) -> None:
        self.listed, self.ops = listed, ops
        super().__init__(self.advice("allow_missing_ops=True"))

    def advice(self, switch: str) -> str:
        known = [WORKAROUNDS[op] for op in self.ops if op in WORKAROUNDS]
        fix = "".join(f"; {text}" for text in known)
        return f"no etrt kernel for {self.listed}{fix}; pass {switch} to export anyway"
