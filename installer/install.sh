#!/usr/bin/env bash
# Install Knowledge Desk on Linux or macOS: a virtual environment, CPU PyTorch, the app, an app
# launcher, and optionally the big models.
#
# Usage: installer/install.sh [options]
#   --prefix DIR        where the virtual environment goes (default: $KDESK_PREFIX or
#                       ~/.local/share/knowledge-desk); the app's data stays in its own folder
#   --python PY         the Python (3.11+) to build the environment with (default: python3)
#   --cuda              install PyTorch with CUDA (Linux: the PyPI build) instead of the CPU build
#   --torch-index URL   take PyTorch from this package index (default: the PyTorch CPU index)
#   --no-torch-index    let pip find PyTorch by itself (a machine with a local torch wheel or
#                       its own mirror); also KDESK_NO_TORCH_INDEX=1
#   --torch-spec SPEC   the torch requirement (default: torch; e.g. torch==2.13.0)
#   --system-site-packages  let the environment see packages already installed in PY
#   --editable          install the checkout in editable mode (developers)
#   --with-models       also download the optional models (kdesk models fetch all; ~3.5 GB)
#   --no-launcher       do not create the menu entry / app launcher
#   --no-system-libs    Linux: only print the command that installs the system libraries the window
#                       needs (Qt's X11 platform, desktop_app/core/qt_xcb_libs.txt) instead of
#                       installing the missing ones (as root, or with sudo from a terminal)
#   --dry-run           print the environment, pip and download commands instead of running them
#                       (the launcher is still written, so its creation can be checked)
#   -h, --help          this text
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
prefix=${KDESK_PREFIX:-${XDG_DATA_HOME:-$HOME/.local/share}/knowledge-desk}
python=python3
cuda=0
torch_index=${KDESK_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
no_torch_index=${KDESK_NO_TORCH_INDEX:-0}
torch_spec=torch
system_site=0
editable=0
with_models=0
launcher=1
system_libs=1
dry_run=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "install.sh: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case $1 in
    --prefix) need "$@"; prefix=$2; shift 2 ;;
    --python) need "$@"; python=$2; shift 2 ;;
    --cuda) cuda=1; shift ;;
    --torch-index) need "$@"; torch_index=$2; shift 2 ;;
    --no-torch-index) no_torch_index=1; shift ;;
    --torch-spec) need "$@"; torch_spec=$2; shift 2 ;;
    --system-site-packages) system_site=1; shift ;;
    --editable) editable=1; shift ;;
    --with-models) with_models=1; shift ;;
    --no-launcher) launcher=0; shift ;;
    --no-system-libs) system_libs=0; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

os=$(uname -s)
venv=$prefix/venv
kdesk=$venv/bin/kdesk

run() {
  if [ "$dry_run" = 1 ]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}
say() { echo "==> $*" >&2; }

# --- Python -----------------------------------------------------------------------------------
if [ "$dry_run" = 0 ]; then
  command -v "$python" >/dev/null 2>&1 || die "$python not found: install Python 3.11 or newer, or pass --python"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "$("$python" -V 2>&1) is too old: Knowledge Desk needs Python 3.11 or newer (--python PY)"
fi

started=$(date +%s)

# --- the window's system libraries (Linux): Qt's X11 platform needs them, pip cannot install them ---
# One list (soname, then the apt-get, dnf and pacman package), shared with .ci/run and kdesk's own
# start-up check, so what CI tests is what is installed here.
xcb_list=$src/desktop_app/core/qt_xcb_libs.txt
ldcache=
[ "$os" = Linux ] && ldcache=$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)
if [ -z "$ldcache" ]; then
  [ "$os" = Linux ] && say "note: cannot read the library cache (ldconfig -p); not checking the window's system libraries"
