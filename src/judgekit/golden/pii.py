r"""A personal-data scanner for golden cases: contact details, names, addresses, bank and national ids.

Golden cases travel: into repositories, pipelines, test logs and vendors' tools. Real customer data must
never be in them; regression cases that come from real incidents are sanitised before they are committed.
This module finds what a sanitiser must remove and what ``judgekit cases check`` must refuse:

* **email** addresses, except those at domains reserved for examples and tests (RFC 2606 and RFC 6761:
  ``example.com``/``.net``/``.org`` and any name under ``.example``, ``.test``, ``.invalid``,
  ``.localhost``) and the ``example.<country>`` names registries hold for documentation (``example.jp``),
  which can never reach a person;
* **phone** numbers in international (``+44 20 7946 0123``), North American (``(212) 555-0142``) and UK
  national (``020 7946 0123``) forms, except the ranges regulators reserve for fiction (North American
  ``555-0100`` to ``555-0199``; UK Ofcom drama numbers ``07700 900000``-``900999``,
  ``01632 960000``-``960999``, ``020 7946 0000``-``0999``, ``0113 496 0000``-``0999`` and the like);
* **card** numbers: 13 to 19 digits (optionally grouped by spaces or hyphens) that pass the Luhn check,
  except the test numbers payment processors publish (``4111 1111 1111 1111``, ``4242 4242 4242 4242``...);
* **IBAN** numbers with a known country length and a valid ISO 7064 mod-97 check, and **account** numbers
  named as such (``account number 12345678``, UK sort code with account ``12-34-56 12345678``);
* national ids: **US SSN** (``123-45-6789``, outside the never-issued 000/666/9xx areas) and **UK
  National Insurance** numbers (``AB 12 34 56 C``, with HMRC's prefix rules).

* **name**: person names, two ways. Names a case gives for its own persona (an ``identity`` key such as
  ``name``, ``full_name``, ``first_name``, ``surname``, ``passenger_name``; a name introduced in
  ``user.persona``) are personal data wherever else they appear in the case, whole or by part. Names in
  free text are found by rule, not by a statistical model (spaCy, Presidio and the like download language
  models and guess): an honorific (``Mr``, ``Mrs``, ``Ms``, ``Miss``, ``Mx``, ``Dr``, ``Prof``, ``Sir``,
  ``Dame``...) before one to three capitalised words; a self-introduction (``my name is X``, ``call me X``,
  ``I'm X Y``, ``I am X Y``, ``this is X Y``: two words there, because ``I'm Sorry`` is not a name); a
  ``Name:`` label; and a sign-off (``Thanks,``/``Regards,``/``Cheers,``... then a line holding only one to
  three capitalised words). A name word is ``Capitalised`` (``O'Brien``, ``Smith-Jones``, ``McDonald``
  allowed): CamelCase identifiers (``LookupBooking``) and snake_case tool names never are, and a list of
  common capitalised words (``Sorry``, ``Gold``, ``Monday``...) cannot start a name;
* **address**: a house number (``221B``, ``10``) before one to four capitalised words and a street word
  (``Street``/``St``, ``Road``/``Rd``, ``Avenue``/``Ave``, ``Lane``/``Ln``, ``Drive``/``Dr``,
  ``Boulevard``/``Blvd``, ``Way``, ``Court``/``Ct``, ``Place``/``Pl``, ``Close``, ``Crescent``,
  ``Terrace``, ``Square``, ``Gardens``, ``Grove``, ``Parkway``, ``Highway``...), with an optional compass
  suffix (``1600 Pennsylvania Avenue NW``);
* **postcode**: UK postcodes in the six formats of the Royal Mail Postcode Address File (``A9 9AA``,
  ``A99 9AA``, ``AA9 9AA``, ``AA99 9AA``, ``A9A 9AA``, ``AA9A 9AA``, with the letters each position
  allows, and ``GIR 0AA``), written with their space, or without it after ``postcode``; US ZIP codes
  (``12345``, ZIP+4 ``12345-6789``) only in an address context, because a bare five-digit number is
  usually something else: right after a USPS state abbreviation (``DC 20500``), after ``ZIP``/``zip
  code``/``postal code``, or later on the same line as a detected street address;
* **dob**: a date within a few words after ``born``, ``DOB``, ``date of birth``, ``birth date`` or
  ``birthday`` (``12/03/1987``, ``1987-03-12``, ``12 March 1987``, ``March 12th, 1987``, ``3 May``);
* **sort_code**: UK sort codes, bare (``12-34-56``) or named (``sort code 123456``).

Values a set declares synthetic (the manifest's ``synthetic_values``) are not reported. Every finding
carries its location and a masked value (:func:`mask`: last four characters; initials only for a name;
nothing for a date of birth), never the value itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, get_args

from judgekit.caseset import LocatedProblem
from judgekit.errors import Problem
from judgekit.verdict import FrozenModel

__all__ = [
    "KINDS",
    "PLACEHOLDERS",
    "Finding",
    "PiiKind",
    "PiiScan",
    "case_names",
    "iban_valid",
    "luhn_valid",
    "manifest_synthetic_values",
    "mask",
    "personal_data_problems",
    "pii_scan",
    "redact_personal_data",
    "scan_data",
    "scan_files",
    "scan_text",
]

PiiKind = Literal[
    "email",
    "phone",
    "card",
    "iban",
    "account",
    "ssn",
    "ni_number",
    "name",
    "address",
    "postcode",
    "dob",
    "sort_code",
]
KINDS: tuple[PiiKind, ...] = get_args(PiiKind)

PLACEHOLDERS: dict[str, str] = {
    "email": "[EMAIL]",
    "phone": "[PHONE]",
    "card": "[CARD]",
    "iban": "[IBAN]",
    "account": "[ACCOUNT]",
    "ssn": "[SSN]",
    "ni_number": "[NI_NUMBER]",
    "name": "[NAME]",
    "address": "[ADDRESS]",
    "postcode": "[POSTCODE]",
    "dob": "[DATE_OF_BIRTH]",
    "sort_code": "[SORT_CODE]",
}
"""What :func:`redact_personal_data` puts in place of each kind of value."""

_DESCRIPTIONS: dict[str, str] = {
    "email": "email address",
    "phone": "phone number",
    "card": "card number (passes the Luhn check)",
    "iban": "IBAN (valid check digits)",
    "account": "bank account number",
    "ssn": "US social security number",
    "ni_number": "UK National Insurance number",
    "name": "person name",
    "address": "postal address",
    "postcode": "postcode",
    "dob": "date of birth",
    "sort_code": "UK sort code",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One personal-data value found in a text.

    Attributes:
        kind: What it is (``email``, ``phone``, ``card``, ``iban``, ``account``, ``ssn``, ``ni_number``,
            ``name``, ``address``, ``postcode``, ``dob``, ``sort_code``).
        start: 0-based offset of the value in the text scanned.
        end: Offset just past the value.
        value: The value as written (kept in memory for redaction; never printed, see :attr:`masked`).
        field: Dotted path of the field the text came from (``""`` for a bare text).
    """

    kind: PiiKind
    start: int
    end: int
    value: str
    field: str = ""

    @property
    def masked(self) -> str:
        """The value hidden as :func:`mask` hides one of its kind."""
        return mask(self.value, kind=self.kind)

    def describe(self) -> str:
        """One readable phrase: ``card number (passes the Luhn check) ending 1111``."""
        return f"{_DESCRIPTIONS[self.kind]} {self.masked}"


