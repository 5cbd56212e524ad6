"""Autotuned launches as a GPU's autotuner makes them (triton_compat/autotune.py): the configs it would try
after its own pruning (`prune_configs_by`), shown with the first of them; each config with the arguments
its pre_hook sets; configs an autotuner of a library benchmarks through Autotuner._bench recorded as
configs. Real Triton."""

import json

import pytest
from conftest import fixture_path, run_irscope

from irscope.base.errors import IrscopeError
from irscope.engine.session import open_file


@pytest.fixture(scope="module")
def ws():
    return open_file(fixture_path("autotune_pruned.py"), compile_ahead=False)


def _shown(comps):
    return [(c.constexprs["SMALL"], c.constexprs["BLOCK"], c.launch.autotune_index) for c in comps]


def test_a_pruned_config_is_neither_recorded_nor_compiled(ws):
    assert not ws.run_warning, (
        "the file's own check passed: each launch ran with a config it allows"
    )
    recorded = sorted(
        (bool(launch.kwargs["SMALL"]), launch.autotune_index) for launch in ws.launches
    )
    assert recorded == [(False, 0), (False, 1), (False, 2), (True, 1), (True, 2)]
    comps = ws.compile_all()
    assert _shown(comps) == [(False, 1024, 0), (True, 256, 1)], (
        "each launch with the first config it would try"
    )
    assert all(c.ok for c in comps)


def test_a_config_chosen_by_index_shows_the_launches_that_would_try_it(ws):
    assert _shown(ws.compile_all(config=0)) == [(False, 1024, 0)]
    assert _shown(ws.compile_all(config=2)) == [(False, 128, 2), (True, 128, 2)]


def test_every_launch_pruning_a_config_says_so():
    ws = open_file(fixture_path("autotune_pruned.py"), compile_ahead=False)
    ws.launches = [launch for launch in ws.launches if launch.kwargs["SMALL"]]
    with pytest.raises(
        IrscopeError,
        match="not with autotune config 0; its autotuner's pruning left that config out",
    ):
        ws.compile_all(config=0)


@pytest.fixture(scope="module")
def descriptors():
    return open_file(fixture_path("autotune_descriptors.py"), compile_ahead=False)


def _block_shapes(comp):
    return [comp.constexprs["BLOCK"]] + [comp.signature[n] for n in ("x_desc", "y_desc")]


def test_each_config_compiles_with_the_descriptors_its_pre_hook_sets(descriptors):
    """The hooks change one descriptor object the configs share: each launch keeps it as it was."""
    ws = descriptors
    assert not ws.run_warning, "the file's own checks passed"
    for kernel in ws.kernels:
        for config, block in ((0, 128), (1, 64)):
            comps = [
                c for c in ws.compile(kernel, config=config) if c.launch.autotune_index == config
            ]
            assert len(comps) == 1 and comps[0].ok
            assert _block_shapes(comps[0]) == [
                block,
                f"tensordesc<fp32[{block}, 32]>",
                f"tensordesc<fp32[{block}, 32]>",
            ]


def test_a_library_autotuner_benchmarking_through_bench_shows_its_launch(descriptors):
    """An autotuner with a run of its own (FlagGems' LibTuner): each config it benchmarks is recorded as
    that config, the first shown and every one named; the launch it then makes with the config it chose is
    that config's compile, not a launch of its own."""
    ws = descriptors
    for (
        kernel
    ) in ws.kernels:  # @triton.autotune's and the one with a run of its own, recorded alike
        launches = [launch for launch in ws.launches if launch.kernel is kernel]
        assert [(la.autotune_index, la.autotune_first, la.autotune_tried) for la in launches] == [
            (0, True, (0, 1)),
            (1, False, (0, 1)),
        ], kernel.name
        assert ws.launches_of(kernel) == launches[:1]
        (comp,) = ws.compile(kernel)
        assert _block_shapes(comp) == [
            128,
            "tensordesc<fp32[128, 32]>",
            "tensordesc<fp32[128, 32]>",
        ]


OWN_RUN = fixture_path("autotune_own_run.py")


def test_an_own_run_names_every_config_it_benchmarks_in_its_order_and_shows_the_first():
    ws = open_file(OWN_RUN, compile_ahead=False)
    assert not ws.run_warning, "the file's own checks passed"
    # benchmarked backwards: config 2 first, then 1 and 0, each recorded as that config and named on the
    # others; NaN timings (nothing is timed here) leave config 2 the choice, whose run is not recorded again.
    # The later launch: the library's cache held the choice, nothing benchmarked, the one config compiled.
    assert [(la.autotune_index, la.autotune_first, la.autotune_tried) for la in ws.launches] == [
        (2, True, (2, 1, 0)),
        (1, False, (2, 1, 0)),
        (0, False, (2, 1, 0)),
        (2, True, (2,)),
    ]
    comps = ws.compile_all()
    assert [(c.constexprs["BLOCK"], c.specialization["x_ptr"]) for c in comps] == [
        (256, "D"),
        (256, ""),
    ]