elif [ -f "$xcb_list" ]; then
  manager=
  for m in apt-get dnf pacman; do command -v "$m" >/dev/null 2>&1 && { manager=$m; break; }; done
  missing=() packages=()
  while read -r soname apt dnf pacman _; do
    case $soname in ''|'#'*) continue ;; esac
    grep -q "^[[:space:]]*$soname " <<<"$ldcache" && continue
    missing+=("$soname")
    case $manager in apt-get) pkg=$apt ;; dnf) pkg=$dnf ;; pacman) pkg=$pacman ;; *) pkg= ;; esac
    [ -n "$pkg" ] && [[ " ${packages[*]} " != *" $pkg "* ]] && packages+=("$pkg")
  done <"$xcb_list"
  if [ ${#missing[@]} -eq 0 ]; then
    say "system libraries for the window: all present"
  else
    say "system libraries the window needs, missing: ${missing[*]}"
    case $manager in
      apt-get) install_cmd=(apt-get install -y --no-install-recommends "${packages[@]}") ;;
      dnf) install_cmd=(dnf install -y "${packages[@]}") ;;
      pacman) install_cmd=(pacman -S --needed --noconfirm "${packages[@]}") ;;
      *) install_cmd=() ;;
    esac
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    if [ ${#install_cmd[@]} -eq 0 ]; then
      say "no apt-get, dnf or pacman here: install the packages that provide ${missing[*]} (see $xcb_list)"
    elif [ "$system_libs" = 1 ] && { [ ${#sudo[@]} -eq 0 ] || { command -v sudo >/dev/null 2>&1 && [ -t 0 ]; }; }; then
      [ "$manager" = apt-get ] && { run "${sudo[@]}" apt-get update -qq || true; }
      run "${sudo[@]}" "${install_cmd[@]}" ||
        say "could not install them; the window will not start until you run: ${sudo[*]} ${install_cmd[*]}"
    else
      say "install them (the command-line tools work without them; the window does not): ${sudo[*]:+${sudo[*]} }${install_cmd[*]}"
    fi
  fi
fi

say "virtual environment: $venv"
venv_args=()
[ "$system_site" = 1 ] && venv_args+=(--system-site-packages)
run "$python" -m venv "${venv_args[@]}" "$venv"
pip=("$venv/bin/python" -m pip)
run "${pip[@]}" install --upgrade pip

# --- PyTorch: the CPU build by default (the PyPI build for Linux bundles several GB of CUDA) ---------
torch_args=(install "$torch_spec")
if [ "$cuda" = 1 ]; then
  say "PyTorch with CUDA"
  [ "$os" = Darwin ] && say "note: macOS has no CUDA; the PyPI build uses the CPU and Apple's GPU (MPS)"
elif [ "$no_torch_index" = 1 ] || [ "$os" = Darwin ]; then
  say "PyTorch as pip finds it"  # macOS wheels on PyPI are CPU builds already
else
  say "PyTorch, CPU build, from $torch_index"
  torch_args+=(--index-url "$torch_index")
fi
run "${pip[@]}" "${torch_args[@]}"

# --- the app ------------------------------------------------------------------------------------
if [ -f "$src/pyproject.toml" ]; then
  if [ "$editable" = 1 ]; then
    run "${pip[@]}" install -e "$src"
  else
    run "${pip[@]}" install "$src"
  fi
else
  run "${pip[@]}" install knowledge-desk
fi

if [ "$with_models" = 1 ]; then
  say "optional models (resumable: run the installer again if it is interrupted)"
  run "$kdesk" models fetch all
fi

# --- launcher -----------------------------------------------------------------------------------
if [ "$launcher" = 1 ]; then
  mkdir -p "$HOME/.local/bin"
  ln -sf "$kdesk" "$HOME/.local/bin/kdesk"
  if [ "$os" = Darwin ]; then
    app="$HOME/Applications/Knowledge Desk.app"
    mkdir -p "$app/Contents/MacOS"
    cat >"$app/Contents/Info.plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
  <key>CFBundleName</key><string>Knowledge Desk</string>
  <key>CFBundleIdentifier</key><string>org.knowledgedesk.kdesk</string>
  <key>CFBundleExecutable</key><string>kdesk</string>
  <key>CFBundlePackageType</key><string>APPL</string>
</dict></plist>
PLIST
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$kdesk" >"$app/Contents/MacOS/kdesk"
    chmod +x "$app/Contents/MacOS/kdesk"
    say "launcher: $app"
  else
    apps=${XDG_DATA_HOME:-$HOME/.local/share}/applications
    mkdir -p "$apps"
    desktop=$apps/knowledge-desk.desktop
    cat >"$desktop" <<DESKTOP
[Desktop Entry]
Type=Application
Version=1.0
Name=Knowledge Desk
GenericName=Knowledge assistant
Comment=Ask questions about your documents and photos, offline
Exec="$kdesk"
Icon=accessories-dictionary
Terminal=false
Categories=Office;Education;
Keywords=knowledge;documents;search;assistant;
StartupNotify=true
DESKTOP
    chmod +x "$desktop"
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" >/dev/null 2>&1 || true
    say "launcher: $desktop"
  fi
fi

say "done in $(($(date +%s) - started)) s. Start the app with: $kdesk   (check it: $kdesk --self-test)"
