# ChatTTS Studio for this Windows user: uv at its pinned version when it is missing (uv's
# installer from astral.sh, else uv from PyPI), a Python (a supported one already installed, else
# uv's own), the locked packages with the PyTorch build that suits this PC's NVIDIA card, and a
# Start-menu shortcut. The decisions live in core/install (Python, tested by the suite); this only
# finds uv and a Python.
$ErrorActionPreference = "Stop"
$ProgressPreference = "SilentlyContinue"  # Invoke-WebRequest is slow with its progress bar
# uv's version wherever the installers fetch it: the lock's (constraints.txt), also in install.sh.
$uvVersion = "0.13.9"
$uvInstaller = "https://astral.sh/uv/$uvVersion/install.ps1"
# The Pythons the app supports (pyproject's requires-python), newest first.
$supported = "3.14 3.13 3.12 3.11"
# -LiteralPath: a folder name with [ or ] is a name, not a wildcard.
$root = (Resolve-Path -LiteralPath (Join-Path $PSScriptRoot "..\..")).Path
$privateUv = Join-Path $root "build\uv"

function Find-Python {
    # The first supported Python installed: through the py launcher, else python on PATH.
    $ErrorActionPreference = "Continue"
    $check = "import sys; print(sys.executable) if '%d.%d' % sys.version_info[:2] in '$supported'.split() else sys.exit(1)"
    if (Get-Command py -ErrorAction SilentlyContinue) {
        foreach ($version in $supported.Split(" ")) {
            $exe = & py "-$version" -c $check 2>$null
            if ($LASTEXITCODE -eq 0 -and $exe) { return "$exe".Trim() }
        }
    }
    $python = Get-Command python -ErrorAction SilentlyContinue
    if ($python) {
        $exe = & $python.Source -c $check 2>$null
        if ($LASTEXITCODE -eq 0 -and $exe) { return "$exe".Trim() }
    }
    return $null
}

function Find-Uv {
    # uv at the pinned version: on PATH, or where an earlier run put it. Another version is left
    # alone (the user's own), and the pinned one is fetched beside this checkout instead.
    $ErrorActionPreference = "Continue"
    $onPath = Get-Command uv -ErrorAction SilentlyContinue
    $candidates = @()
    if ($onPath) { $candidates += $onPath.Source }
    $candidates += (Join-Path $privateUv "bin\uv.exe"), (Join-Path $privateUv "Scripts\uv.exe")
    foreach ($candidate in $candidates) {
        if (-not (Test-Path -LiteralPath $candidate)) { continue }
        $version = & $candidate --version 2>$null
        if ($LASTEXITCODE -eq 0 -and "$version" -match "^uv $([regex]::Escape($uvVersion))( |$)") {
            return $candidate
        }
    }
    return $null
}

function Get-UvFromAstral {
    # uv's own installer, pinned, downloaded to a file first: a failed download says so.
    $ErrorActionPreference = "Continue"
    $script = Join-Path ([System.IO.Path]::GetTempPath()) "uv-install-$uvVersion.ps1"
    try {
        Invoke-WebRequest -Uri $uvInstaller -OutFile $script -UseBasicParsing
    } catch {
        [Console]::Error.WriteLine("Could not download uv's installer from $uvInstaller ($($_.Exception.Message)).")
        return $null
    }
    Write-Host "Installing uv $uvVersion (https://docs.astral.sh/uv/) for this user..."
    # Into this checkout's build\uv; the user's PATH and any other uv stay as they are.
    $env:UV_INSTALL_DIR = Join-Path $privateUv "bin"
    $env:UV_NO_MODIFY_PATH = "1"
    powershell -NoProfile -ExecutionPolicy ByPass -File $script
    $code = $LASTEXITCODE
    Remove-Item -LiteralPath $script -ErrorAction SilentlyContinue
    if ($code -ne 0) {
        [Console]::Error.WriteLine("uv's installer from $uvInstaller failed; what it printed above says why.")
        return $null
    }
    return Find-Uv
}

function Get-UvFromPypi([string] $python) {
    # uv from PyPI at the pinned version, into a folder of this checkout.
    $ErrorActionPreference = "Continue"
    [Console]::Error.WriteLine("Installing uv $uvVersion from PyPI with $python instead...")
    & $python -m pip install --quiet --disable-pip-version-check --target $privateUv "uv==$uvVersion"
    if ($LASTEXITCODE -ne 0) { return $null }
    return Find-Uv
}

$python = Find-Python
if ($env:CHATTTS_STUDIO_PYTHON) {
    $runPython = $env:CHATTTS_STUDIO_PYTHON
} elseif ($python) {
    # A supported Python is installed: uv uses it and downloads none.
    $runPython = $python
    $env:UV_PYTHON_DOWNLOADS = "never"
} else {
    $runPython = "3.13"
}

$uv = Find-Uv
if (-not $uv) { $uv = Get-UvFromAstral }
if (-not $uv) {
    if (-not $python) {
        [Console]::Error.WriteLine("uv $uvVersion could not be downloaded and no supported Python ($supported) is installed to fetch it from PyPI; install uv $uvVersion (https://docs.astral.sh/uv/getting-started/installation/) or a supported Python, then run this again.")
        exit 2
    }
    $uv = Get-UvFromPypi $python
    if (-not $uv) {
        [Console]::Error.WriteLine("uv $uvVersion could not be downloaded from astral.sh nor installed from PyPI with $python (what pip printed above says why); install uv $uvVersion (https://docs.astral.sh/uv/getting-started/installation/), then run this again.")
        exit 2
    }
}
$env:UV = $uv
& $uv run --no-project --python $runPython (Join-Path $root "core\install\bootstrap.py") @args
exit $LASTEXITCODE
