"""Studio's own GPT decode loop over ChatTTS's modules: the loop, its jobs, per-row sampling,
CUDA graphs and early (streamed) vocoding."""
