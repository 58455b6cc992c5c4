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
    # The scatter buffer has the spec's one shape: its Loop form has static shapes.
    loop = "loop_static" if (category, option) == ("assembly", "scatter") else "loop_sequence"
    forms = ["unrolled", loop] if category != "form" else [option]
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


def _scatter_loop(form, family, static_shapes, partial):
    rng = np.random.default_rng(SEED + 7)
    base = styles.draw_spec(rng, 0, SEED + 7, family=family, partial=partial,
                            fixed=styles.canonical_spelling(assembly="scatter",
                                                            form="loop_static"),
                            order="apply_then_update")
    return styles.Spec(**{**base.__dict__, "static_shapes": static_shapes,
                          "spelling": {**base.spelling, "form": form}})


@pytest.mark.parametrize("family", ["token_lr_mse", "linear_dot", "momentum_dot"])
def test_a_loop_writing_chunks_into_a_static_buffer_with_a_tail_write(family, tmp_path):
    """`out[:, :, s:e] = o` in a scripted Loop with static shapes, the last chunk
    written after the loop: the writes tile the buffer, and the layer is read."""
    spec = _scatter_loop("loop_tail", family, static_shapes=True, partial=True)
    assert styles.invalid(spec) is None, spec.describe()
    result = styles.check_case(spec, tmp_path)
    assert result.passed, (spec.describe(), result.problem, result.remark)


@pytest.mark.parametrize("form", ["loop_sequence", "loop_tail"])
def test_a_static_buffer_in_a_loop_of_symbolic_length_is_left(form, tmp_path):
    """The same writes into a buffer of one length while the inputs' length is
    symbolic: a shorter sequence would leave zero rows that no layer op computes, so
    the layer is found and left with that reason, its nodes unchanged."""
    spec = _scatter_loop(form, "token_lr_mse", static_shapes=False, partial=False)
    assert styles.invalid(spec) == styles.SCATTER_OF_ONE_LENGTH
    case = styles.Case(spec)
    feeds, expected = case.draw(np.random.default_rng(3))
    assert styles.rel_err(styles.run_onnx(case.model, feeds), expected) <= RTOL
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(case.model, str(src))
    proc = styles.run_ttt_opt(src, out)
    assert proc.returncode == 0, proc.stderr
    remarks = styles.layer_remarks(proc.stderr)
    assert len(remarks) == 1 and spec.form_remark() in remarks[0], proc.stderr
    assert "left as it was" in remarks[0] and \
        "not proven to be as long as the sequence" in remarks[0], remarks[0]
    assert _node_types(onnx.load(str(out)).graph) == _node_types(case.model.graph)


def _constant_producing(graph, name):
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return node
    raise AssertionError(f"no Constant makes {name}")


@pytest.mark.parametrize("where", ["body", "tail", "reduction"])
def test_buffer_writes_elsewhere_than_the_chunks_are_left(where, tmp_path):
    """The static-buffer Loop with one write moved: the body's write at 2 i C (its
    unit step doubled), or the last chunk's write one token early (overlapping the
    loop's last chunk); or the body's write adding to the buffer (a ScatterND
    reduction), which the raise does not take for a write. Found, left with the
    reason, nodes unchanged."""
    spec = _scatter_loop("loop_tail", "token_lr_mse", static_shapes=True, partial=True)
    model = styles.Case(spec).model
    if where == "reduction":
        body = next(n for n in model.graph.node if n.op_type == "Loop").attribute[0].g
        write = next(n for n in body.node if n.op_type == "ScatterND")
        write.attribute.append(onnx.helper.make_attribute("reduction", "add"))
        reason = "its buffer writes combine the chunk outputs with the buffer"
    elif where == "tail":
        write = [n for n in model.graph.node if n.op_type == "ScatterND"][-1]
        constant = _constant_producing(model.graph, write.input[1])
        indices = onnx.numpy_helper.to_array(constant.attribute[0].t).copy()
        indices[..., -1] -= 1
        reason = "its last chunk's write is not at the tokens after the loop"
    else:
        body = next(n for n in model.graph.node if n.op_type == "Loop").attribute[0].g
        constants = {n.output[0]: n for n in body.node if n.op_type == "Constant"}

        def is_unit_step(node):  # e_t: one 1 among zeros, one entry per index
            value = onnx.numpy_helper.to_array(node.attribute[0].t)
            return value.ndim == 1 and value.size > 1 and sorted(value.tolist())[-2:] == [0, 1]

        constant = next(constants[i] for n in body.node if n.op_type == "Mul"
                        for i in n.input if i in constants and is_unit_step(constants[i]))
        indices = onnx.numpy_helper.to_array(constant.attribute[0].t) * 2
        reason = "its buffer writes are not at its queries' tokens"
    if where != "reduction":
        constant.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(indices))
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    proc = styles.run_ttt_opt(src, out)
    assert proc.returncode == 0, proc.stderr
    remarks = styles.layer_remarks(proc.stderr)
    assert len(remarks) == 1 and "left as it was" in remarks[0] and reason in remarks[0], \
        proc.stderr
    assert _node_types(onnx.load(str(out)).graph) == _node_types(model.graph)


@pytest.mark.parametrize("family,partial,orientation", [
    ("linear_dot", True, "x_w"), ("token_lr_mse", False, "x_w"),
    ("momentum_mse", True, "einsum"), ("swiglu_dot", False, "x_wt"),
    ("linear_dot", False, "w_xt"), ("momentum_muon_dot", True, "w_xt")])
def test_turned_buffer_writes_in_a_loop_are_raised(family, partial, orientation, tmp_path):
    """A Loop that turns each chunk output [B, H, C, E] to [B, C, H, E] before it writes
    it into a [B, T, H, E] buffer (scatter assembly, bthd_chunk_transposed layout; the
    last chunk written after the loop when it is partial), or, with the weight stored
    output x input (w_xt), turns W q^T [B, H, E, C] there in one Transpose: found,
    rewritten (or left with its reason, momentum with MSE) and exact against the
    oracle."""
    rng = np.random.default_rng(SEED + 9)
    spec = styles.draw_spec(rng, 0, SEED + 9, family=family, partial=partial,
                            fixed=styles.canonical_spelling(
                                form="loop_static", assembly="scatter",
                                layout="bthd_chunk_transposed", orientation=orientation))
    result = styles.check_case(spec, tmp_path)
    assert result.found and result.rewritten and result.exact and not result.problem, \
        (result.problem, result.remark)
