package io.kvrouter.protocol.engine;

/**
 * How events inside a batch are encoded (the batch itself stays positional, as vLLM's does). See
 * {@code docs/kv-events.md}, section 2.
 */
public enum EventEncoding {
  /** {@code ["BlockStored", f1, f2, ...]}: vLLM up to PR #42892. */
  POSITIONAL,
  /** {@code {"type":"BlockStored", "field": ...}} with null fields omitted: vLLM ≥ ≈0.24. */
  MAP
}
