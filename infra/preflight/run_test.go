package preflight_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
)

// TestEachKindRunsItsStepsInTheOneOrder: the program, the Bus and the ClusterInterruption run subsets of one
// order, each step once; the program of a hub runs every step.
func TestEachKindRunsItsStepsInTheOneOrder(t *testing.T) {
	S := preflight.Order
	want := map[string][]preflight.Step{
		"program hub":   S,
		"program shard": {preflight.StepConfiguration, preflight.StepSize, preflight.StepCommands, preflight.StepDeployed, preflight.StepLookups, preflight.StepReach, preflight.StepAdoption},
		"Bus":           {preflight.StepConfiguration, preflight.StepQuotas, preflight.StepConcurrency, preflight.StepArchive},
		"Join":          {preflight.StepConfiguration, preflight.StepCommands, preflight.StepLookups, preflight.StepReach},
	}
	got := map[string][]preflight.Step{
		"program hub": preflight.Program.Steps(false), "program shard": preflight.Program.Steps(true),
		"Bus": preflight.Bus.Steps(false), "Join": preflight.Join.Steps(false),
	}
	for name, steps := range got {
		if !slices.Equal(steps, want[name]) {
			t.Errorf("%s: steps %v, want %v", name, steps, want[name])
		}
		at := -1
		for _, s := range steps {
			i := slices.Index(S, s)
			if i <= at {
				t.Errorf("%s: %s out of the one order %v", name, s, S)
			}
			at = i
		}
	}
	if len(slices.Compact(slices.Clone(S))) != 10 {
		t.Errorf("Order %v: want ten distinct steps", S)
	}
	if i, j := slices.Index(S, preflight.StepDeployed), slices.Index(S, preflight.StepArchive); i < 0 || j != i+1 {
		t.Errorf("Order %v: the archive's owner is asked right after the last update is read (which archive the stack holds)", S)
	}
}

// run runs the preflight of kind under mocks with the configuration kv (a cluster of the stack's account for the
// program and the Join), returning what it found.
func run(t *testing.T, m *mocks.Mocks, kind preflight.Kind, opts preflight.Options, values map[string]string) (preflight.Flight, error) {
	t.Helper()
	var f preflight.Flight
	_, err := m.Run("karpenter-interruption-bus", "dev", func(ctx *pulumi.Context) error {
		var err error
		f, err = preflight.Run(ctx, preflight.Input{Kind: kind, Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
			if kind == preflight.Bus {
				return config.LoadBus(ctx.Stack(), env.Account, values)
			}
			return config.Load(ctx.Stack(), env.Account, values)
		}}, opts)
		return err
	})
	return f, err
}

func options(m *mocks.Mocks) preflight.Options {
	return preflight.Options{LookPath: func(f string) (string, error) { return "/usr/bin/" + f, nil }, ReadConcurrency: m.ReadConcurrency,
		ReadArchiveOwner: m.ReadArchiveOwner, Probe: reach.Always}
}

// TestRunRunsEachStepOnceInOrder: what each kind ran, through its lookups and probes under mocks.
func TestRunRunsEachStepOnceInOrder(t *testing.T) {
	one := map[string]string{"clusters": `[{"name":"alpha"}]`}
	for _, kind := range []preflight.Kind{preflight.Program, preflight.Bus, preflight.Join} {
		t.Run(kind.String(), func(t *testing.T) {
			m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": one["clusters"]}}
			values := one
			if kind == preflight.Bus {
				values = map[string]string{}
			}
			f, err := run(t, m, kind, options(m), values)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Ran, kind.Steps(false)) {
				t.Errorf("ran %v, want %v", f.Ran, kind.Steps(false))
			}
			if _, found := f.Found.Clusters["alpha"]; found != (kind != preflight.Bus) {
				t.Errorf("lookups found alpha: %v, want %v", found, kind != preflight.Bus)
			}
		})
	}
}

// TestAFailingStepEndsTheRun: a step that fails runs none after it: a command missing is reported before the
// account's concurrency is read or any cluster looked up or probed.
func TestAFailingStepEndsTheRun(t *testing.T) {
	m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": `[{"name":"alpha"}]`}}
	opts := options(m)
	opts.LookPath = func(string) (string, error) { return "", errors.New("not in PATH") }
	probed := false
	opts.Probe = func(context.Context, reach.Target) error { probed = true; return nil }
	read := false
	opts.ReadConcurrency = func(ctx context.Context, region string, id concurrency.Identity, fn string) (concurrency.Account, error) {
		read = true
		return m.ReadConcurrency(ctx, region, id, fn)
	}
	f, err := run(t, m, preflight.Program, opts, map[string]string{"clusters": `[{"name":"alpha"}]`})
	if err == nil || !strings.Contains(err.Error(), "aws: not found") {
		t.Fatalf("err = %v, want the missing aws command", err)
	}
	if want := []preflight.Step{preflight.StepConfiguration, preflight.StepQuotas, preflight.StepSize, preflight.StepCommands}; !slices.Equal(f.Ran, want) {
		t.Errorf("ran %v, want %v", f.Ran, want)
	}
	if probed || read || f.Found.Clusters != nil {
		t.Errorf("after the failing step: probed %v, concurrency read %v, lookups %v", probed, read, f.Found.Clusters)
	}
	if n := len(m.Resources()); n != 0 {
		t.Errorf("%d resources registered before the refusal", n)
	}
}

