<#
.SYNOPSIS
Install Knowledge Desk on Windows: a virtual environment, CPU PyTorch, the app, a Start-menu
shortcut, and optionally the big models.

.EXAMPLE
powershell -ExecutionPolicy Bypass -File installer\install.ps1
powershell -ExecutionPolicy Bypass -File installer\install.ps1 -Cuda -WithModels

.PARAMETER Prefix
Where the virtual environment goes (default: %LOCALAPPDATA%\KnowledgeDesk).
.PARAMETER Python
The Python launcher or python.exe to build the environment with (default: "py -3.11" if the
launcher exists, else python). Python 3.11 or newer.
.PARAMETER Cuda
Install PyTorch with CUDA from -CudaIndex instead of the CPU build.
.PARAMETER TorchIndex
Package index for the CPU build (default: the PyTorch CPU index).
.PARAMETER CudaIndex
Package index for the CUDA build (default: the PyTorch CUDA 12.8 index).
.PARAMETER NoTorchIndex
Let pip find PyTorch by itself (a local wheel or the machine's own mirror).
.PARAMETER TorchSpec
The torch requirement (default: torch).
.PARAMETER WithModels
Also download the optional models (kdesk models fetch all; about 3.5 GB).
.PARAMETER NoShortcut
Do not create the Start-menu shortcut.
.PARAMETER DryRun
Print the environment, pip and download commands instead of running them.
#>
[CmdletBinding()]
param(
    [string]$Prefix = (Join-Path $env:LOCALAPPDATA "KnowledgeDesk"),
    [string]$Python = "",
    [switch]$Cuda,
    [string]$TorchIndex = "https://download.pytorch.org/whl/cpu",
    [string]$CudaIndex = "https://download.pytorch.org/whl/cu128",
    [switch]$NoTorchIndex,
    [string]$TorchSpec = "torch",
    [switch]$WithModels,
    [switch]$NoShortcut,
    [switch]$DryRun
)
$ErrorActionPreference = "Stop"
$Src = Split-Path -Parent $PSScriptRoot
$Venv = Join-Path $Prefix "venv"
$VenvPython = Join-Path $Venv "Scripts\python.exe"
$Kdesk = Join-Path $Venv "Scripts\kdesk.exe"
$Started = Get-Date

function Say([string]$Text) { Write-Host "==> $Text" }

function Invoke-Step([string]$Exe, [string[]]$Arguments) {
    if ($DryRun) { Write-Host ("+ " + $Exe + " " + ($Arguments -join " ")); return }
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "failed ($LASTEXITCODE): $Exe $($Arguments -join ' ')" }
}

# --- Python ------------------------------------------------------------------------------------
$PyArgs = @()
if (-not $Python) {
    if (Get-Command py -ErrorAction SilentlyContinue) { $Python = "py"; $PyArgs = @("-3.11") }
    else { $Python = "python" }
}
if (-not $DryRun) {
    if (-not (Get-Command $Python -ErrorAction SilentlyContinue)) {
        throw "$Python not found: install Python 3.11 or newer from python.org, or pass -Python"
    }
    & $Python @PyArgs -c "import sys; sys.exit(sys.version_info < (3, 11))"
    if ($LASTEXITCODE -ne 0) { throw "Knowledge Desk needs Python 3.11 or newer (-Python)" }
}

Say "virtual environment: $Venv"
Invoke-Step $Python ($PyArgs + @("-m", "venv", $Venv))
Invoke-Step $VenvPython @("-m", "pip", "install", "--upgrade", "pip")

# --- PyTorch: CPU build by default --------------------------------------------------------------
$TorchArgs = @("-m", "pip", "install", $TorchSpec)
if ($Cuda) { Say "PyTorch with CUDA from $CudaIndex"; $TorchArgs += @("--index-url", $CudaIndex) }
elseif ($NoTorchIndex) { Say "PyTorch as pip finds it" }
else { Say "PyTorch, CPU build, from $TorchIndex"; $TorchArgs += @("--index-url", $TorchIndex) }
Invoke-Step $VenvPython $TorchArgs

# --- the app -------------------------------------------------------------------------------------
if (Test-Path (Join-Path $Src "pyproject.toml")) { Invoke-Step $VenvPython @("-m", "pip", "install", $Src) }
else { Invoke-Step $VenvPython @("-m", "pip", "install", "knowledge-desk") }

if ($WithModels) {
    Say "optional models (resumable: run the installer again if it is interrupted)"
    Invoke-Step $Kdesk @("models", "fetch", "all")
}

# --- Start-menu shortcut ---------------------------------------------------------------------------
if (-not $NoShortcut) {
    $Programs = [Environment]::GetFolderPath("Programs")  # ...\Start Menu\Programs
    $Link = Join-Path $Programs "Knowledge Desk.lnk"
    # pythonw: no console window behind the app
    $Pythonw = Join-Path $Venv "Scripts\pythonw.exe"
    if ($DryRun) { Write-Host "+ shortcut $Link -> $Pythonw -m desktop_app.cli.main" }
    else {
        $Shell = New-Object -ComObject WScript.Shell
        $Shortcut = $Shell.CreateShortcut($Link)
        $Shortcut.TargetPath = $Pythonw
        $Shortcut.Arguments = "-m desktop_app.cli.main"
        $Shortcut.WorkingDirectory = $env:USERPROFILE
        $Shortcut.Description = "Knowledge Desk: ask questions about your documents and photos, offline"
        $Shortcut.Save()
        Say "Start-menu shortcut: $Link"
    }
}

$Seconds = [int]((Get-Date) - $Started).TotalSeconds
Say "done in $Seconds s. Start the app from the Start menu or with: $Kdesk   (check it: $Kdesk --self-test)"
