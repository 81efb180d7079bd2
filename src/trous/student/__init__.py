"""The student side: checking one's own copy, in French, from a terminal, pytest or a notebook.

    checking.py       run the student's file, evaluate the public checks, one verdict per blank
    feedback.py       those verdicts as French text
    hints.py          hints one at a time
    watch.py          re-check on every save
    pytest_plugin.py  `pytest exercises/`
"""
