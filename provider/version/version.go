// Package version is the component package's version: the release tag it was built from.
package version

import (
	"runtime/debug"
	"strings"
)

// tag is set by the release build: go build -ldflags "-X .../provider/version.tag=v1.2.3" (make provider, from
// git describe).
var tag string

// Dev is the version of a build from neither a release nor a tagged checkout.
const Dev = "0.0.0-dev"

// Version is the package's semantic version, without the v: the release build's tag; else the version Go
// stamped from the checkout's tag (a build inside a clone at provider/vX.Y.Z, which the release workflow pushes
// with vX.Y.Z, as Go names a nested module's tags); else Dev.
func Version() string {
	if tag != "" {
		return strings.TrimPrefix(tag, "v")
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		return fromModule(info.Main.Version)
	}
	return Dev
}

// fromModule is the version of a main module's stamped version: a release tag's, not a pseudo-version's.
func fromModule(v string) string {
	if v == "" || v == "(devel)" || strings.Count(v, "-") >= 2 || strings.Contains(v, "+dirty") {
		return Dev
	}
	return strings.TrimPrefix(v, "v")
}
