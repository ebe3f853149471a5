"""BART (post-norm) and mBART (pre-norm, with a final norm in each stack): encoder-decoder, LayerNorm, learned
positions, the embedding scaled inside its module when the config says so, GELU feed-forward."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import encoder_decoder
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)
from .marian import seq2seq_map

NAME, TITLE = "hf.bart", "BART/mBART"
AUTO = "AutoModelForSeq2SeqLM"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") in ("bart", "mbart")


def schema_of_config(c: dict) -> Schema:
    mbart = c.get("model_type") == "mbart"
    return encoder_decoder(c.get("model_type", "bart"), c.get("encoder_layers", 12), c.get("decoder_layers", 12),
                           c.get("d_model", 1024), c.get("encoder_attention_heads", 16), c.get("encoder_ffn_dim", 4096),
                           {"pad": "<pad>", "bos": "<s>", "eos": "</s>"}, norm_place="pre" if mbart else "post",
                           positions="learned", scale_embedding=bool(c.get("scale_embedding", False)),
                           tied=bool(c.get("tie_word_embeddings", True)),        # plus final_logits_bias
                           activation=str(c.get("activation_function", "gelu")).upper(),
                           embed_norm=True, position_offset=2)    # layernorm_embedding; P's rows start at 2


schema_of_folder, open = interface(__name__)


def model_map(model):
    m = model.model
    return seq2seq_map(m.encoder, m.decoder, final_norms=model.config.model_type == "mbart")
