package components

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
)

// checksOf name, by argument (map keys and array indexes dropped), the checks its value is subject to, as the
// preview reports them when the value is unknown; an argument not listed is checked for its form.
type checksOf map[string]string

var clusterChecks = checksOf{
	"busName":                  "the names made from it (the router's role, the cluster's queue) within AWS's limits",
	"hubAccountId":             "an AWS account ID; with memberBaseline, not the cluster's own",
	"clusterName":              "the EKS cluster exists and is ACTIVE, runs a Kubernetes version Karpenter runs on, has access entries (and, with pod-identity, the Pod Identity agent); the names made from it within AWS's limits",
	"oidcProviderArn":          "the OIDC provider is the one of the cluster's issuer, and lists the audience sts.amazonaws.com",
	"controllerRoleName":       "an IAM role name (the role itself is not looked up: the update fails on its policy if it is missing)",
	"karpenter.version":        "within the supported range, and one that runs on the cluster's Kubernetes version",
	"create.kubernetesVersion": "a version Karpenter runs on",
	"heartbeatRate":            "whole minutes from 1m to 1h",
	"heartbeatAlarmActions":    "SNS topic ARNs",
	"karpenter.namespace":      "a Kubernetes namespace name",
	"karpenter.serviceAccount": "a Kubernetes service account name",
	"create.vpcId":             "a VPC ID",
	"tags":                     "tags AWS takes",
}

var busChecks = checksOf{
	"namePrefix":             "the names made from it within AWS's limits",
	"accounts.deployRoleArn": "a role ARN of the stack's partition",
	"redrive.principals":     "each of the stack's partition, exact (no root, no wildcard), and the trust policy within the account's limit",
	"organization.id":        "an AWS Organizations ID",
	"organization.memberOUs": "organizational unit IDs",
	"heartbeat.rate":         "whole minutes from 1m to 1h",
	"router.ownerTagKeys":    "tag keys AWS takes",
	"alarms.topicArn":        "an SNS topic ARN",
	"accounts.alarmTopicArn": "an SNS topic ARN",
	"router.logLevel":        "a log level the router knows",
	"tags":                   "tags AWS takes",
}

// argumentOf is path without its array indexes and its map keys (accounts.<id>.deployRoleArn: accounts.deployRoleArn).
var index, accountKey = regexp.MustCompile(`\[\d+\]`), regexp.MustCompile(`\.\d{12}\b`)

func argumentOf(path string) string {
	return accountKey.ReplaceAllString(index.ReplaceAllString(path, ""), "")
}

// deferredMessage says which checks of the component named name (what it declares: "the cluster's") wait for
// the update, and why: each input of deferred, unknown at this preview, by the checks it is subject to; and, when
// left holds some of them (inputs no stand-in can take the place of), that the preview shows none of its resources.
func deferredMessage(component, name, what string, left, deferred []string, checks checksOf) string {
	var each []string
	seen := map[string]bool{}
	for _, path := range deferred {
		arg := argumentOf(path)
		if seen[arg] {
			continue
		}
		seen[arg] = true
		c, ok := checks[arg]
		if !ok {
			c = "its form"
		}
		each = append(each, fmt.Sprintf("%s (%s)", arg, c))
	}
	shown := fmt.Sprintf("this preview shows %s resources, with unknown values where they depend on those inputs", what)
	if len(left) > 0 {
		shown = fmt.Sprintf("this preview shows none of %s resources, and its outputs are unknown: %s decide which resources are "+
			"declared, or their values cannot be stood for at a preview", what, strings.Join(left, ", "))
	}
	return fmt.Sprintf("%s %s: checks deferred to the update, their inputs unknown until other resources are created: %s. "+
		"They run there before %s first resource, and fail the update naming the check; %s (docs/package.md, \"Outputs as arguments\").",
		component, name, strings.Join(each, "; "), what, shown)
}

// deferComponent declares nothing under c, the component named name, says once why (deferredMessage), and sets its
// outputs unknown: left are the inputs unknown at this preview that no stand-in can take the place of.
func deferComponent(ctx *pulumi.Context, c pulumi.Resource, component, name, what string, left, deferred []string, checks checksOf) error {
	if err := ctx.Log.Info(deferredMessage(component, name, what, left, deferred, checks), &pulumi.LogArgs{Resource: c}); err != nil {
		return err
	}
	unknownOutputs(c)
	return nil
}

// component is what the preview of a component says of it: its kind, its name, what it declares ("the cluster's"),
// and the checks each argument is subject to.
type component struct {
	kind, name, what string
	checks           checksOf
}

