// Package preflight is every check the stack runs before it declares anything in AWS, in one order, in one place,
// for the program and for the component package's Bus and ClusterInterruption alike (Run). The checks that read only
// the configuration come first, then those that read AWS, then Kubernetes:
//
//  1. configuration: read, defaulted and validated (package config), every mistake at once;
//  2. quotas: what AWS enforces when it creates the hub's documents (a trust policy, a queue policy, the router's
//     environment and inline policy), measured as they will be declared;
//  3. size: the provider processes one preview starts, against providerBudgetMB, and the split into shards that fixes it;
//  4. commands: what the clusters' modes need where pulumi runs (the AWS CLI, kubectl);
//  5. concurrency: what Lambda says the account can reserve for the router, as the stack's provider signs in;
//  6. deployed: the program's configuration against what is deployed: a shard against its hub, every cluster's
//     release against the last update's, the clusters moved in from another stack against its record (the stack
//     references these read are the first resources registered, and declare nothing in AWS);
//  7. archive: who owns the archive's bucket, as S3 answers the stack's provider's identity: another account's
//     bucket of its name is refused, and only the account's own is adopted, never over an archive the stack holds;
//  8. lookups: what the clusters need of AWS and no resource creates (the EKS clusters, their add-ons and
//     providers, the Spot service-linked role), through each account's provider (declared just before);
//  9. reach: the Kubernetes API of each cluster whose Karpenter the stack installs on an existing cluster;
//  10. adoption: what was retained before and is adopted now, and which adoptions an API out of reach leaves to the
//     next update.
//
// Each kind of run (Kind) runs the steps it has, each once, in that order; a step that fails stops the run before
// the next, and nothing is declared in AWS before the last. A mistake in the configuration alone is reported
// before anything at all is registered.
package preflight

