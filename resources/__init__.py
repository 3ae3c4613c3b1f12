"""ChatTTS Studio's data files (icon, desktop entry, sample texts), installed as the package
`chattts_studio.resources`; gui/resources.py finds them with importlib.resources."""
