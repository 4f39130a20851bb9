"""The bytes of a user's file read as text: as written, or refused; never a character silently replaced.

- A byte-order mark decides: UTF-8, UTF-16 or UTF-32 (little or big endian), read without a note.
- Valid UTF-8 is read as it is (most files). A NUL character in it is refused: that is UTF-16 or UTF-32 without
  a byte-order mark, which cannot be told apart from its content with certainty.
- A file that is mostly UTF-8 but has a byte that is not (two encodings mixed, or a damaged file) is refused,
  naming the line: reading it as a single-byte encoding would garble every accented letter that is right.
- Otherwise ``charset_normalizer`` ranks the encodings the bytes decode in by how messy the text reads. The file
  is read in one only when that choice is clear: Windows-1252 (Latin-1 with typographic quotes; Excel's CSV on a
  Western Windows, by far the commonest non-UTF-8 CSV) when it is among the best-ranked readings (mess ratio
  within ``TIE`` of the best), else the best reading when every best-ranked encoding gives the same text. The
  reader is told (``DecodedText.note``: the encoding and a few words as read, to check). Anything else is
  refused with what to do: save the file as UTF-8.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

from corpora.records import DataError

TIE = 0.01  # mess ratios this close count as equally good readings
WESTERN = "cp1252"
WESTERN_FAMILY = {"cp1252", "latin_1", "iso8859_15"}  # the same letters: Windows-1252 reads each of them
BOMS = ((codecs.BOM_UTF32_LE, "utf-32", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),  # before UTF-16's
        (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"), (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
        (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"))
NAMES = {"cp1252": "Latin-1 (cp1252)"}
SAVE_AS_UTF8 = ("Save it as UTF-8 (Excel: Save As > 'CSV UTF-8'; a text editor: encoding UTF-8) and load it "
                "again.")
_NON_ASCII_WORD = re.compile(r"\w*[^\x00-\x7f]\w*")


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str  # the Python codec the bytes were read with
    note: str | None = None  # what the reader must be told (None: UTF-8, or a byte-order mark said which)


def _where(data: bytes, position: int) -> str:
    line = data.count(b"\n", 0, position) + 1
    return f"byte 0x{data[position]:02x} on line {line}"


def _clear_choice(data: bytes) -> str | None:
    """The encoding the bytes are read in when the choice is clear (module docstring), else None."""
    matches = list(from_bytes(data))
    if not matches:
        return None
    best = min(m.chaos for m in matches)
    near = [m for m in matches if m.chaos <= best + TIE]
    if {c for m in near for c in (m.could_be_from_charset or [m.encoding])} & WESTERN_FAMILY:
        try:
            data.decode(WESTERN)
            return WESTERN
        except UnicodeDecodeError:  # one of the five bytes Windows-1252 leaves undefined
            pass
    return near[0].encoding if len({str(m) for m in near}) == 1 else None


def decode_user_bytes(data: bytes, name: str) -> DecodedText:
    """The text of a user's file ``name`` (DataError with what to do when it cannot be read as written)."""
    for bom, codec, label in BOMS:
        if data.startswith(bom):
            try:
                return DecodedText(data.decode(codec), codec)
            except UnicodeDecodeError as error:
                raise DataError(f"{name}: starts with a {label} byte-order mark but is not valid {label} "
                                f"({error.reason} at byte {error.start}). {SAVE_AS_UTF8}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = _where(data, error.start)
    else:
        if "\x00" in text:
            raise DataError(f"{name}: contains NUL characters: it looks like UTF-16 or UTF-32 saved without a "
                            f"byte-order mark. {SAVE_AS_UTF8}")
        return DecodedText(text, "utf-8")
    if b"\x00" in data:
        raise DataError(f"{name}: not UTF-8 ({where}) and contains NUL bytes: it looks like UTF-16 or UTF-32 saved "
                        f"without a byte-order mark, or not a text file. {SAVE_AS_UTF8}")
    if any(ord(c) > 0x7F for c in data.decode("utf-8", errors="ignore")):
        raise DataError(f"{name}: mostly UTF-8, but {where} is not: the file mixes two encodings (or is damaged), "
                        f"so no single reading keeps every letter. {SAVE_AS_UTF8}")
    guessed = _clear_choice(data)
    if guessed is None:
        raise DataError(f"{name}: not UTF-8 ({where}), and its encoding cannot be told from its content with "
                        f"confidence. {SAVE_AS_UTF8}")
    text = data.decode(guessed)
    shown = ", ".join(repr(w) for w in list(dict.fromkeys(_NON_ASCII_WORD.findall(text)))[:4])
    return DecodedText(text, guessed, f"{name} is not UTF-8: read as {NAMES.get(guessed, guessed)}, e.g. {shown}. "
                                      f"If these words look wrong, save the file as UTF-8 and load it again.")
