"""Running untrusted code: a sandboxed zygote forks a supervisor, which has it fork the runs.

    grader thread (pool.Runner)       starts `bwrap … python -m trous.sandbox.zygote` (backend.py)
      │ control socket: b"J" + a job's two pipe ends →   ← b"E", the job is over
    zygote (zygote.py)                a fork server that never reads a job; reaps and sweeps every run
      │ b"J" + the job's pipe ends →   ← b"C" + a new child's pipe ends, b"D" the job is done
      │ b"P" the child's pid, b"X" how it ended →
    supervisor (supervisor.py)        reads the job, compiles the programs, owns the clock
      │ commands on the child's fd 0 (frames U M P S E) →   ← events on fd 3, output on fds 1, 2
    child (child.py)                  runs the student's code, confined (seccomp.py)

A job is a batch of units or a session (questions one at a time); either way one keeper
(supervisor.ChildRun) runs its children, one clock per child: past it the child is asked to stop
(SIGUSR1), then killed. Results come back one JSON line per unit or answer, read under bounds
(core/wire.py) into `UnitResult`s; a dead runner is replaced. What a run leaves is removed (zygote.py).
"""
