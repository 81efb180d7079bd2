"""One vocabulary for what users type: every option of every `trous` command, walked from the parser
itself, follows the same rules, and the spellings of earlier versions still mean what they meant."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from trous.cli import build_parser

from grading_support import TROUS, mini_course

# Words that are the same in French and English: no alias to add.
SAME_IN_BOTH = {"--force", "--format", "--participants", "--port"}

# French words of the options, and the English one each stands beside (checked both ways: a new
# option must be added here, with its alias, or the test says which).
ENGLISH = {
    "--cours": "--course", "--trou": "--blank", "--intervalle": "--interval", "--scrutation": "--polling",
    "--resultats": "--results", "--bac-a-sable": "--sandbox", "--parallele": "--jobs", "--carnet": "--gradebook",
    "--devoir": "--assignment", "--feuille": "--grading-worksheet", "--ordonnanceur": "--scheduler",
    "--echange": "--exchange", "--exercice": "--exercise",
    "--sans-isolation": "--no-isolation", "--sans-correcteurs": "--no-graders", "--sans-zip": "--no-zip",
    "--sans-navigateur": "--no-browser", "--titre": "--title", "--verifier": "--check", "--marquer": "--mark",
}


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("trous",)):
    """(command path, parser) of the program and of every subcommand, at any depth."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


def options_of(parser: argparse.ArgumentParser):
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


ALL = [(" ".join(path), action) for path, parser in commands(build_parser()) for action in options_of(parser)]


def test_the_walk_sees_every_command():
    names = {" ".join(path) for path, _ in commands(build_parser())}
    assert {"trous grade", "trous nbgrader grade", "trous nbgrader build", "trous lab", "trous watch",
            "trous doctor", "trous edition", "trous hint"} <= names
    assert len(ALL) >= 25


@pytest.mark.parametrize("where, action", ALL, ids=[f"{w}:{a.option_strings[0]}" for w, a in ALL])
def test_each_option_is_french_first_with_its_english_alias(where, action):
    longs = [o for o in action.option_strings if o.startswith("--")]
    french = longs[0]
    # The attribute is the French name: one name for one thing, in the code too.
    assert action.dest == french[2:].replace("-", "_"), f"{where} {french} : dest {action.dest}"
    assert re.fullmatch(r"--[a-z0-9]+(-[a-z0-9]+)*", french), f"{where} {french} : ni accent ni majuscule"
    if french in SAME_IN_BOTH:
        assert longs == [french], f"{where} {french}"
        return
    assert french in ENGLISH, f"{where} {french} : nouvelle option, à ajouter à ENGLISH avec son alias anglais"
    assert ENGLISH[french] in longs, f"{where} {french} : il manque l'alias anglais {ENGLISH[french]}"
    # « without » is said one way: --sans-X, its English alias --no-X, nothing else.
    negatives = [o for o in longs if o.startswith(("--no-", "--sans-", "--without-", "--skip-"))]
    if negatives:
        assert french.startswith("--sans-") and isinstance(action, argparse._StoreTrueAction), f"{where} {longs}"
        assert all(o.startswith(("--sans-", "--no-")) for o in negatives), f"{where} {longs}"


def test_the_same_thing_has_the_same_options_and_default_everywhere():
    by_dest: dict[str, dict] = {}
    for where, action in ALL:
        seen = (tuple(action.option_strings), action.default, action.type, tuple(action.choices or ()),
                type(action).__name__)
        by_dest.setdefault(action.dest, {}).setdefault(seen, []).append(where)
    different = {dest: spellings for dest, spellings in by_dest.items() if len(spellings) > 1}
    assert not different, different
    # The words the issue found said two ways are now one option each (`trous grade` is the one grading
    # command; `--devoir` and `--force` are shared with others).
    for dest in ("devoir", "force"):
        assert sum(len(w) for w in by_dest[dest].values()) >= 2, dest
    assert not [w for w, a in ALL if a.dest in ("workers", "jobs", "scheduler", "no_browser", "gradebook")]


def parse(*argv: str) -> dict:
    return vars(build_parser().parse_args(list(argv)))


