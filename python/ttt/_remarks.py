"""Remarks as records: what ``ttt.optimize(..., return_remarks=True)`` returns.

The compiler reports one line per TTT layer it finds (and a line when it finds
none), in formats kept stable for people and scripts alike::

    <where>: [node '<node>': ]remark: TTT layer: <form>[, fast weights '<w>', ...]: <outcome>
    <where>: remark: no TTT layer found (<n> nodes read)
    <where>: [node '<node>': ]remark: not a TTT layer: <reason>

``<outcome>`` is ``raised to ttt.kvb_layer (...)`` for a layer that was
rewritten, or ``left as it was: <reason>``. A :class:`Remark` is that line (it
is a ``str``, so printing or searching it works as before) with the parts read
out as attributes.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

_LINE = re.compile(r"^(?P<where>.*?): (?:node '(?P<node>(?:[^']|'')*)': )?remark: (?P<text>.*)$")
# ttt-opt prints the severity first: "remark: <where>: [node '<node>': ]<text>".
_CLI_LINE = re.compile(r"^remark: (?P<where>.*?): (?:node '(?P<node>(?:[^']|'')*)': )?"
                       r"(?P<text>(?:TTT layer: |no TTT layer found |not a TTT layer: |export: ).*)$")
_LAYER = re.compile(r"^TTT layer: (?P<body>.*)$")
_NONE = re.compile(r"^no TTT layer found \((?P<nodes>\d+) nodes read\)")
_NOT_A_LAYER = re.compile(r"^not a TTT layer: (?P<reason>.*)$")
_LEFT = ": left as it was: "
_RAISED = re.compile(r": (?P<outcome>raised to [\w.]+.*)$")
_WEIGHTS = ", fast weights "


class Remark(str):
    """One remark line, with its parts.

    Attributes:
        kind: ``"layer"`` (a TTT layer found), ``"none"`` (no layer found in
            the model), ``"not-a-layer"`` (a candidate rejected, with
            ``--ttt-explain``), ``"export"`` (which PyTorch export was used,
            from :func:`ttt.optimize` of a module), or ``"other"`` (a pass's
            note, e.g. a simplification that changed the model).
        layer: the index of the TTT layer among this result's layer remarks
            (0, 1, ...), or None.
        where: the file, or file:line:col, the remark is about.
        node: the ONNX node the remark is attached to, or None.
        form: how the layer is written (``"unrolled chunk loop (4 chunks of
            16 tokens)"``); for an export remark, the export ladder's rung
            (``"dynamo-static"``); or None.
        weights: the fast weights' names in the model, where the remark
            names them.
        rewritten: True for a layer rewritten into linear attention, False
            for one left as it was, None for other remarks.
        reason: why the layer was left as it was, why a candidate is not a
            layer, what the rewrite became, or for an export remark how the
            module was exported (or ``"not used: <why>"``); None otherwise.
    """

    kind: str
    layer: Optional[int]
    where: str
    node: Optional[str]
    form: Optional[str]
    weights: tuple[str, ...]
    rewritten: Optional[bool]
    reason: Optional[str]

    def __new__(cls, line: str, layer: Optional[int] = None):
        self = super().__new__(cls, line)
        self.kind, self.layer, self.where, self.node = "other", None, "", None
        self.form, self.weights, self.rewritten, self.reason = None, (), None, None
        m = _LINE.match(line) or _CLI_LINE.match(line)
        if not m:
            return self
        self.where = m["where"]
        self.node = m["node"].replace("''", "'") if m["node"] is not None else None
        text = m["text"]
        if (n := _NONE.match(text)) is not None:
            self.kind = "none"
            self.reason = f"no TTT layer found ({n['nodes']} nodes read)"
        elif (n := _NOT_A_LAYER.match(text)) is not None:
            self.kind, self.reason = "not-a-layer", n["reason"]
        elif text.startswith("export: "):
            self.kind = "export"
            self.form, _, self.reason = text[len("export: "):].partition(": ")
            if self.form.endswith(" not used"):
                self.form = self.form[:-len(" not used")]
                self.reason = "not used: " + self.reason
        elif (n := _LAYER.match(text)) is not None:
            self.kind, self.layer = "layer", layer
            self._read_layer(n["body"])
        return self

    def _read_layer(self, body: str) -> None:
        head = body
        if _LEFT in body:
            head, self.reason = body.split(_LEFT, 1)
            self.rewritten = False
        elif (r := _RAISED.search(body)) is not None:
            head, self.reason = body[:r.start()], r["outcome"]
            self.rewritten = True
        if _WEIGHTS in head:
            head, weights = head.split(_WEIGHTS, 1)
            self.weights = tuple(re.findall(r"'([^']*)'", weights))
        self.form = head

    def __reduce__(self):
        return (Remark, (str(self), self.layer))


def as_remarks(lines: Iterable[str]) -> list[Remark]:
    """The lines as records, the layer remarks numbered in order."""
    result: list[Remark] = []
    count = 0
    for line in lines:
        remark = Remark(line, count)
        count += remark.kind == "layer"
        result.append(remark)
    return result


def count_layers(remarks: Iterable[str]) -> tuple[int, int]:
    """(layers found, layers rewritten) in a result's remarks."""
    records = [r if isinstance(r, Remark) else Remark(r) for r in remarks]
    found = [r for r in records if r.kind == "layer"]
    return len(found), sum(1 for r in found if r.rewritten)
