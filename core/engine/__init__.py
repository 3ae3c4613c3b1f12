"""Synthesis: the Engine (a model loaded on a device and precision), the pipeline and its
producers, requests and results, devices, live metrics, cancel tokens and the continuous batch."""
