package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaruntime"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter"
)

// buildRouter compiles the router's main package for this machine, with the Lambda build tag and otherwise the
// settings of the test build, so it reuses the packages that build compiled (the deployed build, static and for
// arm64, is infra/routerbuild's, tested there).
func buildRouter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "router")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the router: %v\n%s", err, out)
	}
	return bin
}

// routerBinary starts a bus whose router is the real bootstrap, run as Lambda does, polling the Runtime API,
// configured only by environment variables (the SDK's AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_EC2 among them).
// Its stderr is returned for failure messages.
func routerBinary(t *testing.T, clusters ...string) (*bus, *bytes.Buffer) {
	t.Helper()
	return routerBinaryWith(t, harness.Options{Clusters: clusters})
}

// routerBinaryWith is routerBinary on a bus of opts (its Handler is the binary's).
func routerBinaryWith(t *testing.T, opts harness.Options) (*bus, *bytes.Buffer) {
	t.Helper()
	bin := buildRouter(t)
	rt := lambdaruntime.Start()
	t.Cleanup(rt.Close)
	invoke := func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
		payload, err := json.Marshal(batch)
		if err != nil {
			return events.SQSEventResponse{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		body, err := rt.Invoke(ctx, payload)
		if err != nil {
			return events.SQSEventResponse{}, err
		}
		var resp events.SQSEventResponse
		return resp, json.Unmarshal(body, &resp)
	}
	opts.Handler = invoke
	hb, err := harness.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hb.Close)
	b := &bus{Bus: hb, t: t}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+rt.Addr)
	for k, v := range b.RouterEnv() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = b.Out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return b, &stderr
}

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
