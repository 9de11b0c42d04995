"""The pass's per-type steps (`core.steps`) and the index's reading of an event's message slot
(`heuristic.slot_price`) give what the per-event rules give."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.steps import merged
from workbench.core.tokens.heuristic import node_price, slot_price

_BLOCKS = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "reasoning"]),
                           "text": st.one_of(st.text(max_size=9), st.integers())}),
    st.fixed_dictionaries({"type": st.just("tool-call"), "id": st.text(max_size=3),
                           "name": st.text(max_size=5), "arguments": st.text(max_size=9)}),
    st.fixed_dictionaries({"type": st.just("image"), "data": st.text(max_size=4)}),
    st.integers()), max_size=4)
_MESSAGES = st.one_of(
    st.none(), st.integers(), st.text(max_size=3),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "developer",
                                                    "tool"]),
                           "content": st.one_of(_BLOCKS, st.just(""), st.none())}))
_TYPES = st.sampled_from(["user/message", "assistant/message", "tool/result", "system/message",
                          "developer/message", "tool/call", "turn/end"])


@settings(max_examples=300, deadline=None)
@given(_TYPES, _MESSAGES, st.booleans(), st.sampled_from([0, 3, 4]))
def test_the_slot_price_is_the_node_price(etype, message, dict_data, version) -> None:
    if etype == "user/message":
        data = message if isinstance(message, dict) or not dict_data else {}
    else:
        data = {"message": message} if dict_data else message
    event = {"type": etype, "seq": 0, "data": data}
    slot = None
    if type(data) is dict:
        slot = data if etype == "user/message" else data.get("message")
    assert slot_price(etype, slot, version=version) == node_price(event, version=version)


def test_merged_steps_run_in_table_order_and_a_merged_table_is_spliced() -> None:
    calls: list[str] = []

    def step(name: str):
        return lambda seq, event: calls.append(f"{name}{seq}")
    inner = merged(({"a": step("x")}, {"a": step("y"), "b": step("z")}))
    table = merged((inner, {"a": step("w")}))
    assert all(type(steps) is tuple and not any(type(s) is tuple for s in steps)
               for steps in table.values())
    for s in table["a"]:
        s(1, {})
    for s in table.get("b", ()):
        s(2, {})
    assert calls == ["x1", "y1", "w1", "z2"]
