package bump

import (
	"slices"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// Plan is what the weekly workflow bumps, given the tags of Karpenter's releases: for every line supported on
// day now that the bus tests (router/karpenter's support table), its newest patch when newer than the tested one;
// and the newest release, when it opens a minor version newer than every line (the default moves to it). Oldest
// first; pre-releases and tags that are not versions are ignored. Each is one make karpenter-bump, one pull
// request.
func Plan(tags []string, lines []karpenter.Line, now time.Time) []karpenter.Version {
	var releases []karpenter.Version
	for _, tag := range tags {
		if v, err := karpenter.Parse(tag); err == nil && v.Pre == "" {
			releases = append(releases, v)
		}
	}
	newestOf := func(major, minor int) (karpenter.Version, bool) {
		var best karpenter.Version
		found := false
		for _, r := range releases {
			if r.Major == major && r.Minor == minor && (!found || r.Compare(best) > 0) {
				best, found = r, true
			}
		}
		return best, found
	}
	var out []karpenter.Version
	for _, l := range lines {
		if l.Tested == (karpenter.Version{}) || !l.SupportedAt(now) {
			continue
		}
		if v, ok := newestOf(l.Major, l.Minor); ok && v.Compare(l.Tested) > 0 {
			out = append(out, v)
		}
	}
	if len(lines) > 0 && len(releases) > 0 {
		newest := slices.MaxFunc(releases, karpenter.Version.Compare)
		last := lines[len(lines)-1]
		if newest.Major > last.Major || newest.Major == last.Major && newest.Minor > last.Minor {
			out = append(out, newest)
		}
	}
	return out
}
