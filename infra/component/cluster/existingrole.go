package cluster

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// InterruptionStatement lets Karpenter read and delete its own queue's messages, and nothing else.
func InterruptionStatement(queueARN string) policy.Statement {
	return policy.Allow("AllowInterruptionQueueActions",
		[]string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueUrl"}, []string{queueARN})
}

// existingRole attaches the interruption statement, as policyName, to the controller role Karpenter already has;
// removing the cluster from the bus removes the statement with the queue it names, and nothing else of that
// Karpenter. Its nodes are not the stack's to name.
func (s scope) existingRole(roleName, policyName, queueARN string) (wiring, error) {
	if _, err := iam.NewRolePolicy(s.ctx, s.name("interruption"), &iam.RolePolicyArgs{
		Name:   pulumi.String(policyName),
		Role:   pulumi.String(roleName),
		Policy: pulumi.String(policy.New(InterruptionStatement(queueARN)).JSON()),
	}, s.parent); err != nil {
		return wiring{}, fmt.Errorf("attaching the interruption policy to %s: %w", roleName, err)
	}
	return wiring{
		controllerRoleARN: pulumi.String(s.env.IAMARN("role/" + roleName)).ToStringOutput(),
		nodeRoleName:      pulumi.String("").ToStringOutput(),
	}, nil
}
