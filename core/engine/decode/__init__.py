"""Studio's own GPT decode loop over ChatTTS's modules: the loop (loop.py) over its slots and
step forms (slots.py), its jobs, per-row sampling, CUDA graphs and early (streamed) vocoding."""
