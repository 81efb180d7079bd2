"""Whether PHP's `strtotime` reads a date cell of Moodle's offline grading worksheet.

Moodle's importer (feedback/offline/importgradeslib.php) reads the « Last modified (grade) » cell with
`strtotime` for the rule moodle.py describes; an unreadable cell gives `false`, counted as 0: every
row whose participant already has a grade record is then skipped.

Moodle writes that cell with `userdate()` in the interface's language: English « Monday, 2 March
2026, 9:15 AM », French « lundi 2 mars 2026, 09:15 », or « - » without a grade record; a
spreadsheet may have rewritten it in a numeric form. `reads()` decides exactly those forms from
PHP's documented formats (day names, textual months, `hh:MM` with a meridian, ISO, American
`mm/dd/y`, `dd.mm.YYYY`, `dd-mm-YYYY`) and says « unknown » (None) for anything else: PHP reads much
more (« 2 mars 2026 » alone is read, « s » as a military time zone and 2026 as 20:26).
tests/test_moodle_dates.py checks every answer against the real `php`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
# PHP's `dayfull | dayabbr` and `monthfull | monthabbr` (plus « sept »), case-insensitive.
_DAY_WORDS = {**{d: i for i, d in enumerate(DAYS)}, **{d[:3]: i for i, d in enumerate(DAYS)}}
_MONTH_WORDS = {**{m: i + 1 for i, m in enumerate(MONTHS)}, **{m[:3]: i + 1 for i, m in enumerate(MONTHS)},
                "sept": 9}
# Moodle's French language pack (langconfig `strftimedaydatetime` through strftime's fr_FR names).
FRENCH_DAYS = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
FRENCH_MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                 "novembre", "décembre")

_TIME = r"(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?:[:.](?P<second>\d{2}))?"
_MERIDIAN = r"(?P<meridian>[ap])\.?m\.?"
_ENGLISH = re.compile(
    rf"(?:(?P<dayname>[a-z]+)\s*,?\s+)?(?P<day>\d{{1,2}})\s+(?P<month>[a-z]+)\s+(?P<year>\d{{4}})"
    rf"(?:\s*,?\s*{_TIME}(?:\s*{_MERIDIAN})?)?", re.IGNORECASE)
_ISO = re.compile(rf"(?P<year>\d{{4}})-(?P<month>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[T\s]\s*{_TIME})?", re.IGNORECASE)
_AMERICAN = re.compile(rf"(?P<month>\d{{1,2}})/(?P<day>\d{{1,2}})/(?P<year>\d{{4}}|\d{{2}})(?:\s+{_TIME})?")
_EUROPEAN = re.compile(rf"(?P<day>\d{{1,2}})[.-](?P<month>\d{{1,2}})[.-](?P<year>\d{{4}})(?:\s+{_TIME})?")
_FRENCH = re.compile(
    rf"(?P<dayname>{'|'.join(FRENCH_DAYS)})\s+\d{{1,2}}\s+(?:{'|'.join(FRENCH_MONTHS)})\s+\d{{4}},\s+\d{{1,2}}:\d{{2}}",
    re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """`readable`: True, False, or None when PHP's answer is not known here; `timestamp`: the time PHP
    gives when readable, as if the server's time zone were UTC."""

    readable: bool | None
    timestamp: int | None = None


UNKNOWN = Reading(None)
UNREADABLE = Reading(False)


def _clock(match: re.Match) -> tuple[int, int, int] | None:
    if match["hour"] is None:
        return 0, 0, 0
    hour, minute, second = int(match["hour"]), int(match["minute"]), int(match["second"] or 0)
    if minute > 59 or second > 59:
        return None
    meridian = match.groupdict().get("meridian")
    if meridian:
        if not 1 <= hour <= 12:  # PHP's `hh`: 1 to 12 before a meridian (« 13:15 PM » is refused)
            return None
        hour = hour % 12 + (12 if meridian.lower() == "p" else 0)
    elif hour > 23:
        return None
    return hour, minute, second


def _timestamp(year: int, month: int, day: int, clock: tuple[int, int, int]) -> int | None:
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None  # PHP rolls such dates over (31 February → 3 March): not decided here
    return calendar.timegm((year, month, day, *clock))


def _english(match: re.Match) -> Reading:
    month = _MONTH_WORDS.get(match["month"].lower())
    dayname = match["dayname"]
    weekday = _DAY_WORDS.get(dayname.lower()) if dayname else None
    if month is None or (dayname and weekday is None):
        return UNKNOWN
    clock = _clock(match)
    when = _timestamp(int(match["year"]), month, int(match["day"]), clock) if clock else None
    if when is None:
        return UNKNOWN
    if weekday is not None:  # a day name moves the date to that weekday, on or after it (PHP's relative day)
        current = calendar.weekday(int(match["year"]), month, int(match["day"]))
        when += ((weekday - current) % 7) * 86400
    return Reading(True, when)


def _numeric(match: re.Match) -> Reading:
    year = int(match["year"])
    if len(match["year"]) == 2:  # PHP: 00-69 are 2000-2069, 70-99 are 1970-1999
        year += 2000 if year < 70 else 1900
    clock = _clock(match)
    when = _timestamp(year, int(match["month"]), int(match["day"]), clock) if clock else None
    return UNKNOWN if when is None else Reading(True, when)


def reads(text: str) -> Reading:
    if text == "" or text.strip() == "-":
        return UNREADABLE  # nothing, or Moodle's « - » (no grade record): strtotime gives false
    stripped = text.strip()
    if not stripped:
        return UNKNOWN  # only spaces: PHP reads « now », which the module does not decide
    if _FRENCH.fullmatch(stripped):
        return UNREADABLE  # a French day name is no word PHP knows: the whole date is refused
    for pattern, read in ((_ENGLISH, _english), (_ISO, _numeric), (_AMERICAN, _numeric), (_EUROPEAN, _numeric)):
        match = pattern.fullmatch(stripped)
        if match:
            return read(match)
    return UNKNOWN
