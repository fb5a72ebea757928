#!/usr/bin/python3
"""Builds small transformer models the way exporters write them (issue 18).

    gen_transformers.py OUT_DIR [--opsets 14,17,18,20,21]

For each opset: OUT_DIR/encoder_opsetN.onnx (BERT-like: embeddings, position
ids from Shape→Gather→Range, a Where padding mask expanded with Expand, two
layers of multi-head attention with Shape→Gather→Unsqueeze→Concat→Reshape
head splits, LayerNormalization or its ReduceMean decomposition, a GELU
feed-forward) and OUT_DIR/decoder_opsetN.onnx (GPT-like with past key/values:
position ids from CumSum of the attention mask sliced to the new tokens, a
causal mask from ConstantOfShape→Trilu shifted by the past length, KV-cache
Concat on past tensors, present outputs, logits). The forms change with the
opset as exporters' do: Split with a split input (< 18) or num_outputs (18+),
ReduceMean axes as an attribute (< 18) or an input (18+), LayerNormalization
from 17, Gelu from 20. Symbolic dims: batch, sequence_length,
past_sequence_length, total_sequence_length. Uses Debian's python3-onnx (1.12,
which does not know opsets above 17: the models are written without its
checker) and numpy; weights are random.
"""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

H, HEADS, HEAD, FF, VOCAB, MAXPOS, LAYERS = 32, 4, 8, 64, 100, 64, 2


class Builder:
    def __init__(self, opset, name):
        self.opset, self.name = opset, name
        self.nodes, self.inits, self.count = [], [], 0
        self.rng = np.random.default_rng(opset)

    def fresh(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.fresh("/" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, dtype=np.int64):
        name = self.fresh("const")
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def weight(self, *shape):
        name = self.fresh("w")
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def unsqueeze(self, x, axes):
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.const(axes)])
        return self.op("Unsqueeze", [x], axes=axes)

    def dim(self, x, i):  # Shape → Gather: a scalar
        return self.op("Gather", [self.op("Shape", [x]), self.const(i)], axis=0)

    def reduce_mean(self, x, axes):
        if self.opset >= 18:
            return self.op("ReduceMean", [x, self.const(axes)], keepdims=1)
        return self.op("ReduceMean", [x], axes=axes, keepdims=1)

    def layer_norm(self, x):
        gamma, beta = self.weight(H), self.weight(H)
        if self.opset >= 17:
            return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)
        mean = self.reduce_mean(x, [-1])
        d = self.op("Sub", [x, mean])
        var = self.reduce_mean(self.op("Pow", [d, self.const(2.0, np.float32)]), [-1])
        std = self.op("Sqrt", [self.op("Add", [var, self.const(1e-5, np.float32)])])
        return self.op("Add", [self.op("Mul", [self.op("Div", [d, std]), gamma]), beta])

    def gelu(self, x):
        if self.opset >= 20:
            return self.op("Gelu", [x])
        erf = self.op("Erf", [self.op("Div", [x, self.const(1.4142135, np.float32)])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [erf, self.const(1.0, np.float32)])]),
                               self.const(0.5, np.float32)])

    def linear(self, x, n_in, n_out):
        return self.op("Add", [self.op("MatMul", [x, self.weight(n_in, n_out)]), self.weight(n_out)])

    def split3(self, x):
        if self.opset >= 18:
            return self.op("Split", [x], n_out=3, axis=-1, num_outputs=3)
        if self.opset >= 13:
            return self.op("Split", [x, self.const([H, H, H])], n_out=3, axis=-1)
        return self.op("Split", [x], n_out=3, axis=-1, split=[H, H, H])

    def heads(self, x, b, s):  # [B, S, H] → [B, heads, S, head] via a computed shape
        shape = self.op("Concat", [self.unsqueeze(b, [0]), self.unsqueeze(s, [0]), self.const([HEADS]),
                                   self.const([HEAD])], axis=0)
        return self.op("Transpose", [self.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])

    def merge(self, x, b, s):  # [B, heads, S, head] → [B, S, H]
        shape = self.op("Concat", [self.unsqueeze(b, [0]), self.unsqueeze(s, [0]), self.const([H])], axis=0)
        return self.op("Reshape", [self.op("Transpose", [x], perm=[0, 2, 1, 3]), shape])

    def attention(self, q, k, v, mask):
        scores = self.op("Div", [self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                                 self.const(float(np.sqrt(HEAD)), np.float32)])
        probs = self.op("Softmax", [self.op("Add", [scores, mask])], axis=-1)
        return self.op("MatMul", [probs, v])

    def ffn(self, x):
        return self.linear(self.gelu(self.linear(x, H, FF)), FF, H)

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(graph, producer_name="npuplan-test-exporter",
                              opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m


def encoder(opset):
    g = Builder(opset, "encoder")
    ids, mask = "input_ids", "attention_mask"
    b, s = g.dim(ids, 0), g.dim(ids, 1)
    pos = g.unsqueeze(g.op("Range", [g.const(0), s, g.const(1)]), [0])
    x = g.op("Add", [g.op("Gather", [g.weight(VOCAB, H), ids]), g.op("Gather", [g.weight(MAXPOS, H), pos])])
    x = g.layer_norm(x)
    # Padding mask: Where(mask == 0, -1e4, 0) as [B, 1, 1, S], expanded to [B, 1, S, S].
    m4 = g.unsqueeze(mask, [1, 2])
    add_mask = g.op("Where", [g.op("Equal", [m4, g.const(0)]), g.const(-1e4, np.float32), g.const(0.0, np.float32)])
    shape = g.op("Concat", [g.unsqueeze(b, [0]), g.const([1]), g.unsqueeze(s, [0]), g.unsqueeze(s, [0])], axis=0)
    add_mask = g.op("Expand", [add_mask, shape])
    for _ in range(LAYERS):
        q, k, v = g.split3(g.linear(x, H, 3 * H))
        ctx = g.attention(g.heads(q, b, s), g.heads(k, b, s), g.heads(v, b, s), add_mask)
        x = g.layer_norm(g.op("Add", [x, g.linear(g.merge(ctx, b, s), H, H)]))
        x = g.layer_norm(g.op("Add", [x, g.ffn(x)]))
    pooled = g.op("Tanh", [g.linear(g.op("Squeeze", [g.reduce_mean(x, [1]), g.const([1])] if opset >= 13 else
                                          [g.reduce_mean(x, [1])], **({} if opset >= 13 else {"axes": [1]})), H, H)])
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="/out/hidden"))
    g.nodes.append(helper.make_node("Identity", [pooled], ["pooler_output"], name="/out/pooled"))
    return g.model(
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "sequence_length"]),
         helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "sequence_length"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence_length", H]),
         helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch", H])])