def mask(value: str, *, kind: str | None = None) -> str:
    """Hide a value: all but the last four non-separator characters, ``4111 1111 1111 1111`` -> ``****1111``.

    Args:
        value: The value as written.
        kind: Its kind, when known. A ``name`` keeps only each word's initial (``Hana Sato`` ->
            ``H*** S***``: the last four letters of a surname would give it away); a ``dob`` shows nothing
            (``**/**/****``: its last four characters are the year of birth); other kinds keep their last
            four characters, and an email its first letter and domain.

    Returns:
        The masked text, which never contains ``value`` when ``value`` is longer than four characters.
    """
    if kind == "name":
        return " ".join(f"{word[:1]}***" for word in value.split()) or "****"
    if kind == "dob":
        return re.sub(r"[A-Za-z0-9]", "*", value.strip()) or "****"
    if "@" in value:
        local, _, domain = value.strip().partition("@")
        return f"{local[:1]}***@{domain}"
    compact = re.sub(r"[\s().-]", "", value)
    return "*" * max(len(compact) - 4, 1) + compact[-4:] if len(compact) > 4 else "****"


# --------------------------------------------------------------------------- checksums


def luhn_valid(digits: str) -> bool:
    """True when a string of digits passes the Luhn (mod 10) check used by payment cards.

    Args:
        digits: Only the digits 0-9 (separators removed).

    Returns:
        False for an empty string or any non-digit.
    """
    if not digits or not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# Lengths from the SWIFT IBAN registry (a subset covering Europe and common others).
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
    "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31,
    "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_valid(text: str) -> bool:
    """True when ``text`` (spaces allowed) is an IBAN of its country's length with valid mod-97 digits."""
    compact = re.sub(r"\s", "", text).upper()
    if len(compact) < 15 or not compact.isalnum():
        return False
    expected = _IBAN_LENGTHS.get(compact[:2])
    if expected is None or len(compact) != expected or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


