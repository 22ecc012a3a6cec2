#!/usr/bin/env python3
"""Makes the ONNX fixtures of tests/onnx/ from seeded NumPy weights, with reference outputs from onnxruntime.

Needs the `onnx` and `onnxruntime` packages (PyPI; the GPU machine has both). The outputs are committed, so the test
(check_onnx.py) needs neither: each good fixture NAME is NAME.onnx (and, for external data, its data file), with its
input (N, C, H, W) and onnxruntime's output as the arrays NAME.in and NAME.out of io.npz; each bad fixture is one .onnx
that import-onnx must refuse with one line. Usage: make_fixtures.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261124)
ARRAYS = {}  # every good fixture's input and reference output, written as io.npz at the end


def w(*shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) * (scale or np.sqrt(2.0 / fan_in))).astype(np.float32)


class Graph:
    """A chain under construction: node(op, extra inputs (initializers), attributes) appends to the current tensor."""

    def __init__(self, name, in_shape, batch="N", elem=TensorProto.FLOAT):
        self.name, self.nodes, self.inits, self.cur, self.k, self.elem = name, [], [], "input", 0, elem
        self.input = helper.make_tensor_value_info("input", elem, [batch] + list(in_shape))

    def init(self, name, array, dtype=None):
        a = array.astype(dtype) if dtype is not None else array
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def node(self, op, inits=(), name=None, outputs=1, **attrs):
        self.k += 1
        name = name or f"{op.lower()}{self.k}"
        outs = [f"{name}_out"] + [f"{name}_extra{i}" for i in range(1, outputs)]
        self.nodes.append(helper.make_node(op, [self.cur] + list(inits), outs, name=name, **attrs))
        self.cur = outs[0]
        return name

    def model(self, opset, inits_as_inputs=False, ir_version=None):
        out = helper.make_tensor_value_info(self.cur, self.elem, None)
        inputs = [self.input]
        if inits_as_inputs:  # as files of opset < 9 did: every initializer also a graph input
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in self.inits]
        g = helper.make_graph(self.nodes, self.name, inputs, [out], initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="batchscope make_fixtures.py")
        if ir_version:
            m.ir_version = ir_version
        return m


def conv(g, cin, cout, k, stride=1, pad=0, group=1, bias=True, dtype=None, **extra):
    name = f"conv{g.k + 1}"
    ins = [g.init(name + ".weight", w(cout, cin // group, k, k), dtype)]
    if bias:
        ins.append(g.init(name + ".bias", w(cout, scale=0.1), dtype))
    extra.setdefault("pads", [pad] * 4)
    return g.node("Conv", ins, name=name, kernel_shape=[k, k], strides=[stride, stride], group=group, **extra)


def batchnorm(g, c, opset, dtype=None):
    name = f"bn{g.k + 1}"
    ins = [g.init(f"{name}.{p}", v, dtype) for p, v in (("scale", 1 + 0.2 * w(c, scale=1)), ("bias", w(c, scale=0.2)),
                                                  ("mean", w(c, scale=0.3)), ("var", 0.5 + np.abs(w(c, scale=1))))]
    attrs = {"epsilon": 1e-3}
    if opset < 9:
        attrs["spatial"] = 1
    return g.node("BatchNormalization", ins, name=name, **attrs)


def save(m, out, name, x, external=False, reference=None):
    """reference: the model onnxruntime runs for the expected output, when it is not m itself."""
    path = os.path.join(out, name + ".onnx")
    if external:
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=name + ".weights",
                        size_threshold=0)
    else:
        onnx.save_model(m, path)
    ref = path if reference is None else reference.SerializeToString()
    y = ort.InferenceSession(ref, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    ARRAYS[name + ".in"], ARRAYS[name + ".out"] = x, y.astype(np.float32)
    print(f"{name}: opset {m.opset_import[0].version}, {len(m.graph.node)} nodes, output {y.shape}")


def cnn13(out):
    """Opset 13, every supported op on the way: Conv (bias, groups, stride) + BatchNormalization folded, Relu, MaxPool
    ceil_mode with padding, AveragePool count_include_pad ceil_mode, LRN, Tanh, GlobalAveragePool, Flatten, Gemm
    (transB, alpha, beta), Dropout, Identity, MatMul + Add, Sigmoid, Softmax."""
    g = Graph("cnn13", (3, 17, 19))
    conv(g, 3, 8, 3, pad=1)
    batchnorm(g, 8, 13)
    g.node("Relu")
    g.node("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    conv(g, 8, 12, 3, stride=2, pad=1, group=2)
    g.node("Tanh")
    g.node("AveragePool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1, ceil_mode=1)
    g.node("LRN", size=3, alpha=2e-2, beta=0.75, bias=2.0)
    conv(g, 12, 16, 1, bias=False)
    g.node("GlobalAveragePool")
    g.node("Flatten", axis=1)
    g.node("Gemm", [g.init("fc1.weight", w(20, 16)), g.init("fc1.bias", w(20, scale=0.1))], name="fc1", transB=1,
           alpha=0.5, beta=2.0)
    g.node("Relu")
    g.node("Dropout")
    g.node("Identity")
    g.node("MatMul", [g.init("fc2.weight", w(20, 10).T.copy().T)], name="fc2")
    g.node("Add", [g.init("fc2.bias", w(10, scale=0.1))], name="fc2_bias")
    g.node("Sigmoid")
    g.node("Softmax", axis=-1)
    save(g.model(13), out, "cnn13", rng.standard_normal((2, 3, 17, 19)).astype(np.float32))


def old7(out):
    """Opset 7 as old exporters wrote it: initializers also listed among the graph inputs, Reshape to (0, -1) with the
    shape an initializer, Gemm with B as (in, out) (transB 0), BatchNormalization after a Gemm; and every tensor in
    float16 (the whole graph, as a half-precision export is). The reference is the same graph in float32 with the
    float16 weights widened: what batchscope runs."""
    def build(elem, dtype):
        global rng
        rng = np.random.default_rng(7)  # the same weights for both graphs
        g = Graph("old7", (2, 9, 9), elem=elem)
        conv(g, 2, 6, 5, dtype=dtype)
        g.node("Relu")
        g.node("MaxPool", kernel_shape=[2, 2], strides=[2, 2])
        g.node("Reshape", [g.init("shape", np.array([0, -1], np.int64))])
        g.node("Gemm", [g.init("fc.weight", w(24, 7), dtype), g.init("fc.bias", w(7, scale=0.1), dtype)], name="fc", transB=0)
        batchnorm(g, 7, 7, dtype)
        g.node("Sigmoid")
        return g.model(7, inits_as_inputs=True)

    half = build(TensorProto.FLOAT16, np.float16)
    wide = build(TensorProto.FLOAT, np.float32)
    for t16, t32 in zip(half.graph.initializer, wide.graph.initializer):  # the float16 values, widened
        if t16.data_type == TensorProto.FLOAT16:
            t32.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t16).astype(np.float32), t32.name))
    x = np.random.default_rng(8).standard_normal((3, 2, 9, 9)).astype(np.float32)
    save(half, out, "old7", x, reference=wide)


def features(out):
    """A chain that ends in a feature map (no classifier), its weights in an external data file; opset 21."""
    g = Graph("features", (4, 11, 10))
    conv(g, 4, 6, 3, pad=1)
    g.node("Relu")
    g.node("MaxPool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    conv(g, 6, 5, 3, stride=1, pad=0)
    save(g.model(21), out, "features", rng.standard_normal((2, 4, 11, 10)).astype(np.float32), external=True)


def pads9(out):
    """Opset 9: a SAME_UPPER convolution (symmetric at stride 1), AveragePool with padding and ONNX's default
    count_include_pad 0 (the padding not counted), GlobalMaxPool, Gemm, Softmax over axis 1 by default."""
    g = Graph("pads9", (3, 12, 11))
    name = f"conv{g.k + 1}"
    g.node("Conv", [g.init(name + ".weight", w(6, 3, 3, 3)), g.init(name + ".bias", w(6, scale=0.1))], name=name,
           kernel_shape=[3, 3], auto_pad="SAME_UPPER")
    g.node("Relu")
    g.node("AveragePool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    conv(g, 6, 8, 3)
    g.node("GlobalMaxPool")
    g.node("Flatten")
    g.node("Gemm", [g.init("fc.weight", w(5, 8)), g.init("fc.bias", w(5, scale=0.1))], name="fc", transB=1)
    g.node("Softmax")
    save(g.model(9), out, "pads9", rng.standard_normal((2, 3, 12, 11)).astype(np.float32))


def old3(out):
    """Opset 3, as the model zoo's oldest AlexNet files: Reshape with its shape as an attribute, Gemm with broadcast 1,
    Dropout with is_test 1, initializers among the graph inputs. onnxruntime runs opset 7 and later, so the reference
    is the same graph written for opset 9."""
    def build(opset):
        global rng
        rng = np.random.default_rng(3)
        g = Graph("old3", (1, 10, 10))
        conv(g, 1, 4, 5)
        g.node("Relu")
        g.node("MaxPool", kernel_shape=[2, 2], strides=[2, 2])
        if opset < 5:
            g.node("Reshape", shape=[0, -1])
        else:
            g.node("Reshape", [g.init("shape", np.array([0, -1], np.int64))])
        extra = {"broadcast": 1} if opset < 7 else {}
        g.node("Gemm", [g.init("fc.weight", w(6, 36)), g.init("fc.bias", w(6, scale=0.1))], name="fc", transB=1, **extra)
        g.node("Dropout", **({"is_test": 1} if opset < 7 else {}))
        g.node("Softmax")
        return g.model(opset, inits_as_inputs=True, ir_version=3 if opset < 7 else None)

    x = np.random.default_rng(4).standard_normal((2, 1, 10, 10)).astype(np.float32)
    save(build(3), out, "old3", x, reference=build(9))


def dedup(out):
    """As PyTorch's exporter writes equal initializers (VGG's zero biases): the second convolution's bias is an Identity
    of an Identity of the first's, the Identity nodes listed before and after the convolutions."""
    g = Graph("dedup", (2, 8, 8))
    bias = g.init("conv1.bias", np.zeros(3, np.float32))
    g.node("Conv", [g.init("conv1.weight", w(3, 2, 3, 3)), bias], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g.node("Relu")
    g.node("Conv", [g.init("conv2.weight", w(3, 3, 3, 3)), "conv2.bias"], name="conv2", kernel_shape=[3, 3])
    g.nodes.insert(0, helper.make_node("Identity", ["dup"], ["conv2.bias"], name="dedup2"))
    g.nodes.append(helper.make_node("Identity", [bias], ["dup"], name="dedup1"))
    save(g.model(17), out, "dedup", rng.standard_normal((2, 2, 8, 8)).astype(np.float32))


def leaky(out):
    """LeakyRelu with its alpha (0.2) and with the default (0.01), opset 16."""
    g = Graph("leaky", (3, 9, 9))
    conv(g, 3, 6, 3, pad=1)
    g.node("LeakyRelu", alpha=0.2)
    conv(g, 6, 4, 3, stride=2)
    g.node("LeakyRelu")
    g.node("Flatten")
    g.node("Gemm", [g.init("fc.weight", w(5, 4 * 4 * 4)), g.init("fc.bias", w(5, scale=0.1))], name="fc", transB=1)
    save(g.model(16), out, "leaky", rng.standard_normal((2, 3, 9, 9)).astype(np.float32))


def bnalone(out):
    """BatchNormalization on its own: on the input, after a Relu, after a MaxPool, and on flat features after a Relu
    (each a per-channel scale and shift); one after a Gemm (folded). Opset 15."""
    g = Graph("bnalone", (3, 8, 8))
    batchnorm(g, 3, 15)
    conv(g, 3, 6, 3, pad=1)
    g.node("Relu")
    batchnorm(g, 6, 15)
    g.node("MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    batchnorm(g, 6, 15)
    g.node("Flatten")
    g.node("Gemm", [g.init("fc.weight", w(10, 96)), g.init("fc.bias", w(10, scale=0.1))], name="fc", transB=1)
    batchnorm(g, 10, 15)
    g.node("Relu")
    batchnorm(g, 10, 15)
    save(g.model(15), out, "bnalone", rng.standard_normal((2, 3, 8, 8)).astype(np.float32))


def dilated(out):
    """Dilated convolutions: 3x3 at dilation 2 with padding 2 (the size kept), and 3x3 at dilations (1, 3) with stride 2
    and pads (1, 3) (the dilated window 3x7). Opset 11."""
    g = Graph("dilated", (3, 13, 14))
    conv(g, 3, 5, 3, pad=2, dilations=[2, 2])
    g.node("Relu")
    name = f"conv{g.k + 1}"
    g.node("Conv", [g.init(name + ".weight", w(4, 5, 3, 3)), g.init(name + ".bias", w(4, scale=0.1))], name=name,
           kernel_shape=[3, 3], strides=[2, 2], dilations=[1, 3], pads=[1, 3, 1, 3])
    save(g.model(11), out, "dilated", rng.standard_normal((2, 3, 13, 14)).astype(np.float32))


def asympads(out):
    """Asymmetric padding (ONNX pads [top, left, bottom, right] that differ, and auto_pad SAME at an even total):
    a Conv with pads on the bottom and right alone, a strided SAME_UPPER Conv (the extra column at the end), MaxPool
    and AveragePool (counting the padding, and not, in ceil mode) with pads on one side, and a SAME_LOWER Conv
    (the extra row and column at the start). Opset 13."""
    g = Graph("asympads", (3, 11, 12))
    conv(g, 3, 6, 3, pads=[0, 1, 1, 2])  # (6, 10, 13)
    g.node("Relu")
    name = f"conv{g.k + 1}"
    g.node("Conv", [g.init(name + ".weight", w(8, 6, 4, 4)), g.init(name + ".bias", w(8, scale=0.1))], name=name,
           kernel_shape=[4, 4], strides=[2, 2], auto_pad="SAME_UPPER")  # (8, 5, 7): pads 1, 1 (rows), 1, 2 (columns)
    g.node("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 1])  # (8, 2, 3)
    g.node("AveragePool", kernel_shape=[3, 3], strides=[1, 1], pads=[0, 1, 2, 0])  # (8, 2, 2), the padding not counted
    g.node("AveragePool", kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 1], count_include_pad=1, ceil_mode=1)
    name = f"conv{g.k + 1}"
    g.node("Conv", [g.init(name + ".weight", w(5, 8, 2, 2)), g.init(name + ".bias", w(5, scale=0.1))], name=name,
           kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    save(g.model(13), out, "asympads", rng.standard_normal((2, 3, 11, 12)).astype(np.float32))


def bad(out):
    """Files import-onnx must refuse, each with one line naming what it cannot take."""
    def write(name, m):
        onnx.save_model(m, os.path.join(out, name + ".onnx"))

    g = Graph("residual", (3, 8, 8))  # y = relu(conv(x)) + x: not a chain
    conv(g, 3, 3, 3, pad=1)
    g.node("Relu")
    g.nodes.append(helper.make_node("Add", [g.cur, "input"], ["sum"], name="residual_add"))
    g.cur = "sum"
    write("bad-residual", g.model(13))

    g = Graph("leaky", (3, 8, 8))
    conv(g, 3, 4, 3)
    g.node("Elu", name="elu", alpha=0.1)
    write("bad-unsupported", g.model(13))

    g = Graph("negative", (3, 8, 8))  # ONNX's pads are at least 0
    g.node("Conv", [g.init("w", w(4, 3, 3, 3))], name="neg_conv", kernel_shape=[3, 3], pads=[0, 0, -1, 1])
    write("bad-negative-pads", g.model(13))

    g = Graph("symbolic", (3, 8, 8))
    g.input = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, "H", "W"])
    conv(g, 3, 4, 3)
    write("bad-symbolic-shape", g.model(13))

    g = Graph("outside", (3, 8, 8))  # external data that points out of the model's folder
    conv(g, 3, 4, 3, bias=False)
    m = g.model(13)
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "../outside.bin"), ("offset", "0"), ("length", str(4 * 4 * 3 * 3 * 3))):
        e = t.external_data.add()
        e.key, e.value = k, v
    write("bad-external-path", m)

    with open(os.path.join(out, "bad-not-onnx.onnx"), "wb") as f:
        f.write(b"this is not a protobuf message \x00\xff\x07")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cnn13(out)
    old7(out)
    features(out)
    bad(out)
    pads9(out)  # after the others: their seeded weights stay as committed
    old3(out)
    dedup(out)
    leaky(out)
    bnalone(out)
    dilated(out)
    asympads(out)
    np.savez(os.path.join(out, "io.npz"), **ARRAYS)


if __name__ == "__main__":
    main()
