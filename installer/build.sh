#!/usr/bin/env bash
# Build the standalone one-folder app with PyInstaller: dist/kdesk/kdesk (run `dist/kdesk/kdesk --self-test`).
# Usage: installer/build.sh [--dist DIR] [--work DIR] [--no-test]
# Needs the app and its dependencies installed in the current Python, plus `pip install pyinstaller`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$root/dist
work=$root/build/pyinstaller
test=1
while [ $# -gt 0 ]; do
  case $1 in
    --dist) dist=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --no-test) test=0; shift ;;
    -h|--help) sed -n 2,4p "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-python3}
"$python" -m PyInstaller --version >/dev/null 2>&1 || { echo "build.sh: PyInstaller is missing: $python -m pip install pyinstaller" >&2; exit 1; }
start=$(date +%s)
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" "$root/installer/kdesk.spec"
end=$(date +%s)
echo "built $dist/kdesk in $((end - start)) s, $(du -sh "$dist/kdesk" | cut -f1)" >&2
if [ "$test" = 1 ]; then
  QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} "$dist/kdesk/kdesk" --self-test
fi
