# ChatTTS Studio for this Windows user: uv when it is missing, a Python of uv's own, the locked
# packages with the PyTorch build that suits this PC's NVIDIA card, and a Start-menu shortcut.
# The decisions live in core/install (Python, tested by the suite); this only finds uv.
$ErrorActionPreference = "Stop"
$root = (Resolve-Path (Join-Path $PSScriptRoot "..\..")).Path
$python = if ($env:CHATTTS_STUDIO_PYTHON) { $env:CHATTTS_STUDIO_PYTHON } else { "3.13" }
if (-not (Get-Command uv -ErrorAction SilentlyContinue)) {
    Write-Host "Installing uv (https://docs.astral.sh/uv/) for this user..."
    powershell -NoProfile -ExecutionPolicy ByPass -Command "irm https://astral.sh/uv/install.ps1 | iex"
    $env:Path = "$env:USERPROFILE\.local\bin;$env:Path"
}
uv run --no-project --python $python "$root\core\install\bootstrap.py" @args
exit $LASTEXITCODE
