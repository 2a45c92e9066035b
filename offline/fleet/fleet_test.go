package fleet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/quota"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
)

// TestStacksWithinAWSQuotas is the quota judge: every resource of every sized stack, measured against what AWS
// enforces when it creates it (package quota, each quota with its documentation page). The mocks accept any
// size; AWS does not.
func TestStacksWithinAWSQuotas(t *testing.T) {
	measured := map[string]bool{}
	for _, s := range fleet.Stacks() {
		t.Run(s.Name, func(t *testing.T) {
			all, worst, err := fleet.Measure(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				if f.Over() {
					t.Error(f)
				}
			}
			for k := range worst {
				measured[k] = true
			}
		})
	}
	// A quota no stack reaches is a quota the walk does not read: the table would claim what nothing checked.
	for _, q := range quota.All {
		if !measured[q.Key] {
			t.Errorf("quota %s (%s) is measured on no stack", q.Key, q.What)
		}
	}
}

// TestNothingSharedGrowsWithTheOrganization: with organization.id the hub's documents are the same size for 5
// and for 500 members; only resources of the members themselves are added. (The dashboard, off here, has a row
// per cluster, wherever it is: it follows the clusters, not the members.)
func TestNothingSharedGrowsWithTheOrganization(t *testing.T) {
	hubFigures := func(n int) map[string]int {
		t.Helper()
		cfg := fleet.Members(n, false)
		delete(cfg, config.Namespace+":dashboard")
		all, _, err := fleet.Measure(fleet.Stack{Name: "org", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, f := range all {
			if strings.Contains(f.Where, "(account "+fleet.Hub+")") {
				out[f.Quota.Key+" "+f.Where] = f.Value
			}
		}
		return out
	}
	small, large := hubFigures(5), hubFigures(500)
	if len(small) == 0 {
		t.Fatal("no figure of the hub measured")
	}
	for k, v := range small {
		if large[k] != v {
			t.Errorf("%s: %d with 5 members, %d with 500", k, v, large[k])
		}
	}
	if len(large) != len(small) {
		t.Errorf("the hub has %d figures with 5 members, %d with 500", len(small), len(large))
	}
}

// TestExplicitAccountsRefusedPastTheQuotas: without organization, members listed one by one grow the central
// queue's policy and the router's environment and policy; past a quota the configuration is refused, before
// anything is declared, naming the quota and organization.id.
func TestExplicitAccountsRefusedPastTheQuotas(t *testing.T) {
	explicit := func(n int) map[string]string {
		cfg := fleet.Members(n, false)
		delete(cfg, config.Namespace+":organization")
		return cfg
	}
	// The largest list accepted renders within every quota.
	largest := 0
	for n := 1; n <= 200; n++ {
		if _, err := fleet.Render(fleet.Stack{Name: "explicit", Config: explicit(n)}); err != nil {
			var cfgErr *config.Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("%d members: %v, want a configuration error", n, err)
			}
			for _, want := range []string{"organization.id", "bytes of", "docs.aws.amazon.com"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%d members: %v does not say %q", n, err, want)
				}
			}
			break
		}
		largest = n
	}
	t.Logf("largest explicit list accepted: %d members", largest)
	if largest == 0 || largest == 200 {
		t.Fatalf("largest explicit list accepted: %d, want a limit between", largest)
	}
	all, _, err := fleet.Measure(fleet.Stack{Name: "explicit", Config: explicit(largest)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.Over() {
			t.Errorf("%d members accepted, yet %s", largest, f)
		}
	}
}

// TestRenderGrowsLinearly: declaring four times the fleet allocates four times as much per resource, within 5%:
// nothing in the program (or the mocks it renders under) grows with the square of the clusters or the accounts,
// as the mocks' reading of the configuration once did for every lookup of a cluster.
func TestRenderGrowsLinearly(t *testing.T) {
	perResource := func(clusters, members int) float64 {
		s := fleet.Stack{Name: "fleet", Config: fleet.Fleet(clusters, members)}
		var n int
		allocs := testing.AllocsPerRun(1, func() {
			rs, err := fleet.Render(s)
			if err != nil {
				t.Fatal(err)
			}
			n = len(rs)
		})
		return allocs / float64(n)
	}
	small, large := perResource(10, 25), perResource(40, 100)
	if large > small*1.05 {
		t.Errorf("%.0f allocations per resource at 40 clusters and 100 members, %.0f at a quarter of that: more than linear", large, small)
	}
}
