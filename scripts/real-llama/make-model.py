"""A GGUF model for the real-llama tests: random weights, real tokenizer, real chat template.

    python3 make-model.py LLAMA_CPP_SOURCE_DIR OUT.gguf

The layer shapes are SmolLM2-135M's (30 layers, 576 wide, grouped-query attention 9/3), so
llama-server spends on each token what a real small model costs. The vocabulary, merges and
special tokens are Qwen2's, read from the vocabulary file llama.cpp ships for its tokenizer
tests, and the chat template is Qwen2.5-Instruct's (tools included), so prompts are tokenized
and templated exactly as for a real Qwen model. The weights are drawn from a fixed seed: the
file is the same on every machine, and what it writes is gibberish.
"""
import os
import sys

source, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(source, 'gguf-py'))  # llama.cpp's own GGUF reader and writer

import numpy as np  # noqa: E402
from gguf import GGUFReader, GGUFWriter  # noqa: E402

WIDTH, LAYERS, FEED_FORWARD, HEADS, KV_HEADS = 576, 30, 1536, 9, 3
KV_WIDTH = KV_HEADS * (WIDTH // HEADS)
IM_END = 151645  # Qwen2-Instruct ends a turn with <|im_end|>: llama-server stops there

vocab = GGUFReader(os.path.join(source, 'models', 'ggml-vocab-qwen2.gguf'))


def vocab_field(name):
    return vocab.fields[name].contents()


tokens = vocab_field('tokenizer.ggml.tokens')
with open(os.path.join(source, 'models', 'templates', 'Qwen-Qwen2.5-7B-Instruct.jinja')) as f:
    chat_template = f.read()

writer = GGUFWriter(out, 'qwen2')
writer.add_name('llm-route test model (random weights, Qwen2 tokenizer)')
writer.add_context_length(8192)
writer.add_embedding_length(WIDTH)
writer.add_block_count(LAYERS)
writer.add_feed_forward_length(FEED_FORWARD)
writer.add_head_count(HEADS)
writer.add_head_count_kv(KV_HEADS)
writer.add_rope_freq_base(100000.0)
writer.add_layer_norm_rms_eps(1e-5)
writer.add_file_type(1)  # F16 weights, F32 norms and biases

writer.add_tokenizer_model(vocab_field('tokenizer.ggml.model'))
writer.add_tokenizer_pre(vocab_field('tokenizer.ggml.pre'))
writer.add_token_list(tokens)
writer.add_token_types(vocab_field('tokenizer.ggml.token_type'))
writer.add_token_merges(vocab_field('tokenizer.ggml.merges'))
writer.add_bos_token_id(vocab_field('tokenizer.ggml.bos_token_id'))
writer.add_eos_token_id(IM_END)
writer.add_pad_token_id(vocab_field('tokenizer.ggml.padding_token_id'))
writer.add_add_bos_token(False)
writer.add_chat_template(chat_template)

random = np.random.default_rng(20240601)


def weights(rows, cols):
    """A [rows, cols] F16 matrix, small enough that activations stay finite through 30 layers."""
    return (random.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)


def ones(n):
    return np.ones(n, dtype=np.float32)


def zeros(n):
    return np.zeros(n, dtype=np.float32)


writer.add_tensor('token_embd.weight', weights(len(tokens), WIDTH))
writer.add_tensor('output_norm.weight', ones(WIDTH))
for layer in range(LAYERS):
    block = f'blk.{layer}.'
    for name, value in (
        ('attn_norm.weight', ones(WIDTH)),
        ('attn_q.weight', weights(WIDTH, WIDTH)),
        ('attn_q.bias', zeros(WIDTH)),
        ('attn_k.weight', weights(KV_WIDTH, WIDTH)),
        ('attn_k.bias', zeros(KV_WIDTH)),
        ('attn_v.weight', weights(KV_WIDTH, WIDTH)),
        ('attn_v.bias', zeros(KV_WIDTH)),
        ('attn_output.weight', weights(WIDTH, WIDTH)),
        ('ffn_norm.weight', ones(WIDTH)),
        ('ffn_gate.weight', weights(FEED_FORWARD, WIDTH)),
        ('ffn_up.weight', weights(FEED_FORWARD, WIDTH)),
        ('ffn_down.weight', weights(WIDTH, FEED_FORWARD)),
    ):
        writer.add_tensor(block + name, value)

writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(f'wrote {out}: {len(tokens)} tokens, {LAYERS} layers')
