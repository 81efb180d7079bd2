"""The course as an nbgrader course: build it, grade it in or out of nbgrader, with the same grades.

- `build`: `trous nbgrader build DIR` writes nbgrader_config.py and source/<assignment>/<exercise>.ipynb;
- `bundle`: what each notebook embeds about its exercise (public part in the check cell, hidden part
  in the hidden-test blocks), and how to turn it back into a small course the engine can grade;
- `answers`: the student's code of an exercise, read from a notebook's answer cells;
- `incell`: what the check cell and the grade cells call inside the kernel;
- `preprocessors`: release with the `___` blanks, out-of-kernel check of the grades, feedback without
  hidden tests; `kernel`: the bubblewrap kernel used by `nbgrader autograde`;
- `intake` and `gradebook`: `trous grade` on nbgrader's `submitted/`, written into nbgrader's gradebook.
"""
