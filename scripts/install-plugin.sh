#!/bin/sh
# install-plugin.sh [VERSION]: takes karpenter-interruption-bus's Pulumi package at VERSION, its plugin checked
# against the release's checksums.txt before anything is installed. Attached to every release; run it in your Pulumi
# program's directory (docs/package.md, "Adding the package to a program"):
#
#   - the first machine: sh install-plugin.sh X.Y.Z   installs the plugin, adds the package to Pulumi.yaml (pulumi
#     package add, which generates the SDK of the program's language);
#   - every teammate and CI, in a clone: sh install-plugin.sh   installs the version Pulumi.yaml records, then runs
#     pulumi install (the SDK, the program's dependencies);
#   - an upgrade: sh install-plugin.sh X.Y.Z   with the new release's script: installs it, moves Pulumi.yaml's
#     entry to it, then pulumi install regenerates the SDK.
#
# Why a script: inside a project whose Pulumi.yaml lists the package, the Pulumi CLI (v3.259.0) takes the entry's
# version, server and checksums over the command line's (pulumi plugin install: plugin_install.go; pulumi package add:
# packages.go, providerFromSource), and cannot record checksums in Pulumi.yaml, so no one command both checks the
# download and takes the version asked. This checks the archive itself, then installs it with --file, which the CLI
# takes as given, in any directory and over HTTP/1.1 or HTTP/2 alike.
#
# Environment: KIB_RELEASES, where the releases are (default GitHub's), for a mirror.
set -eu

name=karpenter-interruption-bus
releases=${KIB_RELEASES:-https://github.com/karpenter-interruption-bus/karpenter-interruption-bus/releases/download}

# recorded prints the version Pulumi.yaml's packages entry records for the package, if it has one.
recorded() {
	[ -f Pulumi.yaml ] || return 0
	awk -v n="$name" '
		/^packages:/ { inpkgs = 1; next }
		/^[^ #]/ { inpkgs = 0; inentry = 0 }
		inpkgs && match($0, "^ +" n ":[ ]*$") { inentry = 1; indent = RLENGTH - length(n ":"); next }
		inentry && match($0, /^ +/) && RLENGTH <= indent { inentry = 0 }
		inentry && $1 == "version:" { v = $2; gsub(/["'"'"']/, "", v); print v; exit }
	' Pulumi.yaml
}

# record rewrites the version of the package's entry in Pulumi.yaml to $1, keeping everything else.
record() {
	awk -v n="$name" -v v="$1" '
		/^packages:/ { inpkgs = 1; print; next }
		/^[^ #]/ { inpkgs = 0; inentry = 0 }
		inpkgs && match($0, "^ +" n ":[ ]*$") { inentry = 1; indent = RLENGTH - length(n ":"); print; next }
		inentry && match($0, /^ +/) && RLENGTH <= indent { inentry = 0 }
		inentry && $1 == "version:" { sub(/version:.*/, "version: " v) }
		{ print }
	' Pulumi.yaml >Pulumi.yaml.kib-tmp
	mv Pulumi.yaml.kib-tmp Pulumi.yaml
}

was=$(recorded)
version=${1:-$was}
version=${version#v}
if [ -z "$version" ]; then
	echo "usage: sh install-plugin.sh VERSION (or, in a project whose Pulumi.yaml lists $name, no argument)" >&2
	exit 2
fi

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case $os in mingw* | msys* | cygwin*) os=windows ;; esac
arch=$(uname -m)
case $arch in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*)
	echo "install-plugin.sh: no release of $name for $arch" >&2
	exit 1
	;;
esac

archive=pulumi-resource-$name-v$version-$os-$arch.tar.gz
url=$releases/v$version
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL -o "$tmp/checksums.txt" "$url/checksums.txt"
curl -fsSL -o "$tmp/$archive" "$url/$archive"
want=$(awk -v f="$archive" '$2 == f { print $1 }' "$tmp/checksums.txt")
if [ -z "$want" ]; then
	echo "install-plugin.sh: $url/checksums.txt has no line for $archive: nothing installed" >&2
	exit 1
fi
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$tmp/$archive" | awk '{ print $1 }')
else
	got=$(shasum -a 256 "$tmp/$archive" | awk '{ print $1 }')
fi
if [ "$got" != "$want" ]; then
	echo "install-plugin.sh: refused $url/$archive: its SHA-256 is $got, the release's checksums.txt says $want; nothing installed" >&2
	exit 1
fi
echo "$archive: SHA-256 $got, as the release's checksums.txt says"
pulumi plugin install resource "$name" "$version" --file "$tmp/$archive" --reinstall

if [ ! -f Pulumi.yaml ]; then
	exit 0
fi
if [ -z "$was" ]; then
	# The first machine: the package's entry, with where its releases are, and the SDK of the program's language.
	pulumi package add "$name@$version" --server "$releases/v\${VERSION}"
	exit 0
fi
if [ "$was" != "$version" ]; then
	record "$version"
	if [ "$(recorded)" != "$version" ]; then
		echo "install-plugin.sh: could not move Pulumi.yaml's $name entry from $was to $version: edit its version by hand" >&2
		exit 1
	fi
	echo "Pulumi.yaml: $name $was -> $version"
fi
pulumi install
