#!/bin/sh
# Installs the real coding-agent CLIs from the npm registry into a cache, one folder per
# package, and prints "<engine> <binary path>" per line on stdout (progress goes to stderr).
#
#   conformance/engines/install.sh [claude] [codex] [opencode] [pi]   (default: all four)
#
# MOSH_ENGINES_CACHE overrides the cache root (default $HOME/.cache/mosh-engines).
# A package whose folder already holds the pinned version is reused, so a second run is instant.
# Versions are pinned to the ones recorded in shared/facts/engines.md §8; override one with
# e.g. MOSH_ENGINE_VERSION_CODEX=0.172.0. pi stays on 0.73.x: its 1.x line needs Node >= 22.
set -eu

cache="${MOSH_ENGINES_CACHE:-${HOME:?HOME is unset; set HOME or MOSH_ENGINES_CACHE}/.cache/mosh-engines}"

command -v npm >/dev/null 2>&1 || {
	echo "install.sh: npm not found; install Node.js 20+ (it ships npm) and retry" >&2
	exit 5
}

# engine -> npm package, pinned version, binary name under node_modules/.bin
spec() {
	case "$1" in
	claude) echo "@anthropic-ai/claude-code ${MOSH_ENGINE_VERSION_CLAUDE:-2.1.332} claude" ;;
	codex) echo "@openai/codex ${MOSH_ENGINE_VERSION_CODEX:-0.171.0} codex" ;;
	opencode) echo "opencode-ai ${MOSH_ENGINE_VERSION_OPENCODE:-1.18.33} opencode" ;;
	pi) echo "@mariozechner/pi-coding-agent ${MOSH_ENGINE_VERSION_PI:-0.73.1} pi" ;;
	*)
		echo "install.sh: unknown engine '$1'; choose from claude codex opencode pi" >&2
		exit 1
		;;
	esac
}

installed_version() { # dir pkg
	node -e 'try{console.log(require(process.argv[1]).version)}catch(e){}' \
		"$1/node_modules/$2/package.json" 2>/dev/null || true
}

install_one() {
	engine="$1"
	# shellcheck disable=SC2046
	set -- $(spec "$engine")
	pkg="$1" version="$2" bin="$3"
	dir="$cache/$(echo "$pkg" | tr '/@' '__')"
	if [ "$(installed_version "$dir" "$pkg")" = "$version" ] && [ -x "$dir/node_modules/.bin/$bin" ]; then
		echo "install.sh: $engine: reusing $pkg@$version in $dir" >&2
	else
		echo "install.sh: $engine: npm install $pkg@$version into $dir" >&2
		start=$(date +%s)
		mkdir -p "$dir"
		[ -f "$dir/package.json" ] || printf '{"name":"mosh-engine-%s","private":true}\n' "$engine" >"$dir/package.json"
		if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$pkg@$version" >&2); then
			echo "install.sh: $engine: npm install failed; check that the npm registry is reachable (npm ping) and retry" >&2
			exit 5
		fi
		end=$(date +%s)
		size=$(du -sm "$dir" | cut -f1)
		echo "install.sh: $engine: installed in $((end - start))s, ${size} MB on disk" >&2
	fi
	echo "$engine $dir/node_modules/.bin/$bin"
}

[ $# -gt 0 ] || set -- claude codex opencode pi
for engine in "$@"; do
	install_one "$engine"
done
