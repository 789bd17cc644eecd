"""PT2E int8 torchvision models and a BERT encoder (long, `models` suite: bash ci/long.sh models):
every convolution and linear folds into integer kernels, etrt gives exactly the integers of the
folded graph run by torch, and stays close to the PT2E reference module (docs/quantization.md)."""

from __future__ import annotations

from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
import transformer_models as tm
import vision
from etrt.exporter import _decomposition_table
from etrt.quantized import fold_quantized
from test_quantized import BERT_TOLERANCE, bert_int8_error

pytestmark = [pytest.mark.long, pytest.mark.models]


def _image(seed: int) -> torch.Tensor:
    return torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(seed))


# Everything between the program's input quantize and output dequantize is an integer kernel
# (ResNet18's max pooling, MobileNetV3's hardswish / hardsigmoid tables, squeeze-excite means and
# products, the classifiers' dropout requantization), and etrt's integers are those of the folded
# graph run by torch.
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_small"])
def test_int8_torchvision_model_runs_its_integer_kernels(
    inprocess_runtime: Path, tmp_path: Path, name: str
) -> None:
    model = vision.live(vision.model(name))
    calibration = [(_image(100 + i),) for i in range(2)]
    converted = etrt.quantize(model, (_image(0),), calibration=calibration)
    program = etrt.export(converted, (_image(0),))
    ops = program.info.instruction_ops
    assert "aten::convolution" not in ops and "etrt_quant::conv2d" in ops
    assert "etrt_quant::linear" in ops
    assert ops.count("quantized_decomposed::quantize_per_tensor") == 1
    assert ops.count("quantized_decomposed::dequantize_per_tensor") == 1
    assert {op for op in ops if op.startswith("aten::")} <= {"aten::view"}
    module = etrt.load(program.save(tmp_path / f"{name}.etrt"))

    x = _image(1)
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    fold_quantized(core)
    folded = core.module()(x)
    got = torch.from_numpy(np.asarray(module.forward(x.numpy())[0]))
    (out,) = converted.graph.output_node().args[0]  # type: ignore[union-attr,operator]
    lsb = float(out.args[1])
    assert torch.equal(got, folded)

    # Against the float reference, a layer's integers differ by 1 LSB where float rounding
    # crosses a boundary (a few in 10^5 outputs); through the depth such flips add up (torch
    # running the folded graph differs as much), so the check is the logits' mean error in
    # output LSBs and the top class.
    want = converted(x)
    assert (got - want).abs().mean().item() <= 4 * lsb
    assert got.argmax() == want.argmax()


def test_int8_bert_encoder_matches_pt2e(inprocess_runtime: Path, tmp_path: Path) -> None:
    """transformers' BERT at hidden 128, 2 layers, 32 tokens, batch 2 with padding: its 13
    linears integer kernels, the rest float between dequantize and quantize."""
    model, inputs = tm.bert("small"), tm.inputs("bert", "small", batch=2)
    calibration = [tm.inputs("bert", "small", batch=2, seed=s) for s in range(1, 5)]
    converted = etrt.quantize(model, inputs, calibration=calibration)
    program = etrt.export(converted, inputs)
    ops = program.info.instruction_ops
    assert ops.count("etrt_quant::linear") == 13 and "aten::addmm" not in ops
    module = etrt.load(program.save(tmp_path / "bert.etrt"))
    for seed in (10, 11):
        x = tm.inputs("bert", "small", batch=2, seed=seed)
        got = [torch.from_numpy(np.asarray(t)) for t in module.forward(*(t.numpy() for t in x))]
        want = converted(*x)
        for g, w in zip(got, want[:2], strict=True):
            assert bert_int8_error(g, w) <= BERT_TOLERANCE


def test_int8_mobilenet_v2_runs_in_one_xnnpack_delegate(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """backend="xnnpack-all": all 52 int8 convolutions and 10 residual additions of MobileNetV2
    in one delegate call on qs8 values. XNNPACK requantizes once with an int32 bias where the
    reference adds the float bias after scaling: a layer's integers differ by 1 LSB in places
    (docs/quantization.md), and through 52 layers such flips add up: measured 5.4-6.0 output
    LSBs of mean logit error against both etrt's kernels and the reference (etrt's kernels:
    2.1-2.7 against the reference), less than int8 quantization's own error against the float
    model (6.3-6.9). The check: within 8 LSBs, and the top class holds."""
    model = vision.live(vision.model("mobilenet_v2"))
    calibration = [(_image(100 + i),) for i in range(2)]
    converted = etrt.quantize(model, (_image(0),), calibration=calibration)
    program = etrt.export(converted, (_image(0),), backend="xnnpack-all")
    ops = program.info.instruction_ops
    assert ops.count("delegate:XnnpackBackend") == 1, ops
    assert not {"etrt_quant::conv2d", "etrt_quant::add"} & set(ops), ops
    delegated = etrt.load(program.save(tmp_path / "xnn.etrt"))
    own = etrt.load(etrt.export(converted, (_image(0),)).save(tmp_path / "int8.etrt"))
    (out,) = converted.graph.output_node().args[0]  # type: ignore[union-attr,operator]
    lsb = float(out.args[1])
    for seed in (1, 2):
        x = _image(seed)
        got = torch.from_numpy(np.asarray(delegated.forward(x.numpy())[0]))
        kernels = torch.from_numpy(np.asarray(own.forward(x.numpy())[0]))
        want = converted(x)
        assert (got - kernels).abs().mean().item() <= 8 * lsb
        assert (got - want).abs().mean().item() <= 8 * lsb
        assert got.argmax() == want.argmax() == kernels.argmax()
