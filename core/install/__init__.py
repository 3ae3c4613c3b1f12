"""What the installers decide before anything is installed: whether this machine is supported, which
PyTorch build suits its card, and the commands that install the app. Standard library only, so
bootstrap.py runs it from a bare Python.
"""
