package preflight

import (
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
)

// TestALookupWaitsOnlyAtAPreview: a lookup waits for the update at a preview only, of a value standing for an unknown,
// or of one from a resource of the program that it did not find; never of another.
func TestALookupWaitsOnlyAtAPreview(t *testing.T) {
	m := standin.New()
	u := Unknowns{Marks: m, FromResource: func(v string) bool { return v == "payments" }}
	for _, tt := range []struct {
		dryRun, found bool
		value         string
		u             Unknowns
		want          bool
	}{
		{true, true, m.Text, u, true},
		{false, true, m.Text, u, false},
		{true, false, "payments", u, true},
		{true, true, "payments", u, false},
		{false, false, "payments", u, false},
		{true, false, "legacy", u, false},
		{true, false, "payments", Unknowns{Marks: m}, false},
		{true, false, m.Text, Unknowns{}, false},
	} {
		if got := tt.u.waits(tt.dryRun, tt.value, tt.found); got != tt.want {
			t.Errorf("waits(dry run %v, %q, found %v) = %v, want %v", tt.dryRun, tt.value, tt.found, got, tt.want)
		}
	}
	if c := u.standIn(); !m.Holds(c.Endpoint) || !m.Holds(c.CertificateAuthority) || !m.Holds(c.ARN) {
		t.Errorf("stand-in cluster %+v holds no mark", c)
	}
}