# --------------------------------------------------------------------------- patterns

_RESERVED_EMAIL_DOMAINS = ("example.com", "example.net", "example.org")
_RESERVED_EMAIL_TLDS = ("example", "test", "invalid", "localhost")

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24}(?![\w-])"
)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
_SSN_LABELLED = re.compile(
    r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\s*[:#]?\s*"
    r"((?!000|666|9\d\d)\d{3}[ -]?\d{2}[ -]?\d{4})\b"
)
_NI = re.compile(
    r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
)
_ACCOUNT_LABELLED = re.compile(
    r"(?i)\b(?:account|acct|a/c)(?:\s+(?:number|no\.?|num|#))?\s*[:#]?\s*(\d(?:[ -]?\d){5,16})(?![\w-])"
)
_SORT_CODE_ACCOUNT = re.compile(r"(?<![\w-])\d{2}-\d{2}-\d{2}[ ,/]+\d{8}(?![\w-])")
_PHONE = re.compile(
    r"(?<![\w+-])(?:"
    r"\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}"  # international
    r"|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"  # North American
    r"|0\d{2,4}[ -]?\d{3,4}[ -]?\d{3,4}"  # UK national
    r")(?![\w-])"
)

# ---- names
_NAME_WORD = r"(?:Mc|Mac|O'|D')?[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
"""One name word: capitalised, lower case after its first letter (apart from Mc/Mac/O' prefixes and a
hyphenated or apostrophised second part), so CamelCase identifiers and tool names never match."""
_NAME_END = r"(?![\w'-])"
_NAME_WORDS = rf"{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}}{_NAME_END}"
_HONORIFIC = re.compile(
    rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Lady|Lord|Rev)\.?[ \t]+(?P<name>{_NAME_WORDS})"
)
_INTRODUCTION = re.compile(
    rf"(?i:\bmy[ \t]+name[ \t]+is|\bmy[ \t]+name's|\bcall[ \t]+me|\bname[ \t]*:)[ \t]*(?P<name>{_NAME_WORDS})"
    rf"|(?i:\bI'm|\bI’m|\bI[ \t]+am|\bthis[ \t]+is)[ \t]+"
    rf"(?P<name2>{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{1,2}}{_NAME_END})"
)
_SIGN_OFF = re.compile(
    r"(?im:^[ \t]*(?:thanks|thank[ \t]+you|many[ \t]+thanks|regards|kind[ \t]+regards|best[ \t]+regards|"
    r"best[ \t]+wishes|best|cheers|sincerely|yours[ \t]+sincerely|yours[ \t]+faithfully|yours|warmly)"
    r"[ \t]*[,!.]?[ \t]*\r?\n)"
    rf"[ \t]*(?:-+[ \t]*)?(?P<name>{_NAME_WORDS})[ \t]*(?=\r?$|\r?\n)",
    re.MULTILINE,
)
# Capitalised words that start sentences after "I'm", "this is", "Name:"... and are not names.
_NOT_NAMES_TEXT = """
    a an the and or but not no yes so very really just still also only now here there this that these those
    my your our his her their its it we you they he she i me us him them
    sorry afraid glad happy sure fine okay ok well hi hello hey dear thanks thank please
    calling writing trying looking flying travelling traveling going coming waiting stuck booked
    on in at to for from with about after before by of as if when while
    customer agent assistant user client passenger member guest caller support team booking flight
    gold silver platinum bronze basic premium economy business first flex standard
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december today tomorrow yesterday
"""
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
_IDENTITY_NAME_KEY = re.compile(
    r"^(?:(?:full|first|given|last|family|middle|maiden|legal|preferred|display|customer|passenger|"
    r"traveller|traveler|contact|account_holder|holder|card_holder|cardholder|guest|member|caller|user)"
    r"_?)?name$|^(?:surname|forename|forenames|given_names)$"
)
_NAME_PARTS_SKIP = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "lady", "lord"})

