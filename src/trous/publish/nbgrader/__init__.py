"""The course as an nbgrader course: build it; graded in nbgrader (autograde) or by `trous grade`, same grades.

- `build`: `trous nbgrader build DIR` writes nbgrader_config.py, source/<assignment>/<exercise>.ipynb
  and trous-cours.json (standalone.py: what `trous grade .` needs to grade the course anywhere);
- `bundle`: what each notebook embeds about its exercise (public part in the check cell's metadata,
  hidden part in the hidden-test blocks), and how to turn it back into a course the engine can grade;
- `answers`: the student's code of an exercise, read from a notebook's answer cells; `cells`: where
  its lines are in the notebook (messages name cells, not lines of a file the student never saw);
- `incell`: what the check cell and the grade cells call inside the kernel; `blankguard`: the
  preparation cell's extension (`%load_ext trous.publish.nbgrader`);
- `preprocessors`: release with the `___` blanks, out-of-kernel check of the grades, feedback without
  hidden tests, hidden-test cells restored without a warning; `kernel`: the bubblewrap kernel used
  by `nbgrader autograde`; `exchange` and `zipcollect`: release_feedback and zip_collect for copies
  that came through Moodle;
- `trous grade DIR` grades the course's `submitted/` (inputs/nbgrader.py) and writes nbgrader's
  gradebook (outputs/nbgrader.py), with the grades changed by hand in formgrader taken back.
"""


def load_ipython_extension(ipython) -> None:
    from .blankguard import install  # noqa: PLC0415

    install(ipython)
