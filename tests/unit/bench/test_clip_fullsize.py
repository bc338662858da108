"""`kdesk bench fullsize --model clip-vit-base-patch32`: CLIP's vocabulary is built from OpenAI's BPE
file as OpenAI's simple_tokenizer.py builds it (the full-size folder itself, 605 MB, is built only by
the bench command; issue 36 item 1)."""

from __future__ import annotations

import gzip

from kdesk_lab.fullsize import ARCHS, clip_vocabulary


def test_clip_vocabulary_is_bytes_then_merges_then_the_two_specials(tmp_path):
    from transformers import CLIPTokenizer

    bpe = tmp_path / "bpe_simple_vocab_16e6.txt.gz"
    bpe.write_bytes(gzip.compress(b'"bpe_simple_vocab_16e6.txt#version: 0.2\na r</w>\np ar</w>\n'))
    vocab, merges = clip_vocabulary(bpe)
    assert merges == [("a", "r</w>"), ("p", "ar</w>")]
    assert len(vocab) == 512 + 2 + 2 and list(vocab)[-2:] == ["<|startoftext|>", "<|endoftext|>"]
    tokenizer = CLIPTokenizer(vocab=vocab, merges=merges)
    assert tokenizer.tokenize("par") == ["par</w>"]
    assert tokenizer("par")["input_ids"] == [
        vocab["<|startoftext|>"],
        vocab["par</w>"],
        vocab["<|endoftext|>"],
    ]


def test_without_the_bpe_file_each_character_is_a_token_and_the_table_keeps_its_size():
    vocab, merges = clip_vocabulary(None)
    assert merges == [] and len(vocab) == 514
    assert ARCHS["clip-vit-base-patch32"]["config"]["text_config"]["vocab_size"] == 49408
