#!/usr/bin/env bash
# Runs the real window on a virtual X display (Xvfb) and saves docs/screenshot.png for the README.
#   docs/screenshot.sh [extra app options, e.g. --presentation or --theme dark]
# It opens docs/screenshot-session.json: "I have a red car." in en-fr, cross-attention of layer 2, head 5 (J→I, ai→have, une→a, voiture→car, rouge→red),
# at the step that predicts "rouge".
# Needs Debian packages: apt-get install -y xvfb libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0
# (tests/visualizer/test_app_process.py also drives the window with xdotool and imagemagick's import).
set -euo pipefail
cd "$(dirname "$0")/.."
unset QT_QPA_PLATFORM
# fresh preferences: the picture shows the default theme and layout, not this machine's last session
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/attention-visualizer \
    --session docs/screenshot-session.json --screenshot docs/screenshot.png "$@"
