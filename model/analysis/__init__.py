"""Analyses of a Trace with numpy alone (no torch, no Qt): per-head metrics, attention rollout."""
