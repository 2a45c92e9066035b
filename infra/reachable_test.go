package infra_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// TestUnreachable: each install cluster the probe cannot reach is named, in the configuration's order, with its
// index, account and region, why (the probe's reason, without a doubled full stop), what a preview and an update do
// and what to do; a cluster it reaches, one the stack creates, and one whose Karpenter it does not install are not
// probed or not named. A member's cluster is probed with the account's deploy role, as its kubeconfig signs in.
func TestUnreachable(t *testing.T) {
	const member = "210987654321"
	cfg, err := config.Load("dev", accountA, map[string]string{
		"clusters": `[{"name":"a"},{"name":"b","account":"` + member + `"},{"name":"c"},` +
			`{"name":"r","mode":"existing-role","controllerRoleName":"k"},` +
			`{"name":"n","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}]`,
		"accounts": `{"` + member + `":{"deployRoleArn":"arn:aws:iam::` + member + `:role/deploy"}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	found := preflight.Report{Clusters: map[string]preflight.Cluster{}}
	for _, n := range []string{"a", "b", "c", "r"} {
		found.Clusters[n] = preflight.Cluster{Endpoint: "https://" + n + ".example", CertificateAuthority: "Q0E="}
	}
	var probed []string
	var mu sync.Mutex // the clusters are probed side by side
	probe := func(_ context.Context, tg reach.Target) error {
		mu.Lock()
		probed = append(probed, tg.Cluster+" "+tg.RoleARN+" "+tg.Endpoint+" "+tg.Region)
		mu.Unlock()
		switch tg.Cluster {
		case "c":
			return errors.New("its token command (aws eks get-token) failed: Unable to locate credentials.")
		case "b":
			return errors.New("its API server https://b.example cannot be reached from here: connection refused")
		}
		return nil
	}
	out := preflight.Unreachable(context.Background(), cfg, "us-east-1", found, reach.Probe(func(ctx context.Context, tg reach.Target) error { return probe(ctx, tg) }))
	slices.Sort(probed)
	if want := []string{
		"a  https://a.example us-east-1", "b arn:aws:iam::" + member + ":role/deploy https://b.example us-east-1", "c  https://c.example us-east-1",
	}; !slices.Equal(probed, want) {
		t.Errorf("probed %q, want %q", probed, want)
	}
	if len(out) != 2 || out[0].Cluster != "b" || out[1].Cluster != "c" {
		t.Fatalf("out of reach: %+v, want b then c", out)
	}
	for _, want := range []string{
		"clusters[1] (b, account " + member + ", us-east-1): its Kubernetes API cannot be reached from here: its API server https://b.example cannot be reached from here: connection refused. ",
		"an update completes if it changes nothing of b's Karpenter release (left as it was deployed)",
		"fails on that release if it must create, adopt or change it, once all the rest of the update is done, losing nothing",
		"existing-role", `docs/deploying.md, "Clusters out of reach"`,
	} {
		if !strings.Contains(out[0].Warning, want) {
			t.Errorf("warning %q does not say %q", out[0].Warning, want)
		}
	}
	if !strings.Contains(out[1].Warning, "Unable to locate credentials. This preview") {
		t.Errorf("warning %q: want the reason's own full stop, once", out[1].Warning)
	}
}

// TestAReleaseOutOfReachWaitsForEverythingElse: the Karpenter release of a cluster out of reach depends on everything
// else the update declares (docs/deploying.md, "Clusters out of reach"): the bus, the router, the alarms, the
// heartbeat, each member's baseline, the dashboard, the Spot service-linked role, and every cluster in reach; a
// release in reach waits for none of that. So an update that must change it fails on it last.
func TestAReleaseOutOfReachWaitsForEverythingElse(t *testing.T) {
	member := "222222222222"
	kv := map[string]string{
		"clusters": `[{"name":"alpha"},{"name":"bravo"},{"name":"delta","account":"` + member + `"}]`, "dashboard": "true",
		"accounts": `{"` + member + `":{"deployRoleArn":"arn:aws:iam::` + member + `:role/deploy"}}`,
	}
	probe := func(_ context.Context, tg reach.Target) error {
		if tg.Cluster == "bravo" {
			return errors.New("connection refused")
		}
		return nil
	}
	r, err := runProbed(t, &mocks.Mocks{Existing: []string{"alpha", "bravo", "delta"}}, render.AnyCommand, probe, "dev", kv)
	if err != nil {
		t.Fatal(err)
	}
	release := func(c string) mocks.Resource {
		return r.resources.OfCluster(c).Named(t, "kubernetes:helm.sh/v3:Release", c+"-karpenter")
	}
	// The engine expands a dependency on a component into its children: a component is waited for when some
	// dependency is of its type or one of its children (type chain "component$child") and is named after it.
	waits := func(rel mocks.Resource, typ, name string) bool {
		for _, d := range rel.Dependencies {
			i := strings.LastIndex(d, "::")
			chain, n := d[:i], d[i+2:]
			if (strings.HasSuffix(chain, "::"+typ) || strings.Contains(chain, "::"+typ+"$")) && (n == name || strings.HasPrefix(n, name+"-")) {
				return true
			}
		}
		return false
	}
	for _, w := range []struct{ typ, name string }{
		{"karpenter-interruption-bus:index:Bus", "kib-dev"}, {"karpenter-interruption-bus:index:Router", "kib-dev-router"},
		{"karpenter-interruption-bus:index:Alarms", "kib-dev-alarms"}, {"karpenter-interruption-bus:index:Heartbeat", "kib-dev-heartbeat"},
		{"karpenter-interruption-bus:index:MemberAccount", "account-" + member + "-bus"}, {"karpenter-interruption-bus:index:Dashboard", "kib-dev-dashboard"},
		{"karpenter-interruption-bus:index:SpotServiceLinkedRole", "spot-service-linked-role"},
		{"karpenter-interruption-bus:index:ClusterInterruption", "alpha"}, {"karpenter-interruption-bus:index:ClusterInterruption", "delta"},
	} {
		if !waits(release("bravo"), w.typ, w.name) {
			t.Errorf("bravo's release (out of reach) does not wait for %s %s: %v", w.typ, w.name, release("bravo").Dependencies)
		}
		if w.name != "alpha" && waits(release("alpha"), w.typ, w.name) { // its own component's resources it does wait for
			t.Errorf("alpha's release (in reach) waits for %s %s", w.typ, w.name)
		}
	}
}

// TestTheRecordOfAReleaseOutOfReachIsWhatIsDeployed: the clusters output records, for each cluster, the digest of its
// Karpenter release: the one this update asks for a cluster in reach, the last update's for one out of reach, whose
// release the update cannot change, so that the next update still sees the change it must make.
func TestTheRecordOfAReleaseOutOfReachIsWhatIsDeployed(t *testing.T) {
	deployed := map[string]any{
		"alpha": map[string]any{"mode": "install", "karpenterNamespace": "kube-system", "releaseDigest": "alpha-before"},
		"bravo": map[string]any{"mode": "install", "karpenterNamespace": "kube-system", "releaseDigest": "bravo-before"},
	}
	kv := map[string]string{"clusters": `[{"name":"alpha"},{"name":"bravo"}]`}
	probe := func(_ context.Context, tg reach.Target) error {
		if tg.Cluster == "bravo" {
			return errors.New("connection refused")
		}
		return nil
	}
	r, err := runProbed(t, &mocks.Mocks{Previous: map[string]any{"clusters": deployed}}, render.AnyCommand, probe, "dev", kv)
	if err != nil {
		t.Fatal(err)
	}
	clusters, _ := r.outputs["clusters"].(map[string]any)
	digest := func(c string) string {
		m, _ := clusters[c].(map[string]any)
		s, _ := m["releaseDigest"].(string)
		return s
	}
	if d := digest("alpha"); len(d) != 64 || d == "alpha-before" {
		t.Errorf("alpha (in reach): releaseDigest %q, want the sha256 this update asks", d)
	}
	if d := digest("bravo"); d != "bravo-before" {
		t.Errorf("bravo (out of reach): releaseDigest %q, want the last update's, bravo-before", d)
	}
	// Another value asks another release; the same configuration, the same.
	for _, c := range []struct {
		clusters string
		same     bool
	}{{`[{"name":"alpha"},{"name":"bravo"}]`, true}, {`[{"name":"alpha","karpenter":{"values":{"replicas":1}}},{"name":"bravo"}]`, false}} {
		again, err := runProbed(t, &mocks.Mocks{Previous: map[string]any{"clusters": deployed}}, render.AnyCommand, probe, "dev", map[string]string{"clusters": c.clusters})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := again.outputs["clusters"].(map[string]any)["alpha"].(map[string]any)
		if got := m["releaseDigest"]; (got == digest("alpha")) != c.same {
			t.Errorf("%s: alpha's releaseDigest %v, first %v: want the same %t", c.clusters, got, digest("alpha"), c.same)
		}
	}
}
