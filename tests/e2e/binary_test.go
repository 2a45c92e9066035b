package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// buildRouter compiles the router's bootstrap for this machine (harness.BuildRouter).
func buildRouter(t *testing.T) string {
	t.Helper()
	bin, err := harness.BuildRouter(filepath.Join("..", "..", "router"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// routerBinary starts a bus whose router is the real bootstrap, run as Lambda does (harness.NewWithBinary). Its
// stderr is returned for failure messages.
func routerBinary(t *testing.T, clusters ...string) (*bus, stderr) {
	t.Helper()
	return routerBinaryWith(t, harness.Options{Clusters: clusters})
}

// routerBinaryWith is routerBinary on a bus of opts (its Handler is the binary's).
func routerBinaryWith(t *testing.T, opts harness.Options) (*bus, stderr) {
	t.Helper()
	k := sealWith(t, &opts)
	hb, err := harness.NewWithBinary(context.Background(), opts, buildRouter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hb.Close)
	k.SetRoleNames(hb.IAM.Name)
	return &bus{Bus: hb, t: t, kms: k}, stderr{hb}
}

// stderr is what the router binary wrote to its stderr.
type stderr struct{ b *harness.Bus }

func (s stderr) String() string { return s.b.StderrText() }

// TestRouterBinaryUnderLambdaRuntime runs the real bootstrap as Lambda does.
func TestRouterBinaryUnderLambdaRuntime(t *testing.T) {
	b, stderr := routerBinary(t, "alpha", "beta")
	b.EC2.Put("i-0a1b2c3d4e5f60001", map[string]string{"eks:eks-cluster-name": "alpha"})
	b.EC2.Put("i-0a1b2c3d4e5f60002", map[string]string{"eks:eks-cluster-name": "beta"})
	spot, rebalance := fixture(t, "spot-interruption.json"), fixture(t, "rebalance-recommendation.json")
	if err := b.Publish(context.Background(), spot, rebalance, "garbage"); err != nil {
		t.Fatal(err)
	}
	res, err := b.Drain(context.Background())
	if err != nil {
		t.Fatalf("%v\nrouter stderr: %s", err, stderr.String())
	}
	if len(res) != 1 || res[0].Failed != 0 {
		t.Fatalf("invocations = %+v, want one with no failure", res)
	}
	for cluster, want := range map[string]string{"alpha": spot, "beta": rebalance} {
		got := b.received(cluster)
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s received %q, want its event unchanged", cluster, got)
			continue
		}
		if _, err := karpenter.Parse(got[0]); err != nil {
			t.Errorf("Karpenter cannot parse %s's message: %v", cluster, err)
		}
	}
	if d := b.Drops()["garbage"]; len(d) != 1 || d[0].Reason != "unparseable" {
		t.Errorf("drop log of the garbage body = %+v, want one unparseable", d)
	}
	if got := b.Metric(contract.MetricForwarded, "", ""); got != 2 {
		t.Errorf("EMF Forwarded on stdout = %v, want 2", got)
	}
}

// TestRouterBinaryRefusesBadConfig: a configuration mistake stops the function at start-up with the variable
// named, before any invocation.
func TestRouterBinaryRefusesBadConfig(t *testing.T) {
	bin := buildRouter(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=127.0.0.1:1", contract.EnvCacheSize + "=lots", "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("router started without CLUSTER_QUEUE_PREFIX: %v", err)
	}
	for _, want := range []string{contract.EnvClusterQueuePrefix + ": must not be empty", contract.EnvCacheSize + `: "lots" is not a positive integer`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
}

// TestRouterBinaryRefusesToRefuseEverything: an environment written before the sender check's variables existed
// (no FORWARDER_ROLE_NAME, ACCOUNT or PARTITION), with the check enforcing by default, would keep every event of a
// one-account bus in the quarantine: the function refuses to start instead, naming each variable; in observe mode,
// which refuses nothing, the same environment starts.
func TestRouterBinaryRefusesToRefuseEverything(t *testing.T) {
	bin := buildRouter(t)
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(bin)
		cmd.Env = append([]string{"AWS_LAMBDA_RUNTIME_API=127.0.0.1:1", contract.EnvClusterQueuePrefix + "=kib-old_", "PATH=" + os.Getenv("PATH"),
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_EC2_METADATA_DISABLED=true"}, extra...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	out, err := run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("the router started with nothing to attribute a message with: %v", err)
	}
	for _, v := range []string{contract.EnvAccount, contract.EnvPartition, contract.EnvForwarderRoleName} {
		if !strings.Contains(out, v+": not set") {
			t.Errorf("stderr %q does not name %s", out, v)
		}
	}
	// Observe mode starts: it gets as far as the Runtime API, which does not answer here.
	out, _ = run(contract.EnvSenderCheck + "=" + contract.SenderObserve)
	if strings.Contains(out, "invalid router configuration") {
		t.Errorf("observe mode refused to start: %s", out)
	}
}
