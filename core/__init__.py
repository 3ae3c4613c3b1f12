"""ChatTTS Studio's engine: models, devices, synthesis, speakers and audio, with no Qt."""

SAMPLE_RATE = 24_000
# One GPT step makes 4 codes = 2 mel frames x hop 256 = 512 samples (chattts.md).
SAMPLES_PER_STEP = 512
STEPS_PER_SECOND = SAMPLE_RATE / SAMPLES_PER_STEP  # 46.875
