"""The course as an nbgrader course, graded in nbgrader (autograde) or by `trous grade`, same grades.

`build` (`trous nbgrader build`), `notebooks`, `wording`, `explorer`: the course directory;
`incell`, `examiner`, `blankguard`: what the notebook's cells run in the kernel; `preprocessors`,
`verify`, `kernel`, `kernel_entry`, `exchange`, `zipcollect`: nbgrader's steps done trous's way.
"""


def load_ipython_extension(ipython) -> None:
    from .blankguard import install  # noqa: PLC0415

    install(ipython)
