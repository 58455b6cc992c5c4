"""TTT layers in many ONNX spellings are found and rewritten exactly (a seeded sweep).

onnx_styles.py writes each of its families (linear dot and MSE layers, per-token
learning rates, momentum, a static SwiGLU feature map; both update orders, full and
partial last chunks) in a random spelling: one option per category (weight source,
layout, weight orientation, chunking, output assembly, subtraction, step size and mean,
no-op nodes, opset, unrolled or Loop form), drawn only from the options listed in its
SUPPORTED table. For every graph

* the generated model passes the ONNX checker and onnxruntime computes the family's
  NumPy oracle (fp32 relative error <= 1e-5): the generator is right;
* `ttt-opt model.onnx -o out.onnx` reports exactly one TTT layer, in the form it was
  written (unrolled chunk loop or ONNX Loop over chunks);
* a linear-attention family is raised to ttt.kvb_layer with the exact lowering its
  family names, a family that is not is left as it was with the expected reason;
* the written model passes the checker and matches the oracle on fresh random inputs
  (and, when left as it was, the original model).

The canonical spelling of every family is checked on its own, and every option of every
category (SUPPORTED or not) is checked to change the graph and to compute the layer.

TTT_STYLE_SEED changes the sweep (default 2026), TTT_STYLE_COUNT its size (default 320).
A failure names the seed, each failing graph's index, family, shape, every chosen
spelling and the remark; `python3 test/python/onnx_styles.py --show INDEX --seed SEED`
prints that graph, `--check` reruns the sweep, `--survey` shows what today's ttt-opt
reads of every option.
"""

from __future__ import annotations

import collections
import os
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_styles as styles  # noqa: E402

SEED = int(os.environ.get("TTT_STYLE_SEED", "2026"))
COUNT = int(os.environ.get("TTT_STYLE_COUNT", "320"))
GROUP = 40
JOBS = 2
RTOL = styles.RTOL

_SAMPLE = []


def _sample():
    if not _SAMPLE:
        print(f"TTT_STYLE_SEED={SEED} TTT_STYLE_COUNT={COUNT}")
        _SAMPLE.extend(styles.sample(SEED, COUNT))
    return _SAMPLE


def _report(results):
    failed = [r for r in results if not r.passed]
    lines = [f"{len(failed)} of {len(results)} graphs failed (TTT_STYLE_SEED={SEED}, "
             f"TTT_STYLE_COUNT={COUNT}; show one with `python3 test/python/onnx_styles.py "
             f"--show INDEX --seed {SEED}`):"]
    lines += [r.message() for r in failed]
    return "\n".join(lines)