# ---- addresses and postcodes
_STREET_SUFFIX = (
    r"(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Close|"
    r"Crescent|Cres|Terrace|Terr|Square|Sq|Gardens|Gdns|Grove|Gr|Parkway|Pkwy|Highway|Hwy|Mews|Circle|"
    r"Cir|Parade|Embankment|Quay|Wharf|Alley|Plaza|Trail|Pike)"
)
_ADDRESS = re.compile(
    r"(?<![\w/.,:-])(?:(?:Flat|Apt|Unit|Suite)\.?[ \t]+\w{1,5},?[ \t]+)?"
    r"\d{1,5}[A-Za-z]?(?:-\d{1,5})?,?"
    rf"[ \t]+(?:[A-Z][A-Za-z'’-]*[ \t]+){{1,4}}{_STREET_SUFFIX}\.?"
    r"(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W)\b)?(?![\w-])"
)
_UK_OUTWARD = (
    r"(?:[A-PR-UWYZ][0-9]{1,2}|[A-PR-UWYZ][A-HK-Y][0-9]{1,2}|[A-PR-UWYZ][0-9][A-HJKPSTUW]"
    r"|[A-PR-UWYZ][A-HK-Y][0-9][ABEHMNPRVWXY])"
)
_UK_INWARD = r"[0-9][ABD-HJLNP-UW-Z]{2}"
_UK_POSTCODE = re.compile(rf"(?<![A-Za-z0-9])(?:{_UK_OUTWARD} {_UK_INWARD}|GIR 0AA)(?![A-Za-z0-9])")
_UK_POSTCODE_LABELLED = re.compile(
    rf"(?i:\b(?:post[ \t]?code|postal[ \t]+code)\b)[ \t]*[:#]?[ \t]*"
    rf"(?P<code>{_UK_OUTWARD}[ \t]?{_UK_INWARD})(?![A-Za-z0-9])"
)
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|"
    "NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|VI|GU|AS|MP"
)
_ZIP = r"\d{5}(?:-\d{4})?(?![\w-])"
_ZIP_AFTER_STATE = re.compile(rf"(?<![A-Za-z])(?:{_US_STATES}),?[ \t]+(?P<code>(?<![\w-]){_ZIP})")
_ZIP_LABELLED = re.compile(
    rf"(?i:\b(?:zip(?:[ \t]*\+[ \t]*4)?(?:[ \t]+code)?|postal[ \t]+code)\b)[ \t]*[:#]?[ \t]*(?P<code>{_ZIP})"
)
_ZIP_BARE = re.compile(rf"(?<![\w.,-]){_ZIP}")
_ZIP_CONTEXT_CHARS = 80
"""How far along the line after a street address a bare ZIP code is still taken as its ZIP code."""

# ---- dates of birth and sort codes
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE = (
    r"(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})"
    r"|\d{4}[/.-]\d{1,2}[/.-]\d{1,2}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?{_MONTH}(?:,?[ \t]+\d{{4}})?"
    rf"|{_MONTH}[ \t]+\d{{1,2}}(?:st|nd|rd|th)?(?:,?[ \t]+\d{{4}})?)(?![\w/-])"
)
_DOB = re.compile(
    r"(?i:\b(?:born|d\.?o\.?b\.?|date[ \t]+of[ \t]+birth|birth[ \t]?date|birthday)(?![\w]))"
    r"[ \t]*[:#-]?[ \t]*(?i:(?:is|was|on|in|the|of|=)[ \t]+){0,3}"
    rf"(?P<date>(?i:{_DATE}))"
)
_SORT_CODE = re.compile(r"(?<![\w-])\d{2}-\d{2}-\d{2}(?![\w-])")
_SORT_CODE_LABELLED = re.compile(
    r"(?i:\bsort[ \t]?code\b)[ \t]*(?:is[ \t]+)?[:#]?[ \t]*(?P<code>\d{2}[ -]?\d{2}[ -]?\d{2})(?![\w-])"
)

