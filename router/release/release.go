// Package release is the version of this checkout, the one source of it: the newest release of CHANGELOG.md
// (a test of the root module holds them equal). The router logs it when it starts, the program exports it (the
// stack output version), and the release build stamps the package's provider with the tag, which must be it
// (make release-check, .goreleaser.yml).
package release

// Version is the semantic version of this checkout, without the v: the release being made on main, or made at its
// tag.
const Version = "0.3.0"