def decoder(opset):
    g = Builder(opset, "decoder")
    ids, mask = "input_ids", "attention_mask"
    b, s = g.dim(ids, 0), g.dim(ids, 1)
    past_len = g.dim("past_key_values.0.key", 2)
    total = g.op("Add", [past_len, s])
    # Position ids: CumSum of the mask minus one, padding at 1, the last S columns.
    pos = g.op("Sub", [g.op("CumSum", [mask, g.const(1)]), g.const(1)])
    pos = g.op("Where", [g.op("Equal", [mask, g.const(0)]), g.const(1), pos])
    pos = g.op("Slice", [pos, g.unsqueeze(g.op("Neg", [s]), [0]), g.const([2**62]), g.const([1])])
    x = g.op("Add", [g.op("Gather", [g.weight(VOCAB, H), ids]), g.op("Gather", [g.weight(MAXPOS, H), pos])])
    # Causal mask [S, T]: ones, lower triangle shifted by the past length.
    ones = g.op("ConstantOfShape", [g.op("Concat", [g.unsqueeze(s, [0]), g.unsqueeze(total, [0])], axis=0)],
                value=helper.make_tensor("one", TensorProto.INT64, [1], [1]))
    causal = g.op("Trilu", [ones, past_len], upper=0)
    keep = g.op("Mul", [g.unsqueeze(g.unsqueeze(mask, [1]), [1]), causal])  # [B, 1, S, T]
    add_mask = g.op("Where", [g.op("Equal", [keep, g.const(0)]), g.const(-1e4, np.float32), g.const(0.0, np.float32)])
    inputs = [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "sequence_length"]),
              helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "total_sequence_length"])]
    outputs = []
    for layer in range(LAYERS):
        past = []
        for kind in ("key", "value"):
            name = f"past_key_values.{layer}.{kind}"
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                        ["batch", HEADS, "past_sequence_length", HEAD]))
            past.append(name)
        h = g.layer_norm(x)
        q, k, v = g.split3(g.linear(h, H, 3 * H))
        q, k, v = g.heads(q, b, s), g.heads(k, b, s), g.heads(v, b, s)
        k = g.op("Concat", [past[0], k], axis=2)  # KV cache
        v = g.op("Concat", [past[1], v], axis=2)
        for kind, t in (("key", k), ("value", v)):
            name = f"present.{layer}.{kind}"
            g.nodes.append(helper.make_node("Identity", [t], [name], name=f"/out/{name}"))
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         ["batch", HEADS, "total_sequence_length", HEAD]))
        x = g.op("Add", [x, g.linear(g.merge(g.attention(q, k, v, add_mask), b, s), H, H)])
        x = g.op("Add", [x, g.ffn(g.layer_norm(x))])
    logits = g.op("MatMul", [g.layer_norm(x), g.weight(H, VOCAB)])
    g.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/out/logits"))
    outputs.insert(0, helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence_length", VOCAB]))
    return g.model(inputs, outputs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--opsets", default="14,17,18,20,21")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for opset in (int(o) for o in a.opsets.split(",")):
        for kind, make in (("encoder", encoder), ("decoder", decoder)):
            path = os.path.join(a.out_dir, f"{kind}_opset{opset}.onnx")
            with open(path, "wb") as f:
                f.write(make(opset).SerializeToString())
            print(path)


if __name__ == "__main__":
    main()
