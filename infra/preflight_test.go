package infra_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/previous"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/spotrole"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
)

// What a first pulumi up in a fresh account needs of AWS besides what the stack creates: the EC2 Spot
// service-linked role, and the preflight lookups of the clusters.

const slrType = "aws:iam/serviceLinkedRole:ServiceLinkedRole"

// spotStack has a cluster in every mode: install and create in the hub, install in member A, existing-role only
// in member B.
func spotStack() map[string]string {
	cfg := clusters(
		`{"name":"hub-install"}`,
		`{"name":"hub-create","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`,
		`{"name":"a-install","account":"`+accountA+`"}`,
		`{"name":"b-legacy","account":"`+accountB+`","mode":"existing-role","controllerRoleName":"KarpenterControllerRole-b"}`,
	)
	b, _ := json.Marshal(map[string]any{
		accountA: map[string]string{"deployRoleArn": "arn:aws:iam::" + accountA + ":role/pulumi-deploy"},
		accountB: map[string]string{"deployRoleArn": "arn:aws:iam::" + accountB + ":role/pulumi-deploy"},
	})
	cfg["accounts"] = string(b)
	return cfg
}

// slrAccounts are the accounts the stack declares the Spot service-linked role in, with that role.
func slrAccounts(t *testing.T, r result) map[string]mocks.Resource {
	t.Helper()
	out := map[string]mocks.Resource{}
	for _, x := range r.resources.OfType(slrType) {
		if _, dup := out[x.Account]; dup {
			t.Errorf("two Spot service-linked roles declared in %s", x.Account)
		}
		out[x.Account] = x
	}
	return out
}

