@echo off
rem Starts ChatTTS Studio from the checkout's .venv, which install.cmd made.
start "" "%~dp0..\..\.venv\Scripts\chattts-studio.exe" %*
