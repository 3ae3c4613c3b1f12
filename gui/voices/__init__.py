"""Voices in the window: auditioning random speakers, a voice from a recording, and their jobs."""