// TestSpotServiceLinkedRole: in every account with an install or create cluster, the role is declared when it is
// absent, never when it existed before the stack (IAM refuses to create it twice, and the stack must not delete
// it), and kept by every later update once the stack created it. Karpenter's release waits for it.
func TestSpotServiceLinkedRole(t *testing.T) {
	needing := []string{hubAccount, accountA} // B has only an existing-role cluster: the stack installs nothing there
	t.Run("absent", func(t *testing.T) {
		r, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		got := slrAccounts(t, r)
		if !slices.Equal(slices.Sorted(maps.Keys(got)), needing) {
			t.Fatalf("Spot service-linked role declared in %v, want %v", slices.Sorted(maps.Keys(got)), needing)
		}
		for account, x := range got {
			if stacktest.Str(t, x, "awsServiceName") != spotrole.ServiceName || !x.RetainOnDelete {
				t.Errorf("%s: %s = %s (retained %t), want spot.amazonaws.com, retained on delete", account, x.Name, stacktest.InputsJSON(x), x.RetainOnDelete)
			}
		}
		want := map[string]any{hubAccount: string(spotrole.Stack), accountA: string(spotrole.Stack)}
		if fmt.Sprint(r.outputs["spotServiceLinkedRoles"]) != fmt.Sprint(want) {
			t.Errorf("output %s = %v, want %v", "spotServiceLinkedRoles", r.outputs["spotServiceLinkedRoles"], want)
		}
	})
	t.Run("existed before the stack", func(t *testing.T) {
		r, err := runWith(t, &mocks.Mocks{SpotServiceLinkedRole: needing}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		if got := slrAccounts(t, r); len(got) != 0 {
			t.Errorf("declared in %v, where it existed before the stack: pulumi up would fail (InvalidInput) and a destroy delete it", slices.Sorted(maps.Keys(got)))
		}
		want := map[string]any{hubAccount: string(spotrole.Account), accountA: string(spotrole.Account)}
		if fmt.Sprint(r.outputs["spotServiceLinkedRoles"]) != fmt.Sprint(want) {
			t.Errorf("output = %v, want %v", r.outputs["spotServiceLinkedRoles"], want)
		}
	})
	t.Run("created by an earlier update", func(t *testing.T) {
		first, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		// The next update: the roles the first one created exist now, and its outputs say who made them.
		next, err := runWith(t, &mocks.Mocks{SpotServiceLinkedRole: needing, Previous: map[string]any{
			"spotServiceLinkedRoles": first.outputs["spotServiceLinkedRoles"],
		}}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		before, after := slrAccounts(t, first), slrAccounts(t, next)
		for _, account := range needing {
			b, a := before[account], after[account]
			if a.URN == "" || a.URN != b.URN || stacktest.InputsJSON(a) != stacktest.InputsJSON(b) || a.Parent != b.Parent {
				t.Errorf("%s: the role declared by the first update (%s) is not declared alike by the next (%s): Pulumi would delete or replace it", account, b.URN, a.URN)
			}
		}
	})
	t.Run("the release waits for it", func(t *testing.T) {
		r, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		roles := slrAccounts(t, r)
		for _, name := range []string{"hub-install", "hub-create", "a-install"} {
			provider := r.resources.OfCluster(name).One(t, "pulumi:providers:kubernetes")
			account := r.outputs["clusters"].(map[string]any)[name].(map[string]any)["account"].(string)
			role := roles[account]
			component := r.resources.Named(t, spotrole.Type, role.Parent)
			if !slices.Contains(provider.Dependencies, role.URN) && !slices.Contains(provider.Dependencies, component.URN) {
				t.Errorf("%s: Karpenter's provider (and so its release) does not wait for the Spot service-linked role of %s: %v", name, account, provider.Dependencies)
			}
		}
	})
}

// TestEveryInstallAccountCanLaunchSpot is the check AWS makes on the first Spot launch, not at pulumi up: in every
// account where the stack installs Karpenter, the EC2 Spot service-linked role exists before Karpenter runs,
// because it existed or because the stack declares it ("If you use the AWS CLI or an API to request a Spot
// Instance, you must first ensure that this role exists": Amazon EC2 User Guide, "Service-linked role for Spot
// Instance requests", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html).
// The mocks create nothing and check nothing: this test stands in for CreateFleet failing.
func TestEveryInstallAccountCanLaunchSpot(t *testing.T) {
	for _, existing := range [][]string{nil, {hubAccount}, {accountA}, {hubAccount, accountA, accountB}} {
		r, err := runWith(t, &mocks.Mocks{SpotServiceLinkedRole: existing}, render.AnyCommand, "dev", spotStack())
		if err != nil {
			t.Fatal(err)
		}
		declared := slrAccounts(t, r)
		for _, x := range r.resources.OfType("kubernetes:helm.sh/v3:Release") {
			account := r.outputs["clusters"].(map[string]any)[x.Parent].(map[string]any)["account"].(string)
			_, has := declared[account]
			if slices.Contains(existing, account) == has {
				t.Errorf("existing %v: account %s of %s: the role existed %t and is declared %t, want exactly one",
					existing, account, x.Parent, slices.Contains(existing, account), has)
			}
		}
	}
}

// TestPreflight: every missing prerequisite of a cluster is one message naming the cluster, what is missing and
// the fix, all reported at once, and nothing is declared in AWS before (only the member accounts' providers and
// the stack reference, which create nothing).
func TestPreflight(t *testing.T) {
	const (
		ours   = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/IRSA"
		theirs = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/OTHER"
	)
	irsa := `{"name":"irsa","identity":"irsa","oidcProviderArn":"` + ours + `"}`
	tests := []struct {
		name    string
		mocks   *mocks.Mocks
		entries []string
		want    []string // parts of one message each
	}{
		{"no such cluster", &mocks.Mocks{MissingClusters: []string{"gone"}}, []string{`{"name":"gone"}`},
			[]string{"clusters[0] (gone, account 123456789012, us-east-1): no EKS cluster named gone exists there. Fix: correct the entry's name or its account (clusters[0].account), or give it mode create"}},
		// Deleted before its entry was removed (decommissioned): the last update deployed it, and removing the entry is
		// all it takes (docs/deploying.md, "Clusters out of reach").
		{"a deployed cluster deleted", &mocks.Mocks{MissingClusters: []string{"gone"}, Previous: map[string]any{"clusters": map[string]any{
			"gone": map[string]any{"mode": "install", "queueName": "kib_gone", "karpenterNamespace": "kube-system", "account": "123456789012"}}}},
			[]string{`{"name":"gone"}`}, []string{"clusters[0] (gone, account 123456789012, us-east-1): no EKS cluster named gone exists there any more, " +
				"and the last update deployed it: if it was deleted, remove its entry (clusters[0]) and run pulumi up, which deletes its queue " +
				"as for any removed cluster and forgets its Karpenter release without asking the deleted cluster"}},
		{"no such cluster for existing-role", &mocks.Mocks{MissingClusters: []string{"gone"}}, []string{`{"name":"gone","mode":"existing-role","controllerRoleName":"k"}`},
			[]string{"clusters[0] (gone, account 123456789012, us-east-1): no EKS cluster named gone exists there"}},
		{"no such cluster in a member account", &mocks.Mocks{MissingClusters: []string{"c-" + accountA}}, nil,
			[]string{"(c-" + accountA + ", account " + accountA + ", us-east-1): no EKS cluster named c-" + accountA}},
		{"Kubernetes too new for the default Karpenter", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {Version: "1.38"}}}, []string{`{"name":"a"}`},
			[]string{"clusters[0] (a, account 123456789012, us-east-1): it runs Kubernetes 1.38, which Karpenter 1.15.1 does not run on (1.26 to 1.37). Fix: set karpenter.version"}},
		{"Kubernetes 1.37 with the newer LTS line", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {Version: "1.37"}}}, []string{`{"name":"a","karpenter":{"version":"1.14.3"}}`},
			[]string{"clusters[0] (a, account 123456789012, us-east-1): it runs Kubernetes 1.37, which Karpenter 1.14.3 does not run on (1.26 to 1.36)"}},
		{"Kubernetes too new for an early patch", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {Version: "1.34"}}}, []string{`{"name":"a","karpenter":{"version":"1.6.3"}}`},
			[]string{"it runs Kubernetes 1.34, which Karpenter 1.6.3 does not run on (1.26 to 1.33)"}},
		{"Kubernetes too old", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {Version: "1.25"}}}, []string{`{"name":"a"}`},
			[]string{"it runs Kubernetes 1.25, which Karpenter 1.15.1 does not run on"}},
		{"no access entries", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {AuthenticationMode: "CONFIG_MAP"}}}, []string{`{"name":"a"}`},
			[]string{`clusters[0] (a, account 123456789012, us-east-1): its authentication mode is "CONFIG_MAP", without access entries`, "aws eks update-cluster-config --name a --access-config authenticationMode=API_AND_CONFIG_MAP"}},
		{"not active", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"a": {Status: "CREATING"}}}, []string{`{"name":"a"}`},
			[]string{"clusters[0] (a, account 123456789012, us-east-1): the cluster is CREATING, not ACTIVE"}},
		{"no Pod Identity agent", &mocks.Mocks{NoPodIdentityAgent: []string{"a"}}, []string{`{"name":"a"}`},
			[]string{"clusters[0] (a, account 123456789012, us-east-1): the eks-pod-identity-agent add-on was not found", "aws eks create-addon --cluster-name a --addon-name eks-pod-identity-agent"}},
		{"no OIDC provider", &mocks.Mocks{OIDCProviders: map[string]mocks.OIDCProvider{ours: {}}}, []string{irsa},
			[]string{"clusters[0] (irsa, account 123456789012, us-east-1): the OIDC provider " + ours + " was not found", "eksctl utils associate-iam-oidc-provider --cluster irsa"}},
		{"another cluster's OIDC provider", &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"irsa": {OIDCIssuer: "https://oidc.eks.us-east-1.amazonaws.com/id/OTHER"}}}, []string{irsa},
			[]string{"the OIDC provider " + ours + " is for oidc.eks.us-east-1.amazonaws.com/id/IRSA, not for the cluster's issuer oidc.eks.us-east-1.amazonaws.com/id/OTHER"}},
		{"OIDC provider without the STS audience", &mocks.Mocks{OIDCProviders: map[string]mocks.OIDCProvider{ours: {URL: "oidc.eks.us-east-1.amazonaws.com/id/IRSA", Audiences: []string{"other"}}}}, []string{irsa},
			[]string{"does not list the audience sts.amazonaws.com", "aws iam add-client-id-to-open-id-connect-provider"}},
		{"every problem at once", &mocks.Mocks{MissingClusters: []string{"gone"}, NoPodIdentityAgent: []string{"a"}, OIDCProviders: map[string]mocks.OIDCProvider{theirs: {}}},
			[]string{`{"name":"gone"}`, `{"name":"a"}`, `{"name":"b","identity":"irsa","oidcProviderArn":"` + theirs + `"}`},
			[]string{"clusters[0] (gone,", "clusters[1] (a,", "clusters[2] (b,", "3 problems"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := clusters(tt.entries...)
			if tt.entries == nil {
				cfg = hubStack(accountA)
			}
			r, err := runWith(t, tt.mocks, render.AnyCommand, "dev", cfg)
			if err == nil {
				t.Fatal("the program ran, want the preflight to refuse")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			for _, x := range r.resources {
				if x.Type != "pulumi:providers:aws" && x.Type != "pulumi:pulumi:StackReference" {
					t.Errorf("%s %s was declared before the preflight failed", x.Type, x.Name)
				}
			}
		})
	}
}

