"""The course as an nbgrader course: build it; graded in nbgrader (autograde) or by `trous grade`, same grades.

- `build`: `trous nbgrader build DIR` writes nbgrader_config.py, source/<assignment>/<exercise>.ipynb
  (`notebooks`, instructions reworded for a notebook by `wording`; the course's own notebook by
  `explorer`) and trous-cours.json (inputs/standalone.py: what `trous grade .` needs anywhere);
- `incell`: what the check cell and the grade cells call inside the kernel, through `examiner` (the
  engine and the self-check on a notebook's bundle, inputs/bundle.py); `blankguard`: the preparation
  cell's extension (`%load_ext trous.publish.nbgrader`);
- `preprocessors`: release with the `___` blanks, the grade cells filled by the engine outside the
  kernel (`verify`), feedback without hidden tests, hidden-test cells restored without a warning;
  `kernel` and `kernel_entry`: the bubblewrap kernel used by `nbgrader autograde`; `exchange` and
  `zipcollect`: release_feedback and zip_collect for copies that came through Moodle;
- `trous grade DIR` grades the course's `submitted/` (inputs/nbgrader.py) and writes nbgrader's
  gradebook (outputs/nbgrader.py), with the grades changed by hand in formgrader taken back.
"""


def load_ipython_extension(ipython) -> None:
    from .blankguard import install  # noqa: PLC0415

    install(ipython)
