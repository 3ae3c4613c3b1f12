"""ONNX Runtime as a second engine for the GPT's decode step (see docs/architecture.md)."""
