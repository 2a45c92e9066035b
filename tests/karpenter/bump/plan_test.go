package bump_test

import (
	"slices"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/bump"
)

func TestPlan(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	v := func(major, minor, patch int) karpenter.Version {
		return karpenter.Version{Major: major, Minor: minor, Patch: patch}
	}
	lines := []karpenter.Line{
		{Major: 1, Minor: 6, Released: day("2025-07-14"), LTS: true, Tested: v(1, 6, 3)},
		{Major: 1, Minor: 8, Released: day("2025-10-08")},
		{Major: 1, Minor: 9, Released: day("2026-02-06"), LTS: true, Tested: v(1, 9, 3)},
		{Major: 1, Minor: 13, Released: day("2026-06-10"), Tested: v(1, 13, 0)},
		{Major: 1, Minor: 14, Released: day("2026-07-10"), LTS: true, Tested: v(1, 14, 3)},
		{Major: 1, Minor: 15, Released: day("2026-10-10"), Tested: v(1, 15, 1)},
	}
	tests := []struct {
		name string
		tags []string
		on   string
		want []string
	}{
		{"nothing new", []string{"v1.9.3", "v1.14.3", "v1.15.1", "v1.6.8"}, "2026-11-26", nil},
		{"every supported line's newest patch", []string{"v1.9.3", "v1.9.4", "v1.14.3", "v1.14.5", "v1.14.4", "v1.15.1", "v1.15.2"}, "2026-11-26",
			[]string{"1.9.4", "1.14.5", "1.15.2"}},
		{"lines out of support are not followed", []string{"v1.6.9", "v1.13.2", "v1.8.9", "v1.15.1"}, "2026-11-26", nil},
		{"an LTS line past its end", []string{"v1.9.4", "v1.14.4"}, "2027-02-06", []string{"1.14.4"}},
		{"a new minor version, and a patch of an LTS line", []string{"v1.14.4", "v1.16.0", "v1.15.2", "v1.17.0-rc.1", "latest"}, "2026-12-01",
			[]string{"1.14.4", "1.15.2", "1.16.0"}},
		{"two new minor versions: the newest", []string{"v1.16.0", "v1.17.1", "v1.17.0"}, "2027-01-01", []string{"1.17.1"}},
	}
	for _, tt := range tests {
		var got []string
		for _, x := range bump.Plan(tt.tags, lines, day(tt.on)) {
			got = append(got, x.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: plan %v, want %v", tt.name, got, tt.want)
		}
	}
}
