package iamname

import (
	"strings"
	"testing"
)

// TestPrefixesDifferingInCaseNameDistinctRoles: IAM compares role names without regard to case, so prefixes that
// differ only in case, whichever letters are upper-case, must never give two names IAM takes for one.
func TestPrefixesDifferingInCaseNameDistinctRoles(t *testing.T) {
	prefixes := []string{"kib", "Kib", "KIB", "kIB", "KiB", "kib-Prod", "kib-PROD", "KIB-prod"}
	for _, what := range []string{"router", "forward"} {
		seen := map[string]string{}
		for _, p := range prefixes {
			name := OfPrefix(p, what, "eu-west-1")
			if len(name) > MaxRoleName {
				t.Errorf("%s: %d characters", name, len(name))
			}
			folded := strings.ToLower(name)
			if other, ok := seen[folded]; ok {
				t.Errorf("prefixes %s and %q (%s) name one role to IAM", other, p, name)
			}
			seen[folded] = p + " (" + name + ")"
		}
	}
	if got := OfPrefix("kib-dev", "router", "eu-west-1"); got != "kib-dev-router-eu-west-1" {
		t.Errorf("a lower-case prefix keeps its plain name: %s", got)
	}
}
