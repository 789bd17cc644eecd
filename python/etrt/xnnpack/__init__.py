"""Lowering to etrt's XNNPACK delegate ("XnnpackBackend", libetrt_backend_xnnpack.so)."""

from __future__ import annotations

from .lowering import BACKEND_ID, DelegationSummary, delegate_to_xnnpack

__all__ = ["BACKEND_ID", "DelegationSummary", "delegate_to_xnnpack"]