# Ranges reserved for drama and documentation (Ofcom; NANPA 555-0100..0199), as digit prefixes of the
# national significant number (without the leading 0 or the country code 44 / 1).
_FICTIONAL_UK = (
    ("7700900", 10),
    ("1632960", 10),
    ("2079460", 10),
    ("1134960", 10),
    ("1144960", 10),
    ("1154960", 10),
    ("1174960", 10),
    ("1184960", 10),
    ("1214960", 10),
    ("1314960", 10),
    ("1614960", 10),
    ("1914980", 10),
    ("2890180", 10),
    ("2920180", 10),
    ("8081570", 10),
    ("9098790", 10),
    ("3069990", 10),
)


# Card numbers that payment processors publish as test numbers (Stripe, Adyen, Braintree documentation);
# they can never charge anyone, so they are synthetic by definition.
_TEST_CARDS = frozenset(
    {
        "4111111111111111",
        "4242424242424242",
        "4000056655665556",
        "4012888888881881",
        "4222222222222",
        "5555555555554444",
        "5105105105105100",
        "2223003122003222",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "6200000000000005",
    }
)


_DELETE_DIGITS = str.maketrans("", "", "0123456789")
_MIN_DIGITS = 6
"""The fewest digits any reported number has (a labelled account number or an NI number)."""


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _fictional_phone(value: str) -> bool:
    digits = _digits(value)
    stripped = value.strip()
    if stripped.startswith("+"):
        if digits.startswith("44"):
            national = digits[2:]
        elif digits.startswith("1"):
            national = digits[1:]
        else:
            return False
    elif digits.startswith("0"):
        national = digits[1:]
    else:
        national = digits[1:] if len(digits) == 11 and digits.startswith("1") else digits
    if len(national) == 10 and national[3:6] == "555" and 100 <= int(national[6:]) <= 199:
        return True
    return any(national.startswith(prefix) and len(national) == n for prefix, n in _FICTIONAL_UK)


def _reserved_email(value: str) -> bool:
    domain = value.rsplit("@", 1)[-1].lower().rstrip(".")
    if any(domain == d or domain.endswith("." + d) for d in _RESERVED_EMAIL_DOMAINS):
        return True
    labels = domain.split(".")
    if len(labels) >= 2 and labels[-2] == "example":  # example.jp, example.co and other registry-held names
        return True
    return domain.rsplit(".", 1)[-1] in _RESERVED_EMAIL_TLDS


def _normalise_value(value: str) -> str:
    return re.sub(r"[\s().-]", "", value).lower()


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def _known_name_patterns(names: Iterable[str]) -> list[re.Pattern[str]]:
    """Patterns for known names: each whole name (any case, any spacing), then each of its parts."""
    wholes: set[str] = set()
    parts: set[str] = set()
    for name in names:
        words = name.split()
        if not words:
            continue
        wholes.add(r"[ \t]+".join(re.escape(w) for w in words))
        for word in words:
            bare = word.strip(".,")
            if len(bare) >= 2 and bare.lower() not in _NAME_PARTS_SKIP | _NOT_NAMES:
                parts.add(re.escape(bare[:1].upper() + bare[1:]))
    out = [re.compile(rf"(?i)(?<![\w'-]){w}(?![\w'-])") for w in sorted(wholes, key=len, reverse=True)]
    out += [re.compile(rf"(?<![\w'-]){w}(?![\w'-])") for w in sorted(parts, key=len, reverse=True)]
    return out


def _plausible_name(value: str) -> bool:
    return value.split(maxsplit=1)[0].lower() not in _NOT_NAMES


