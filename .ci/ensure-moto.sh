#!/usr/bin/env bash
# Makes sure moto_server (Python moto 5, the emulated AWS of the integration tests) runs on
# this machine, installing it from what these machines can reach if it is missing.
# Exit 0: moto_server works. Exit 1: it could not be had; the message says what to do.
#
# What is reachable: the npm registry and Debian's archive; PyPI is not. pip still gets
# one short try because pip here also reads local wheel folders (pip config: find-links,
# extra-index-url) and a machine may have moto there.
set -uo pipefail

log() { echo "ensure-moto: $*" >&2; }

# `command -v` alone is fooled by a pyenv shim for a Python version without moto.
moto_runs() { command -v moto_server >/dev/null 2>&1 && timeout 60 moto_server --help >/dev/null 2>&1; }

moto_version() {
  local py
  for py in python3 python /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import moto' >/dev/null 2>&1; then
      "$py" -c 'import moto, sys; print(f"{moto.__version__} ({sys.executable})")'
      return 0
    fi
  done
  echo "unknown"
}

report_ok() {
  local version
  version="$(moto_version)"
  log "moto_server OK: $(command -v moto_server), moto ${version}"
  case "$version" in
    [0-4].*) log "WARNING: moto ${version%% *} is older than 5; S3 conditional writes (If-None-Match) need moto 5" ;;
  esac
  exit 0
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else return 1; fi; }

moto_runs && report_ok
log "moto_server not found or not runnable; trying to install it"

# 1. pip, briefly: no retries, short timeouts, so an unreachable index fails in seconds.
tried=""
for py in python3 /usr/bin/python3; do
  command -v "$py" >/dev/null 2>&1 || continue
  real="$(readlink -f "$(command -v "$py")")"
  case " $tried " in *" $real "*) continue ;; esac
  tried="$tried $real"
  if "$py" -m pip --version >/dev/null 2>&1; then
    log "trying: $py -m pip install 'moto[server]>=5'"
    timeout 300 "$py" -m pip install --quiet --retries 0 --timeout 15 'moto[server]>=5' >&2 && { hash -r; command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1; }
    moto_runs && report_ok
  fi
done

# 2. Debian: python3-moto exists in newer releases (not in bookworm). It may ship without
#    a moto_server script, so a wrapper around `python3 -m moto.server` stands in.
if command -v apt-get >/dev/null 2>&1; then
  as_root apt-get update -qq >&2 || log "apt-get update failed"
  candidate="$(apt-cache policy python3-moto 2>/dev/null | awk '/Candidate:/ {print $2}')"
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
    log "trying: apt-get install python3-moto (candidate $candidate) with its server dependencies"
    if as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-moto python3-flask python3-flask-cors >&2; then
      hash -r
      if ! moto_runs && /usr/bin/python3 -m moto.server --help >/dev/null 2>&1; then
        printf '#!/bin/sh\nexec /usr/bin/python3 -m moto.server "$@"\n' | as_root tee /usr/local/bin/moto_server >/dev/null
        as_root chmod +x /usr/local/bin/moto_server
        hash -r
      fi
      moto_runs && report_ok
    fi
  else
    log "Debian has no python3-moto for this release (apt-cache policy: candidate '${candidate:-none}')"
  fi
fi

log "FAILED: moto_server is not available and could not be installed from pip's reachable indexes or Debian."
log "The emulated-AWS integration tests need it. Install moto 5 by hand: pip install \"moto[server]\""
log "(or use a machine image that has it), then check with: moto_server --help"
exit 1
