// Package previous reads what the stack's last update exported, through a stack reference to the stack itself:
// the one way a Pulumi program sees the state it is about to change (as pulumi/pulumi#3722 shows). The program
// uses it to refuse a change Pulumi would otherwise carry out destructively, and to keep what it created before.
package previous

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

// ReferenceName is the logical name of the stack reference.
const ReferenceName = "previous-update"

// SelfManagedOrganization is the organization a self-managed (DIY) backend gives every stack, when it gives one.
const SelfManagedOrganization = "organization"

// StackName is the name a stack reference to the stack itself takes, one every backend accepts. Pulumi Cloud
// gives the program its organization, and the fully qualified <org>/<project>/<stack> is exact there. A
// self-managed backend gives none (or "organization"): in its legacy layout (not project-scoped) it accepts
// only the bare stack name ("legacy DIY backends (local file, S3, Azure Blob) do not support stack names in this
// format, and instead only use the stack name without an org/user or project to qualify it"; Pulumi's
// automation API reference, fullyQualifiedStackName, https://www.pulumi.com/docs/reference/pkg/nodejs/pulumi/
// pulumi/functions/automation.fullyQualifiedStackName.html), and in its project-scoped layout the bare name
// means the current project's stack, this one.
func StackName(organization, project, stack string) string {
	if organization == "" || organization == SelfManagedOrganization {
		return stack
	}
	return organization + "/" + project + "/" + stack
}

// Read reads the last update's outputs through a stack reference to the stack itself; those it did not have (the
// first update, or an output the last update did not have) are zero.
func Read(ctx *pulumi.Context) (outputs.Read, error) {
	ref, err := pulumi.NewStackReference(ctx, ReferenceName, &pulumi.StackReferenceArgs{
		Name: pulumi.String(StackName(ctx.Organization(), ctx.Project(), ctx.Stack())),
	})
	if err != nil {
		return outputs.Read{}, fmt.Errorf("reading the last update's outputs: %w", err)
	}
	var last outputs.Read
	if _, err := outputs.Decode(Reader(ref, nil), &last); err != nil {
		return outputs.Read{}, fmt.Errorf("reading the last update's outputs: %w", err)
	}
	return last, nil
}

// Reader reads ref's outputs for outputs.Decode: a secret's value as any other's, its name put in secrets (unless
// nil), so that what is exported of it again stays a secret.
func Reader(ref *pulumi.StackReference, secrets map[string]bool) func(name string) (any, error) {
	return func(name string) (any, error) {
		d, err := ref.GetOutputDetails(name)
		if err != nil {
			return nil, err
		}
		if d.SecretValue != nil {
			if secrets != nil {
				secrets[name] = true
			}
			return d.SecretValue, nil
		}
		return d.Value, nil
	}
}
