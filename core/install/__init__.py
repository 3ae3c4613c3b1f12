"""What the installers decide before anything is installed: whether this machine is supported, which
PyTorch build suits its NVIDIA card, and the commands that install the app. Standard library only,
so a bare managed Python runs it from the source tree (bootstrap.py); `doctor` and the Engine tab
use it for their advice."""
