@echo off
rem Double-click to install ChatTTS Studio for this user (runs install.ps1 beside it).
powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0install.ps1" %*
set code=%errorlevel%
rem Pause only when started by a double click, so its window stays to be read: Explorer runs
rem cmd /c with this script's path; from a console or another script nothing waits for a key.
rem Delayed expansion reads the command line without running what is in it.
setlocal EnableDelayedExpansion
set "started=!CMDCMDLINE!"
if /i not "!started:/c=!"=="!started!" if /i not "!started:%~nx0=!"=="!started!" pause
endlocal & exit /b %code%
