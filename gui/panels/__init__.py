"""The window's panels: controls, editor, live VRAM/RTF plots, pronunciation dictionary and
speakers."""
