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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
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
	// Caller is the account Lambda was read in, as STS names the identity that read it ("": not known).
	Caller string
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

// Identity is how the stack's AWS provider authenticates and where it reaches AWS: the keys of its configuration
// that choose the identity (aws:profile, aws:accessKey, aws:secretKey, aws:token, aws:sharedConfigFiles,
// aws:sharedCredentialsFiles, aws:assumeRoleWithWebIdentity, aws:assumeRole) and the endpoints it calls
// (aws:endpoints' sts, lambda and s3, aws:s3UsePathStyle, aws:stsRegion, aws:customCaBundle), over the AWS SDK's
// default chain, as the provider takes them ("AWS Provider configuration",
// https://www.pulumi.com/registry/packages/aws/installation-configuration/; the provider's configuration keys,
// pulumi-aws sdk/go/aws/config): base credentials from the keys, else the profile and files, else the web identity,
// else the environment's chain; then the role of aws:assumeRole, assumed with them.
type Identity struct {
	Profile                                   string
	AccessKey, SecretKey, Token               string
	SharedConfigFiles, SharedCredentialsFiles []string
	WebIdentity                               *WebIdentity
	AssumeRole                                *AssumeRole
	// Endpoints are the provider's custom endpoints the checks call, by service (sts, lambda, s3).
	Endpoints map[string]string
	// S3UsePathStyle is the provider's aws:s3UsePathStyle: S3 addressed by path rather than by the bucket's host name.
	S3UsePathStyle bool
	// STSRegion is the region STS is called in (aws:stsRegion), "" the stack's.
	STSRegion string
	// CustomCABundle is a PEM file of certificate authorities the provider trusts besides the system's.
	CustomCABundle string
	// Unfollowed are the keys set that change who the provider is or where it reaches AWS and that the check does not
	// follow: with any, it steps aside (FromEnvironment's caller warns) rather than read as another identity.
	Unfollowed []string
}

// WebIdentity is the provider's aws:assumeRoleWithWebIdentity: a role assumed with an OIDC token (a CI runner's),
// given or read from a file.
type WebIdentity struct {
	RoleARN              string   `json:"roleArn"`
	SessionName          string   `json:"sessionName"`
	WebIdentityToken     string   `json:"webIdentityToken"`
	WebIdentityTokenFile string   `json:"webIdentityTokenFile"`
	Policy               string   `json:"policy"`
	PolicyARNs           []string `json:"policyArns"`
	Duration             string   `json:"duration"`
}

// unfollowed are the provider's keys, string or true, that the check does not follow: where instance credentials
// come from (the metadata service's endpoint), a proxy, TLS checks turned off, FIPS or dual-stack endpoints.
var unfollowed = []string{"ec2MetadataServiceEndpoint", "ec2MetadataServiceEndpointMode", "httpProxy", "httpsProxy", "noProxy",
	"insecure", "useFipsEndpoint", "useDualstackEndpoint"}

// AssumeRole is the provider's aws:assumeRole: the role it assumes before any call.
type AssumeRole struct {
	RoleARN           string            `json:"roleArn"`
	SessionName       string            `json:"sessionName"`
	ExternalID        string            `json:"externalId"`
	SourceIdentity    string            `json:"sourceIdentity"`
	Duration          string            `json:"duration"`
	Policy            string            `json:"policy"`
	PolicyARNs        []string          `json:"policyArns"`
	Tags              map[string]string `json:"tags"`
	TransitiveTagKeys []string          `json:"transitiveTagKeys"`
}

