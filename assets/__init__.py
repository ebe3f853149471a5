"""Bundled data: model folders under models/, example sentences. Not code."""
