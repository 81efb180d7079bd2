"""The student side: checking one's own copy, in French (selfcheck, blame, feedback, hints, watch,
checker, pytest_plugin)."""
