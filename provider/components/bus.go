package components

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-go-provider/infer"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// CallAs is how the hub creates the organization's StackSet.
type CallAs string

// Values are CallAs's values.
func (CallAs) Values() []infer.EnumValue[CallAs] {
	return []infer.EnumValue[CallAs]{
		{Name: "DelegatedAdmin", Value: "DELEGATED_ADMIN", Description: "The hub is a delegated administrator for CloudFormation StackSets (the default)."},
		{Name: "Self", Value: "SELF", Description: "The hub is the organization's management account."},
	}
}

// HubDelivery is how the hub's own rules deliver to the central queue (key centralQueue.hubDelivery).
type HubDelivery string

// Values are HubDelivery's values.
func (HubDelivery) Values() []infer.EnumValue[HubDelivery] {
	return []infer.EnumValue[HubDelivery]{
		{Name: "ExecutionRole", Value: HubDelivery(contract.HubDeliveryExecutionRole), Description: "As the hub's forwarder role, as every member's rules do (the default)."},
		{Name: "QueuePolicy", Value: HubDelivery(contract.HubDeliveryQueuePolicy), Description: "Through the central queue's policy, which admits EventBridge for the bus's own rules only: the setting make verify names when the hub's rules do not deliver as an execution role."},
	}
}

// ArchiveMode is the archive's Object Lock retention mode.
type ArchiveMode string

// Values are the modes.
func (ArchiveMode) Values() []infer.EnumValue[ArchiveMode] {
	return []infer.EnumValue[ArchiveMode]{
		{Name: "Governance", Value: ArchiveMode(config.ArchiveGovernance), Description: "A principal allowed s3:BypassGovernanceRetention, which the bucket's policy denies to all until an administrator changes it, may delete a locked record: a test stack's archive can be emptied."},
		{Name: "Compliance", Value: ArchiveMode(config.ArchiveCompliance), Description: "Nobody, the account's root included, deletes a record before its retention ends."},
	}
}

// Bus is the shared part of an interruption bus in one account and region: rules, central queue, router,
// alarms, heartbeat, member baselines and dashboard.
type Bus struct {
	pulumi.ResourceState

	BusName             pulumi.StringOutput    `pulumi:"busName"`
	Account             pulumi.StringOutput    `pulumi:"account"`
	Region              pulumi.StringOutput    `pulumi:"region"`
	HeartbeatRate       pulumi.StringOutput    `pulumi:"heartbeatRate"`
	ClusterQueuePrefix  pulumi.StringOutput    `pulumi:"clusterQueuePrefix"`
	CentralQueueURL     pulumi.StringOutput    `pulumi:"centralQueueUrl"`
	CentralQueueARN     pulumi.StringOutput    `pulumi:"centralQueueArn"`
	DeadLetterQueueURL  pulumi.StringOutput    `pulumi:"deadLetterQueueUrl"`
	DeadLetterQueueARN  pulumi.StringOutput    `pulumi:"deadLetterQueueArn"`
	RouterFunctionName  pulumi.StringOutput    `pulumi:"routerFunctionName"`
	RouterRoleARN       pulumi.StringOutput    `pulumi:"routerRoleArn"`
	RouterLogGroupName  pulumi.StringOutput    `pulumi:"routerLogGroupName"`
	RedriveRoleARN      pulumi.StringOutput    `pulumi:"redriveRoleArn"`
	QuarantineQueueURL  pulumi.StringOutput    `pulumi:"quarantineQueueUrl"`
	QuarantineQueueARN  pulumi.StringOutput    `pulumi:"quarantineQueueArn"`
	SealKeyARN          pulumi.StringOutput    `pulumi:"sealKeyArn"`
	ArchiveBucket       pulumi.StringOutput    `pulumi:"archiveBucket"`
	ArchiveBucketPrefix pulumi.StringOutput    `pulumi:"archiveBucketPrefix"`
	RuleARNs            pulumi.StringMapOutput `pulumi:"ruleArns"`
	AlarmARNs           pulumi.StringMapOutput `pulumi:"alarmArns"`
}

