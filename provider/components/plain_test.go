package components_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/integration"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	presource "github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
)

// TestEveryArgumentIsPlain: the schema marks every argument plain, every property of every input type too, and
// the element types of arrays and maps, so that a typed SDK refuses an output at compile time.
func TestEveryArgumentIsPlain(t *testing.T) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText(t), &spec); err != nil {
		t.Fatal(err)
	}
	var notPlain []string
	var check func(where string, ts *schema.TypeSpec)
	check = func(where string, ts *schema.TypeSpec) {
		if !ts.Plain {
			notPlain = append(notPlain, where)
		}
		if ts.Items != nil {
			check(where+"[]", ts.Items)
		}
		if ts.AdditionalProperties != nil {
			check(where+"{}", ts.AdditionalProperties)
		}
	}
	n := 0
	for tok, r := range spec.Resources {
		for name, p := range r.InputProperties {
			check(tok+"."+name, &p.TypeSpec)
			n++
		}
	}
	for tok, ty := range spec.Types {
		for name, p := range ty.Properties {
			check(tok+"."+name, &p.TypeSpec)
			n++
		}
	}
	if n < 20 {
		t.Fatalf("%d properties checked: the schema lost its inputs", n)
	}
	if len(notPlain) > 0 {
		sort.Strings(notPlain)
		t.Errorf("not plain: %s", strings.Join(notPlain, ", "))
	}
}

// TestAnOutputIsRefusedByItsField: an argument given as an output of another resource (a value with dependencies,
// as the engine passes one when it is known), an unknown (as at a first preview) or a secret, at any depth, is
// refused naming its path and the way out, before anything is declared; a plain value beside it is not named.
func TestAnOutputIsRefusedByItsField(t *testing.T) {
	topic := presource.URN("urn:pulumi:prod::platform::aws:sns/topic:Topic::ops")
	tests := []struct {
		name, typ string
		inputs    presource.PropertyMap
		want      []string
	}{
		{"a known output, nested", "Bus", presource.PropertyMap{
			"namePrefix": presource.NewProperty("kib-prod"),
			"alarms": presource.NewProperty(presource.PropertyMap{"topicArn": presource.NewProperty(presource.Output{
				Element: presource.NewProperty("arn:aws:sns:us-east-1:123456789012:ops"), Known: true, Dependencies: []presource.URN{topic}})}),
		}, []string{"alarms.topicArn is an output of ops (aws:sns/topic:Topic)"}},
		{"an unknown in an array", "Bus", presource.PropertyMap{
			"clusterNames": presource.NewProperty([]presource.PropertyValue{presource.NewProperty("blue"), presource.MakeComputed(presource.NewProperty(""))}),
		}, []string{"clusterNames[1] is unknown until another resource is created"}},
		{"a secret in a map and an output at the top", "ClusterInterruption", presource.PropertyMap{
			"busName":     presource.NewProperty("kib-prod"),
			"clusterName": presource.NewProperty(presource.Output{Element: presource.NewProperty("blue"), Known: true, Dependencies: []presource.URN{topic}}),
			"tags":        presource.NewProperty(presource.PropertyMap{"team": presource.MakeSecret(presource.NewProperty("platform"))}),
		}, []string{"clusterName is an output of ops", "tags.team is a secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &mocks.Mocks{}
			m.Project, m.Stack = "platform", "prod"
			s := server(t, integration.WithMocks(m))
			_, err := s.Construct(p.ConstructRequest{
				Urn:    presource.URN("urn:pulumi:prod::platform::" + components.Name + ":index:" + tt.typ + "::c"),
				Inputs: presource.FromResourcePropertyMap(tt.inputs),
				DryRun: true,
			})
			if err == nil {
				t.Fatal("constructed; want the output refused")
			}
			for _, w := range append(tt.want, "takes plain values only", `docs/package.md, "Plain values"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant it to say %q", err, w)
				}
			}
			if rs := m.Resources(); len(rs) > 0 {
				t.Errorf("declared %d resources before refusing", len(rs))
			}
			if strings.Contains(err.Error(), "kib-prod") || strings.Contains(err.Error(), "namePrefix") || strings.Contains(err.Error(), "busName") {
				t.Errorf("%v: a plain value is named", err)
			}
		})
	}
}
