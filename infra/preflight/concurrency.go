package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
)

// checkConcurrency refuses, before anything is declared, a reservation of the router's function that the account
// cannot give, as Lambda counts it now (infra/concurrency), naming both figures and the fix.
func checkConcurrency(ctx *pulumi.Context, cfg config.Config, env awsenv.Env,
	read func(ctx context.Context, region string, id concurrency.Identity, function string) (concurrency.Account, error),
) error {
	fn := layout.RouterName(cfg)
	id, err := providerIdentity(ctx)
	if err != nil {
		return err
	}
	if len(id.Unfollowed) > 0 {
		// Read as another identity, or through another way in, it would judge another account, or fail naming no key.
		_ = ctx.Log.Warn(fmt.Sprintf("router.reservedConcurrency: what account %s can reserve for the router's function is not checked before "+
			"anything is declared: the stack's AWS provider is configured with %s, which the check does not follow (docs/deploying.md, "+
			"\"Permissions\"). Should the account not have %d concurrent executions to reserve, the function's creation fails instead",
			env.Account, strings.Join(id.Unfollowed, ", "), cfg.Router.Reserved()), nil)
		return nil
	}
	a, err := read(ctx.Context(), env.Region, id, fn)
	if err != nil {
		return fmt.Errorf("router.reservedConcurrency: reading what account %s can reserve for the router's function failed: %w. Fix: "+
			"let the identity that runs pulumi (%s) call lambda:GetAccountSettings, and lambda:GetFunctionConcurrency on %s "+
			"(docs/deploying.md, \"Permissions\")", env.Account, err, id, env.ARN("lambda", "function:"+fn))
	}
	if a.Caller != "" && a.Caller != env.Account {
		return fmt.Errorf("router.reservedConcurrency: the account's Lambda concurrency was read as %s, an identity of account %s, but the "+
			"stack deploys into account %s (its AWS provider's): the check would judge another account's concurrency. Fix: give the "+
			"stack's provider its identity through the keys the check reads too (aws:profile, aws:assumeRole, aws:accessKey, "+
			"aws:sharedConfigFiles), or run pulumi with credentials of account %s (docs/deploying.md, \"Permissions\")",
			id, a.Caller, env.Account, env.Account)
	}
	r := cfg.Router
	asked := fmt.Sprintf("router.reservedConcurrency %d", r.ReservedConcurrency)
	switch {
	case r.ReservedConcurrency > 0:
	case r.ProvisionedPollers != nil:
		asked = fmt.Sprintf("the default: 10 invocations per poller of router.provisionedPollers.maximum %d", r.ProvisionedPollers.Maximum)
	default:
		asked = fmt.Sprintf("the default: router.maximumConcurrency %d", r.MaximumConcurrency)
	}
	if p := concurrency.Problem(a, r.Reserved(), asked, env.Account, env.Region); p != "" {
		return fmt.Errorf("the account cannot give the router the concurrency the stack reserves, checked before anything was declared:\n  %s", p)
	}
	return nil
}

// providerIdentity is the identity the stack's AWS provider uses, as its configuration gives it (concurrency.IdentityOf):
// who the checks that ask AWS before anything is declared ask as.
func providerIdentity(ctx *pulumi.Context) (concurrency.Identity, error) {
	id, err := concurrency.IdentityOf(ctx.GetConfig)
	if err != nil {
		return id, fmt.Errorf("reading the AWS provider's identity from the stack's configuration: %w", err)
	}
	return id, nil
}