def scan_text(
    text: str, *, field: str = "", allow: Iterable[str] = (), names: Iterable[str] = ()
) -> list[Finding]:
    """Find personal data in one text.

    Overlapping matches are resolved by specificity: emails, IBANs, labelled account numbers, SSNs and
    NI numbers first, then card numbers (Luhn-valid only), dates of birth, sort codes, phone numbers,
    street addresses, postcodes and ZIP codes, and last person names (known names, then names found by
    rule), so a card number is never also reported as a phone number.

    Args:
        text: The text to scan.
        field: Dotted path of the field the text came from, copied into each finding.
        allow: Values declared synthetic; a match equal to one of them (ignoring spaces, dots, hyphens,
            brackets and case) is not reported.
        names: Names known to be personal data (a case's own persona names, names a person lists): each
            is reported wherever it appears, whole (any case) or by a capitalised part (``Hana``).

    Returns:
        The findings, sorted by position.
    """
    allowed = {_normalise_value(a) for a in allow}
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []

    def add(kind: PiiKind, start: int, end: int) -> None:
        value = text[start:end]
        if _overlaps((start, end), taken):
            return
        taken.append((start, end))
        if _normalise_value(value) in allowed:
            return
        found.append(Finding(kind, start, end, value, field))

    digit_count = len(text) - len(text.translate(_DELETE_DIGITS))
    if "@" in text:
        for m in _EMAIL.finditer(text):
            if _reserved_email(m.group()):
                taken.append(m.span())
            else:
                add("email", *m.span())
    if digit_count >= _MIN_DIGITS:
        _scan_numbers(text, add, taken)
    if digit_count:
        _scan_places(text, add, taken)
    for pattern in _known_name_patterns(names):
        for m in pattern.finditer(text):
            add("name", *m.span())
    for pattern, groups in (
        (_HONORIFIC, ("name",)),
        (_INTRODUCTION, ("name", "name2")),
        (_SIGN_OFF, ("name",)),
    ):
        for m in pattern.finditer(text):
            for group in groups:
                if m.group(group) is not None and _plausible_name(m.group(group)):
                    add("name", *m.span(group))
    return sorted(found, key=lambda f: (f.start, f.end))


def _scan_numbers(text: str, add: Callable[[PiiKind, int, int], None], taken: list[tuple[int, int]]) -> None:
    """Numbers with at least six digits: IBAN, account, SSN, NI, card (before phone numbers)."""
    for m in _IBAN.finditer(text):
        if iban_valid(m.group()):
            add("iban", *m.span())
    for m in _SORT_CODE_ACCOUNT.finditer(text):
        add("account", *m.span())
    for m in _SSN_LABELLED.finditer(text):
        add("ssn", *m.span(1))
    for m in _SSN.finditer(text):
        add("ssn", *m.span())
    for m in _NI.finditer(text):
        add("ni_number", *m.span())
    for m in _CARD.finditer(text):
        digits = _digits(m.group())
        if digits in _TEST_CARDS:
            taken.append(m.span())
        elif luhn_valid(digits):
            add("card", *m.span())
    for m in _ACCOUNT_LABELLED.finditer(text):
        add("account", *m.span(1))


def _scan_places(text: str, add: Callable[[PiiKind, int, int], None], taken: list[tuple[int, int]]) -> None:
    """Dates of birth, sort codes, phone numbers, street addresses, postcodes and ZIP codes."""
    for m in _DOB.finditer(text):
        add("dob", *m.span("date"))
    for m in _SORT_CODE_LABELLED.finditer(text):
        add("sort_code", *m.span("code"))
    for m in _SORT_CODE.finditer(text):
        add("sort_code", *m.span())
    for m in _PHONE.finditer(text):
        n = len(_digits(m.group()))
        if not 9 <= n <= 15:
            continue
        if _fictional_phone(m.group()):
            taken.append(m.span())  # reserved for fiction: not reported, and not anything else either
            continue
        add("phone", *m.span())
    addresses = list(_ADDRESS.finditer(text))
    for m in addresses:
        add("address", *m.span())
    for m in _UK_POSTCODE_LABELLED.finditer(text):
        add("postcode", *m.span("code"))
    for m in _UK_POSTCODE.finditer(text):
        add("postcode", *m.span())
    for m in _ZIP_LABELLED.finditer(text):
        add("postcode", *m.span("code"))
    for m in _ZIP_AFTER_STATE.finditer(text):
        add("postcode", *m.span("code"))
    for a in addresses:
        line_end = text.find("\n", a.end())
        stop = min(a.end() + _ZIP_CONTEXT_CHARS, len(text) if line_end < 0 else line_end)
        for m in _ZIP_BARE.finditer(text, a.end(), stop):
            add("postcode", *m.span())


