// Package spotrole ensures the EC2 Spot service-linked role in the accounts where the stack installs Karpenter.
//
// Karpenter launches Spot capacity with CreateFleet, which fails in an account without the role
// AWSServiceRoleForEC2Spot, and Karpenter's controller policy does not allow creating it (iam:
// CreateServiceLinkedRole): "If you use the AWS CLI or an API to request a Spot Instance, you must first ensure
// that this role exists" (Amazon EC2 User Guide, "Service-linked role for Spot Instance requests",
// https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html). Every
// setup guide creates it once per account (aws iam create-service-linked-role --aws-service-name
// spot.amazonaws.com). The role is the account's, not the stack's, and IAM refuses to create it twice
// ("InvalidInput: Service role name AWSServiceRoleForEC2Spot has been taken in this account"): so the stack
// declares it only where it is absent, or where the stack itself created it before (its last update's outputs
// say), and never deletes it (retained on delete: other users of Spot in the account depend on it).
package spotrole

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
)

// The role, as IAM names it: the service it is linked to, its name and its path.
const (
	ServiceName = "spot.amazonaws.com"
	RoleName    = "AWSServiceRoleForEC2Spot"
	Path        = "/aws-service-role/" + ServiceName + "/"
)

// Origin is who made an account's role: the value of the stack output spotServiceLinkedRoles.<account>.
type Origin string

const (
	// Stack: this stack created it, and keeps declaring it (a later update must not lose it).
	Stack Origin = "created-by-stack"
	// Account: it existed before the stack, which never declares it, so never deletes it either.
	Account Origin = "existed"
)

// Decide says whether the stack declares the role in an account, where it exists now or not, and the last
// update recorded last (an empty Origin when it recorded nothing): declared when absent (to create it) or when
// the stack created it (to keep it), never when it existed before the stack. It returns the origin to record.
func Decide(exists bool, last Origin) (declare bool, origin Origin) {
	if !exists || last == Stack {
		return true, Stack
	}
	return false, Account
}

// Exists looks the role up where opts reach (an account's provider), without failing when it is absent.
func Exists(ctx *pulumi.Context, opts ...pulumi.InvokeOption) (bool, error) {
	path, name := Path, "^"+RoleName+"$"
	res, err := iam.GetRoles(ctx, &iam.GetRolesArgs{PathPrefix: &path, NameRegex: &name}, opts...)
	if err != nil {
		return false, err
	}
	for _, n := range res.Names {
		if n == RoleName {
			return true, nil
		}
	}
	return false, nil
}

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:SpotServiceLinkedRole"

// Role is the service-linked role, as the stack declares it in one account.
type Role struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	ARN pulumi.StringOutput `pulumi:"arn"`
}

// New declares the role in the account opts reach, retained on delete: taking the last cluster off the bus in an
// account, or destroying the stack, leaves it to the account.
func New(ctx *pulumi.Context, name string, opts ...pulumi.ResourceOption) (*Role, error) {
	return declare(ctx, name, "", opts...)
}

// Adopt declares the role that exists as arn, imported into the stack rather than created (IAM would refuse a
// second one), retained on delete as New's. The component package declares the role this way where it exists:
// it keeps no record of having created it, so it declares it whether it exists or not, and an import of what
// the stack already holds changes nothing.
func Adopt(ctx *pulumi.Context, name, arn string, opts ...pulumi.ResourceOption) (*Role, error) {
	return declare(ctx, name, arn, opts...)
}

func declare(ctx *pulumi.Context, name, importARN string, opts ...pulumi.ResourceOption) (*Role, error) {
	r := &Role{}
	if err := dependency.Register(ctx, Type, name, r, opts...); err != nil {
		return nil, err
	}
	roleOpts := []pulumi.ResourceOption{pulumi.Parent(r), pulumi.RetainOnDelete(true)}
	if importARN != "" {
		roleOpts = append(roleOpts, pulumi.Import(pulumi.ID(importARN)))
	}
	role, err := iam.NewServiceLinkedRole(ctx, name, &iam.ServiceLinkedRoleArgs{
		AwsServiceName: pulumi.String(ServiceName), // as aws iam create-service-linked-role does: no suffix, no description
	}, roleOpts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the EC2 Spot service-linked role: %w", err)
	}
	r.ARN = role.Arn
	if err := ctx.RegisterResourceOutputs(r, pulumi.Map{"arn": r.ARN}); err != nil {
		return nil, err
	}
	return r, nil
}

// ARN is the role's ARN in account of partition.
func ARN(partition, account string) string {
	return fmt.Sprintf("arn:%s:iam::%s:role%s%s", partition, account, Path, RoleName)
}
