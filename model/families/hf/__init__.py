"""Hugging Face model families: folders written by `save_pretrained` (config.json, *.safetensors, tokenizer files)
and model ids already in the local Hugging Face cache, opened offline and traced with the model's own modules.

    folder.py    what a folder must hold (safetensors only, a tokenizer, a model that fits in memory), model ids
                 found in the cache, transformers imported lazily
    loaded.py    HFModel: the surface the window and the commands use (name, path, schema, family, lock, cfg, ...)
    tracing.py   one traced pass: attention from `attn_implementation="eager"`, q/k/v from the model's own
                 projections, norm statistics from forward hooks (removed in a finally), and the generation run
    gpt2.py, gpt_neo.py, gpt_neox.py, phi.py, opt.py, bert.py, roberta.py, distilbert.py, marian.py, bart.py,
    t5.py, llama.py, gemma.py
                 one module a family: its schema and where its parts sit

Nothing here imports torch or transformers until a model is opened.
"""
