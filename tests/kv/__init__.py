"""Conformance suite of the key/value layer (every backend)."""
