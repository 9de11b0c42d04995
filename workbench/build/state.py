"""What a log builder knows about the log it has written so far. Layer: build.

`ScriptState.track(event)` is called for every event the builder appends — and for every event a
fork child inherits — so the state is always a function of the events themselves, never of the
script calls that produced them:

* turn / step numbering and the open turn and step (v4 spec §3.3);
* advertised tool calls of the open step, which of them started (`tool/call`) and which have an
  appended result (cleared at `step/start`, `step/end`, `turn/start`, `turn/end`, v0 spec §1.7);
* the surface: current nodes in order with their positions (a `SurfaceOrder`), each
  node's heuristic price and event (for pruning and the summary pricing), the protected v4
  system head (v4 spec §4.3);
* the request header in force and the route, the open compaction bracket, end-seed markers.

The builder's surface is its own bookkeeping (it knows what it appended and replaced); tests check
it against `workbench.core.surface.fold_surface`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.core.surface_order import SurfaceOrder
from workbench.core.tokens.heuristic import node_price
from workbench.errors import WorkbenchError


class BuildError(WorkbenchError):
    """A builder script asked for something that would not give a valid log."""


@dataclass
class PendingCall:
    """An advertised tool call of the open step."""

    name: str
    arguments: str
    step: int
    call_seq: int | None = None   # the `tool/call` event, once started
    answered: bool = False


@dataclass
class OpenCompaction:
    compaction_id: str
    start_seq: int
    turn: int | None
    source_command_id: str | None


@dataclass
class ScriptState:
    version: int
    seq: int = 0
    last_time: int = 0
    last_turn: int = 0
    open_turn: int | None = None
    last_step: int = 0
    open_step: int | None = None
    pending: dict[str, PendingCall] = field(default_factory=dict)
    order: SurfaceOrder = field(default_factory=SurfaceOrder)
    prices: dict[int, int] = field(default_factory=dict)
    node_events: dict[int, dict] = field(default_factory=dict)
    system_head: int | None = None
    header: dict | None = None
    header_seq: int | None = None
    seeded_since_header: bool = False
    route: tuple[str, str] | None = None
    open_compaction: OpenCompaction | None = None
    replace_generation: int = 0
    last_turn_end: int | None = None   # seq of the latest turn/end
    surface_tokens: int = 0            # sum of the current nodes' prices

    # -- queries -------------------------------------------------------------------------------

    def require_step(self, what: str) -> tuple[int, int]:
        if self.open_turn is None or self.open_step is None:
            raise BuildError(f"{what} needs an open step (use `with b.turn(): with b.step(): ...`)")
        return self.open_turn, self.open_step

    @property
    def nodes(self) -> list[int]:
        """The current surface nodes in order (read only: `order` changes them)."""
        return self.order.nodes

    def first_compactable(self) -> int:
        """Position of the first node a compaction may shadow (after a v4 system head)."""
        return 1 if self.nodes and self.nodes[0] == self.system_head else 0

    def span(self, start: int, end: int) -> list[int]:
        """The current surface nodes from `start` to `end` (positional, inclusive)."""
        if start not in self.order:
            raise BuildError(f"start seq {start} is not on the surface")
        if end not in self.order:
            raise BuildError(f"end seq {end} is not on the surface")
        i, j = self.order.get(start), self.order.get(end)
        if i > j:
            raise BuildError(f"start seq {start} comes after end seq {end} on the surface")
        return self.nodes[i:j + 1]

    # -- tracking ------------------------------------------------------------------------------

    def track(self, event: dict) -> None:
        etype = event["type"]
        data = event.get("data")
        seq = event["seq"]
        self.seq = seq + 1
        self.last_time = event["time"]
        if etype in ("turn/start", "turn/end", "step/start", "step/end"):
            self.pending.clear()
            if etype == "turn/start":
                self.open_turn = self.last_turn = data["turn"]
                self.open_step, self.last_step = None, 0
            elif etype == "turn/end":
                self.open_turn = self.open_step = None
                self.last_turn_end = seq
            elif etype == "step/start":
                self.open_step = self.last_step = data["step"]
            else:
                self.open_step = None
        elif etype == "assistant/message":
            for block in data["message"]["content"]:
                if block.get("type") == "tool-call":
                    self.pending[block["id"]] = PendingCall(block["name"], block["arguments"],
                                                            data["step"])
        elif etype == "tool/call" and data["callId"] in self.pending:
            self.pending[data["callId"]].call_seq = seq
        elif etype == "request/header":
            self.header, self.header_seq = data["header"], seq
            self.seeded_since_header = False
            config = data["header"]["config"]
            self.route = (config["provider"], config["model"])
        elif etype == "session/end-seed":
            self.seeded_since_header = True
            self.open_compaction = None  # an unmatched start before an end-seed is stale
        elif etype == "compaction/start":
            self.open_compaction = OpenCompaction(data["compactionId"], seq, data["turn"],
                                                  data.get("sourceCommandId"))
        elif etype == "compaction/end":
            self.open_compaction = None
        op = event.get("surfaceOp")
        if op is not None:
            self._surface(event, op)

    def _surface(self, event: dict, op: Any) -> None:
        seq = event["seq"]
        if op == "append":
            if event["type"] == "system/message" and not self.nodes:
                self.system_head = seq
            if event["type"] == "tool/result":
                call_id = event["data"]["message"]["source"]["callId"]
                if call_id in self.pending:
                    self.pending[call_id].answered = True
            self.order.append(seq)
        else:
            start = op["startSeq" if self.version >= 4 else "start"]
            end = op["endSeq" if self.version >= 4 else "end"]
            shadowed = self.span(start, end)
            i = self.order.get(start)
            self.order.replace(i, i + len(shadowed) - 1, seq)
            for s in shadowed:
                self.surface_tokens -= self.prices.pop(s)
                del self.node_events[s]
            if self.system_head in shadowed:
                self.system_head = seq if event["type"] == "system/message" else None
            self.replace_generation += 1
        price = node_price(event, version=self.version)
        self.prices[seq] = price
        self.surface_tokens += price
        self.node_events[seq] = event
