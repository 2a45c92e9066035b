// Package render runs the program offline, under the Pulumi SDK's mocks, with a stack's configuration, and
// prints what it declares: the check for pull requests without cloud credentials, and for reviewers.
package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stackconfig"
)

// Resource is one declared resource in the JSON output.
type Resource struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Parent string `json:"parent"`
	// Account is the account the resource is declared in (its provider's).
	Account string         `json:"account"`
	Inputs  map[string]any `json:"inputs"`
	// component resources (not managed by a provider) are the only parents in this program.
	component bool
}

// StubRouter stands in for the router build: rendering declares the function without compiling it.
func StubRouter(context.Context) (routerbuild.Artifact, error) {
	return routerbuild.Artifact{Zip: "build/router/router.zip", SourceCodeHash: "(computed by pulumi up)"}, nil
}

// AnyCommand stands in for exec.LookPath: rendering runs no command, so it needs none.
func AnyCommand(file string) (string, error) { return file, nil }

// Offline are the program's options for rendering: the router is not built, no command is looked up, Lambda's
// account settings are those of an account of the default quota (mocks.DefaultLambda), and nobody asks S3 who owns the
// archive's bucket (the provider's lookup, which finds none in the render, decides).
func Offline() infra.Options {
	// The render reaches no cluster: it says nothing of which a machine could.
	return infra.Options{BuildRouter: StubRouter, LookPath: AnyCommand, ReadConcurrency: (*mocks.Mocks)(nil).ReadConcurrency,
		ReadArchiveOwner: (*mocks.Mocks)(nil).ReadArchiveOwner, Probe: reach.Always}
}

// Target is the account the render answers as; the region is the stack's aws:region.
type Target struct {
	Account string
}

// Stack runs the program with the configuration of stackFile for stack and returns what it declared.
func Stack(stackFile, stack string, opts infra.Options, target Target) ([]Resource, error) {
	cfg, err := stackconfig.Load(stackFile, config.Namespace)
	if err != nil {
		return nil, err
	}
	return Config(cfg, stack, opts, target)
}

// Config runs the program with cfg ("namespace:key" -> value) for stack, as a preview in the stack's region
// (aws:region, us-east-1 when unset) and target's account.
func Config(cfg map[string]string, stack string, opts infra.Options, target Target) ([]Resource, error) {
	env, err := stackconfig.Env(cfg)
	if err != nil {
		return nil, err
	}
	// The SDK reads its configuration from the environment; restore it after.
	prev, had := os.LookupEnv("PULUMI_CONFIG")
	os.Setenv("PULUMI_CONFIG", env)
	defer func() {
		if had {
			os.Setenv("PULUMI_CONFIG", prev)
		} else {
			os.Unsetenv("PULUMI_CONFIG")
		}
	}()
	m, err := (&mocks.Mocks{Region: cfg["aws:region"], Account: target.Account}).Run(config.Namespace, stack, infra.Program(opts))
	if err != nil {
		return nil, err
	}
	var out []Resource
	for _, r := range m.Resources() {
		out = append(out, Resource{Type: r.Type, Name: r.Name, Parent: r.Parent, Account: r.Account, Inputs: Plain(r.Inputs), component: !r.Custom})
	}
	return Tree(out), nil
}

// Tree orders resources as a tree, each followed by its children, siblings by type then name, so a render does
// not depend on the order Pulumi registered them in and two renders diff cleanly.
func Tree(rs []Resource) []Resource {
	children := map[string][]Resource{}
	for _, r := range rs {
		children[r.Parent] = append(children[r.Parent], r)
	}
	out := make([]Resource, 0, len(rs))
	var walk func(parent string)
	walk = func(parent string) {
		kids := children[parent]
		sort.Slice(kids, func(i, j int) bool {
			if kids[i].Type != kids[j].Type {
				return kids[i].Type < kids[j].Type
			}
			return kids[i].Name < kids[j].Name
		})
		for _, k := range kids {
			out = append(out, k)
			if k.component {
				walk(k.Name)
			}
		}
	}
	walk("")
	return out
}

// Plain turns inputs into plain JSON values: secrets hidden, archives and assets as their paths.
func Plain(m resource.PropertyMap) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[string(k)] = plainValue(v)
	}
	return out
}

func plainValue(v resource.PropertyValue) any {
	switch {
	case v.IsNull():
		return nil
	case v.IsBool():
		return v.BoolValue()
	case v.IsNumber():
		return v.NumberValue()
	case v.IsString():
		return v.StringValue()
	case v.IsArray():
		arr := v.ArrayValue()
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = plainValue(e)
		}
		return out
	case v.IsObject():
		return Plain(v.ObjectValue())
	case v.IsSecret():
		return stackconfig.Secret
	case v.IsArchive():
		a := v.ArchiveValue()
		if a.Path != "" {
			return map[string]any{"archive": a.Path}
		}
		return map[string]any{"archive": "(in memory)"}
	case v.IsAsset():
		return map[string]any{"asset": v.AssetValue().Path}
	case v.IsOutput():
		if o := v.OutputValue(); o.Known {
			return plainValue(o.Element)
		}
		return "[unknown]"
	case v.IsComputed():
		return "[unknown]"
	case v.IsResourceReference():
		return string(v.ResourceReferenceValue().URN)
	}
	return fmt.Sprint(v)
}

// keyInputs are the inputs the table shows per type; other types show their name.
var keyInputs = map[string][]string{
	"aws:sqs/queue:Queue":                              {"name", "visibilityTimeoutSeconds", "messageRetentionSeconds", "sqsManagedSseEnabled"},
	"aws:cloudwatch/eventRule:EventRule":               {"name", "eventPattern"},
	"aws:cloudwatch/eventTarget:EventTarget":           {"targetId", "retryPolicy"},
	"aws:lambda/function:Function":                     {"name", "runtime", "architectures", "memorySize", "timeout"},
	"aws:lambda/eventSourceMapping:EventSourceMapping": {"batchSize", "maximumBatchingWindowInSeconds", "scalingConfig"},
	"aws:cloudwatch/metricAlarm:MetricAlarm":           {"name", "metricName", "threshold"},
	"aws:cloudwatch/logGroup:LogGroup":                 {"name", "retentionInDays"},
}

// WriteTable prints one line per resource: account, type, name, parent, key inputs.
func WriteTable(w io.Writer, rs []Resource) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tTYPE\tNAME\tPARENT\tKEY INPUTS")
	for _, r := range rs {
		keys := keyInputs[r.Type]
		if keys == nil {
			keys = []string{"name"}
		}
		var parts []string
		for _, k := range keys {
			if v, ok := r.Inputs[k]; ok {
				b, _ := json.Marshal(v)
				parts = append(parts, k+"="+string(b))
			}
		}
		line := strings.Join(parts, " ")
		if len(line) > 160 {
			line = line[:157] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Account, r.Type, r.Name, r.Parent, line)
	}
	fmt.Fprintf(tw, "\n%d resources\n", len(rs))
	return tw.Flush()
}

// WriteJSON prints one JSON array of the resources.
func WriteJSON(w io.Writer, rs []Resource) error {
	if rs == nil {
		rs = []Resource{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}
