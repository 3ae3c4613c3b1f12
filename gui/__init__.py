"""ChatTTS Studio's desktop window: PySide6 widgets that show and drive `core`."""