// IdentityOf reads the provider's identity keys through get (the stack's configuration, "aws:<key>"); the lists and
// the object are JSON, as Pulumi gives structured configuration.
func IdentityOf(get func(key string) (string, bool)) (Identity, error) {
	var id Identity
	v := func(k string) string { s, _ := get("aws:" + k); return s }
	id.Profile, id.AccessKey, id.SecretKey, id.Token = v("profile"), v("accessKey"), v("secretKey"), v("token")
	for k, into := range map[string]*[]string{"sharedConfigFiles": &id.SharedConfigFiles, "sharedCredentialsFiles": &id.SharedCredentialsFiles} {
		if text := v(k); text != "" {
			if err := json.Unmarshal([]byte(text), into); err != nil {
				return Identity{}, fmt.Errorf("aws:%s: %w", k, err)
			}
		}
	}
	if text := v("assumeRole"); text != "" {
		id.AssumeRole = &AssumeRole{}
		if err := json.Unmarshal([]byte(text), id.AssumeRole); err != nil {
			return Identity{}, fmt.Errorf("aws:assumeRole: %w", err)
		}
	}
	if text := v("assumeRoleWithWebIdentity"); text != "" {
		id.WebIdentity = &WebIdentity{}
		if err := json.Unmarshal([]byte(text), id.WebIdentity); err != nil {
			return Identity{}, fmt.Errorf("aws:assumeRoleWithWebIdentity: %w", err)
		}
	}
	if text := v("endpoints"); text != "" {
		// A list of objects, each naming services' URLs ("endpoints": [{"sts": "...", "lambda": "..."}]).
		var list []map[string]string
		if err := json.Unmarshal([]byte(text), &list); err != nil {
			return Identity{}, fmt.Errorf("aws:endpoints: %w", err)
		}
		id.Endpoints = map[string]string{}
		for _, m := range list {
			for svc, u := range m {
				if u != "" {
					id.Endpoints[svc] = u
				}
			}
		}
	}
	id.STSRegion, id.CustomCABundle, id.S3UsePathStyle = v("stsRegion"), v("customCaBundle"), v("s3UsePathStyle") == "true"
	for _, k := range unfollowed {
		if s := v(k); s != "" && s != "false" {
			id.Unfollowed = append(id.Unfollowed, "aws:"+k)
		}
	}
	return id, nil
}

// String names the identity's choices, for a message.
func (id Identity) String() string {
	var parts []string
	if id.Profile != "" {
		parts = append(parts, "aws:profile "+id.Profile)
	}
	if id.AccessKey != "" {
		parts = append(parts, "aws:accessKey")
	}
	if id.WebIdentity != nil {
		parts = append(parts, "aws:assumeRoleWithWebIdentity "+id.WebIdentity.RoleARN)
	}
	if id.AssumeRole != nil {
		parts = append(parts, "aws:assumeRole "+id.AssumeRole.RoleARN)
	}
	if len(parts) == 0 {
		return "the environment's credentials"
	}
	return strings.Join(parts, ", ")
}

// STSOptions point STS at the provider's STS region and endpoint.
func (id Identity) STSOptions(o *sts.Options) {
	if id.STSRegion != "" {
		o.Region = id.STSRegion
	}
	if u := id.Endpoints["sts"]; u != "" {
		o.BaseEndpoint = aws.String(u)
	}
}

// LambdaOptions point Lambda at the provider's endpoint for it.
func (id Identity) LambdaOptions(o *lambda.Options) {
	if u := id.Endpoints["lambda"]; u != "" {
		o.BaseEndpoint = aws.String(u)
	}
}

// S3Options point S3 at the provider's endpoint for it, addressed as the provider does.
func (id Identity) S3Options(o *s3.Options) {
	if u := id.Endpoints["s3"]; u != "" {
		o.BaseEndpoint = aws.String(u)
	}
	o.UsePathStyle = id.S3UsePathStyle
}