@pytest.mark.parametrize("group", range((COUNT + GROUP - 1) // GROUP))
def test_supported_spellings_are_found_and_rewritten_exactly(group, tmp_path):
    specs = _sample()[group * GROUP:(group + 1) * GROUP]
    assert specs
    results = styles.check_all(specs, tmp_path, JOBS)
    assert all(r.passed for r in results), _report(results)


def test_the_sweep_covers_every_supported_option_and_family():
    specs = _sample()
    assert len(specs) >= min(COUNT, 300) and len(specs) == COUNT
    used = collections.defaultdict(set)
    for spec in specs:
        assert styles.drawn_by_test(spec) and styles.invalid(spec) is None, spec.describe()
        for category, option in spec.spelling.items():
            used[category].add(option)
    for category, options in styles.SUPPORTED.items():
        assert used[category] == set(options), category
    assert {s.family for s in specs} == set(styles.FAMILIES)
    assert {s.order for s in specs} == set(styles.ORDERS)
    assert {s.partial for s in specs} == {False, True}
    assert {s.reduction for s in specs} == {"sum", "mean"}


def test_supported_and_refused_tables_split_every_option():
    for category, options in styles.CATEGORIES.items():
        supported = styles.SUPPORTED[category]
        refused = styles.REFUSED[category]
        assert styles.CANONICAL[category] in supported, category
        assert sorted(supported + list(refused)) == sorted(options), category
        assert all(refused.values()), category
        loop_refused = styles.LOOP_REFUSED[category]
        assert set(loop_refused) <= set(supported) and all(loop_refused.values()), category
    assert "unrolled" not in styles.LOOP_REFUSED["form"]


def _canonical_specs():
    rng = np.random.default_rng(SEED)
    specs = []
    for family in styles.FAMILIES:
        for order in styles.FAMILIES[family].orders:
            for partial in (False, True):
                specs.append(styles.draw_spec(rng, len(specs), SEED * 1000 + len(specs),
                                              fixed=styles.CANONICAL, family=family,
                                              order=order, partial=partial))
    return specs


def test_canonical_spelling_of_every_family(tmp_path):
    """The canonical spelling (the fixtures' and test_onnx_raise.py's) of every family,
    both orders, full and partial last chunks: found, raised exactly when the family is
    linear attention (FAMILIES says why), exact."""
    specs = _canonical_specs()
    results = styles.check_all(specs, tmp_path, JOBS)
    assert all(r.passed for r in results), _report(results)
    for result in results:
        family = result.spec.fam
        if styles.expects_rewrite(result.spec):
            assert "raised to ttt.kvb_layer " + family.remark in result.remark
            assert styles.expected_remark(result.spec) == family.remark
        else:
            assert "left as it was" in result.remark
            assert styles.expected_remark(result.spec) in result.remark
    assert any(not styles.expects_rewrite(r.spec) for r in results)


def _node_types(graph):
    types = collections.Counter()
    for node in graph.node:
        types[node.op_type] += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                types += _node_types(attr.g)
    return types


# Options that only change values (shapes, axes, operand order, inputs, the opset) or
# where a node sits (the Neg of subtraction=neg), not which nodes the graph has.
SAME_NODE_TYPES = {("weight_source", "input"), ("weight_source", "input_per_sample"),
                   ("layout", "folded"), ("chunking", "slice_negative_axis"),
                   ("assembly", "concat_negative_axis"), ("scaling", "mul_swapped"),
                   ("subtraction", "neg")} | \
    {("opset", option) for option in styles.CATEGORIES["opset"]}


def _pair(category, option, family=None):
    """The canonical spelling and the one with `option`, same family and shape: full
    chunks, apply_then_update, the mean, a subtracting update (every option applies;
    a norm spelling needs Muon, a momentum spelling momentum, a causal_rates spelling
    the causal order)."""
    family = family or {"norm": "momentum_muon_dot",
                        "momentum": "momentum_mse"}.get(category, "token_lr_mse")
    order = ("causal" if category == "causal_rates" else
             "update_then_apply" if option == "full_batch" else "apply_then_update")
    rng = np.random.default_rng(SEED + 1)
    base = styles.draw_spec(rng, 0, SEED, fixed=styles.CANONICAL, family=family,
                            order=order, partial=False)
    base.reduction = "mean"
    variant = styles.Spec(**{**base.__dict__,
                             "spelling": styles.canonical_spelling(**{category: option})})
    assert styles.invalid(variant) is None, variant.describe()
    return base, variant


@pytest.mark.parametrize("category, option", [
    (c, o) for c, options in styles.CATEGORIES.items() for o in options
    if o != styles.CANONICAL[c]])
def test_every_spelling_changes_the_graph(category, option):
    base, variant = _pair(category, option)
    a, b = styles.Case(base).model, styles.Case(variant).model
    assert onnx.printer.to_text(a) != onnx.printer.to_text(b)
    if (category, option) in SAME_NODE_TYPES:
        return
    assert _node_types(a.graph) != _node_types(b.graph), (category, option)


@pytest.mark.parametrize("category, option", [
    (c, o) for c, options in styles.CATEGORIES.items() for o in options])
def test_every_spelling_computes_the_layer(category, option):
    """Whatever ttt-opt reads of it, every option (in the unrolled and the Loop form)
    is the family's math: onnxruntime matches the oracle for every family."""
    rng = np.random.default_rng(SEED + 2)
    forms = ["unrolled", "loop_sequence"] if category != "form" else [option]
    checked = 0
    for family in styles.FAMILIES:
        for form in forms:
            fixed = styles.canonical_spelling(**{"form": form, category: option})
            try:
                spec = styles.draw_spec(rng, checked, SEED + checked, fixed=fixed,
                                        family=family)
            except ValueError:  # the option does not exist for the family (invalid())
                continue
            case = styles.Case(spec)
            onnx.checker.check_model(case.model, full_check=True)
            feeds, expected = case.draw(np.random.default_rng(checked))
            err = styles.rel_err(styles.run_onnx(case.model, feeds), expected)
            assert err <= styles.tolerance(spec), (spec.describe(), err)
            checked += 1
    # Every option exists for some families in every form (a norm for the Muon ones).
    assert checked >= min(len(forms), 2) * 2
