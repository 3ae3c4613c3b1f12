"""The local speech API (OpenAI's /v1/audio/speech): routes, who may call it, request fields,
streamed responses, errors and metrics."""