// TestPreflightPassesTheClusterOn: an install cluster is reached at the endpoint and CA the preflight found, in
// its own account, with no second lookup.
func TestPreflightPassesTheClusterOn(t *testing.T) {
	m := &mocks.Mocks{Clusters: map[string]mocks.EKSCluster{"c-" + accountA: {Endpoint: "https://FOUND.example", CertificateAuthority: "Q0E="}}}
	r, err := runWith(t, m, render.AnyCommand, "dev", hubStack(accountA))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := stacktest.Secret(t, r.resources.OfCluster("c-"+accountA).One(t, "pulumi:providers:kubernetes"), "kubeconfig")
	if !strings.Contains(kubeconfig, `"server":"https://FOUND.example"`) || !strings.Contains(kubeconfig, `"certificate-authority-data":"Q0E="`) {
		t.Errorf("kubeconfig = %s, want the endpoint and CA the preflight found", kubeconfig)
	}
	if n := len(r.resources.Under("c-" + accountA).OfType(cluster.Type)); n != 0 {
		t.Errorf("unexpected nested components: %d", n)
	}
}

// TestSelfReferenceName: the stack reference to the stack itself is named as each backend accepts: fully
// qualified with Pulumi Cloud's organization, the bare stack name with a self-managed backend (whose legacy layout
// rejects organization/<project>/<stack>).
func TestSelfReferenceName(t *testing.T) {
	tests := []struct{ organization, want string }{
		{"", "dev"},
		{previous.SelfManagedOrganization, "dev"},
		{"acme", "acme/karpenter-interruption-bus/dev"},
	}
	for _, tt := range tests {
		r, err := runWith(t, &mocks.Mocks{Organization: tt.organization}, render.AnyCommand, "dev", clusters(`{"name":"a"}`))
		if err != nil {
			t.Fatal(err)
		}
		ref := r.resources.One(t, "pulumi:pulumi:StackReference")
		if got := stacktest.Str(t, ref, "name"); got != tt.want {
			t.Errorf("organization %q: the stack references %q, want %q", tt.organization, got, tt.want)
		}
	}
}

// TestExampleStackIsNeverDeployed: the documented example (example: true) previews and renders, but pulumi up
// refuses it before declaring anything.
func TestExampleStackIsNeverDeployed(t *testing.T) {
	if _, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "dev", devConfig(t)); err != nil {
		t.Fatalf("the example does not preview: %v", err)
	}
	r, err := runWith(t, &mocks.Mocks{Update: true}, render.AnyCommand, "dev", devConfig(t))
	if err == nil || !strings.Contains(err.Error(), "stack dev is marked example: true") {
		t.Fatalf("pulumi up of the example: %v, want it refused", err)
	}
	if len(r.resources) != 0 {
		t.Errorf("%d resources declared before the example was refused", len(r.resources))
	}
	// (Under the mocks an update cannot run create mode: pulumi-eks's outputs stay unknown, which only a preview
	// allows.)
	if _, err := runWith(t, &mocks.Mocks{Update: true}, render.AnyCommand, "prod", clusters(`{"name":"a"}`)); err != nil {
		t.Errorf("a stack without the example key is refused: %v", err)
	}
}
