@echo off
rem Double-click to install ChatTTS Studio for this user (runs install.ps1 beside it).
powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0install.ps1" %*
set code=%errorlevel%
pause
exit /b %code%
