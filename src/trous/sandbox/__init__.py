"""Running untrusted code: a sandboxed zygote forks one supervisor per job, which forks the runs."""

from importlib import import_module

# Imported on first use (PEP 562): the zygote (`python -m trous.sandbox.zygote`) imports this package
# first, and needs neither the grader's side (pool, sandbox, subprocess, threads) nor its time.
_WHERE = {"Runner": "pool", "RunnerPool": "pool", "Job": "protocol", "Limits": "protocol", "Probe": "protocol",
          "Unit": "protocol", "UnitResult": "protocol"}

__all__ = ["Job", "Limits", "Probe", "Runner", "RunnerPool", "Unit", "UnitResult"]


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
