#!/usr/bin/env bash
# Runs the real window on a virtual X display (Xvfb) and saves docs/screenshot.png for the README.
# Needs Debian packages: apt-get install -y xvfb libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0
set -euo pipefail
cd "$(dirname "$0")/.."
sentence=${1:-"The red car is fast."}
unset QT_QPA_PLATFORM
xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/attention-visualizer \
    --sentence "$sentence" --screenshot docs/screenshot.png
