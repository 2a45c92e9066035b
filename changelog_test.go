package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
)

// changelogSection is a "## [Name]Rest" section of CHANGELOG.md, Body the text up to the next one.
type changelogSection struct{ Name, Rest, Heading, Body string }

var (
	sectionHeading = regexp.MustCompile(`(?m)^## \[([^\]]+)\](.*)$`)
	semver         = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	releaseCommit  = regexp.MustCompile("(?m)^Commit `([0-9a-f]{7,40})`")
)

// changelogSections are text's sections, in order.
func changelogSections(text string) []changelogSection {
	found := sectionHeading.FindAllStringSubmatchIndex(text, -1)
	out := make([]changelogSection, len(found))
	for i, m := range found {
		end := len(text)
		if i+1 < len(found) {
			end = found[i+1][0]
		}
		out[i] = changelogSection{Name: text[m[2]:m[3]], Rest: text[m[4]:m[5]], Heading: text[m[0]:m[1]], Body: text[m[1]:end]}
	}
	return out
}

// readChangelog is CHANGELOG.md's sections.
func readChangelog(t *testing.T) (string, []changelogSection) {
	t.Helper()
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b), changelogSections(string(b))
}

// TestChangelogIsTheVersion holds CHANGELOG.md to the form docs/contributing.md ("Cutting a release") gives it: an
// [Unreleased] section, then each release newest first as "## [X.Y.Z] - YYYY-MM-DD", the newest being this
// checkout's version (router/release.Version), each but the first with the upgrade notes from the one before it, and
// each before this one naming the commit it was cut from (the upgrade test builds it from there).
func TestChangelogIsTheVersion(t *testing.T) {
	_, sections := readChangelog(t)
	dated := regexp.MustCompile(`^ - \d{4}-\d{2}-\d{2}$`)
	if len(sections) < 2 || sections[0].Name != "Unreleased" {
		t.Fatal("CHANGELOG.md: want an ## [Unreleased] section first, then the releases")
	}
	releases := sections[1:]
	for i, r := range releases {
		if !semver.MatchString(r.Name) || !dated.MatchString(r.Rest) {
			t.Errorf("CHANGELOG.md: heading %q: want ## [X.Y.Z] - YYYY-MM-DD", r.Heading)
		}
		if i > 0 && !releaseCommit.MatchString(r.Body) {
			t.Errorf("CHANGELOG.md: release %s names no commit (a line \"Commit `<hash>`\")", r.Name)
		}
		if i+1 < len(releases) && !strings.Contains(r.Body, "### Upgrading from "+releases[i+1].Name+"\n") {
			t.Errorf("CHANGELOG.md: release %s has no \"### Upgrading from %s\"", r.Name, releases[i+1].Name)
		}
	}
	if releases[0].Name != release.Version {
		t.Errorf("CHANGELOG.md's newest release is %s, router/release.Version %s: one of them is behind", releases[0].Name, release.Version)
	}
}

// releasesOf are the sections of released versions, newest first.
func releasesOf(sections []changelogSection) []changelogSection {
	var out []changelogSection
	for _, s := range sections {
		if semver.MatchString(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// git runs git in the checkout and returns its output, trimmed.
func git(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// TestEveryReleaseIsTagged: each release of CHANGELOG.md is tagged v<version> (make release tags it), at the commit
// its "Commit" line names when it has one; the newest release's tag holds that version in router/release and as its
// CHANGELOG.md's newest release; and every link at the end of CHANGELOG.md compares or names tags that exist.
func TestEveryReleaseIsTagged(t *testing.T) {
	if _, err := git(t, "rev-parse", "--git-dir"); err != nil {
		t.Fatalf("not a git checkout (%v): the releases' tags are read from git", err)
	}
	text, sections := readChangelog(t)
	releases := releasesOf(sections)
	if len(releases) == 0 {
		t.Fatal("CHANGELOG.md names no release")
	}
	tagged := func(tag string) (string, bool) {
		c, err := git(t, "rev-parse", "-q", "--verify", "refs/tags/"+tag+"^{commit}")
		return c, err == nil && c != ""
	}
	for i, r := range releases {
		v := r.Name
		at, ok := tagged("v" + v)
		if !ok {
			t.Errorf("release %s has no tag v%s (make release tags a release; git fetch --tags fetches them): "+
				"a clone without its tags cannot read the releases' commits", v, v)
			continue
		}
		if c := releaseCommit.FindStringSubmatch(r.Body); c != nil && !strings.HasPrefix(at, c[1]) {
			t.Errorf("tag v%s is commit %s, CHANGELOG.md says release %s was cut from %s", v, at, v, c[1])
		}
		if i > 0 {
			continue
		}
		source, err := git(t, "show", "v"+v+":router/release/release.go")
		if err != nil || !strings.Contains(source, `const Version = "`+v+`"`) {
			t.Errorf("tag v%s's router/release.Version is not %s (%v)", v, v, err)
		}
		log, err := git(t, "show", "v"+v+":CHANGELOG.md")
		if then := releasesOf(changelogSections(log)); err != nil || len(then) == 0 || then[0].Name != v {
			t.Errorf("tag v%s's CHANGELOG.md does not have %s as its newest release (%v)", v, v, err)
		}
	}
	links := regexp.MustCompile(`(?m)^\[[^\]]+\]: https://github\.com/karpenter-interruption-bus/karpenter-interruption-bus/(?:compare/(\S+?)\.\.\.(\S+)|releases/tag/(\S+))$`)
	all := links.FindAllStringSubmatch(text, -1)
	if len(all) != len(releases)+1 {
		t.Errorf("CHANGELOG.md has %d links to GitHub, want one per release and one for [Unreleased]", len(all))
	}
	for _, l := range all {
		for _, ref := range l[1:] {
			if ref == "" || ref == "HEAD" {
				continue
			}
			if _, ok := tagged(ref); !ok {
				t.Errorf("CHANGELOG.md links to %s, which is no tag: %s", ref, l[0])
			}
		}
	}
}
