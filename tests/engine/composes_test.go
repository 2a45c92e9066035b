package engine_test

import (
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// A hub of the component package in Pulumi YAML, deployed first; a team's program that reads its outputs through a
// StackReference and creates its EKS cluster in the same program (pulumi-aws's aws:eks:Cluster, as a YAML user
// writes it), its name given by configuration: known at the preview, though the cluster does not exist until the
// update creates it.
const (
	composedHub = `name: kib-hub
runtime: yaml
resources:
  hub:
    type: karpenter-interruption-bus:index:Bus
    properties:
      namePrefix: kib-team
      heartbeat:
        enabled: true
        rate: 5m
outputs:
  busName: ${hub.busName}
  account: ${hub.account}
  heartbeatRate: ${hub.heartbeatRate}
`
	composedTeam = `name: kib-team
runtime: yaml
config:
  clusterName:
    type: string
resources:
  hub:
    type: pulumi:pulumi:StackReference
    properties:
      name: organization/kib-hub/dev
  cluster:
    type: aws:eks:Cluster
    properties:
      name: ${clusterName}
      version: "1.33"
      roleArn: arn:aws:iam::` + hub + `:role/eks-cluster
      subnetIds: [subnet-1, subnet-2]
  payments:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: ${hub.outputs["busName"]}
      hubAccountId: ${hub.outputs["account"]}
      heartbeatRate: ${hub.outputs["heartbeatRate"]}
      clusterName: ${cluster.name}
outputs:
  queueName: ${payments.queueName}
  chartValue: ${payments.chartValue}
`
)

// diagnostics is the Diagnostics section of a preview's output: each message once (the progress lines repeat them).
func diagnostics(preview string) string {
	_, d, _ := strings.Cut(preview, "\nDiagnostics:\n")
	return d
}

// TestYAMLClusterOfTheSameProgram: a team's cluster created in the same program joins the hub read through a
// StackReference, in one pulumi up through the real CLI and the YAML host. The preview cannot find the cluster the
// update creates: it defers the component's checks, saying so once; the update runs them before the cluster's first
// resource, and fails with the check's message when EKS has the cluster not ACTIVE, or running a Kubernetes version
// Karpenter does not run on, declaring nothing of it; once it is ACTIVE, up declares it, and a preview has no change.
func TestYAMLClusterOfTheSameProgram(t *testing.T) {
	t.Parallel()
	world := standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Versions: versions(t),
		Clusters: map[string]mocks.EKSCluster{"payments": {Status: "CREATING"}, "legacy": {Version: "1.20"}}}
	e := newEnv(t, world)
	installProvider(t, e, "0.1.0")
	hubDir := yamlProject(t, composedHub)
	pulumi(t, e, hubDir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, hubDir, "config", "set", "aws:region", region)
	pulumi(t, e, hubDir, "up", "--yes", "--non-interactive")

	dir := yamlProject(t, composedTeam)
	stack := func(name, cluster string) {
		pulumi(t, e, dir, "stack", "init", name, "--non-interactive")
		pulumi(t, e, dir, "config", "set", "aws:region", region)
		pulumi(t, e, dir, "config", "set", "clusterName", cluster)
	}
	for _, tt := range []struct{ stack, cluster, fails string }{
		{"creating", "payments", "the cluster is CREATING, not ACTIVE"},
		{"legacy", "legacy", "it runs Kubernetes 1.20"},
	} {
		t.Run(tt.stack, func(t *testing.T) {
			stack(tt.stack, tt.cluster)
			preview := pulumi(t, e, dir, "preview", "--non-interactive")
			if n := strings.Count(diagnostics(preview), "its checks failed at this preview, where clusterName (from cluster, aws:eks/cluster:Cluster)"); n != 1 ||
				!strings.Contains(preview, "no EKS cluster named "+tt.cluster+" exists") {
				t.Errorf("the preview: %d deferrals naming clusterName\n%s", n, preview)
			}
			out, err := pulumiErr(e, dir, "up", "--yes", "--non-interactive")
			if err == nil || !strings.Contains(err.Error(), tt.fails) {
				t.Errorf("up: %v, want %q\n%s", err, tt.fails, out)
			}
			for _, r := range stackResources(t, e, dir) {
				if strings.HasPrefix(r, tt.cluster+"-") {
					t.Errorf("%s was declared though the cluster's check failed", r)
				}
			}
		})
	}

	t.Run("ACTIVE: up, then no change", func(t *testing.T) {
		world.Clusters = nil
		e.SetWorld(t, world)
		pulumi(t, e, dir, "stack", "select", "creating", "--non-interactive")
		pulumi(t, e, dir, "up", "--yes", "--non-interactive")
		outputs := stackOutputs(t, e, dir)
		if outputs["queueName"] != "kib-team_payments" || outputs["chartValue"] != "settings.interruptionQueue=kib-team_payments" {
			t.Errorf("outputs = %v", outputs)
		}
		pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
	})
}