import (
	"context"
	"fmt"
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/bucketowner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/previous"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

// Kind is what runs the preflight.
type Kind int

const (
	// Program is the stack's program: the shared part, if a hub, and every cluster of its configuration.
	Program Kind = iota
	// Bus is the component package's Bus: the shared part, no cluster.
	Bus
	// Join is the component package's ClusterInterruption: one cluster joining a bus from its own stack.
	Join
)

func (k Kind) String() string {
	switch k {
	case Program:
		return "program"
	case Bus:
		return "Bus"
	case Join:
		return "ClusterInterruption"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Step is one check of the preflight.
type Step string

// The steps, as Order runs them.
const (
	StepConfiguration Step = "configuration"
	StepQuotas        Step = "quotas"
	StepSize          Step = "size"
	StepCommands      Step = "commands"
	StepConcurrency   Step = "concurrency"
	StepDeployed      Step = "deployed"
	StepArchive       Step = "archive"
	StepLookups       Step = "lookups"
	StepReach         Step = "reach"
	StepAdoption      Step = "adoption"
)

// Order is the preflight's one order.
var Order = []Step{StepConfiguration, StepQuotas, StepSize, StepCommands, StepConcurrency, StepDeployed, StepArchive, StepLookups, StepReach,
	StepAdoption}

// Steps are the steps a run of kind k has, in Order; for the program, a shard's (which declares neither the hub's
// policies, its router nor its archive) want neither quotas, concurrency nor the archive.
func (k Kind) Steps(shard bool) []Step {
	var skip []Step
	switch {
	case k == Bus:
		// The shared part has no cluster: nothing to look up, reach or adopt, no command to run. Nor the size: the
		// provider budget is a stack's, and the Bus's stack is the user's program, which the Bus neither sees whole
		// nor can split (providerBudgetMB and make shards are the program's).
		skip = []Step{StepSize, StepCommands, StepDeployed, StepLookups, StepReach, StepAdoption}
	case k == Join:
		// One cluster: the hub's documents and its router are the Bus's, its providers the joining stack's own, and
		// it keeps no record of what it deployed before: it adopts nothing (docs/clusters.md).
		skip = []Step{StepQuotas, StepSize, StepConcurrency, StepDeployed, StepArchive, StepAdoption}
	case shard:
		skip = []Step{StepQuotas, StepConcurrency, StepArchive}
	}
	return slices.DeleteFunc(slices.Clone(Order), func(s Step) bool { return slices.Contains(skip, s) })
}

// Options are what the checks run with where pulumi runs; tests and the offline render pass stand-ins.
type Options struct {
	// LookPath finds a command (exec.LookPath).
	LookPath func(file string) (string, error)
	// ReadConcurrency reads what Lambda says of the account's concurrency and of the router's function's reservation,
	// as identity id (concurrency.FromEnvironment).
	ReadConcurrency func(ctx context.Context, region string, id concurrency.Identity, function string) (concurrency.Account, error)
	// ReadArchiveOwner asks S3, as identity id, who owns the bucket of the archive's name (bucketowner.FromEnvironment).
	ReadArchiveOwner func(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (bucketowner.Answer, error)
	// Probe says why the machine running pulumi cannot reach a cluster's Kubernetes API (reach.Default).
	Probe reach.Probe
}

// Input is one run of the preflight.
type Input struct {
	Kind Kind
	// Load reads the configuration in env, the account and region the stack's AWS provider reaches: the stack's
	// configuration (StackConfiguration) for the program, the component's arguments for the package.
	Load func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error)
	// Under places the run's lookups (the component's parent, for the package).
	Under []pulumi.InvokeOption
	// Accounts declares the providers of the configuration's accounts, once every check that needs none of them has
	// passed, and returns the options that reach each account (none for the stack's own). Nil: the stack's account
	// only, through Under.
	Accounts func(cfg config.Config, env awsenv.Env) (map[string][]pulumi.InvokeOption, error)
	// Unknowns are what a component's preview does not know yet (the zero value for the program: everything).
	Unknowns Unknowns
}

// Flight is what a run found, for the program or the component to declare with.
type Flight struct {
	Config config.Config
	Env    awsenv.Env
	// Previous are the last update's outputs (the program's only).
	Previous outputs.Read
	// Before is what the last update says of its clusters, and of those moved in from another stack.
	Before Last
	// Hub is a shard's hub.
	Hub Hub
	// Archive is what S3 said of the archive's bucket (bucketowner.NotChecked when nothing asked), ArchiveBucket its
	// name, and ArchiveInState whether the last update had an archive, which the stack's state then holds.
	Archive        bucketowner.Answer
	ArchiveBucket  string
	ArchiveInState bool
	// Found is what the lookups found.
	Found Report
	// Unreachable are the clusters whose Kubernetes API cannot be reached from here, each warned of.
	Unreachable map[string]bool
	// AdoptingOutOfReach are the install clusters this update adopts while their API cannot be reached, with the ID
	// of their pod identity association: the import of their release fails, and the next update adopts it still.
	AdoptingOutOfReach map[string]string
	// Ran are the steps run, in order.
	Ran []Step
	// unknowns are Input.Unknowns.
	unknowns Unknowns
}

// Run runs in's steps in Order, each once, and returns what they found; the first failing step's error ends it.
func Run(ctx *pulumi.Context, in Input, opts Options) (Flight, error) {
	f := Flight{unknowns: in.Unknowns}
	env, err := awsenv.Lookup(ctx, in.Under...) // provider lookups, no resource: the configuration names accounts against it
	if err != nil {
		return f, err
	}
	f.Env = env
	if f.Config, err = in.Load(ctx, env); err != nil {
		return f, err
	}
	var invoke map[string][]pulumi.InvokeOption
	for _, step := range in.Kind.Steps(f.Config.IsShard()) {
		if step == StepLookups {
			// The accounts' providers come first: the lookups in a member account go through its provider.
			if invoke, err = accounts(in, f); err != nil {
				return f, err
			}
		}
		f.Ran = append(f.Ran, step)
		if err := f.run(ctx, step, opts, invoke); err != nil {
			return f, err
		}
	}
	if !slices.Contains(f.Ran, StepLookups) && in.Accounts != nil {
		if _, err := accounts(in, f); err != nil {
			return f, err
		}
	}
	return f, nil
}

// accounts declares the accounts' providers (Input.Accounts).
func accounts(in Input, f Flight) (map[string][]pulumi.InvokeOption, error) {
	if in.Accounts == nil {
		return map[string][]pulumi.InvokeOption{f.Env.Account: in.Under}, nil
	}
	return in.Accounts(f.Config, f.Env)
}

// run runs one step.
func (f *Flight) run(ctx *pulumi.Context, step Step, opts Options, invoke map[string][]pulumi.InvokeOption) error {
	cfg := f.Config
	switch step {
	case StepConfiguration:
		// Read by Input.Load, before any step; the documented example is never deployed.
		if cfg.Example && !ctx.DryRun() {
			return fmt.Errorf("stack %s is marked example: true, the documented example whose IDs are placeholders: it is never "+
				"deployed. Copy its file to Pulumi.<your stack>.yaml, keep only your clusters, and remove the example key", ctx.Stack())
		}
		return nil
	case StepDeployed:
		return f.againstDeployed(ctx)
	case StepArchive:
		return f.checkArchive(ctx, opts.ReadArchiveOwner)
	case StepQuotas:
		return hubQuotas(cfg, f.Env, f.unknowns.Marks)
	case StepSize:
		return size(cfg)
	case StepCommands:
		return commands(cfg, opts.LookPath)
	case StepConcurrency:
		if f.unknowns.Marks.Holds(layout.RouterName(cfg)) {
			// The function's name is unknown at this preview (namePrefix is an output): what it holds now cannot be
			// read, and a stand-in's would count nothing. The update checks, before anything is declared.
			return nil
		}
		return checkConcurrency(ctx, cfg, f.Env, opts.ReadConcurrency)
	case StepLookups:
		found, err := lookups(ctx, cfg, f.Env.Region, invoke, f.Before, f.unknowns)
		f.Found = found
		return err
	case StepReach:
		f.Unreachable = warnUnreachable(ctx, cfg, f.Env.Region, f.Found, opts.Probe)
		return nil
	case StepAdoption:
		f.AdoptingOutOfReach = adoptedOutOfReach(cfg, f.Found, f.Unreachable)
		return nil
	}
	return fmt.Errorf("preflight: no step %q", step)
}

// againstDeployed checks the program's configuration against what is deployed: a shard against its hub (whose
// heartbeat and alarm topic it takes), every cluster's release against the last update's, the clusters moved in
// from another stack against that stack's record.
func (f *Flight) againstDeployed(ctx *pulumi.Context) error {
	var err error
	if f.Config.IsShard() {
		if f.Config, f.Hub, err = joinHub(ctx, f.Config, f.Env); err != nil {
			return err
		}
	}
	if f.Previous, err = previous.Read(ctx); err != nil {
		return err
	}
	f.Before = Last{Deployed: config.DeployedClusters(f.Previous.Clusters), Retained: f.Previous.RetainedPodIdentityAssociations, Adopting: map[string]bool{}}
	// Declared by the last update and retained still: it could not finish adopting them (the program's
	// retainedPodIdentityAssociations). Read here, from this stack's own outputs, before movedIn adds the clusters
	// moved in to Deployed.
	for c := range f.Before.Retained {
		if _, declared := f.Before.Deployed[c]; declared {
			f.Before.Adopting[c] = true
		}
	}
	if err := config.CheckReleases(f.Config, f.Before.Deployed); err != nil {
		return err
	}
	return movedIn(ctx, f.Config, f.Hub, &f.Before)
}

// adoptedOutOfReach are the install clusters this update adopts (Report.Retained) while their Kubernetes API cannot
// be reached, with the ID of their pod identity association: the import of their Helm release needs the API server,
// so it fails, after the rest of the update is done (cluster.Args.After), and the next update must adopt the release
// still, where it would otherwise create it and Helm refuse the name in use.
func adoptedOutOfReach(cfg config.Config, found Report, unreachable map[string]bool) map[string]string {
	out := map[string]string{}
	for _, cl := range cfg.Clusters {
		if assoc, ok := found.Retained[cl.Name]; ok && unreachable[cl.Name] && cl.Mode == config.ModeInstall {
			out[cl.Name] = assoc
		}
	}
	return out
}