def scan_data(
    data: Any,
    *,
    prefix: tuple[str | int, ...] = (),
    allow: Iterable[str] = (),
    names: Iterable[str] = (),
) -> Iterator[tuple[tuple[str | int, ...], Finding]]:
    """Scan every text (values and mapping keys) inside a JSON-like value.

    Args:
        data: The value (mappings, lists and texts; other scalars are skipped).
        prefix: The location of ``data`` itself, put before every location yielded.
        allow: Values declared synthetic (see :func:`scan_text`).
        names: Names known to be personal data (see :func:`scan_text`).

    Yields:
        ``(location, finding)`` pairs; the location is the tuple path of the field the text is in.
    """
    allow_list = tuple(allow)
    name_list = tuple(names)
    if isinstance(data, str):
        found = scan_text(data, allow=allow_list, names=name_list)
        if found:
            name = ".".join(str(p) for p in prefix)
            for f in found:
                yield prefix, replace(f, field=name)
    elif isinstance(data, dict):
        for key, value in data.items():
            loc = (*prefix, str(key))
            for f in scan_text(str(key), allow=allow_list, names=name_list):
                yield loc, replace(f, field=".".join(str(p) for p in loc))
            yield from scan_data(value, prefix=loc, allow=allow_list, names=name_list)
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            yield from scan_data(value, prefix=(*prefix, i), allow=allow_list, names=name_list)


def redact_personal_data(
    text: str, *, allow: Iterable[str] = (), names: Iterable[str] = ()
) -> tuple[str, list[Finding]]:
    """Replace every personal-data value in ``text`` with its placeholder (``[EMAIL]``, ``[NAME]``...).

    Args:
        text: The text to redact.
        allow: Values declared synthetic, left in place (see :func:`scan_text`).
        names: Names known to be personal data, replaced wherever they appear (see :func:`scan_text`).

    Returns:
        The redacted text and the findings replaced (positions refer to the original text).
    """
    findings = scan_text(text, allow=allow, names=names)
    out: list[str] = []
    last = 0
    for f in findings:
        out.append(text[last : f.start])
        out.append(PLACEHOLDERS[f.kind])
        last = f.end
    out.append(text[last:])
    return "".join(out), findings


def case_names(identity: Any = None, persona: str | None = None) -> tuple[str, ...]:
    """The names a case gives for its own persona, which are personal data wherever else they appear.

    Args:
        identity: The case's ``identity`` mapping; the text values of name keys (``name``, ``full_name``,
            ``first_name``, ``last_name``, ``surname``, ``customer_name``, ``passenger_name``...) are names.
            Other keys (``persona: verified_customer``, ``customer_id``) are not.
        persona: The case's ``user.persona`` text; names found in it by rule (``Mrs Hana Sato, a gold-tier
            flyer``) are names.

    Returns:
        The names, in the order found, without repeats.
    """
    out: list[str] = []
    if isinstance(identity, dict):
        for key, value in identity.items():
            if isinstance(value, str) and value.strip() and _IDENTITY_NAME_KEY.match(str(key).lower()):
                out.append(value.strip())
    if persona:
        out.extend(f.value for f in scan_text(persona) if f.kind == "name")
    return tuple(dict.fromkeys(out))


def personal_data_problems(
    loaded_cases: Sequence[Any], *, allow: Iterable[str] = ()
) -> tuple[list[Problem], list[Problem]]:
    """Scan loaded cases for personal data: problems outside candidates, warnings among them.

    Args:
        loaded_cases: :class:`~judgekit.caseset.LoadedCase` items (their documents are scanned field by field,
            so every finding has its file, line and field).
        allow: Values declared synthetic (the manifest's ``synthetic_values``).

    Returns:
        ``(problems, warnings)``: one problem per value in a reviewed case (``validate`` refuses these),
        one warning per value in a candidate (it must be sanitised before promotion).
    """
    allow_list = tuple(allow)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    for loaded in loaded_cases:
        doc = loaded.document
        if doc is None:
            data: Any = loaded.case.model_dump(mode="json", exclude_defaults=True)
            prefix: tuple[str | int, ...] = ()
        else:
            data = doc.data
            prefix = tuple(loaded.prefix)
            for part in prefix:
                data = data[part]
        case = loaded.case
        names = case_names(case.identity, case.user.persona if case.user else None)
        for loc, finding in scan_data(data, prefix=prefix, allow=allow_list, names=names):
            line = doc.line_of(loc) if doc is not None else None
            field = ".".join(str(p) for p in loc[len(prefix) :])
            path: Path = loaded.path
            if loaded.candidate:
                warnings.append(
                    Problem(
                        path,
                        line,
                        field,
                        f"personal data in a candidate: {finding.describe()}; sanitise it before promoting",
                    )
                )
            else:
                problems.append(
                    Problem(
                        path,
                        line,
                        field,
                        f"personal data: {finding.describe()}. Golden cases must hold synthetic data only: "
                        "replace it with a synthetic value (reserved example.com addresses, fictional "
                        "phone ranges) or, if it is synthetic already, list it under synthetic_values in "
                        "judgekit-set.yaml",
                    )
                )
    return problems, warnings


