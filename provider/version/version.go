// Package version is the component package's version, as its provider reports it (GetPluginInfo and the
// schema's version).
//
// What sets it, in each way the provider is built:
//   - a release build (make provider, release.yml) stamps the tag: go build -ldflags "-X
//     .../provider/version.tag=v1.2.3";
//   - anything else reports Dev. That includes `pulumi package add <repo>.git/provider@v1.2.3`: Pulumi's Go
//     language host builds the clone with `go build -buildvcs=false -trimpath`, so Go stamps no version from the
//     checkout. The version a consumer sees is nevertheless the tag: for a package installed from git, the CLI
//     replaces the version in the provider's schema with the one it installed (pulumi/pkg v3.259.0,
//     resource/plugin/provider_plugin.go: overrideVersion for spec.IsGitPlugin()), and installs the plugin
//     under that version.
package version

import "strings"

// tag is set by the release build: go build -ldflags "-X .../provider/version.tag=v1.2.3" (make provider, from
// git describe).
var tag string

// Dev is the version of every build the release did not stamp: the golden schema's (provider/schema.json).
const Dev = "0.0.0-dev"

// Version is the package's semantic version, without the v: the release build's tag, else Dev.
func Version() string {
	if tag != "" {
		return strings.TrimPrefix(tag, "v")
	}
	return Dev
}
