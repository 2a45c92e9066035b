#!/usr/bin/env bash
# make mutate: gremlins (github.com/go-gremlins/gremlins, pinned by tools/mutate/go.mod) on the packages PKGS names
# (directories from the repository's root, space-separated), or, by default, on every package with a Go source file
# (not a test) that differs from BASE (default HEAD~1, the working tree's changes included): the packages a change
# touches. Each package runs in its own module, with that package's own tests, as gremlins does; the summary of each
# ends with its LIVED mutants, which a test must kill, or the closing note name with why. DIFF=1 mutates only the
# lines changed since BASE (gremlins --diff); INTEGRATION=1 judges each mutant by the whole module's tests (gremlins
# --integration): for a package whose behaviour other packages' tests judge, such as the bus's policies.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
modfile=$root/tools/mutate/go.mod
pkgs=${PKGS:-}
if [ -z "$pkgs" ]; then
	pkgs=$(git -C "$root" diff --name-only "${BASE:-HEAD~1}" -- '*.go' | grep -v '_test\.go$' | grep -v '/testdata/' | grep -v '^tools/' |
		while read -r f; do [ -e "$root/$f" ] && dirname "$f"; done | sort -u)
fi
if [ -z "$pkgs" ]; then
	echo "mutate: no Go package changed since ${BASE:-HEAD~1}"
	exit 0
fi
status=0
for d in $pkgs; do
	m=$d
	while [ "$m" != "." ] && [ ! -f "$root/$m/go.mod" ]; do m=$(dirname "$m"); done
	rel=${d#"$m"}
	rel=./${rel#/}
	echo "== $d (module $m)"
	flags=()
	if [ -n "${DIFF:-}" ]; then flags+=(--diff "${BASE:-HEAD~1}"); fi
	if [ -n "${INTEGRATION:-}" ]; then flags+=(--integration); fi
	(cd "$root/$m" && go tool -modfile="$modfile" gremlins unleash --workers "${WORKERS:-2}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-5}" \
		--output-statuses lt "${flags[@]}" "$rel") || status=1
done
exit $status