@pytest.mark.parametrize("old, new", [
    (["grade", "c", "--workers", "4"], ["grade", "c", "--parallele", "4"]),
    (["grade", "c", "--jobs", "4"], ["grade", "c", "-j", "4"]),
    (["grade", "c", "--gradebook", "sqlite:///x.db"], ["grade", "c", "--carnet", "sqlite:///x.db"]),
    (["grade", "c", "--scheduler", "tcp://h:8786"], ["grade", "c", "--ordonnanceur", "tcp://h:8786"]),
    (["grade", "c", "--ordonnanceur", "local"], ["grade", "c", "--scheduler", "local"]),
    (["grade", "c", "--results", "r", "--assignment", "partie5"], ["grade", "c", "--resultats", "r", "--devoir", "partie5"]),
    (["grade", "c", "--no-isolation"], ["grade", "c", "--sans-isolation"]),
    (["nbgrader", "build", "--exchange", "/x", "--exercise", "01_toux"], ["nbgrader", "build", "--echange", "/x", "--exercice", "01_toux"]),
    (["lab", "--no-browser"], ["lab", "--sans-navigateur"]),
    (["edition", "--no-zip"], ["edition", "--sans-zip"]),
    (["doctor", "--no-graders"], ["doctor", "--sans-correcteurs"]),
    (["hint", "--blank", "2"], ["hint", "--trou", "2"]),
    (["watch", "--interval", "2", "--polling"], ["watch", "--intervalle", "2", "--scrutation"]),
    (["--course", "x", "list"], ["-C", "x", "list"]),
    # Abbreviations argparse accepted before the aliases existed still name the same option.
    (["--cour", "x", "list"], ["--cours", "x", "list"]),
    (["grade", "c", "--res", "r", "--work", "2", "--sched", "tcp://h:1"],
     ["grade", "c", "--resultats", "r", "--parallele", "2", "--ordonnanceur", "tcp://h:1"]),
])
def test_old_and_english_spellings_mean_the_same(old, new):
    assert parse(*old) == parse(*new)


def test_values_still_reach_the_command():
    args = parse("grade", "d", "--devoir", "partie5", "-j", "3", "--sans-isolation")
    assert (args["devoir"], args["parallele"], args["sans_isolation"]) == (["partie5"], 3, True)
    assert sorted(parse("grade", "d", "--devoir", "p1", "--assignment", "p2")["devoir"]) == ["p1", "p2"]
    args = parse("grade", "c", "--workers", "2", "--scheduler", "tcp://h:8786", "--gradebook", "sqlite:///x.db")
    assert (args["parallele"], args["ordonnanceur"], args["carnet"]) == (2, "tcp://h:8786", "sqlite:///x.db")
    assert parse("grade", "c")["parallele"] is None


@pytest.mark.parametrize("argv", [["grade", "c", "--parallele", "0"], ["grade", "c", "-j", "-1"],
                                  ["grade", "c", "--ordonnanceur", "dsak"]])
def test_a_bad_value_is_refused_the_same_way(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    assert "attendu" in capsys.readouterr().err


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TROUS, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200", **env})


def test_an_explicit_ordonnanceur_wins_over_the_site_default(tmp_path):
    # $TROUS_SCHEDULER names a cluster nobody runs; `--ordonnanceur local` grades here all the same.
    course_dir = mini_course(tmp_path / "cours")
    copies = tmp_path / "copies"
    (copies / "alice" / "exercises").mkdir(parents=True)
    shutil.copy(course_dir / "solutions" / "01_toux.py", copies / "alice" / "exercises" / "01_toux.py")
    done = run("grade", str(copies), "--ordonnanceur", "local", "-j", "1", cwd=course_dir,
               TROUS_SCHEDULER="tcp://127.0.0.1:1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "copies-resultats" / "results" / "alice.json").is_file()


def test_a_typo_in_the_site_default_ordonnanceur_is_refused_as_on_the_command_line(tmp_path):
    # « dsak » is refused after --ordonnanceur; in $TROUS_SCHEDULER it was taken for a Dask address.
    course_dir = mini_course(tmp_path / "cours")
    (tmp_path / "copies" / "alice").mkdir(parents=True)
    done = run("grade", str(tmp_path / "copies"), "-j", "1", cwd=course_dir, TROUS_SCHEDULER="dsak")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "$TROUS_SCHEDULER" in done.stdout and "« dsak »" in done.stdout and "attendu" in done.stdout


@pytest.mark.parametrize("typed, meant", [
    (["d", "partie5", "-j", "3", "--sans-isolation"], {"devoir": ["partie5"], "parallele": 3, "sans_isolation": True}),
    (["--devoir", "p1", "d", "--etudiant", "x", "--jobs", "2"], {"devoir": ["p1"], "parallele": 2}),
    (["d", "--student=x", "--bac-a-sable", "bwrap"], {"devoir": ["DEVOIR"], "bac_a_sable": "bwrap"}),
])
def test_nbgrader_grade_is_gone_and_says_the_command_that_replaces_it(tmp_path, typed, meant):
    """`trous grade DIR --devoir X` grades an nbgrader course: the old command names it, with what was typed."""
    import shlex

    done = run("nbgrader", "grade", *typed, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = re.search(r"lancez « (trous grade .*?) »", done.stdout)
    assert said and "n'existe plus" in done.stdout, done.stdout
    args = parse(*shlex.split(said.group(1))[1:])  # what the teacher then types means what they meant
    assert args["copies"] == "d" and args["func"].__module__ == "trous.outputs.run"
    assert {k: args[k] for k in meant} == meant
