#!/bin/sh
# Installs what the integration tests need beyond Go: Debian's chromium for
# the report's browser tests and Debian's prometheus for the /metrics export
# test (it scrapes a live run and is queried back), and Debian's influxdb
# (1.6) for the live InfluxDB stream test (queried back during a run), and
# iproute2 (ip) for the distributed run's network-namespace test. Idempotent, and silent
# when everything is already there, so `make test` can run it every time.
# Needs root (or sudo) only when something is missing.
set -eu

missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v prometheus >/dev/null 2>&1 || missing="$missing prometheus"
command -v influxd >/dev/null 2>&1 || missing="$missing influxdb"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"

[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-test-deps: missing:$missing; install them with your package manager" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-test-deps: missing:$missing; run this script as root to install them" >&2
		exit 1
	fi
	sudo="sudo"
fi
echo "install-test-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
# shellcheck disable=SC2086 # $missing is a list of package names
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