def test_report_json_names_each_config_an_own_run_benchmarks_and_config_n_compiles_it(cli):
    code, out, err = cli("report", OWN_RUN, "--json")
    assert code == 0, err
    first = json.loads(out)["kernels"][0]["autotune"]
    assert [(t["index"], t["kwargs"]["BLOCK"], t["shown"]) for t in first["tried"]] == [
        (2, 256, True),
        (1, 128, False),
        (0, 64, False),
    ]
    code, out, err = cli("report", OWN_RUN, "--json", "--config", "0")
    assert code == 0, err
    (shown,) = json.loads(out)["kernels"]
    assert shown["constexprs"]["BLOCK"] == 64 and shown["num_warps"] == 2


def test_an_own_run_is_wrapped_while_a_capture_runs_and_put_back_after():
    """Subclasses defined before the capture and those the file defines while it runs alike; one with no run
    of its own is left as it is, and Autotuner has no hook of irscope's after."""
    from triton.runtime.autotuner import Autotuner

    from irscope.engine.triton_compat.own_tuners import own_runs_wrapped

    class Before(Autotuner):
        def run(self, *args, **kwargs):
            return "before"

    original = Before.run

    def during_run(self, *args, **kwargs):
        return "during"

    with own_runs_wrapped():
        assert Before.run is not original and Before.run.__wrapped__ is original

        class During(Before):
            run = during_run

        class Inherits(Before):
            pass

        assert During.run is not during_run and During.run.__wrapped__ is during_run
        assert "run" not in vars(Inherits)
    assert Before.run is original and During.run is during_run
    assert "__init_subclass__" not in vars(Autotuner)


# ---- configs the pruning makes (autotune_pruner_adds.py: BLOCK_N added to each declared config, then a
# perf_model's top 2): the GPU compiles configs 3 and 4 below, never the declared 0-2

PRUNER_ADDS = fixture_path("autotune_pruner_adds.py")
MADE = [
    (3, {"BLOCK_M": 32, "BLOCK_N": 64}, 8, 3),
    (4, {"BLOCK_M": 16, "BLOCK_N": 64}, 4, 2),
]  # the model's order


def test_configs_the_pruning_makes_are_recorded_numbered_after_the_declared_ones():
    ws = open_file(PRUNER_ADDS, compile_ahead=False)
    assert not ws.run_warning, "the launch ran in the interpreter with a config that has BLOCK_N"
    (kernel,) = ws.kernels
    assert [c.kwargs for c in kernel.autotune_configs] == [
        {"BLOCK_M": 16},
        {"BLOCK_M": 32},
        {"BLOCK_M": 64},
    ] + [kwargs for _, kwargs, _, _ in MADE]
    assert [
        (launch.autotune_index, launch.autotune_first, launch.autotune_tried)
        for launch in ws.launches
    ] == [
        (3, True, (3, 4)),
        (4, False, (3, 4)),
    ]


def _report(*extra):
    done = run_irscope("report", PRUNER_ADDS, *extra)
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr
    return done


def _json(*extra):
    doc = json.loads(_report("--json", *extra).stdout)
    assert not doc.get("warning"), doc.get("warning")
    return doc["kernels"]


def test_report_shows_the_first_config_the_pruning_leaves_and_names_the_others():
    text = _report().stdout
    assert text.count("row_scale_kernel  (") == 1, "one config per specialization by default"
    assert "autotune config 3 of 5: BLOCK_M: 32, BLOCK_N: 64, num_warps: 8" in text
    assert "this launch's autotuner tries 3, 4; --config N shows another" in text


def test_report_json_names_every_config_the_autotuner_would_try():
    (entry,) = _json()
    tried = entry["autotune"]["tried"]
    assert [(t["index"], t["kwargs"], t["num_warps"], t["num_stages"]) for t in tried] == MADE
    assert [t["shown"] for t in tried] == [True, False] and entry["autotune"]["selected"] == 3
    assert entry["error"] is None and entry["constexprs"] == {"BLOCK_M": 32, "BLOCK_N": 64}


@pytest.mark.parametrize("index, kwargs, warps, stages", MADE)
def test_config_n_compiles_each_config_the_pruning_made(index, kwargs, warps, stages):
    (entry,) = _json("--config", str(index))
    assert entry["error"] is None and entry["autotune"]["selected"] == index
    assert (entry["constexprs"], entry["num_warps"], entry["num_stages"]) == (kwargs, warps, stages)


def test_a_declared_config_the_pruning_replaced_is_refused_in_one_line():
    done = run_irscope("report", PRUNER_ADDS, "--config", "0")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert (
        "not with autotune config 0; its autotuner's pruning left that config out (its launches try configs 3, 4)"
        in done.stderr
    )


