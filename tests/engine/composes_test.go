package engine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi-eks/sdk/v2/go/eks"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	pulumisdk "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdk/go/kib"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// A hub of the component package in Pulumi YAML, deployed first; a team's program that reads its outputs through a
// StackReference (both of YAML's ways: fn::stackReference, which pulumi-yaml 1.38 still runs, warning that it is
// deprecated, and the pulumi:pulumi:StackReference resource it recommends) and creates its EKS cluster in the same
// program (pulumi-aws's aws:eks:Cluster, as a YAML user writes it), its name given by configuration: known at the
// preview, though the cluster does not exist until the update creates it.
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
      vpcConfig:
        subnetIds: [subnet-1, subnet-2]
  payments:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName:
        fn::stackReference: [organization/kib-hub/dev, busName]
      hubAccountId:
        fn::stackReference: [organization/kib-hub/dev, account]
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
// update creates: its lookup waits for the update, saying so once, and the preview shows the cluster's resources; the
// update runs the checks before the cluster's first
// resource, and fails with the check's message when EKS has the cluster not ACTIVE, or running a Kubernetes version
// Karpenter does not run on, declaring nothing of it; once it is ACTIVE, up declares it, and a preview has no change.
func TestYAMLClusterOfTheSameProgram(t *testing.T) {
	t.Parallel()
	world := standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Versions: versions(t),
		Clusters: map[string]mocks.EKSCluster{"payments": {Status: "CREATING"}, "legacy": {Version: "1.20"}, "orders": {Status: "CREATING"}}}
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
			if n := strings.Count(diagnostics(preview), "no EKS cluster named "+tt.cluster+" exists at this preview, and its name comes from a resource of the program"); n != 1 ||
				!strings.Contains(preview, "(clusterName (from cluster, aws:eks/cluster:Cluster))") || !strings.Contains(preview, "payments-queue") || strings.Contains(preview, " delete") {
				t.Errorf("the preview: %d lookups waiting for the update, naming clusterName\n%s", n, preview)
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

	t.Run("a Go program: pulumi-eks's cluster, not ACTIVE, then up and no change", func(t *testing.T) {
		goClusterOfTheSameProgram(t, e, func() {
			delete(world.Clusters, "orders")
			e.SetWorld(t, world)
		})
	})

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

// goTeam is a team's Go program: the hub's outputs through a StackReference, its EKS cluster created with
// pulumi-eks (the stand-in eks provider, which names the EKS cluster after the component's name without "-eks"),
// and the package's ClusterInterruption through the generated Go SDK (sdk/go/kib), given the cluster's name as
// pulumi-eks outputs it, typed as the schema says.
func goTeam(ctx *pulumisdk.Context) error {
	hub, err := pulumisdk.NewStackReference(ctx, "hub", &pulumisdk.StackReferenceArgs{Name: pulumisdk.String("organization/kib-hub/dev")})
	if err != nil {
		return err
	}
	cluster, err := eks.NewCluster(ctx, "orders-eks", &eks.ClusterArgs{Version: pulumisdk.String("1.33")})
	if err != nil {
		return err
	}
	mode, identity := kib.ModeInstall, kib.IdentityPodIdentity // plain: the SDK takes no output for them
	orders, err := kib.NewClusterInterruption(ctx, "orders", &kib.ClusterInterruptionArgs{
		BusName:      hub.GetStringOutput(pulumisdk.String("busName")),
		HubAccountId: hub.GetStringOutput(pulumisdk.String("account")).ToStringPtrOutput(),
		ClusterName:  cluster.EksCluster.Name(),
		Mode:         &mode,
		Identity:     &identity,
	}, pulumisdk.Version("0.1.0"))
	if err != nil {
		return err
	}
	ctx.Export("queueName", orders.QueueName)
	return nil
}

// goClusterOfTheSameProgram runs goTeam through the Automation API and the real CLI: the preview's lookup of the
// cluster waits for the update (EKS has no cluster orders until the update creates it), showing its resources; up fails with the check's message while
// EKS has the cluster CREATING, declaring nothing of it; once active (active makes it so), up declares it, and a
// preview after has no change.
func goClusterOfTheSameProgram(t *testing.T, e *env, active func()) {
	ctx := context.Background()
	s := inlineStack(t, e, "dev", "kib-go-team", goTeam)
	if err := s.SetConfig(ctx, "aws:region", auto.ConfigValue{Value: region}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := s.Preview(ctx, optpreview.ProgressStreams(&out)); err != nil {
		t.Fatalf("preview: %v\n%s", err, out.String())
	}
	if n := strings.Count(diagnostics(out.String()), "ClusterInterruption orders: no EKS cluster named orders exists at this preview"); n != 1 ||
		!strings.Contains(out.String(), "orders-queue") {
		t.Errorf("the preview: %d lookups waiting for the update, naming clusterName\n%s", n, out.String())
	}
	out.Reset()
	if _, err := s.Up(ctx, optup.ProgressStreams(&out)); err == nil || !strings.Contains(out.String(), "the cluster is CREATING, not ACTIVE") {
		t.Errorf("up with the cluster CREATING: %v, want the check's failure\n%s", err, out.String())
	}
	// The component's children are typed under it (…ClusterInterruption$aws:sqs/queue:Queue::…): none.
	if state, err := s.Export(ctx); err != nil || bytes.Contains(state.Deployment, []byte(packageName+":index:ClusterInterruption$")) {
		t.Errorf("a resource of the cluster declared though its check failed (%v)", err)
	}
	active()
	out.Reset()
	res, err := s.Up(ctx, optup.ProgressStreams(&out))
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	if q := res.Outputs["queueName"].Value; q != "kib-team_orders" {
		t.Errorf("queueName = %v", q)
	}
	out.Reset()
	if _, err := s.Preview(ctx, optpreview.ExpectNoChanges(), optpreview.ProgressStreams(&out)); err != nil {
		t.Errorf("the preview after up: %v\n%s", err, out.String())
	}
}
