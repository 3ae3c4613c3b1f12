"""The voice check: how alike two clips' voices are, by a speaker-verification network's
embeddings (CAM++ through sherpa-onnx), and the verdict same/different at one threshold
measured on real speech (docs/voice-check.md). No Qt."""
