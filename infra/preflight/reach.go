package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
)

// probesAtOnce bounds the clusters probed at once: a fleet's token commands are processes of the AWS CLI. With
// reach.DefaultTimeouts, 32 clusters that never answer take one round of the API server's 1 s, and the run's probes
// stop at 30 s whatever their number.
const probesAtOnce = 32

// warnUnreachable warns, in every preview and update, of each cluster whose Karpenter the stack installs on an
// existing EKS cluster and whose Kubernetes API the machine running pulumi cannot reach, with why (reach): the
// preview is not held up, and the warning says what an update will do and what to do. A cluster the stack creates
// is not probed: its API is the stack's own, new.
//
// It returns the names of the clusters it warned of.
func warnUnreachable(ctx *pulumi.Context, cfg config.Config, region string, found Report, probe reach.Probe) map[string]bool {
	names := map[string]bool{}
	for _, u := range Unreachable(ctx.Context(), cfg, region, found, probe) {
		_ = ctx.Log.Warn(u.Warning, nil)
		names[u.Cluster] = true
	}
	return names
}

// Out is a cluster out of reach: its name, and the warning that says so.
type Out struct{ Cluster, Warning string }

// Unreachable are the install clusters of cfg that probe cannot reach, in the configuration's order.
func Unreachable(ctx context.Context, cfg config.Config, region string, found Report, probe reach.Probe) []Out {
	var targets []reach.Target
	var at []int
	for i, cl := range cfg.Clusters {
		c, ok := found.Clusters[cl.Name]
		if cl.Mode != config.ModeInstall || !ok || found.Pending[cl.Name] {
			continue // a cluster the lookups could not see yet has no endpoint to probe
		}
		role := ""
		if cfg.IsMember(cl.Account) {
			role = cfg.Accounts[cl.Account].DeployRoleARN
		}
		targets = append(targets, reach.Target{Cluster: cl.Name, Region: region, RoleARN: role, Endpoint: c.Endpoint, CAData: c.CertificateAuthority})
		at = append(at, i)
	}
	why := reach.All(ctx, probe, targets, probesAtOnce, reach.DefaultTimeouts.All)
	var out []Out
	for _, j := range slicesSorted(why) {
		i, cl := at[j], cfg.Clusters[at[j]]
		out = append(out, Out{cl.Name, fmt.Sprintf("clusters[%d] (%s, account %s, %s): its Kubernetes API cannot be reached from here: %v. This preview shows its "+
			"plan all the same; an update completes if it changes nothing of %s's Karpenter release (left as it was deployed), and fails on "+
			"that release if it must create, adopt or change it, once all the rest of the update is done, losing nothing (the change is made by "+
			"the next update that reaches it): run it where the API server can be "+
			"reached (a private endpoint needs a runner in the cluster's VPC), or make the cluster mode existing-role and install Karpenter "+
			"from its own pipeline with the chart value this stack outputs (docs/deploying.md, \"Clusters out of reach\")",
			i, cl.Name, cl.Account, region, strings.TrimSuffix(why[j].Error(), "."), cl.Name)})
	}
	return out
}

func slicesSorted(m map[int]error) []int {
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Release is what an update does to the Karpenter release of a cluster out of reach.
type Release string

// What an update does to a release out of reach: ReleaseUnchanged it completes; each other it fails on, last.
const (
	ReleaseUnchanged Release = "unchanged"
	ReleaseCreate    Release = "create"
	ReleaseAdopt     Release = "adopt"
	ReleaseChange    Release = "change"
	// ReleaseUnknown: the last update recorded no digest of the release (a version of the program before it did).
	ReleaseUnknown Release = "may change"
)

// ReleaseOf is what this update does to the release of cluster cl, out of reach: from the last update's record
// (before), whether the release is adopted, and the digest it asks now (cluster.ReleaseDigest).
func ReleaseOf(cl config.Cluster, before Last, adopting map[string]string, digest string) Release {
	was, deployed := before.Deployed[cl.Name]
	switch {
	case !cl.Mode.InstallsKarpenter():
		return ReleaseUnchanged
	case adopting[cl.Name] != "":
		return ReleaseAdopt
	case !deployed || !was.Mode.InstallsKarpenter():
		return ReleaseCreate
	case was.ReleaseDigest == "":
		return ReleaseUnknown
	case was.ReleaseDigest != digest:
		return ReleaseChange
	}
	return ReleaseUnchanged
}

// ReleasesWarning is the one warning of an update whose releases out of reach it must create, adopt or change
// (releases, by cluster, in the configuration's order): it names each, and says what the update does; "" when it
// changes none.
func ReleasesWarning(cfg config.Config, releases map[string]Release) string {
	var named []string
	for _, cl := range cfg.Clusters {
		if r, ok := releases[cl.Name]; ok && r != ReleaseUnchanged {
			named = append(named, fmt.Sprintf("%s (%s)", cl.Name, r))
		}
	}
	if len(named) == 0 {
		return ""
	}
	return fmt.Sprintf("this update must create, adopt or change the Karpenter release of %d cluster(s) out of reach: %s. It fails on each, "+
		"once every other create and update is made; pulumi up --continue-on-error tries every one of them and names each in its error "+
		"(without it, the engine stops at the first it tries, and names only that one). No deletion is made until an update makes them "+
		"all: the next that reaches their clusters (docs/deploying.md, \"Clusters out of reach\")", len(named), strings.Join(named, ", "))
}
