"""Captum's ``captum.attr``, imported on the first explanation that needs it, not when the methods register.

``import captum.attr`` costs about 0.5 s (it pulls its LLM and visualization helpers, matplotlib, ...), and every
method file is imported when the registry is built, so a top-level ``from captum.attr import X`` in the seven
files that use Captum made ``import workbench`` pay it before any explanation. The methods write
``captum_attr.IntegratedGradients(...)``: the same Captum class, found on first use.
"""
from __future__ import annotations


class _LazyCaptumAttr:
    """Stands for the module ``captum.attr``; each attribute is looked up on the real module."""

    def __getattr__(self, name: str):
        import captum.attr  # lazy third-party import: see the module docstring (tests/test_architecture.py)

        return getattr(captum.attr, name)


captum_attr = _LazyCaptumAttr()
