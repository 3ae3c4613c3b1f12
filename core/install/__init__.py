"""What the installers decide before anything is installed: whether this machine is supported,
which PyTorch build suits its NVIDIA card, and the commands that install the app.

Standard library only, so the installers can run it from the source tree with a bare managed
Python (bootstrap.py); the app itself uses it for the advice `doctor` and the Engine tab give.
"""
