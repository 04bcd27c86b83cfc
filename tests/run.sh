#!/usr/bin/env bash
# Runs the whole biotape test suite: installs the Debian packages it needs (as root, on Debian),
# configures, builds and runs ctest. Usage:
#   bash tests/run.sh [--werror] [--sanitize] [--build-dir DIR] [-- CTEST_ARGS...]
# Tests that need root and eBPF skip (exit 77) where they cannot run; with BIOTAPE_REQUIRE_BPF=1
# in the environment they fail instead (CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-test
cmake_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--werror) cmake_args+=(-DBIOTAPE_WERROR=ON) ;;
	--sanitize) cmake_args+=(-DBIOTAPE_SANITIZE=ON) ;;
	--build-dir) build=$2; shift ;;
	--) shift; break ;;
	*) echo "tests/run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	mapfile -t pkgs < <(grep -v '^#' .ci/debian-packages)
	missing=()
	for p in "${pkgs[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "tests/run.sh: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	fi
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_args[@]}"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure --no-tests=error -j"$(nproc)" "$@"
