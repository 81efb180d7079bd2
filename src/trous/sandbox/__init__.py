"""Running untrusted code: a sandboxed zygote forks a supervisor, which has it fork the runs.

Theory of operation: the processes, and the pipes between them.

    grader thread (pool.Runner)       the teacher's process; reads what comes back under bounds (core/wire.py)
      │ starts `bwrap … python -m trous.sandbox.zygote` (backend.py: bubblewrap, or limits only)
      │ control socket, the zygote's fd 0: b"J" + a job's two pipe ends →   ← b"E" status, strays
      ▼
    zygote (zygote.py)                a fork server that never reads a job; reaps and sweeps every run
      │ forks the supervisor at the first job (again if it dies); their socketpair:
      │ b"J" + the job's pipe ends →   ← b"C" + a new child's pipe ends;  b"P" its pid, b"X" its end →
      ▼                                                                    ← b"D" the job is done
    supervisor (supervisor.py, session.py)   reads the job, compiles the programs, owns the clock
      │ the zygote forks each child with: commands on its fd 0 (frames U M P S E) →
      │                                   ← events on its fd 3 (JSON lines), ← output on fds 1, 2
      ▼
    child (child.py)                  runs the student's code, confined (confine.py, seccomp.py)

A job is a batch of units (supervisor.Supervisor) or a session (session.py: the grader's questions
arrive one at a time on the job's stream, each answered before the next is read). Either way its
children are kept by one keeper (supervisor.ChildRun), fed a batch's commands at once or one
question's at a time: one loop, and one clock per child, the deadline of the command it runs now;
past it, the child is asked to stop the student's code (SIGUSR1), then killed; the same close
kills it, says how it ended (one stop message) and wipes its folder. The results go back on the
job's second pipe, one JSON line per unit or per answer, which pool.py reads under bounds
(core/wire.py) and turns into `UnitResult`s (core/protocol.py: what crosses, as plain JSON),
starting a fresh runner when one dies. What a run leaves behind is removed (cleanup.py).
"""

from importlib import import_module

# Imported on first use (PEP 562): the zygote (`python -m trous.sandbox.zygote`) imports this package
# first, and needs neither the grader's side (pool, sandbox, subprocess, threads) nor its time.
_WHERE = {"Runner": "pool", "RunnerPool": "pool"}

__all__ = ["Runner", "RunnerPool"]


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
