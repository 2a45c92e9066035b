// Package previous reads what the stack's last update exported, through a stack reference to the stack itself:
// the one way a Pulumi program sees the state it is about to change (as pulumi/pulumi#3722 shows). The program
// uses it to refuse a change Pulumi would otherwise carry out destructively.
package previous

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ReferenceName is the logical name of the stack reference.
const ReferenceName = "previous-update"

// Output returns the stack output key of the last update, nil when there is none (the first update, or an
// output the last update did not have).
func Output(ctx *pulumi.Context, key string) (any, error) {
	org := ctx.Organization()
	if org == "" {
		org = "organization" // what self-managed backends call every stack's organization
	}
	ref, err := pulumi.NewStackReference(ctx, ReferenceName, &pulumi.StackReferenceArgs{
		Name: pulumi.String(org + "/" + ctx.Project() + "/" + ctx.Stack()),
	})
	if err != nil {
		return nil, fmt.Errorf("reading the last update's outputs: %w", err)
	}
	d, err := ref.GetOutputDetails(key)
	if err != nil {
		return nil, fmt.Errorf("reading the last update's output %s: %w", key, err)
	}
	if d.SecretValue != nil {
		return d.SecretValue, nil
	}
	return d.Value, nil
}
