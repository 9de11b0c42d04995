"""Rows of a format-v3 log (DSH 0.1.5): the v4 envelope with v3's own admission. Layer: io.

A v3 file is one event per line with the v4 envelope (`workbench.io.rows_v4.decode_envelope`:
exact keys, ``sourceEventSeqs`` range pairs, ``seq === index``, the inherited ``session/end-seed``
marker). What v4's row admission refuses as retired is v3's own syntax: ``tool-result`` wrapper
blocks and ``{kind: "plugin"}`` sources are how v3 writes tool results and message sources
(v4 spec §0.3). So a v3 row is screened only for what the v2→v3 step retired (spec §0.4):
``request/header.header.system`` (the prompt is a ``system/message`` node), non-ignorable
``tool/code-dispatch*`` (renamed ``tool/ptc-dispatch*``), and the ``system/message`` fields.
"""
from __future__ import annotations

from typing import Any

from workbench.io.admission_v4 import system_message_fields
from workbench.io.retired import SyntaxRefusal, retired_events
from workbench.io.rows_v4 import V4Codec

SCREENED = frozenset(("request/header", "system/message", "tool/code-dispatch", "tool/code-dispatch-start"))
"""The row types a v3 admission rule applies to."""


def admit_row_v3(row: Any) -> None:
    """Refuse the syntax the v2→v3 migration step retired; raises `SyntaxRefusal`."""
    if type(row) is not dict:
        return
    kind = row.get("type")
    if kind not in SCREENED:
        return
    if retired_events(row, 3):
        return
    try:
        system_message_fields(row)
    except SyntaxRefusal as exc:
        raise SyntaxRefusal(exc.message.replace("format v4 ", "format v3 ")) from None


class V3Codec(V4Codec):
    """`RowCodec` of format v3: the v4 row decoder with `admit_row_v3` as the screen."""

    after_issue_types = frozenset(("turn/end", *SCREENED))
    screened = SCREENED
    admit = staticmethod(admit_row_v3)
    __slots__ = ()

    def screen(self, value: Any, raw: bytes) -> None:
        try:
            admit_row_v3(value)
        except SyntaxRefusal as exc:
            raise exc.to_issue() from None


__all__ = ["SCREENED", "V3Codec", "admit_row_v3"]
