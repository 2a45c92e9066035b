package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/kmsemu"
)

// bus wraps harness.Bus with test failures instead of errors.
type bus struct {
	*harness.Bus
	t   *testing.T
	kms *kmsemu.Server // the router's seal key's
}

func newBus(t *testing.T, clusters ...string) *bus {
	t.Helper()
	// A first backoff of one second instead of two keeps the tests short; it doubles from there as in Lambda.
	return newBusWith(t, harness.Options{Clusters: clusters, RetryDelay: time.Second})
}

// newBusWith starts a bus of opts, its router built in this process, sealing with a key of the KMS emulator.
func newBusWith(t *testing.T, opts harness.Options) *bus {
	t.Helper()
	k := sealWith(t, &opts)
	b, err := harness.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	k.SetRoleNames(b.IAM.Name)
	return &bus{Bus: b, t: t, kms: k}
}

// sealWith starts local-kms (tests/kmsemu) with a seal key as the stack declares it, whose policy lets only the
// router's role sign, unless opts has a seal already, and sets it in opts.
func sealWith(t *testing.T, opts *harness.Options) *kmsemu.Server {
	t.Helper()
	k, err := kmsemu.Start(sqsemu.Account, sqsemu.Region)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	if opts.Seal == nil {
		arn, err := k.CreateSealKey(context.Background(), harness.RouterRoleARN)
		if err != nil {
			t.Fatal(err)
		}
		opts.Seal = &harness.Seal{URL: k.URL, KeyARN: arn}
	}
	return k
}

func (b *bus) publish(bodies ...string) {
	b.t.Helper()
	if err := b.Publish(context.Background(), bodies...); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bus) pollOnce() lambdaesm.Result {
	b.t.Helper()
	r, err := b.ESM.PollOnce(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	return r
}

func (b *bus) drain() []lambdaesm.Result {
	b.t.Helper()
	res, err := b.Drain(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// received consumes cluster's queue as Karpenter does and returns the bodies, sorted.
func (b *bus) received(cluster string) []string {
	b.t.Helper()
	return b.consume(harness.QueueOf(cluster))
}

func (b *bus) consume(queue string) []string {
	b.t.Helper()
	bodies, err := b.Consume(context.Background(), queue)
	if err != nil {
		b.t.Fatal(err)
	}
	slices.Sort(bodies)
	return bodies
}

// dropReasons returns event id -> the reasons it was dropped with, one per log line.
func (b *bus) dropReasons() map[string][]string {
	out := map[string][]string{}
	for id, drops := range b.Drops() {
		for _, d := range drops {
			out[id] = append(out[id], d.Reason)
		}
	}
	return out
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "router", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