// Annotate documents the component and its outputs.
func (b *Bus) Annotate(an infer.Annotator) {
	an.Describe(&b, "The shared part of an interruption bus in one account and region, the hub: the EventBridge rules, the central queue "+
		"and its dead-letter queue, the router Lambda, the alarms, the heartbeat's shared part, the member accounts' baselines and the "+
		"dashboard. Clusters join it with ClusterInterruption, from this stack or their own, given busName and account.")
	an.Describe(&b.BusName, "The bus's name (namePrefix): a ClusterInterruption's busName.")
	an.Describe(&b.Account, "The hub's account: a ClusterInterruption's hubAccountId, from another account.")
	an.Describe(&b.Region, "The bus's region; clusters join from the same region.")
	an.Describe(&b.HeartbeatRate, `The heartbeat's rate, "" without one: a ClusterInterruption's heartbeatRate.`)
	an.Describe(&b.ClusterQueuePrefix, "Starts every cluster queue's name: <prefix><cluster>.")
	an.Describe(&b.CentralQueueURL, "The central buffering queue's URL.")
	an.Describe(&b.CentralQueueARN, "The central buffering queue's ARN.")
	an.Describe(&b.DeadLetterQueueURL, "The dead-letter queue's URL.")
	an.Describe(&b.DeadLetterQueueARN, "The dead-letter queue's ARN.")
	an.Describe(&b.RouterFunctionName, "The router Lambda's name.")
	an.Describe(&b.RouterRoleARN, "The router's role, the only principal a cluster queue lets send.")
	an.Describe(&b.RouterLogGroupName, "The router's log group.")
	an.Describe(&b.RedriveRoleARN, "The role the principals of redrive assume to read the quarantine and send messages of the dead-letter and quarantine queues back to the central queue; \"\" without them.")
	an.Describe(&b.QuarantineQueueURL, "The queue the router keeps the messages it refuses in, with why (docs/operations.md).")
	an.Describe(&b.QuarantineQueueARN, "The quarantine queue's ARN.")
	an.Describe(&b.SealKeyARN, "The KMS key the router seals what it keeps with: only the router may sign with it (docs/security.md, \"Sealed refusals\").")
	an.Describe(&b.ArchiveBucket, "The bucket every refusal the router keeps is also written to, once, locked; retained on delete.")
	an.Describe(&b.ArchiveBucketPrefix, "Starts the name of every archive the bus has had (make requeue FROM=archive reads them all).")
	an.Describe(&b.RuleARNs, "The EventBridge rules, by event type.")
	an.Describe(&b.AlarmARNs, "The bus's CloudWatch alarms, by name.")
}

// busConstructor is the Bus's constructor with opts.
func busConstructor(opts infra.Options) func(ctx *pulumi.Context, name string, args BusArgs, ro ...pulumi.ResourceOption) (*Bus, error) {
	return func(ctx *pulumi.Context, name string, args BusArgs, ro ...pulumi.ResourceOption) (*Bus, error) {
		b := &Bus{}
		res := resolutionOf(ctx.Context())
		ctx.Log = redactingLog{ctx.Log, res.secrets} // the program's warnings name clusters, accounts and roles
		// Aliased to the names they had after the namePrefix (0.3.0 and before), unless it is a secret or unknown,
		// which an alias would write to the state, or cannot give.
		if prefix := cmp.Or(deref(args.NamePrefix), config.DefaultNamePrefix(ctx.Stack())); prefix != name &&
			!slices.Contains(res.secrets, prefix) && !slices.Contains(res.deferred, "namePrefix") {
			ro = append(ro, formerNames(func(child string) (string, bool) { return infra.FormerBusName(name, prefix, child) }))
		}
		if err := ctx.RegisterComponentResource(bus.Type, name, b, ro...); err != nil { // the token of the program's bus component
			return nil, err
		}
		// Stand-ins take the places of the arguments unknown at a preview, so the children are the update's, with
		// unknown values there; the checks of the known arguments run first, as with no unknown.
		deferred, err := standInUnknowns(ctx, b, component{"Bus", name, "the bus's", busChecks}, &args, res, func() error {
			values, err := configValues(args)
			if err != nil {
				return err
			}
			return infra.BusForm(ctx, b, values, args.ClusterNames, res.deferred)
		})
		if err != nil {
			return nil, err
		}
		if deferred {
			return b, nil
		}
		values, err := configValues(args)
		if err != nil {
			return nil, err
		}
		out, err := infra.DeclareBus(ctx, b, name, values, args.ClusterNames, preflight.Unknowns{Marks: res.marks, FromResource: res.fromResource}, opts)
		if err != nil {
			return nil, redacted(err, res.secrets)
		}
		if err := setOutputs(b, infra.Exports(out.Outputs)); err != nil {
			return nil, err
		}
		return b, nil
	}
}

// configValues are args as the stack configuration's keys: each key's JSON text, a string key's own text.
func configValues(args any) (map[string]string, error) {
	text, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(text, &keys); err != nil {
		return nil, err
	}
	values := map[string]string{}
	for k, v := range keys {
		var s string
		if json.Unmarshal(v, &s) == nil {
			values[k] = s
			continue
		}
		values[k] = string(v)
	}
	return values, nil
}

// setOutputs sets the output fields of component (a pointer to a struct) from outputs, by their pulumi tags;
// every field must have one, and every output a field: what the program exports, the component does.
func setOutputs(component any, outputs map[string]pulumi.Input) error {
	left := maps.Clone(outputs)
	err := eachOutput(component, func(tag string, f reflect.Value) error {
		in, ok := outputs[tag]
		if !ok {
			return fmt.Errorf("output %s: not declared", tag)
		}
		delete(left, tag)
		conv := reflect.ValueOf(in).MethodByName("To" + f.Type().Name())
		if !conv.IsValid() {
			return fmt.Errorf("output %s: %T is not a %s", tag, in, f.Type().Name())
		}
		f.Set(conv.Call(nil)[0])
		return nil
	})
	if err == nil && len(left) > 0 {
		err = fmt.Errorf("outputs %s: declared, but not outputs of the component", strings.Join(slices.Sorted(maps.Keys(left)), ", "))
	}
	return err
}

// eachOutput calls set with each output field of component (a pointer to a struct), by its pulumi tag, until one
// fails.
func eachOutput(component any, set func(tag string, f reflect.Value) error) error {
	v := reflect.ValueOf(component).Elem()
	for i := range v.NumField() {
		if tag := v.Type().Field(i).Tag.Get("pulumi"); tag != "" {
			if err := set(tag, v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
