"""What PHP's strtotime makes of the « Last modified (grade) » cells of Moodle's worksheet, with the
real PHP as the oracle (Debian's php-cli, installed by scripts/install-system-deps.sh).

Moodle's importer reads that cell with strtotime (mod/assign/feedback/offline/importgradeslib.php)
and skips every row whose grade was modified after it (feedback/offline/locallib.php): whether the
date is readable decides what trous tells the teacher. The dates are written here as Moodle's
userdate() writes them (langconfig `strftimedaydatetime`, leading zeros of %d and %I dropped),
from Python's own calendar, not from trous's tables.
"""

from __future__ import annotations

import datetime as dt
import random

from moodle_support import strtotime

from trous.outputs import phpdate

FRENCH_DAYS = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"]
FRENCH_MONTHS = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                 "novembre", "décembre"]
ENGLISH_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ENGLISH_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                  "October", "November", "December"]


def english(when: dt.datetime) -> str:
    """userdate() in English: '%A, %d %B %Y, %I:%M %p' without the leading zeros of the day and hour."""
    hour = when.hour % 12 or 12
    return (f"{ENGLISH_DAYS[when.weekday()]}, {when.day} {ENGLISH_MONTHS[when.month - 1]} {when.year}, "
            f"{hour}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}")


def french(when: dt.datetime) -> str:
    """userdate() in French: '%A %d %B %Y, %H:%M' without the leading zero of the day."""
    return (f"{FRENCH_DAYS[when.weekday()]} {when.day} {FRENCH_MONTHS[when.month - 1]} {when.year}, "
            f"{when.hour:02d}:{when.minute:02d}")


def moments(years=(2026, 2027)) -> list[dt.datetime]:
    rng = random.Random(20)
    out = []
    day = dt.datetime(years[0], 1, 1)
    while day.year in years:
        for hour, minute in ((0, 5), (9, 15), (12, 0), (23, 59), (rng.randrange(24), rng.randrange(60))):
            out.append(day.replace(hour=hour, minute=minute))
        day += dt.timedelta(days=1)
    return out


def test_english_moodle_dates_are_read_and_give_php_s_time():
    texts = [english(m) for m in moments()]
    for text, php in zip(texts, strtotime(texts)):
        ours = phpdate.reads(text)
        assert php is not None and ours.readable is True and ours.timestamp == php, text


def test_french_moodle_dates_are_never_read():
    texts = [french(m) for m in moments()]
    assert "mardi 1 décembre 2026, 09:15" in texts
    for text, php in zip(texts, strtotime(texts)):
        assert php is None and phpdate.reads(text).readable is False, text


def test_no_date_and_moodle_s_dash_are_false_as_php_says():
    cells = ["", "-", " - "]
    assert strtotime(cells) == [None, None, None]
    assert all(phpdate.reads(c).readable is False for c in cells)


def _corpus() -> list[str]:
    """Dates a spreadsheet or a hand may leave in that cell, and near misses, built from pieces."""
    rng = random.Random(7)
    days = ENGLISH_DAYS + [d[:3] for d in ENGLISH_DAYS] + FRENCH_DAYS + ["Mon.", "Funday"]
    months = ENGLISH_MONTHS + [m[:3] for m in ENGLISH_MONTHS] + ["Sept"] + FRENCH_MONTHS
    times = ["", "9:15", "09:15", "12:00 AM", "12:30 pm", "13:15 PM", "0:00 AM", "23:59", "24:00", "7.05", "10:00:30",
             "10:61", "9:15 a.m.", "11:59PM"]
    out = []
    for _ in range(2500):
        year = rng.choice(["2026", "2027", "1999", "26", "70", "2000"])
        day = str(rng.randrange(0, 33))
        month = str(rng.randrange(0, 14))
        time = rng.choice(times)
        form = rng.randrange(6)
        if form == 0:
            text = f"{rng.choice(days)}, {day} {rng.choice(months)} {year}, {time}"
        elif form == 1:
            text = f"{rng.choice(days)} {day} {rng.choice(months)} {year} {time}"
        elif form == 2:
            text = f"{year}-{month.zfill(rng.choice((1, 2)))}-{day.zfill(2)}" + rng.choice(["", " ", "T"]) + time
        elif form == 3:
            text = f"{month}/{day}/{year} {time}"
        elif form == 4:
            text = f"{day}{rng.choice('.-')}{month}{rng.choice('.-')}{year} {time}"
        else:
            text = f"{day} {rng.choice(months)} {year}"
        out.append(text.strip() if rng.random() < 0.8 else f" {text} ")
    return out


def test_every_answer_given_is_php_s_answer():
    texts = _corpus()
    decided = 0
    for text, php in zip(texts, strtotime(texts)):
        ours = phpdate.reads(text)
        if ours.readable is None:
            continue  # not decided: trous then says it cannot tell
        decided += 1
        assert ours.readable == (php is not None), (text, php)
        if ours.readable:
            assert ours.timestamp == php, (text, php)
    assert decided > len(texts) // 5  # the family is really covered, not waved through as unknown
