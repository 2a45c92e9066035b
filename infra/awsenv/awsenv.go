// Package awsenv looks up the partition, region and account the stack deploys to, so no ARN holds a literal.
package awsenv

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Env is where the stack deploys, and the service principals its policies name.
type Env struct {
	Partition, Region, Account string
	// Principals maps a service ("events", "lambda", ...) to its principal in this partition and region.
	Principals map[string]string
}

// services whose principals the stack's policies name.
var services = []string{"events", "lambda", "pods.eks", "ec2", "fis", "scheduler"}

// Lookup asks the AWS provider that opts reach (the default one without).
func Lookup(ctx *pulumi.Context, opts ...pulumi.InvokeOption) (Env, error) {
	part, err := aws.GetPartition(ctx, nil, opts...)
	if err != nil {
		return Env{}, fmt.Errorf("looking up the partition: %w", err)
	}
	region, err := aws.GetRegion(ctx, nil, opts...)
	if err != nil {
		return Env{}, fmt.Errorf("looking up the region: %w", err)
	}
	id, err := aws.GetCallerIdentity(ctx, nil, opts...)
	if err != nil {
		return Env{}, fmt.Errorf("looking up the account: %w", err)
	}
	env := Env{Partition: part.Partition, Region: region.Name, Account: id.AccountId, Principals: map[string]string{}}
	for _, svc := range services {
		sp, err := aws.GetServicePrincipal(ctx, &aws.GetServicePrincipalArgs{ServiceName: svc}, opts...)
		if err != nil {
			return Env{}, fmt.Errorf("looking up the %s service principal: %w", svc, err)
		}
		env.Principals[svc] = sp.Name
	}
	return env, nil
}

// In is the environment of another account of the same partition and region: a member account's, whose ID
// comes from the configuration and whose provider allows no other.
func (e Env) In(account string) Env {
	e.Account = account
	return e
}

// ARN builds an ARN in this environment: service, then the resource part.
func (e Env) ARN(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", e.Partition, service, e.Region, e.Account, resource)
}

// IAMARN builds an ARN of IAM, which has no region: resource is e.g. "role/name" or "instance-profile/*".
func (e Env) IAMARN(resource string) string {
	return fmt.Sprintf("arn:%s:iam::%s:%s", e.Partition, e.Account, resource)
}

// AWSManagedPolicyARN is the ARN of the AWS managed policy name.
func (e Env) AWSManagedPolicyARN(name string) string {
	return fmt.Sprintf("arn:%s:iam::aws:policy/%s", e.Partition, name)
}

// Principal is service's principal (e.g. "events" -> events.amazonaws.com); it panics for a service not
// looked up, a programming error.
func (e Env) Principal(service string) string {
	p, ok := e.Principals[service]
	if !ok {
		panic("awsenv: service principal of " + service + " was not looked up")
	}
	return p
}
