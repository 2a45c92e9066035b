package karpenter

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Karpenter's support policy, SUPPORT.md of github.com/aws/karpenter-provider-aws (added 2026-07-29):
//   - "Regular releases are supported only until the next minor release is published."
//   - "Every 6 months, a minor release is designated as a Long-Term Support (LTS) release", and "Each LTS release is
//     supported for 12 months from its release date" ("LTS versions table": v1.14, Jul 2026 – Jul 2027; v1.9,
//     Feb 2026 – Feb 2027).
//
// PolicyURL is where users read it; the warnings name it.
const PolicyURL = "https://github.com/aws/karpenter-provider-aws/blob/main/SUPPORT.md"

// LTSMonths is how long an LTS line is supported from its release.
const LTSMonths = 12

// Line is one minor version of Karpenter as its support policy sees it.
type Line struct {
	Major, Minor int
	// Released is the day its first release (x.y.0) was tagged (the tag's commit, as the Go module proxy dates it).
	Released time.Time
	// LTS marks a Long-Term Support line.
	LTS bool
	// Tested is the line's release the bus is tested against (tests/karpenter/vX.Y pins it), if any: on every
	// line still supported, its newest patch, which a warning may tell users to move to (make karpenter-bump moves
	// it); on an older line kept as the oldest proven, the release users still run.
	Tested Version
}

func (l Line) String() string { return fmt.Sprintf("%d.%d", l.Major, l.Minor) }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// lines are Karpenter's minor versions from the oldest the bus supports, oldest first: the one place the support
// policy's dates are kept. v1.6 is an LTS line by the policy's "Example Timeline" (active support from Jul'25,
// end of life Jul'26), which predates the LTS table; v1.9 and v1.14 by the table. Release days: each x.y.0 tag.
var lines = []Line{
	{Major: 1, Minor: 6, Released: day(2025, time.July, 14), LTS: true, Tested: Version{Major: 1, Minor: 6, Patch: 3}},
	{Major: 1, Minor: 7, Released: day(2025, time.September, 15)},
	{Major: 1, Minor: 8, Released: day(2025, time.October, 8)},
	{Major: 1, Minor: 9, Released: day(2026, time.February, 6), LTS: true, Tested: Version{Major: 1, Minor: 9, Patch: 3}},
	{Major: 1, Minor: 10, Released: day(2026, time.March, 20)},
	{Major: 1, Minor: 11, Released: day(2026, time.April, 6)},
	{Major: 1, Minor: 12, Released: day(2026, time.April, 24)},
	{Major: 1, Minor: 13, Released: day(2026, time.June, 10)},
	{Major: 1, Minor: 14, Released: day(2026, time.July, 10), LTS: true, Tested: Version{Major: 1, Minor: 14, Patch: 3}},
	{Major: 1, Minor: 15, Released: day(2026, time.October, 10), Tested: Version{Major: 1, Minor: 15, Patch: 1}},
}

// Lines are the support policy's lines the bus knows, oldest first.
func Lines() []Line { return append([]Line(nil), lines...) }

// LineOf is the line of v.
func LineOf(v Version) (Line, bool) {
	for _, l := range lines {
		if l.Major == v.Major && l.Minor == v.Minor {
			return l, true
		}
	}
	return Line{}, false
}

// End is the day the line leaves support: for an LTS line, LTSMonths after its release; for a regular one, the day
// the next minor release was published. ok is false for the newest regular line, supported until a next minor
// release is published, which the table does not know yet.
func (l Line) End() (end time.Time, ok bool) {
	if l.LTS {
		return l.Released.AddDate(0, LTSMonths, 0), true
	}
	for _, next := range lines {
		if next.Major > l.Major || next.Major == l.Major && next.Minor > l.Minor {
			return next.Released, true
		}
	}
	return time.Time{}, false
}

// SupportedAt reports whether Karpenter supports the line on day now.
func (l Line) SupportedAt(now time.Time) bool {
	end, ok := l.End()
	return !ok || now.Before(end)
}

// why is how the policy ends the line's support, for messages.
func (l Line) why() string {
	if l.LTS {
		return fmt.Sprintf("an LTS line, supported %d months from its release on %s", LTSMonths, l.Released.Format(time.DateOnly))
	}
	end, ok := l.End()
	if !ok {
		return "the newest release, supported until the next minor release is published"
	}
	return fmt.Sprintf("a regular release, supported until the next minor release was published on %s", end.Format(time.DateOnly))
}

// SupportedLines are the lines Karpenter supports on day now, newest first.
func SupportedLines(now time.Time) []Line {
	var out []Line
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].SupportedAt(now) {
			out = append(out, lines[i])
		}
	}
	return out
}

// WarnBefore is how long before a line leaves support its users are warned.
const WarnBefore = 60 * 24 * time.Hour

// SupportWarning is what a preview says of installing Karpenter v on day now: why v is out of Karpenter's support
// since when, or when, within WarnBefore, it leaves it; and the newest patch of each line supported then. "" when
// v is supported past WarnBefore (or unknown to the table: the configuration refuses those).
func SupportWarning(v Version, now time.Time) string {
	l, ok := LineOf(v)
	if !ok {
		return ""
	}
	end, ends := l.End()
	var head string
	switch {
	case !ends || now.Add(WarnBefore).Before(end):
		return ""
	case now.Before(end):
		head = fmt.Sprintf("Karpenter %s leaves Karpenter's support on %s, in %s (%s is %s)", v, end.Format(time.DateOnly),
			days(end.Sub(now)), l, l.why())
	default:
		head = fmt.Sprintf("Karpenter %s is out of Karpenter's support since %s: it gets no fixes, security patches included (%s was %s)",
			v, end.Format(time.DateOnly), l, l.why())
	}
	var alternatives []string
	for _, s := range SupportedLines(now) {
		if s == l || s.Tested == (Version{}) {
			continue
		}
		what := "LTS"
		if !s.LTS {
			what = "the newest release"
		}
		if e, ok := s.End(); ok {
			what += ", until " + e.Format(time.DateOnly)
		} else {
			what += fmt.Sprintf(", until %d.%d is published", s.Major, s.Minor+1)
		}
		alternatives = append(alternatives, fmt.Sprintf("%s (%s)", s.Tested, what))
	}
	if len(alternatives) == 0 {
		return head + " (" + PolicyURL + ")."
	}
	return fmt.Sprintf("%s. Supported: %s. Set karpenter.version to one of them (%s; docs/clusters.md, \"Karpenter support\").",
		head, strings.Join(alternatives, ", "), PolicyURL)
}

// days is d in whole days, rounded up, for messages.
func days(d time.Duration) string {
	n := int(math.Ceil(d.Hours() / 24))
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}
