#!/usr/bin/env bash
# Set up a fresh machine for prefect-webtask: a virtual environment with the project installed, and a
# Chromium for Playwright. Safe to run again: it only does what is missing.
#   scripts/setup.sh          install the project with the demo extra (the demo marketplace)
#   scripts/setup.sh --dev    install the project with the test extras (the demo extra included), and
#                             the widget libraries the widget tests serve (npm ci in tests/core/widgets)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
extras="demo"
[ "${1:-}" = "--dev" ] && extras="dev,demo"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

python_bin="${PYTHON:-}"
if [ -z "$python_bin" ]; then
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      python_bin="$candidate"; break
    fi
  done
fi
if [ -z "$python_bin" ]; then
  say "Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)."; exit 1
fi

if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $python_bin"
  "$python_bin" -m venv .venv
fi

# The real third-party applications the replay tests drive (tests/apps/<app>/requirements.txt) each
# get a virtual environment of their own under .venv/apps/<app>: their Django versions differ from one
# another, and the test fixtures start them as separate processes. Installed again only when the
# requirements file changed; `manage.py check` then shows the application starts. An application that
# needs Debian packages beyond Python's lists them in tests/apps/<app>/debian-packages.txt (one a line,
# '#' comments): installed with apt-get when root, else named (skipped where there is no dpkg).
# The pip installs run side by side, in the background while the project, Chromium and the widget
# libraries are installed (a fresh machine spends most of its set-up waiting on downloads and builds);
# each writes its own log, and a failure of any fails the set-up after all have ended.
app_jobs=()
install_app() {  # <app> <requirements> <venv> <digest>: pip install, then manage.py check
  local app="$1" requirements="$2" venv="$3" req_digest="$4" log="$3/install.log" check_root
  [ -x "$venv/bin/python" ] || "$python_bin" -m venv "$venv"
  if ! { "$venv/bin/python" -m pip install --upgrade pip && "$venv/bin/python" -m pip install -r "$requirements"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2; say "installing $app failed; the whole log is in $log"; return 1
  fi
  check_root="$(mktemp -d)"
  if ! (cd "tests/apps/$app" && APP_ROOT="$check_root" "$root/$venv/bin/python" manage.py check) >>"$log" 2>&1; then
    rm -rf "$check_root"; tail -n 40 "$log" >&2; say "the $app application does not start (manage.py check); the log is in $log"; return 1
  fi
  rm -rf "$check_root"
  echo "$req_digest" > "$venv/.webtask-installed"
}
if [ "${1:-}" = "--dev" ]; then
  for requirements in tests/apps/*/requirements.txt; do
    [ -f "$requirements" ] || continue
    app="$(basename "$(dirname "$requirements")")"
    venv=".venv/apps/$app"
    packages="tests/apps/$app/debian-packages.txt"
    if [ -f "$packages" ] && command -v dpkg >/dev/null 2>&1; then
      missing=""
      for package in $(sed 's/#.*//' "$packages"); do
        dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
      done
      if [ -n "$missing" ]; then
        if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
          say "installing Debian's$missing for the $app application"
          export DEBIAN_FRONTEND=noninteractive
          apt-get update -qq
          # shellcheck disable=SC2086  # one word a package
          apt-get install -y -qq --no-install-recommends $missing >/dev/null
        else
          say "The $app application needs Debian's$missing (e.g. 'sudo apt-get install$missing'); then run this again."
          exit 1
        fi
      fi
    fi
    req_digest="$(sha256sum "$requirements" | cut -d' ' -f1)"
    if [ "$(cat "$venv/.webtask-installed" 2>/dev/null)" != "$req_digest" ]; then
      say "installing the $app application for the replay tests into $venv (in the background)"
      mkdir -p "$venv"
      install_app "$app" "$requirements" "$venv" "$req_digest" &
      app_jobs+=("$!")
    fi
  done
fi

# Reinstall only when pyproject.toml changed or an extra is wanted that was not installed with it.
# The stamp is "<sha256 of pyproject.toml> <extras installed, comma-separated>"; any other content
# (an older stamp, a half-written one) does not match, so the project is installed again.
stamp=".venv/.webtask-installed"
digest="$(sha256sum pyproject.toml | cut -d' ' -f1)"
stamp_digest="" stamp_extras=""
[ -f "$stamp" ] && read -r stamp_digest stamp_extras < "$stamp" || true
installed="" needed=1
if [ "$stamp_digest" = "$digest" ]; then installed="$stamp_extras" needed=0; fi
for extra in ${extras//,/ }; do
  case ",$installed," in *",$extra,"*) ;; *) needed=1; installed="${installed:+$installed,}$extra" ;; esac
done
if [ "$needed" = 1 ]; then
  say "installing prefect-webtask[$installed] into .venv"
  # Build-backend chatter goes to a log; it is shown only when the install fails.
  log=".venv/install.log"
  if ! { .venv/bin/python -m pip install --upgrade pip && .venv/bin/python -m pip install -e ".[$installed]"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2; say "installing failed; the whole log is in $log"; exit 1
  fi
  echo "$digest $installed" > "$stamp"
fi

# Chromium: WEBTASK_CHROMIUM_PATH, else chromium on PATH, else a Playwright-managed one
# (all three checked by `webtask browser-path`), else Debian's package when we are root.
if ! .venv/bin/webtask browser-path >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "no Chromium found; installing Debian's chromium with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-liberation >/dev/null
  else
    .venv/bin/webtask browser-path || true
    say "Install Chromium (e.g. 'sudo apt-get install chromium') or set WEBTASK_CHROMIUM_PATH, then run this again."
    exit 1
  fi
fi
say "Chromium: $(.venv/bin/webtask browser-path)"
# Headless runs use Chromium's headless shell when there is one (browser/chromium.py): far less CPU a
# page than the full browser's --headless. Debian ships it beside its chromium package.
if ! command -v chromium-headless-shell >/dev/null 2>&1 && [ -z "${WEBTASK_CHROMIUM_PATH:-}" ] \
    && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && dpkg -s chromium >/dev/null 2>&1; then
  say "installing Debian's chromium-headless-shell for headless runs"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null \
    || say "chromium-headless-shell could not be installed; headless runs use the full chromium (more CPU)"
fi

# The widget tests serve real widget libraries from the npm registry, at the versions pinned in
# tests/core/widgets/package-lock.json (never committed). Installed again only when the lock changed.
if [ "${1:-}" = "--dev" ]; then
  widgets="tests/core/widgets"
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      say "no npm found; installing Debian's npm with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends npm >/dev/null
    else
      say "Install npm (e.g. 'sudo apt-get install npm'), then run this again: the widget tests need it."
      exit 1
    fi
  fi
  lock_digest="$(sha256sum "$widgets/package-lock.json" | cut -d' ' -f1)"
  lock_stamp="$widgets/node_modules/.webtask-installed"
  if [ "$(cat "$lock_stamp" 2>/dev/null)" != "$lock_digest" ]; then
    say "installing the widget libraries for the tests (npm ci in $widgets)"
    if ! (cd "$widgets" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
      say "npm ci failed in $widgets (see above)"; exit 1
    fi
    echo "$lock_digest" > "$lock_stamp"
  fi
fi

# The applications' installs started above: each must have ended well.
failed=0
for job in "${app_jobs[@]}"; do wait "$job" || failed=1; done
[ "$failed" = 0 ] || { say "an application for the replay tests did not install (see above)"; exit 1; }
