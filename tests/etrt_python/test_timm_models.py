"""timm (pytorch-image-models) architectures exactly as timm builds them (random weights,
10 classes, eval mode; nothing downloaded), exported at batch 1 and 2 and run by the in-tree
runtime at each instruction-set cap and at 1 and 2 threads, against eager PyTorch.

Each model is here for what it adds over the torchvision and transformers models of
test_library_models.py (the note beside it). `bash ci/long.sh models` installs the pinned timm
(tests/timm-requirements.txt, --no-deps); without it these tests fail, they never skip. The
coverage table: docs/TESTING.md (timm models)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import vision
from torch.utils._pytree import tree_flatten

pytestmark = [pytest.mark.slow, pytest.mark.models, pytest.mark.long]

REQUIREMENTS = Path(__file__).resolve().parents[1] / "timm-requirements.txt"
CAPS = ("avx512", "avx2", "sse2")
THREADS = (1, 2)
MAX_REL_ERROR = 1e-4

# name -> (image size, create_model keywords, what it adds). 96x96, with img_size where the
# model's grid is fixed at creation; EfficientFormer's and HaloNet's own sizes where 96 fails
# (EfficientFormer's attention bias is sized for 224; HaloNet's blocks must tile each stage).
MODELS: dict[str, tuple[int, dict[str, Any], str]] = {
    "resnet26t": (96, {}, "deep tiered stem, average-pool shortcut downsampling"),
    "ecaresnet26t": (96, {}, "ECA: a 1-D convolution across pooled channels"),
    "skresnet18": (96, {}, "selective kernel: a softmax over stacked branches"),
    "resnest14d": (96, {}, "split attention: radix softmax, grouped convolutions"),
    "res2net50_14w_8s": (96, {}, "hierarchical splits and concatenations in a block"),
    "regnetz_b16": (96, {}, "RegNetZ: SE with SiLU, inverted bottlenecks"),
    "tf_efficientnet_b0": (96, {}, "TF 'same' padding computed from the input size"),
    "mixnet_s": (96, {}, "mixed depthwise kernel sizes over channel splits"),
    "lcnet_050": (96, {}, "hardswish depthwise-separable stack, 1x1 head"),
    "ghostnetv2_100": (96, {}, "ghost modules, DFC attention (pooled, upsampled gate)"),
    "rexnet_100": (96, {}, "partial residuals (channel-sliced additions), ReLU6, SiLU"),
    "mobilenetv4_conv_small": (96, {}, "universal inverted bottlenecks"),
    "hardcorenas_a": (96, {}, "hard sigmoid SE in a NAS mobile net"),
    "hrnet_w18_small": (96, {}, "multi-resolution branches fused by upsampling"),
    "dla34": (96, {}, "deep layer aggregation trees"),
    "dpn48b": (96, {}, "dual path: sliced residual and dense channels"),
    "cspdarknet53": (96, {}, "cross-stage partial splits, leaky ReLU / mish"),
    "nf_resnet26": (96, {}, "weight standardisation computed per call, no norm layers"),
    "dm_nfnet_f0": (96, {}, "scaled weight-standardised convs, GELU, skip gains"),
    "repvgg_a0": (96, {}, "train-time branches (3x3, 1x1, identity BN) in eval"),
    "mobileone_s0": (96, {}, "over-parameterised reparameterisable branches"),
    "fastvit_t8": (96, {}, "RepMixer, large-kernel reparam convs, conditional pos enc"),
    "convnextv2_atto": (96, {}, "global response normalisation, channels-last LayerNorm"),
    "efficientformer_l1": (224, {}, "meta-blocks: pooling mixers then attention with bias"),
    "efficientformerv2_s0": (96, {"img_size": 96}, "strided attention over NHWC conv heads"),
    "levit_128s": (96, {"img_size": 96}, "attention-bias tables gathered per head, BN on linears"),
    "poolformer_s12": (96, {}, "average pooling minus input as the token mixer"),
    "caformer_s18": (96, {}, "StarReLU, learned scales, conv and attention stages"),
    "coatnet_nano_rw_224": (96, {"img_size": 96}, "MBConv and relative-position attention"),
    "maxvit_pico_rw_256": (96, {"img_size": 96}, "block and grid partitioned attention"),
    "vit_tiny_patch16_224": (96, {"img_size": 96}, "timm's ViT: class token, fused qkv"),
    "swin_tiny_patch4_window7_224": (96, {"img_size": 96}, "timm's Swin: shifted windows"),
    "cait_xxs24_224": (96, {"img_size": 96}, "talking heads, class attention, layer scale"),
    "beit_base_patch16_224": (96, {"img_size": 96}, "relative position bias per layer"),
    "eva02_tiny_patch14_224": (96, {"img_size": 96}, "rotary embedding, SwiGLU"),
    "mobilevitv2_050": (96, {}, "separable linear attention over unfolded patches"),
    "edgenext_xx_small": (96, {}, "cross-covariance attention, split depthwise convs"),
    "tiny_vit_5m_224": (96, {}, "windowed attention with bias, conv FFN"),
    "pit_ti_224": (96, {"img_size": 96}, "token pooling by strided depthwise conv"),
    "twins_svt_small": (96, {}, "locally grouped and global sub-sampled attention"),
    "xcit_nano_12_p16_224": (96, {}, "Fourier position encoding, XCA, L2 norm"),
    "crossvit_tiny_240": (96, {}, "two patch scales, cross attention"),
    "gcvit_xxtiny": (96, {"img_size": 96}, "global query tokens, window attention"),
    "pvt_v2_b0": (96, {}, "overlapping patch embed, spatial-reduction attention"),
    "tresnet_m": (96, {}, "space-to-depth stem, anti-aliased downsampling"),
    "ese_vovnet19b_dw": (96, {}, "one-shot aggregation, effective SE"),
    "tnt_s_patch16_224": (96, {"img_size": 96}, "transformer in transformer (pixel tokens)"),
    "visformer_tiny": (96, {"img_size": 96}, "conv stages into attention stages"),
    "sequencer2d_s": (96, {}, "bidirectional LSTMs along rows and columns"),
    "mixer_s16_224": (96, {"img_size": 96}, "token-mixing MLPs"),
    "resmlp_12_224": (96, {"img_size": 96}, "affine normalisation, cross-patch linear"),
    "gmlp_ti16_224": (96, {"img_size": 96}, "spatial gating unit"),
    "halonet26t": (256, {}, "blocked halo attention through Tensor.unfold"),
    "botnet26t_256": (96, {"img_size": 96}, "relative-position logits in a ResNet"),
    "lambda_resnet26t": (96, {}, "lambda layers (a 3-D positional conv)"),
    "efficientvit_b0": (96, {}, "ReLU linear attention, multi-scale aggregation"),
    "efficientvit_m0": (96, {}, "cascaded group attention"),
    "hiera_tiny_224": (96, {"img_size": 96}, "mask-unit attention, unrolled token order"),
    "mambaout_femto": (96, {}, "gated CNN blocks"),
    "davit_tiny": (96, {}, "dual (spatial and channel) attention"),
    "focalnet_tiny_srf": (96, {}, "focal modulation, gated context aggregation"),
    "hgnetv2_b0": (96, {}, "learnable affine activations, light conv blocks"),
    "starnet_s050": (96, {}, "star operation (elementwise products)"),
    "fasternet_t0": (96, {}, "partial convolution on a channel slice"),
    "inception_next_atto": (96, {}, "inception depthwise convolutions (band kernels)"),
    "inception_v3": (96, {}, "factorised 1x7/7x1 branches, no residuals (see WINOGRAD_OFF)"),
    "selecsls42b": (96, {}, "selective concatenation of earlier features (see WINOGRAD_OFF)"),
}

# Deep stacks of 3x3 convolutions without residual paths, whose random-weight outputs carry
# Winograd F(4x4, 3x3)'s documented extra rounding (README, ETRT_WINOGRAD) past 1e-4 of eager:
# inception_v3 1.4e-4, selecsls42b 1.0e-4, against 2.3e-5 - 6.3e-5 with direct sums, eager's
# own distance from float64 being 1.5e-5 and 2.9e-5. They run with ETRT_WINOGRAD=off.
# (inception_v4 is left out: eager float32 itself is 2.5e-4 from float64 there.)
WINOGRAD_OFF = {"inception_v3", "selecsls42b"}

_RUN = """
import json, sys
from pathlib import Path
import numpy as np
import etrt.runtime
work, caps = Path(sys.argv[1]), sys.argv[2:]
for cap in caps:
    etrt.runtime.set_max_isa(cap)
    for batch in (1, 2):
        with etrt.runtime.load(str(work / f"b{batch}.etrt")) as m:
            got = m.forward(np.load(work / f"b{batch}.in.npy"))
        np.savez(work / f"{cap}.b{batch}.out.npz", *[np.asarray(g) for g in got])
