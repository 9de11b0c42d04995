"""Controls and navigation: every control only sets the shared step (seqs: `conftest`)."""
from __future__ import annotations

from unittest.mock import Mock

import numpy as np
import pytest
import traitlets

from workbench.views import StepControls, StepState
from workbench.views.data import view_data
from workbench.views.navigation import Match, next_after, previous_before


@pytest.fixture
def controls(session) -> StepControls:
    state = StepState(last_seq=len(session) - 1)
    return StepControls(state, view_data(session).navigator)


def test_slider_and_jump_set_the_step(controls):
    seen = Mock()
    controls.state.observe(seen, names="step")
    controls.slider.value = 12
    assert controls.state.step == 12 and controls.jump.value == 12
    controls.jump.value = 30
    controls.go.click()
    assert controls.state.step == 30 and controls.slider.value == 30
    assert seen.call_count == 2


def test_step_back_and_forward_stop_at_the_ends(controls):
    controls.forward.click()
    assert controls.state.step == 1
    controls.back.click()
    controls.back.click()
    assert controls.state.step == 0
    controls.state.step = controls.state.last_seq
    controls.forward.click()
    assert controls.state.step == controls.state.last_seq


def test_compaction_jumps_stop_at_each_start_and_replacement(controls):
    visited = []
    for _ in range(10):
        controls.next_compaction.click()
        visited.append(controls.state.step)
    # each attempt's start, then its checkpoint (19/22, nested 28/31, manual 38/41); the
    # failed one has no checkpoint: its end (34/36); the never-closed one only its start (44)
    assert visited == [19, 22, 28, 31, 34, 36, 38, 41, 44, 44]
    assert controls.message.value.startswith("no next compaction stop from seq 44")
    controls.prev_compaction.click()
    assert controls.state.step == 41 and controls.message.value == ""


def test_request_jumps_land_on_model_calls(controls, session):
    calls = [a.seq for a in session.attempts]
    controls.next_request.click()
    assert controls.state.step == calls[0]
    controls.next_request.click()
    assert controls.state.step == calls[1]
    controls.prev_request.click()
    assert controls.state.step == calls[0]


@pytest.mark.parametrize(("fields", "start", "found", "message"), [
    pytest.param({"query": "continue"}, 0, 25, "", id="text-case-insensitive"),
    pytest.param({"event_type": "compaction/end"}, 23, 32, "", id="type"),
    pytest.param({"event_type": "compaction/end"}, 42, 23, "wrapped to the start", id="wraps"),
    pytest.param({"surface_state": "shadowed", "query": "nothing"}, 0, 10, "", id="state-and-text"),
    pytest.param({"surface_state": "on surface", "event_type": "user/message"}, 0, 41, "",
                 id="state-and-type"),
    pytest.param({"query": "no such text"}, 5, 5, "no match", id="no-match"),
    pytest.param({}, 5, 5, "type a text or pick a type or state", id="empty"),
])
def test_search_moves_to_the_next_match(controls, fields, start, found, message):
    controls.state.step = start
    for name, value in fields.items():
        getattr(controls, name).value = value
    controls.find.click()
    assert controls.state.step == found
    assert controls.message.value == message


def test_play_speed_and_stride_reach_the_play_widget(controls):
    controls.speed.value = 80
    assert controls.play.interval == 80
    assert controls.play.max == controls.slider.max == controls.state.last_seq


@pytest.mark.parametrize(("targets", "seq", "after", "before"), [
    pytest.param([3, 8], 3, 8, None, id="on-a-target"),
    pytest.param([3, 8], 5, 8, 3, id="between"),
    pytest.param([3, 8], 9, None, 8, id="past-the-end"),
    pytest.param([], 0, None, None, id="none"),
])
def test_next_and_previous_targets(targets, seq, after, before):
    arr = np.array(targets, dtype=np.int64)
    assert next_after(arr, seq) == after
    assert previous_before(arr, seq) == before


def test_search_reports_wrapping(session):
    nav = view_data(session).navigator
    assert nav.find_next(40, event_type="turn/start") == Match(0, True)
    assert nav.find_next(40, text="zzz") is None


@pytest.mark.parametrize(("value", "message"), [
    pytest.param(-1, "step -1 is outside 0..46", id="negative"),
    pytest.param(47, "step 47 is outside 0..46", id="past-the-end"),
])
def test_state_rejects_steps_outside_the_log(session, value, message):
    state = StepState(last_seq=len(session) - 1)
    with pytest.raises(traitlets.TraitError) as caught:
        state.step = value
    assert str(caught.value) == message