def test_a_define_on_a_pruned_launch_compiles():
    (entry,) = _json("-D", "BLOCK_N=32")
    assert entry["error"] is None and entry["constexprs"] == {"BLOCK_M": 32, "BLOCK_N": 32}


def test_a_later_launch_with_a_tuning_key_seen_before_compiles_the_config_chosen_for_it():
    """The autotuner benchmarks a key once: the unaligned second launch compiles the chosen config alone."""
    ws = open_file(fixture_path("autotune_same_key.py"), compile_ahead=False)
    assert not ws.run_warning, "the file's own check passed"
    assert [
        (launch.autotune_index, launch.autotune_first, launch.autotune_tried)
        for launch in ws.launches
    ] == [
        (0, True, (0, 1)),
        (1, False, (0, 1)),
        (0, True, (0,)),
    ]
    shown = [(c.launch.autotune_index, c.specialization["x_ptr"]) for c in ws.compile_all()]
    assert shown == [(0, "D"), (0, "")], "each specialization, with the config its launch runs"
    assert [
        (c.launch.autotune_index, c.specialization["x_ptr"]) for c in ws.compile_all(config=1)
    ] == [(1, "D")]


def test_an_autotuners_warmup_is_recorded_config_by_config():
    """Autotuner.warmup compiles each config its pruning leaves: each is recorded as that config (they were
    recorded as launches of no config, each labelled config 0)."""
    ws = open_file(fixture_path("autotune_warmup.py"), compile_ahead=False)
    assert [
        (launch.autotune_index, launch.autotune_first, launch.autotune_tried, launch.warmup)
        for launch in ws.launches
    ] == [(2, True, (2, 3), True), (3, False, (2, 3), True)]
    assert [(c.launch.autotune_index, c.constexprs) for c in ws.compile_all()] == [
        (2, {"BLOCK_M": 16, "BLOCK_N": 64})
    ]
    (comp,) = ws.compile_all(config=3)
    assert comp.ok and (comp.constexprs, comp.num_warps) == ({"BLOCK_M": 32, "BLOCK_N": 64}, 8)


LEAVES_OUT = fixture_path("autotune_key_leaves_out.py")


def test_a_constexpr_the_key_leaves_out_names_every_config_for_the_later_launch_and_says_why():
    """STAGE 3, then 1, then 3 with one key: the first launch is tuned (its configs named, the first
    shown); the STAGE=1 launch compiles the config timing chose for the first, which only a GPU knows: every
    config is named for it, none compiled unless its number is asked for, and the run says so in one line;
    the second STAGE=3 launch repeats the first's compile."""
    ws = open_file(LEAVES_OUT, compile_ahead=False)
    assert not ws.run_warning, "the file's own checks passed"
    recorded = [(la.kwargs["STAGE"], la.autotune_index, la.autotune_first) for la in ws.launches]
    assert recorded == [
        (3, 0, True),
        (3, 1, False),
        (3, 2, False),
        (1, 0, True),
        (1, 1, False),
        (1, 2, False),
        (3, 0, True),
    ]
    assert [la.autotune_tried for la in ws.launches] == [(0, 1, 2)] * 6 + [(0,)]
    assert [la.choice_by_timing for la in ws.launches] == [False] * 3 + [True] * 3 + [False]
    (note,) = [n for n in ws.notes if "leaves out" in n]
    assert note.startswith(
        "scale: its autotune key leaves out STAGE (STAGE: 3 at the key's first launch"
    )
    assert "the 3 configs that one may be are named, none compiled" in note
    # shown: only what a GPU compiles whatever its timing picks
    shown = [(c.constexprs["STAGE"], c.constexprs["BLOCK"]) for c in ws.compile_all()]
    assert shown == [(3, 64)]
    (named,) = ws.named_all()
    assert (named.constexprs["STAGE"], named.constexprs["BLOCK"], named.number) == (1, 64, 1)
    assert ws.compile_named(named).ok
    # asked for by number: that config, for both launches
    asked = [(c.constexprs["STAGE"], c.constexprs["BLOCK"]) for c in ws.compile_all(config=2)]
    assert asked == [(3, 256), (1, 256)]
    assert ws.named_all(config=2) == []


def test_the_report_names_every_config_for_a_launch_the_key_does_not_tell_apart(cli):
    code, out, err = cli("report", LEAVES_OUT, "--json")
    assert code == 0, err
    doc = json.loads(out)
    (kernel,) = doc["kernels"]
    assert kernel["constexprs"]["STAGE"] == 3
    (named,) = doc["named"]
    assert (named["constexprs"]["STAGE"], named["why"], named["compiled"]) == (1, "timing", False)
    for entry in (kernel, named):
        assert [t["index"] for t in entry["autotune"]["tried"]] == [0, 1, 2]
    assert any("leaves out STAGE" in note for note in doc["notes"])