// Config loads the AWS SDK's configuration in region as id: the default chain (AWS_ENDPOINT_URL_LAMBDA and
// AWS_ENDPOINT_URL_STS included), with id's profile, files, keys or web identity over it, its certificate
// authorities trusted, and id's role assumed last, STS called where id says.
func (id Identity) Config(ctx context.Context, region string) (aws.Config, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if id.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(id.Profile))
	}
	if len(id.SharedConfigFiles) > 0 {
		opts = append(opts, awsconfig.WithSharedConfigFiles(id.SharedConfigFiles))
	}
	if len(id.SharedCredentialsFiles) > 0 {
		opts = append(opts, awsconfig.WithSharedCredentialsFiles(id.SharedCredentialsFiles))
	}
	if id.AccessKey != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id.AccessKey, id.SecretKey, id.Token)))
	}
	if id.CustomCABundle != "" {
		bundle, err := os.ReadFile(id.CustomCABundle)
		if err != nil {
			return aws.Config{}, fmt.Errorf("aws:customCaBundle: %w", err)
		}
		opts = append(opts, awsconfig.WithCustomCABundle(bytes.NewReader(bundle)))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, append(opts, awsconfig.WithAPIOptions(sdkbody.APIOptions))...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	if w := id.WebIdentity; w != nil && w.RoleARN != "" {
		var token stscreds.IdentityTokenRetriever = stscreds.IdentityTokenFile(w.WebIdentityTokenFile)
		if w.WebIdentityToken != "" {
			token = staticToken(w.WebIdentityToken)
		}
		duration, err := parseDuration("aws:assumeRoleWithWebIdentity.duration", w.Duration)
		if err != nil {
			return aws.Config{}, err
		}
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(sts.NewFromConfig(cfg, id.STSOptions), w.RoleARN, token,
			func(o *stscreds.WebIdentityRoleOptions) {
				o.RoleSessionName = w.SessionName
				o.Policy = nonEmpty(w.Policy)
				o.Duration = duration
				for _, arn := range w.PolicyARNs {
					o.PolicyARNs = append(o.PolicyARNs, ststypes.PolicyDescriptorType{Arn: aws.String(arn)})
				}
			}))
	}
	if r := id.AssumeRole; r != nil && r.RoleARN != "" {
		duration, err := parseDuration("aws:assumeRole.duration", r.Duration)
		if err != nil {
			return aws.Config{}, err
		}
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg, id.STSOptions), r.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = r.SessionName
			o.ExternalID = nonEmpty(r.ExternalID)
			o.SourceIdentity = nonEmpty(r.SourceIdentity)
			o.Policy = nonEmpty(r.Policy)
			o.Duration = duration
			o.TransitiveTagKeys = r.TransitiveTagKeys
			for _, arn := range r.PolicyARNs {
				o.PolicyARNs = append(o.PolicyARNs, ststypes.PolicyDescriptorType{Arn: aws.String(arn)})
			}
			for k, v := range r.Tags {
				o.Tags = append(o.Tags, ststypes.Tag{Key: aws.String(k), Value: aws.String(v)})
			}
		}))
	}
	return cfg, nil
}

// staticToken is a web identity token given in the configuration.
type staticToken string

func (t staticToken) GetIdentityToken() ([]byte, error) { return []byte(t), nil }

func parseDuration(key, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// Caller is what the check asks STS: who the identity is.
type Caller interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, optFns ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

var _ Caller = (*sts.Client)(nil)

// FromEnvironment reads Lambda in region as the identity the stack's AWS provider uses (id), and says which account
// that identity is in (STS GetCallerIdentity, which no policy can deny: "GetCallerIdentity",
// https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html), so the check can refuse to judge
// another account's concurrency as the stack's.
func FromEnvironment(ctx context.Context, region string, id Identity, function string) (Account, error) {
	cfg, err := id.Config(ctx, region)
	if err != nil {
		return Account{}, err
	}
	return ReadAs(ctx, sts.NewFromConfig(cfg, id.STSOptions), lambda.NewFromConfig(cfg, id.LambdaOptions), function)
}

// ReadAs reads the account's concurrency with client, and who caller is.
func ReadAs(ctx context.Context, caller Caller, client Lambda, function string) (Account, error) {
	who, err := caller.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return Account{}, fmt.Errorf("learning which account the identity is in (sts:GetCallerIdentity): %w", err)
	}
	a, err := Read(ctx, client, function)
	if err != nil {
		return Account{}, err
	}
	a.Caller = aws.ToString(who.Account)
	return a, nil
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
