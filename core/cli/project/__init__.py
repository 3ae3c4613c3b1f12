"""chattts-studio-cli project: the command (command.py) and its checks by speech recognition
and by voice (checks.py)."""