// standInUnknowns, at a preview where some of the arguments (args, a pointer) of the component c are unknown (res),
// puts stand-ins in their places and runs form, the checks of the known arguments, before anything is declared: a
// mistake in one fails the preview. It says once which checks wait for the update. It returns true when an unknown
// no stand-in can take the place of leaves the component declaring nothing (deferComponent). Unknowns in an update
// are refused.
func standInUnknowns(ctx *pulumi.Context, c pulumi.Resource, about component, args any, res resolution, form func() error) (bool, error) {
	if len(res.deferred) == 0 {
		return false, nil
	}
	if !ctx.DryRun() {
		return false, unknownInTheUpdate(about.kind, about.name, res.deferred)
	}
	env, err := awsenv.Lookup(ctx, pulumi.Parent(c))
	if err != nil {
		return false, err
	}
	left := standIns(args, res.unknown, res.marks, env)
	if err := form(); err != nil {
		return false, redacted(err, res.secrets)
	}
	if len(left) > 0 {
		return true, deferComponent(ctx, c, about.kind, about.name, about.what, left, res.deferred, about.checks)
	}
	return false, ctx.Log.Info(deferredMessage(about.kind, about.name, about.what, nil, res.deferred, about.checks), &pulumi.LogArgs{Resource: c})
}

// unknownInTheUpdate refuses inputs unknown in an update: the engine hands a component its inputs' values there,
// and a component never stands for a value it declares for real.
func unknownInTheUpdate(component, name string, deferred []string) error {
	return fmt.Errorf("%s %s: %s unknown in the update: the engine hands a component its inputs' values there",
		component, name, strings.Join(deferred, ", "))
}

// redactingLog is a Log that says no secret argument's value, each shown as [secret]: what the component's code
// logs (a cluster out of reach, a Karpenter version near its end of support) names values any of which may be a
// secret argument, and the log stream is the preview's output, a CI job's log.
type redactingLog struct {
	pulumi.Log
	secrets []string
}

func (l redactingLog) Debug(msg string, args *pulumi.LogArgs) error {
	return l.Log.Debug(redact(msg, l.secrets), args)
}
func (l redactingLog) Info(msg string, args *pulumi.LogArgs) error {
	return l.Log.Info(redact(msg, l.secrets), args)
}
func (l redactingLog) Warn(msg string, args *pulumi.LogArgs) error {
	return l.Log.Warn(redact(msg, l.secrets), args)
}
func (l redactingLog) Error(msg string, args *pulumi.LogArgs) error {
	return l.Log.Error(redact(msg, l.secrets), args)
}

// redact is text with each of secrets shown as [secret].
func redact(text string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, "[secret]")
		}
	}
	return text
}

// redacted is err with each of secrets in its text replaced by [secret]; nil for nil.
func redacted(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	text := redact(err.Error(), secrets)
	if text == err.Error() {
		return err
	}
	return errors.New(text)
}

// formerNames aliases each child of a component to the name former gives it: the name it had before children were
// named after the component; a stack of then keeps its resources. Children are named after the component now,
// whose name is known at every preview, never after an input, which may not be.
func formerNames(former func(child string) (string, bool)) pulumi.ResourceOption {
	return pulumi.Transformations([]pulumi.ResourceTransformation{func(a *pulumi.ResourceTransformationArgs) *pulumi.ResourceTransformationResult {
		old, ok := former(a.Name)
		if !ok {
			return nil
		}
		opts := slices.Concat(a.Opts, []pulumi.ResourceOption{pulumi.Aliases([]pulumi.Alias{{Name: pulumi.String(old)}})})
		return &pulumi.ResourceTransformationResult{Props: a.Props, Opts: opts}
	}})
}

// formerName is the name child, a resource named after the component name, had when it was named after the
// cluster former (0.3.0 and before); false for a resource not named after the component (the component itself
// among them).
func formerName(name, former, child string) (string, bool) {
	rest, ok := strings.CutPrefix(child, name+"-")
	if !ok {
		return "", false
	}
	return former + "-" + rest, true
}

// unknownOutputs sets every output of component (a pointer to a struct of outputs, by their pulumi tags) unknown.
func unknownOutputs(component any) {
	_ = eachOutput(component, func(_ string, f reflect.Value) error {
		elem := reflect.Zero(f.Type()).Interface().(pulumi.Output).ElementType()
		zero := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.TypeFor[any]()}, []reflect.Type{elem}, false),
			func([]reflect.Value) []reflect.Value { return []reflect.Value{reflect.Zero(elem)} })
		f.Set(reflect.ValueOf(pulumi.UnsafeUnknownOutput(nil).ApplyT(zero.Interface())))
		return nil
	})
}