// TestTheAccountsAreDeclaredOnceAfterTheChecks: Input.Accounts (the accounts' providers, resources of the stack) is
// called once, and only once every check that needs no provider passed: never when the configuration is refused;
// after the commands are found and the account's concurrency read, before a cluster is probed; a Bus, which has no
// lookups, after its last step.
func TestTheAccountsAreDeclaredOnceAfterTheChecks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		kind   preflight.Kind
		values map[string]string
		want   []string // the calls, in order: commands (LookPath), concurrency, accounts, reach (Probe)
	}{
		{"program", preflight.Program, map[string]string{"clusters": `[{"name":"alpha"}]`}, []string{"commands", "concurrency", "accounts", "reach"}},
		{"program refused", preflight.Program, map[string]string{"clusters": `[{"name":"alpha","mode":"instal"}]`}, nil},
		{"Join", preflight.Join, map[string]string{"clusters": `[{"name":"alpha"}]`}, []string{"commands", "accounts", "reach"}},
		{"Bus", preflight.Bus, map[string]string{}, []string{"concurrency", "accounts"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": `[{"name":"alpha"}]`}}
			var calls []string
			note := func(c string) {
				if len(calls) == 0 || calls[len(calls)-1] != c {
					calls = append(calls, c)
				}
			}
			opts := options(m)
			opts.LookPath = func(f string) (string, error) { note("commands"); return "/usr/bin/" + f, nil }
			opts.ReadConcurrency = func(ctx context.Context, region string, id concurrency.Identity, fn string) (concurrency.Account, error) {
				note("concurrency")
				return m.ReadConcurrency(ctx, region, id, fn)
			}
			opts.Probe = func(context.Context, reach.Target) error { note("reach"); return nil }
			_, _ = m.Run("karpenter-interruption-bus", "dev", func(ctx *pulumi.Context) error {
				_, err := preflight.Run(ctx, preflight.Input{Kind: tt.kind, Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
					if tt.kind == preflight.Bus {
						return config.LoadBus(ctx.Stack(), env.Account, tt.values)
					}
					return config.Load(ctx.Stack(), env.Account, tt.values)
				}, Accounts: func(cfg config.Config, env awsenv.Env) (map[string][]pulumi.InvokeOption, error) {
					note("accounts")
					return map[string][]pulumi.InvokeOption{env.Account: nil}, nil
				}}, opts)
				return err
			})
			if !slices.Equal(calls, tt.want) {
				t.Errorf("calls %v, want %v", calls, tt.want)
			}
		})
	}
}

// TestABareClusterIsRefusedNotCrashed: a cluster described without its certificate authority and OIDC identity (EKS
// fills them in once it is created), or with an identity block holding no OIDC entry, is refused for its status,
// naming it, and crashes nothing.
func TestABareClusterIsRefusedNotCrashed(t *testing.T) {
	for _, c := range []mocks.EKSCluster{{Status: "CREATING", Bare: true}, {Status: "CREATING", NoOIDC: true}} {
		m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": `[{"name":"alpha"}]`},
			Clusters: map[string]mocks.EKSCluster{"alpha": c}}
		_, err := run(t, m, preflight.Program, options(m), map[string]string{"clusters": `[{"name":"alpha"}]`})
		if err == nil || !strings.Contains(err.Error(), "the cluster is CREATING") {
			t.Fatalf("%+v: err = %v, want alpha refused as CREATING", c, err)
		}
	}
}

// TestAFigureOfAnUnknownWaitsForTheUpdate: at a preview where the Bus's namePrefix is unknown (a stand-in holding the
// preview's marks), the router's function's reservation is not read (its name is a stand-in's, which holds nothing);
// known, it is.
func TestAFigureOfAnUnknownWaitsForTheUpdate(t *testing.T) {
	marks := standin.New()
	for _, tt := range []struct {
		prefix string
		read   bool
	}{{marks.Text, false}, {"kib-prod", true}} {
		m := &mocks.Mocks{}
		opts := options(m)
		var read []string
		opts.ReadConcurrency = func(ctx context.Context, region string, id concurrency.Identity, fn string) (concurrency.Account, error) {
			read = append(read, fn)
			return m.ReadConcurrency(ctx, region, id, fn)
		}
		_, err := m.Run("karpenter-interruption-bus", "dev", func(ctx *pulumi.Context) error {
			_, err := preflight.Run(ctx, preflight.Input{Kind: preflight.Bus, Unknowns: preflight.Unknowns{Marks: marks},
				Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
					return config.LoadBus(ctx.Stack(), env.Account, map[string]string{"namePrefix": tt.prefix})
				}}, opts)
			return err
		})
		if err != nil || (len(read) > 0) != tt.read {
			t.Errorf("namePrefix %s: the reservations read %v (%v); want read: %v", tt.prefix, read, err, tt.read)
		}
	}
}
