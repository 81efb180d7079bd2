"""Blank parsing and alignment: what is a blank, what a copy wrote in it, and when it no longer aligns."""

import pytest

from trous.core import blanks
from trous.core.source import SourceError, decode

TEMPLATE = """\
def softmax(s):
    e = [math.exp(v) for v in s]
    total = ___
    return [v / total for v in e]

scores = [___ for t in x]   # produit scalaire
nouveau = [___ for j in range(2)]
"""


def fills_of(template, copy):
    found = blanks.align(template, copy)
    return None if found is None else [f.text for f in found]


def test_blanks_are_names_not_strings_or_comments():
    text = 'a = "___"\nb = ___  # ___ here is a comment\nc = f(___, "x___")\n'
    found = blanks.find_blanks(text)
    assert [(b.line, b.column) for b in found] == [(2, 4), (3, 6)]


def test_longer_underscore_names_are_not_blanks():
    assert blanks.find_blanks("____ = 1\n__ = 2\nx = ___\n") == [blanks.Blank(0, 3, 4)]


def test_fills_are_extracted_in_order():
    copy = TEMPLATE.replace("total = ___", "total = sum(e)").replace(
        "[___ for t in x]", "[sum(a * b for a, b in zip(t, toux)) for t in x]").replace(
        "[___ for j in range(2)]", "[sum(poids[i] * x[i][j] for i in range(3)) for j in range(2)]")
    assert fills_of(TEMPLATE, copy) == [
        "sum(e)", "sum(a * b for a, b in zip(t, toux))", "sum(poids[i] * x[i][j] for i in range(3))"]


def test_fill_containing_the_next_segment_keyword_splits_at_the_outer_level():
    # The fill holds its own `for ... in`, inside brackets: the split must be the outer `for t in x`.
    template = "scores = [___ for t in x]\n"
    copy = "scores = [sum(a for a in t) for t in x]\n"
    assert fills_of(template, copy) == ["sum(a for a in t)"]


def test_several_blanks_on_one_line():
    template = "y = ___ + ___ * ___\n"
    copy = "y = a + (b - 1) * c[0]\n"
    assert fills_of(template, copy) == ["a", "(b - 1)", "c[0]"]


def test_blank_inside_brackets_spanning_lines():
    template = "m = [\n    ___,\n    [0, 1],\n]\n"
    copy = "m = [\n    [1,\n     0],\n    [0, 1],\n]\n"
    assert fills_of(template, copy) == ["[1,\n     0]"]


def test_comments_spacing_and_quotes_outside_blanks_do_not_matter():
    template = "x = 'abc'  # note\ny = ___\n"
    copy = '# my own comment\nx   =   "abc"\n\ny = 2 * x  # changed\n'
    assert fills_of(template, copy) == ["2 * x"]


def test_code_changed_outside_blanks_does_not_align():
    assert blanks.align(TEMPLATE, TEMPLATE.replace("range(2)", "range(3)")) is None
    assert blanks.align(TEMPLATE, TEMPLATE + "print('hello')\n") is None


def test_unfilled_and_partly_filled_blanks():
    copy = TEMPLATE.replace("total = ___", "total = sum(___)")
    found = blanks.align(TEMPLATE, copy)
    assert [f.filled for f in found] == [False, False, False]
    assert found[0].text == "sum(___)"


def test_a_fill_may_not_swallow_a_line_break():
    template = "a = ___\nb = 2\n"
    assert blanks.align(template, "a = 1\nc = 3\nb = 2\n") is None


def test_splice_replaces_only_the_chosen_fills():
    copy = "y = a + b * c\n"
    found = blanks.align("y = ___ + ___ * ___\n", copy)
    assert blanks.splice(copy, found, {1: "(b + 1)"}) == "y = a + (b + 1) * c\n"


