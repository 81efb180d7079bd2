"""The student side: checking one's own copy, in French, from a terminal, pytest or a notebook.

    checking.py       run the student's file, evaluate the public checks, one verdict per blank
    blame.py          which blank a failing check points at (wrong, waiting for another, to review)
    glosses.py        French glosses for the usual mistakes
    feedback.py       those verdicts as French text
    hints.py          hints one at a time
    watch.py          re-check on every save
    pytest_plugin.py  `pytest exercises/`
"""
