//! Reading golden conformance cases (`../shared/golden/*.jsonl`).
