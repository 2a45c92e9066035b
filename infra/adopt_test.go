package infra_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// retained are the import IDs of what an install cluster named c in us-east-1 of 123456789012 retains on delete, by
// the logical name of the resource, as the AWS and Kubernetes providers import each.
func retained(c, association string) map[string]string {
	node, controller := "KarpenterNode-"+c+"-us-east-1", "KarpenterController-"+c+"-us-east-1"
	out := map[string]string{
		c + "-node-role": node, c + "-node-access": c + ":arn:aws:iam::123456789012:role/" + node,
		c + "-controller-role": controller, c + "-controller-policy": controller + ":karpenter-controller",
		c + "-karpenter": "kube-system/karpenter",
	}
	for _, p := range []string{"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryPullOnly", "AmazonSSMManagedInstanceCore"} {
		out[c+"-node-"+p] = node + "/arn:aws:iam::aws:policy/" + p
	}
	if association != "" {
		out[c+"-pod-identity"] = c + "," + association
	}
	return out
}

// roles are the IAM roles and policies of what retained holds: what a created cluster adopts.
func roles(retained map[string]string) map[string]string {
	out := map[string]string{}
	for name, id := range retained {
		if strings.Contains(name, "-node-role") || strings.Contains(name, "-controller-") || strings.Contains(name, "-node-Amazon") {
			out[name] = id
		}
	}
	return out
}

// TestRetainedResourcesAreAdopted: a cluster the last update did not declare, whose retained resources exist (its
// controller role found), has each of them imported rather than created, which IAM, EKS and Helm would refuse: after
// it was removed and added back (the association's ID remembered in the stack's outputs), and after a destroy (the
// ID given in the configuration, or the preview stops naming the one command that gives it). A cluster the last
// update declared, or one nothing was retained of, imports nothing.
func TestRetainedResourcesAreAdopted(t *testing.T) {
	held := []string{"123456789012 KarpenterController-back-us-east-1"}
	deployedA := map[string]any{"a": map[string]any{"mode": "install", "karpenterNamespace": "kube-system", "account": "123456789012"}}
	deployedBack := map[string]any{"a": deployedA["a"], "back": map[string]any{"mode": "install", "karpenterNamespace": "kube-system",
		"account": "123456789012", "podIdentityAssociationId": "a-0123456789abcdefg"}}
	tests := []struct {
		name       string
		m          *mocks.Mocks
		entry      string
		outOfReach bool              // back's Kubernetes API cannot be reached
		want       map[string]string // logical name -> import ID, for the back cluster
		wantErr    string
		// stillRetained is what retainedPodIdentityAssociations says of back after the update ("" for nothing).
		stillRetained string
	}{
		{name: "added back after its removal", m: &mocks.Mocks{Roles: held, Previous: map[string]any{
			"clusters": deployedA, "retainedPodIdentityAssociations": map[string]any{"back": "a-0123456789abcdefg"},
		}}, entry: `{"name":"back"}`, want: retained("back", "a-0123456789abcdefg")},
		{name: "deployed again after destroy, the association's ID not known", m: &mocks.Mocks{Roles: held}, entry: `{"name":"back"}`,
			wantErr: `pulumi config set --path 'clusters[1].karpenter.podIdentityAssociationId' "$(aws eks list-pod-identity-associations --cluster-name back --namespace kube-system --service-account karpenter`},
		{name: "deployed again after destroy, the association's ID given", m: &mocks.Mocks{Roles: held},
			entry: `{"name":"back","karpenter":{"podIdentityAssociationId":"a-0123456789abcdefg"}}`, want: retained("back", "a-0123456789abcdefg")},
		{name: "an IRSA cluster needs no association", m: &mocks.Mocks{Roles: held},
			entry: `{"name":"back","identity":"irsa","oidcProviderArn":"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"}`, want: retained("back", "")},
		{name: "a first deployment", m: &mocks.Mocks{}, entry: `{"name":"back"}`, want: map[string]string{}},
		// A cluster the stack creates is new each time: what it retained in the cluster (access entry, association,
		// release) went with the old cluster, so only its roles are adopted, and no association ID is asked for.
		{name: "a created cluster added back after its removal", m: &mocks.Mocks{Roles: held, Previous: map[string]any{"clusters": deployedA}},
			entry: `{"name":"back","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`, want: roles(retained("back", ""))},
		{name: "a created cluster deployed again after destroy", m: &mocks.Mocks{Roles: held},
			entry: `{"name":"back","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`, want: roles(retained("back", ""))},
		{name: "a cluster the last update declared", m: &mocks.Mocks{Roles: held, Previous: map[string]any{"clusters": deployedBack}},
			entry: `{"name":"back"}`, want: map[string]string{}},
		// Out of reach, the release's import fails (the provider cannot read it), after all the rest: the update
		// remembers that the cluster is still to adopt, or the next would create the release and Helm refuse the name.
		{name: "added back out of reach", m: &mocks.Mocks{Roles: held, Previous: map[string]any{
			"clusters": deployedA, "retainedPodIdentityAssociations": map[string]any{"back": "a-0123456789abcdefg"},
		}}, entry: `{"name":"back"}`, outOfReach: true, want: retained("back", "a-0123456789abcdefg"), stillRetained: "a-0123456789abcdefg"},
		{name: "declared by the last update, its adoption not finished", m: &mocks.Mocks{Roles: held, Previous: map[string]any{
			"clusters": deployedBack, "retainedPodIdentityAssociations": map[string]any{"back": "a-0123456789abcdefg"},
		}}, entry: `{"name":"back"}`, want: retained("back", "a-0123456789abcdefg")},
		{name: "an IRSA cluster added back out of reach", m: &mocks.Mocks{Roles: held, Previous: map[string]any{"clusters": deployedA}},
			entry:      `{"name":"back","identity":"irsa","oidcProviderArn":"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"}`,
			outOfReach: true, want: retained("back", ""), stillRetained: "(IRSA)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := func(_ context.Context, tg reach.Target) error {
				if tt.outOfReach && tg.Cluster == "back" {
					return errors.New("its API server cannot be reached from here: connection refused")
				}
				return nil
			}
			r, err := runProbed(t, tt.m, render.AnyCommand, probe, "dev", clusters(`{"name":"a"}`, tt.entry))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, x := range r.resources {
				if x.ImportID != "" && strings.HasPrefix(x.Name, "back-") {
					got[x.Name] = x.ImportID
				}
				if x.ImportID != "" && strings.HasPrefix(x.Name, "a-") {
					t.Errorf("%s of cluster a imported as %s: a was declared before", x.Name, x.ImportID)
				}
			}
			for name, id := range tt.want {
				if got[name] != id {
					t.Errorf("%s imported as %q, want %q", name, got[name], id)
				}
			}
			for name, id := range got {
				if _, ok := tt.want[name]; !ok {
					t.Errorf("%s imported as %q, want it created or kept", name, id)
				}
			}
			left, _ := r.outputs["retainedPodIdentityAssociations"].(map[string]string)
			id, kept := left["back"]
			switch {
			case tt.stillRetained == "" && kept:
				t.Errorf("back still to adopt (%q) after an update that adopts it wholly", id)
			case tt.stillRetained == "(IRSA)" && (!kept || id != ""):
				t.Errorf("back still to adopt: %q, %v; want it, with no association", id, kept)
			case tt.stillRetained != "" && tt.stillRetained != "(IRSA)" && id != tt.stillRetained:
				t.Errorf("back still to adopt: %q, %v; want it, with association %s", id, kept, tt.stillRetained)
			}
		})
	}
}
