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
	worked := strings.TrimSpace(sections[0].Body) != "" // a change after the newest release
	for i, r := range releases {
		if !semver.MatchString(r.Name) || !dated.MatchString(r.Rest) {
			t.Errorf("CHANGELOG.md: heading %q: want ## [X.Y.Z] - YYYY-MM-DD", r.Heading)
		}
		// The release's own commit cannot name itself: the change after it does, so that a clone without tags
		// (CI clones main alone) still finds every release's commit.
		if (i > 0 || worked) && !releaseCommit.MatchString(r.Body) {
			t.Errorf("CHANGELOG.md: release %s names no commit (a line \"Commit `<hash>`\" under its heading)", r.Name)
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

// TestEveryReleaseNamesItsCommit: each release of CHANGELOG.md names the commit it was cut from, a commit of this
// checkout's history at which router/release.Version and CHANGELOG.md's newest release are that version; where the
// clone has the release's tag v<version> (make release makes it; a clone of main alone, as CI makes, has none), the
// tag is that commit; and every link at the end of CHANGELOG.md compares or names the tags of its releases.
func TestEveryReleaseNamesItsCommit(t *testing.T) {
	if _, err := git(t, "rev-parse", "--git-dir"); err != nil {
		t.Fatalf("not a git checkout (%v): the releases' commits are read from git", err)
	}
	if shallow, _ := git(t, "rev-parse", "--is-shallow-repository"); shallow == "true" {
		t.Fatal("a shallow clone has not the releases' commits: clone with the history (fetch-depth: 0)")
	}
	text, sections := readChangelog(t)
	releases := releasesOf(sections)
	if len(releases) == 0 {
		t.Fatal("CHANGELOG.md names no release")
	}
	names, cutFrom := map[string]bool{}, map[string]string{}
	for i, r := range releases {
		names["v"+r.Name] = true
		c := releaseCommit.FindStringSubmatch(r.Body)
		if c == nil {
			continue // the release's own commit, before the change after it names it (TestChangelogIsTheVersion)
		}
		v := r.Name
		at, err := git(t, "rev-parse", "-q", "--verify", c[1]+"^{commit}")
		if _, ancestor := git(t, "merge-base", "--is-ancestor", c[1], "HEAD"); err != nil || at == "" || ancestor != nil {
			t.Errorf("release %s: commit %s is not in this checkout's history", v, c[1])
			continue
		}
		if other, ok := cutFrom[at]; ok {
			t.Errorf("releases %s and %s name the same commit %s", other, v, c[1])
		}
		cutFrom[at] = v
		// Releases cut before router/release and CHANGELOG.md existed (0.1.0, 0.2.0) have neither; the newest has both.
		source, err := git(t, "show", at+":router/release/release.go")
		if (err == nil || i == 0) && !strings.Contains(source, `const Version = "`+v+`"`) {
			t.Errorf("release %s: commit %s's router/release.Version is not %s", v, c[1], v)
		}
		log, err := git(t, "show", at+":CHANGELOG.md")
		if err == nil || i == 0 {
			then := changelogSections(log)
			if rs := releasesOf(then); len(rs) == 0 || rs[0].Name != v {
				t.Errorf("release %s: commit %s's CHANGELOG.md does not have %s as its newest release", v, c[1], v)
			} else if then[0].Name == "Unreleased" && strings.TrimSpace(then[0].Body) != "" {
				t.Errorf("release %s: commit %s has changes after %s ([Unreleased]): not the commit it was cut from", v, c[1], v)
			}
		}
		if tag, err := git(t, "rev-parse", "-q", "--verify", "refs/tags/v"+v+"^{commit}"); err == nil && tag != at {
			t.Errorf("tag v%s is commit %s, CHANGELOG.md says release %s was cut from %s", v, tag, v, c[1])
		}
	}
	links := regexp.MustCompile(`(?m)^\[[^\]]+\]: https://github\.com/karpenter-interruption-bus/karpenter-interruption-bus/(?:compare/(\S+?)\.\.\.(\S+)|releases/tag/(\S+))$`)
	all := links.FindAllStringSubmatch(text, -1)
	if len(all) != len(releases)+1 {
		t.Errorf("CHANGELOG.md has %d links to GitHub, want one per release and one for [Unreleased]", len(all))
	}
	for _, l := range all {
		for _, ref := range l[1:] {
			if ref != "" && ref != "HEAD" && !names[ref] {
				t.Errorf("CHANGELOG.md links to %s, the tag of no release it lists: %s", ref, l[0])
			}
		}
	}
}