_TEXT_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".csv", ".tsv", ".txt", ".md", ".sql", ".html")


def scan_files(paths: Sequence[Path], *, allow: Iterable[str] = ()) -> tuple[list[Problem], int]:
    """Scan files and folders (recursively, text files by suffix) for personal data.

    YAML and JSON files are scanned field by field (each finding names its field and line); other text
    files line by line.

    Returns:
        ``(findings as located problems, number of files scanned)``.

    Raises:
        JudgekitError: When a path does not exist.
    """
    from judgekit.errors import JudgekitError
    from judgekit.io.documents import Document, read_documents

    allow_list = tuple(allow)
    files: list[Path] = []
    for p in paths:
        if not p.exists():
            raise JudgekitError(f"{p}: no such file or folder")
        if p.is_dir():
            files.extend(
                f
                for f in sorted(p.rglob("*"))
                if f.is_file()
                and f.suffix.lower() in _TEXT_SUFFIXES
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        else:
            files.append(p)
    out: list[Problem] = []
    for path in files:
        structured = False
        if path.suffix.lower() in (".yaml", ".yml", ".json", ".jsonl"):
            try:
                docs = list(read_documents(path))
                structured = True
            except JudgekitError:
                structured = False  # malformed: fall back to scanning its lines
            if structured:
                for doc in docs:
                    if not isinstance(doc, Document):
                        continue
                    for loc, finding in scan_data(doc.data, allow=allow_list):
                        out.append(Problem(path, doc.line_of(loc), finding.field, finding.describe()))
                continue
        try:
            from judgekit.io.documents import read_regular_text

            text = read_regular_text(path, "golden file", encoding="utf-8", errors="replace")
        except OSError as exc:
            raise JudgekitError(f"{path}: cannot read: {exc.strerror}") from None
        for number, line in enumerate(text.splitlines(), start=1):
            for finding in scan_text(line, allow=allow_list):
                out.append(Problem(path, number, "", finding.describe()))
    return out, len(files)


def manifest_synthetic_values(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The ``synthetic_values`` of the golden set holding ``path`` (its manifest found upwards), or ``()``.

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the manifest found is malformed.
    """
    path = Path(path)
    from pydantic import ValidationError

    from judgekit.caseset import MANIFEST_NAME, SetManifest
    from judgekit.errors import JudgekitError
    from judgekit.io.documents import read_document

    start = path.resolve()
    start = start if start.is_dir() else start.parent
    for folder in (start, *start.parents):
        manifest = folder / MANIFEST_NAME
        if manifest.is_file():
            data = read_document(manifest).data or {}
            try:
                return SetManifest.model_validate(data).synthetic_values
            except ValidationError as exc:
                raise JudgekitError(
                    f"{manifest}: not a valid set manifest: {exc.errors()[0]['msg']}"
                ) from None
    return ()


class PiiScan(FrozenModel):
    """Personal data found in files (the ``pii_scan`` document ``judgekit cases scan-pii`` prints).

    Attributes:
        values: Personal-data values found (>= 0).
        files_scanned: Text files read (>= 0).
        findings: Each value found, located, its value masked.
    """

    values: int
    files_scanned: int
    findings: list[LocatedProblem]


def pii_scan(paths: Sequence[Path], *, allow: Iterable[str] = ()) -> PiiScan:
    """Scan files and folders for personal data (:func:`scan_files`), leaving out known synthetic values.

    Args:
        paths: Files or folders; the golden set holding the first one (its ``judgekit-set.yaml``, found
            upwards) declares ``synthetic_values`` that are not reported.
        allow: Further values known to be synthetic.

    Returns:
        What was found and how many files were read.

    Raises:
        JudgekitError: When a path does not exist or the set's manifest is invalid.
    """
    declared = manifest_synthetic_values(paths[0]) if paths else ()
    findings, scanned = scan_files(paths, allow=[*allow, *declared])
    return PiiScan(
        values=len(findings), files_scanned=scanned, findings=[LocatedProblem.of(p) for p in findings]
    )
