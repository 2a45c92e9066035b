package preflight_test

import (
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
)

// TestReleaseOf: what an update does to a release out of reach, from the last update's record.
func TestReleaseOf(t *testing.T) {
	install := config.Cluster{Name: "bravo", Mode: config.ModeInstall}
	before := func(d config.Deployed) preflight.Last {
		return preflight.Last{Deployed: map[string]config.Deployed{"bravo": d}}
	}
	for _, c := range []struct {
		name     string
		cl       config.Cluster
		before   preflight.Last
		adopting map[string]string
		digest   string
		want     preflight.Release
	}{
		{"the same digest", install, before(config.Deployed{Mode: config.ModeInstall, ReleaseDigest: "d1"}), nil, "d1", preflight.ReleaseUnchanged},
		{"another digest", install, before(config.Deployed{Mode: config.ModeInstall, ReleaseDigest: "d1"}), nil, "d2", preflight.ReleaseChange},
		{"no digest recorded", install, before(config.Deployed{Mode: config.ModeInstall}), nil, "d2", preflight.ReleaseUnknown},
		{"not deployed before", install, preflight.Last{}, nil, "d2", preflight.ReleaseCreate},
		{"deployed as existing-role", install, before(config.Deployed{Mode: config.ModeExistingRole}), nil, "d2", preflight.ReleaseCreate},
		{"adopted", install, preflight.Last{}, map[string]string{"bravo": "a-1"}, "d2", preflight.ReleaseAdopt},
		{"adopted, deployed before", install, before(config.Deployed{Mode: config.ModeInstall, ReleaseDigest: "d2"}), map[string]string{"bravo": "a-1"}, "d2", preflight.ReleaseAdopt},
		{"no release", config.Cluster{Name: "bravo", Mode: config.ModeExistingRole}, preflight.Last{}, nil, "", preflight.ReleaseUnchanged},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := preflight.ReleaseOf(c.cl, c.before, c.adopting, c.digest); got != c.want {
				t.Errorf("ReleaseOf = %q, want %q", got, c.want)
			}
		})
	}
}

// TestReleasesWarningNamesEach: one warning naming every release out of reach the update changes, in the
// configuration's order, and none when it changes none.
func TestReleasesWarningNamesEach(t *testing.T) {
	cfg := config.Config{Clusters: []config.Cluster{{Name: "alpha"}, {Name: "bravo"}, {Name: "charlie"}, {Name: "delta"}, {Name: "echo"}}}
	w := preflight.ReleasesWarning(cfg, map[string]preflight.Release{
		"echo": preflight.ReleaseCreate, "charlie": preflight.ReleaseChange, "bravo": preflight.ReleaseUnknown,
		"delta": preflight.ReleaseUnchanged, "foxtrot": preflight.ReleaseChange,
	})
	for _, want := range []string{"of 3 cluster(s) out of reach: bravo (may change), charlie (change), echo (create).", "--continue-on-error",
		"No deletion is made until an update makes them all", "Clusters out of reach"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not say %q", w, want)
		}
	}
	if strings.Contains(w, "delta") || strings.Contains(w, "alpha") || strings.Contains(w, "foxtrot") {
		t.Errorf("warning %q names a release it does not change, or a cluster not configured", w)
	}
	if w := preflight.ReleasesWarning(cfg, map[string]preflight.Release{"bravo": preflight.ReleaseUnchanged}); w != "" {
		t.Errorf("warning %q for no change", w)
	}
}
