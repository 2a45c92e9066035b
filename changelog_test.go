package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
)

// TestChangelogIsTheVersion holds CHANGELOG.md to the form docs/contributing.md ("Cutting a release") gives it: an
// [Unreleased] section, then each release newest first as "## [X.Y.Z] - YYYY-MM-DD", the newest being this
// checkout's version (router/release.Version), each but the first with the upgrade notes from the one before it, and
// each before this one naming the commit it was cut from (the upgrade test builds it from there).
func TestChangelogIsTheVersion(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	heading := regexp.MustCompile(`(?m)^## \[([^\]]+)\](.*)$`)
	dated := regexp.MustCompile(`^ - \d{4}-\d{2}-\d{2}$`)
	semver := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	commit := regexp.MustCompile("(?m)^Commit `[0-9a-f]{7,40}`")
	found := heading.FindAllStringSubmatchIndex(text, -1)
	if len(found) < 2 || text[found[0][2]:found[0][3]] != "Unreleased" {
		t.Fatal("CHANGELOG.md: want an ## [Unreleased] section first, then the releases")
	}
	var versions []string
	for i, m := range found[1:] {
		v, rest := text[m[2]:m[3]], text[m[4]:m[5]]
		if !semver.MatchString(v) || !dated.MatchString(rest) {
			t.Errorf("CHANGELOG.md: heading %q: want ## [X.Y.Z] - YYYY-MM-DD", text[m[0]:m[1]])
		}
		end := len(text)
		if i+2 < len(found) {
			end = found[i+2][0]
		}
		body := text[m[1]:end]
		if i > 0 && !commit.MatchString(body) {
			t.Errorf("CHANGELOG.md: release %s names no commit (a line \"Commit `<hash>`\")", v)
		}
		versions = append(versions, v)
		if i+2 < len(found) {
			prev := text[found[i+2][2]:found[i+2][3]]
			if !strings.Contains(body, "### Upgrading from "+prev+"\n") {
				t.Errorf("CHANGELOG.md: release %s has no \"### Upgrading from %s\"", v, prev)
			}
		}
	}
	if versions[0] != release.Version {
		t.Errorf("CHANGELOG.md's newest release is %s, router/release.Version %s: one of them is behind", versions[0], release.Version)
	}
}