def test_crlf_bom_and_tabs_are_read_like_python_does():
    data = "\ufeffdef f():\r\n\tt = ___\r\n\treturn t\r\n".encode("utf-8")
    source = decode(data, "x.py")
    assert not source.text.startswith("\ufeff") and "\r" not in source.text
    found = blanks.find_blanks(source.text)
    assert [(b.line, b.column) for b in found] == [(2, 5)]
    copy = decode("def f():\r\n\tt = 1 + 1\r\n\treturn t\r\n".encode(), "y.py").text
    assert fills_of(source.text, copy) == ["1 + 1"]


def test_non_utf8_file_is_a_clear_error_with_its_line():
    data = "x = 1\n# déjà\n".encode("latin-1")
    with pytest.raises(SourceError) as info:
        decode(data, "exercises/01_toux.py")
    assert info.value.line == 2
    assert "UTF-8" in info.value.message and "0xE9" in info.value.message


def test_coding_cookie_is_honoured():
    data = "# -*- coding: latin-1 -*-\nx = 'déjà'\n".encode("latin-1")
    assert "déjà" in decode(data, "a.py").text


def test_binary_file_is_refused():
    with pytest.raises(SourceError) as info:
        decode(b"\x7fELF\x00\x01\x02", "a.py")
    assert "binaire" in info.value.message


def test_tokenizer_errors_become_located_errors():
    with pytest.raises(blanks.TokenizeError) as info:
        blanks.tokens('x = """never closed\n')
    assert info.value.line == 1


def test_leftover_blanks_are_located_even_when_the_copy_changed():
    copy = TEMPLATE.replace("range(2)", "range(3)").replace("total = ___", "total = sum(e)")
    assert blanks.align(TEMPLATE, copy) is None
    left = blanks.leftover_blanks(TEMPLATE, copy)
    assert sorted(left) == [1, 2]
    assert left[1][0] == 6


def test_text_fast_path_agrees_with_token_alignment(course):
    """On every exercise: the shipped file, its solution and edited copies split the same way."""
    from conftest import complete_exercises

    def same(template, copy):
        fast = blanks.align_text(template, blanks.blank_offsets(template), copy)
        slow = blanks.align(template, copy)
        if fast is None:  # undecided: the token path decides, nothing to compare
            return True
        assert slow is not None, copy
        return [(f.text, f.line, f.column, f.begin, f.stop, f.filled) for f in fast] == \
            [(f.text, f.line, f.column, f.begin, f.stop, f.filled) for f in slow]

    decided = 0
    for exercise in complete_exercises(course):
        template = exercise.path.read_text(encoding="utf-8")
        solution = exercise.solution_path.read_text(encoding="utf-8")
        fills = blanks.align(template, solution)
        copies = [template, solution,
                  blanks.splice(solution, fills, {0: "___"}),
                  blanks.splice(solution, fills, {len(fills) - 1: "(1 +  2)"}),
                  blanks.splice(solution, fills, {0: "f(a)(b)[0]"})]
        for copy in copies:
            assert same(template, copy), (exercise.id, copy)
            decided += blanks.align_text(template, blanks.blank_offsets(template), copy) is not None
        # Code changed outside the blanks: the fast path never claims an alignment.
        assert blanks.align_text(template, blanks.blank_offsets(template), solution + "x = 1\n") is None
    assert decided >= len(complete_exercises(course)) * 3  # the fast path is actually used


def test_text_fast_path_refuses_fills_that_merge_or_span_lines():
    template = "a = ___\nb = [___ for t in x]\n"
    offsets = blanks.blank_offsets(template)
    assert blanks.align_text(template, offsets, "a = (1,\n 2)\nb = [t for t in x]\n") is None
    assert blanks.align_text(template, offsets, "a = 1  # note\nb = [t for t in x]\n") is None
    found = blanks.align_text(template, offsets, "a = 1\nb = [f(t) for u in y for t in x]\n")
    assert [f.text for f in found] == ["1", "f(t) for u in y"]
