"""An autotuned launch is recorded for the configs its autotuner would try after its own pruning
(`prune_configs_by`), and shown with the first of them (triton_compat/autotune.py). Real Triton."""

import pytest

from conftest import fixture_path
from irscope.core.errors import IrscopeError
from irscope.core.session import open_file


@pytest.fixture(scope="module")
def ws():
    return open_file(fixture_path("autotune_pruned.py"), compile_ahead=False)


def _shown(comps):
    return [(c.constexprs["SMALL"], c.constexprs["BLOCK"], c.launch.autotune_index) for c in comps]


def test_a_pruned_config_is_neither_recorded_nor_compiled(ws):
    assert not ws.run_warning, "the file's own check passed: each launch ran with a config it allows"
    recorded = sorted((bool(l.kwargs["SMALL"]), l.autotune_index) for l in ws.launches)
    assert recorded == [(False, 0), (False, 1), (False, 2), (True, 1), (True, 2)]
    comps = ws.compile_all()
    assert _shown(comps) == [(False, 1024, 0), (True, 256, 1)], "each launch with the first config it would try"
    assert all(c.ok for c in comps)


def test_a_config_chosen_by_index_shows_the_launches_that_would_try_it(ws):
    assert _shown(ws.compile_all(config=0)) == [(False, 1024, 0)]
    assert _shown(ws.compile_all(config=2)) == [(False, 128, 2), (True, 128, 2)]


def test_every_launch_pruning_a_config_says_so():
    ws = open_file(fixture_path("autotune_pruned.py"), compile_ahead=False)
    ws.launches = [l for l in ws.launches if l.kwargs["SMALL"]]
    with pytest.raises(IrscopeError, match="not with autotune config 0; its autotuner's pruning left that config out"):
        ws.compile_all(config=0)
