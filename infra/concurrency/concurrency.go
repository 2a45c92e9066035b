// Package concurrency reads, before anything is declared, how much concurrency the account can give the router's
// function, as Lambda counts it, and says what of the stack's reservation it cannot give.
//
// What Lambda documents, and what follows:
//   - GetAccountSettings gives the account's concurrency (AccountLimit.ConcurrentExecutions) and what no function
//     has reserved of it (UnreservedConcurrentExecutions) ("GetAccountSettings",
//     https://docs.aws.amazon.com/lambda/latest/api/API_GetAccountSettings.html); GetFunctionConcurrency the
//     function's own reservation, which an update gives back before it takes the new one.
//   - "You can reserve up to the Unreserved account concurrency value minus 100" ("Configuring reserved concurrency
//     for a function", https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html): 100 stay
//     unreserved for the functions without a reservation. The default quota is 1,000, and "new AWS accounts have
//     reduced concurrency and memory quotas" ("Lambda quotas",
//     https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): no figure is assumed.
//   - "Don't set maximum concurrency higher than the function's reserved concurrency" (the mapping's, checked with
//     the configuration: infra/config).
package concurrency

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Unreserved is the concurrency Lambda keeps unreserved in every account.
const Unreserved = 100

// Lambda is what the check calls.
type Lambda interface {
	GetAccountSettings(ctx context.Context, in *lambda.GetAccountSettingsInput, optFns ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error)
	GetFunctionConcurrency(ctx context.Context, in *lambda.GetFunctionConcurrencyInput, optFns ...func(*lambda.Options)) (*lambda.GetFunctionConcurrencyOutput, error)
}

var _ Lambda = (*lambda.Client)(nil)

// Account is what Lambda says of the account's concurrency, and of the function's own reservation now.
type Account struct {
	// Limit is the account's concurrency, Unreserved what no function has reserved of it.
	Limit, Unreserved int
	// Current is the function's reservation now (0: none, or no such function yet).
	Current int
}

// Reservable is the most the function can reserve: what is unreserved, and what it holds now, less the 100 Lambda
// keeps unreserved.
func (a Account) Reservable() int { return a.Unreserved + a.Current - Unreserved }

// Read asks Lambda for the account's settings and function's reservation.
func Read(ctx context.Context, client Lambda, function string) (Account, error) {
	settings, err := client.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return Account{}, fmt.Errorf("reading Lambda's account settings: %w", err)
	}
	var a Account
	if l := settings.AccountLimit; l != nil {
		a.Limit = int(l.ConcurrentExecutions)
		a.Unreserved = int(aws.ToInt32(l.UnreservedConcurrentExecutions))
	}
	current, err := client.GetFunctionConcurrency(ctx, &lambda.GetFunctionConcurrencyInput{FunctionName: aws.String(function)})
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing): // the first deployment
	case err != nil:
		return Account{}, fmt.Errorf("reading the reserved concurrency of function %s: %w", function, err)
	default:
		a.Current = int(aws.ToInt32(current.ReservedConcurrentExecutions))
	}
	return a, nil
}

// FromEnvironment reads the account of the environment's AWS credentials in region (the AWS SDK's default chain, as
// the AWS CLI and Pulumi's AWS provider find them, AWS_ENDPOINT_URL_LAMBDA included; profile, when set, as the
// stack's aws:profile).
func FromEnvironment(ctx context.Context, region, profile, function string) (Account, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Account{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	return Read(ctx, lambda.NewFromConfig(cfg), function)
}

// Problem says why the account cannot give the function reserved (what the stack asks: the key's name and, for the
// default, what it follows), or "" when it can.
func Problem(a Account, reserved int, asked, account, region string) string {
	can := a.Reservable()
	if reserved <= can {
		return ""
	}
	why := fmt.Sprintf("Lambda's account settings in %s: %d unreserved of the account's %d, plus the %d the function holds now, less "+
		"the %d Lambda keeps unreserved", region, a.Unreserved, a.Limit, a.Current, Unreserved)
	if can < 2 {
		return fmt.Sprintf("router.reservedConcurrency: the router's function would reserve %d concurrent executions (%s), but account %s "+
			"can give it none (%s; the mapping needs at least 2). Fix: free reserved concurrency of other functions, or ask AWS for a "+
			"higher Lambda concurrency quota (Service Quotas, Lambda, \"Concurrent executions\")", reserved, asked, account, why)
	}
	return fmt.Sprintf("router.reservedConcurrency: the router's function would reserve %d concurrent executions (%s), but account %s "+
		"can give it at most %d (%s). Fix: set router.reservedConcurrency to at most %d, and router.maximumConcurrency (or 10 times "+
		"router.provisionedPollers.maximum) no higher; or free reserved concurrency of other functions, or ask AWS for a higher "+
		"Lambda concurrency quota (Service Quotas, Lambda, \"Concurrent executions\")", reserved, asked, account, can, why, can)
}
