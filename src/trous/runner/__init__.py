"""Running untrusted code: a sandboxed zygote forks one supervisor per job, which forks the runs."""

from .pool import Runner, RunnerPool
from .protocol import Job, Limits, Probe, Unit, UnitResult

__all__ = ["Job", "Limits", "Probe", "Runner", "RunnerPool", "Unit", "UnitResult"]