print(json.dumps(etrt.runtime.isa_info().cpu))
"""


def _timm() -> Any:
    """The pinned timm: a missing or other version fails (bash ci/long.sh models installs it)."""
    pinned = next(
        line.split("==")[1].strip()
        for line in REQUIREMENTS.read_text().splitlines()
        if line.startswith("timm==")
    )
    vision.declare_extension_ops()  # timm imports torchvision
    try:
        import timm
    except ImportError as e:
        pytest.fail(f"timm is not installed ({e}): pip install --no-deps -r {REQUIREMENTS}")
    assert timm.__version__ == pinned, f"timm {timm.__version__}, the suite pins {pinned}"
    return timm


def _live(model: torch.nn.Module, size: int) -> torch.nn.Module:
    """vision.live (batch-norm statistics from one random batch, unit-scale linear layers), after
    layer scales initialised near zero (1e-5, 1e-6) are drawn around 1, or the branches they
    scale would not show in the output."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "gamma" in name and p.numel() and float(p.abs().max()) < 1e-3:
                p.copy_(0.5 + torch.rand(p.shape, generator=gen))
    return vision.live(model, size, gen)


def _images(batch: int, size: int, seed: int) -> torch.Tensor:
    return torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_timm_model_matches_eager_at_each_cap_and_thread_count(name: str, tmp_path: Path) -> None:
    timm = _timm()
    build = runtime_build.python_runtime()
    size, options, _ = MODELS[name]
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10, **options)
    model = _live(model, size)
    expected: dict[int, list[np.ndarray]] = {}
    for batch in (1, 2):
        example, inputs = _images(batch, size, 0), _images(batch, size, 1)
        program = etrt.export(model, (example,))  # timm's model itself: no wrapper, no rewrite
        assert program.missing_ops == ()
        program.save(tmp_path / f"b{batch}.etrt")
        np.save(tmp_path / f"b{batch}.in.npy", inputs.numpy())
        with torch.no_grad():
            expected[batch] = [t.numpy() for t in tree_flatten(model(inputs))[0]]
    for threads in THREADS:
        env = dict(os.environ, ETRT_LIBRARY_DIR=str(build.build_dir))
        env["ETRT_NUM_THREADS"] = str(threads)
        if name in WINOGRAD_OFF:
            env["ETRT_WINOGRAD"] = "off"
        proc = subprocess.run(
            [sys.executable, "-c", _RUN, str(tmp_path), *CAPS],
            env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        cpu = json.loads(proc.stdout.strip().splitlines()[-1])
        for cap in CAPS:
            for batch in (1, 2):
                got = np.load(tmp_path / f"{cap}.b{batch}.out.npz")
                assert len(got.files) == len(expected[batch]), "outputs differ in number"
                for i, want in enumerate(expected[batch]):
                    out = got[f"arr_{i}"]
                    assert out.shape == want.shape, (out.shape, want.shape)
                    scale = float(np.abs(want).max())
                    assert scale > 1e-2, f"{name}: the output is all but zero"
                    err = float(np.abs(out.astype(np.float64) - want).max()) / scale
                    where = f"{name} batch {batch} cap {cap} (cpu {cpu}) threads {threads}"
                    print(f"{where} output {i}: max error {err:.2e} of max |eager| {scale:.3g}")
                    assert err <= MAX_REL_ERROR, f"{where}: relative error {err}"
