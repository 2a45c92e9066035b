package unknownmonitor_test

import (
	"context"
	"net"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/unknownmonitor"
)

var marks = standin.Marks{Text: "kibaaaaaaa", Whole: "kiwaaaaaaa", Digits: "911111111111", Hex: "aaaaaaaaaaaaaaaaa"}

// engine is the engine's side: what it was handed.
type engine struct {
	pulumirpc.UnimplementedResourceMonitorServer
	registered, outputs *structpb.Struct
}

func (e *engine) SupportsFeature(_ context.Context, req *pulumirpc.SupportsFeatureRequest) (*pulumirpc.SupportsFeatureResponse, error) {
	return &pulumirpc.SupportsFeatureResponse{HasSupport: req.GetId() == "secrets"}, nil
}

func (e *engine) RegisterResource(_ context.Context, req *pulumirpc.RegisterResourceRequest) (*pulumirpc.RegisterResourceResponse, error) {
	e.registered = req.GetObject()
	return &pulumirpc.RegisterResourceResponse{Urn: "urn:" + req.GetName()}, nil
}

func (e *engine) RegisterResourceOutputs(_ context.Context, req *pulumirpc.RegisterResourceOutputsRequest) (*emptypb.Empty, error) {
	e.outputs = req.GetOutputs()
	return &emptypb.Empty{}, nil
}

// through is a client of a monitor of in in front of e, the engine's side, each served on loopback until t ends.
func through(t *testing.T, e pulumirpc.ResourceMonitorServer, in unknownmonitor.Inputs) pulumirpc.ResourceMonitorClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pulumirpc.RegisterResourceMonitorServer(srv, e)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	mon, err := unknownmonitor.Serve(lis.Addr().String(), in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Stop)
	conn, err := grpc.NewClient(mon.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pulumirpc.NewResourceMonitorClient(conn)
}

// TestTheEngineSeesUnknownsWhereStandInsWere: through the monitor, what holds a mark reaches the engine unknown,
// everything else as it was; a call it does not rewrite is forwarded, with its answer.
func TestTheEngineSeesUnknownsWhereStandInsWere(t *testing.T) {
	e := &engine{}
	client := through(t, e, unknownmonitor.Inputs{Marks: marks})

	for id, want := range map[string]bool{"secrets": true, "outputValues": false} {
		resp, err := client.SupportsFeature(t.Context(), &pulumirpc.SupportsFeatureRequest{Id: id})
		if err != nil || resp.GetHasSupport() != want {
			t.Errorf("SupportsFeature(%s) = %v, %v; want %v", id, resp.GetHasSupport(), err, want)
		}
	}

	in, err := structpb.NewStruct(map[string]any{
		"name":       "kib-prod_" + marks.Text,
		"known":      "kib-prod_blue",
		"count":      3,
		"topics":     []any{"arn:aws:sns:us-east-1:123456789012:" + marks.Text, "arn:aws:sns:us-east-1:123456789012:ops"},
		"all":        []any{"arn:aws:sns:us-east-1:123456789012:" + marks.Whole},
		"tags":       map[string]any{marks.Whole: marks.Whole},
		"known tags": map[string]any{"team": marks.Text, "cost": "42"},
		"account":    "arn:aws:iam::" + marks.Digits + ":root",
		"vpc":        "vpc-" + marks.Hex,
		"secret":     map[string]any{sig.Key: sig.Secret, "value": marks.Text},
		"output":     map[string]any{sig.Key: sig.OutputValue, "value": marks.Text, "secret": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.RegisterResource(t.Context(), &pulumirpc.RegisterResourceRequest{Type: "aws:sqs/queue:Queue", Name: "q", Object: in})
	if err != nil || resp.GetUrn() != "urn:q" {
		t.Fatalf("RegisterResource: %v, %v", resp, err)
	}
	unknown := plugin.UnknownStringValue
	got := e.registered.AsMap()
	for k, want := range map[string]any{
		"name": unknown, "known": "kib-prod_blue", "count": 3.0,
		"topics": []any{unknown, "arn:aws:sns:us-east-1:123456789012:ops"}, "all": unknown, "tags": unknown,
		"known tags": map[string]any{"team": unknown, "cost": "42"}, "account": unknown, "vpc": unknown,
		"secret": map[string]any{sig.Key: sig.Secret, "value": unknown},
		"output": map[string]any{sig.Key: sig.OutputValue, "secret": true},
	} {
		if g, err := structpb.NewValue(got[k]); err != nil || !equal(g, want) {
			t.Errorf("%s reached the engine as %v, want %v", k, got[k], want)
		}
	}

	if _, err := client.RegisterResourceOutputs(t.Context(), &pulumirpc.RegisterResourceOutputsRequest{Urn: "urn:c", Outputs: in}); err != nil {
		t.Fatal(err)
	}
	if g := e.outputs.AsMap()["name"]; g != unknown {
		t.Errorf("the component's output name reached the engine as %v", g)
	}
}

func equal(v *structpb.Value, want any) bool {
	w, err := structpb.NewValue(want)
	if err != nil {
		return false
	}
	a, _ := v.MarshalJSON()
	b, _ := w.MarshalJSON()
	return string(a) == string(b)
}

// depsEngine records a registration's dependencies too.
type depsEngine struct {
	engine
	deps     []string
	propDeps map[string][]string
}

func (e *depsEngine) RegisterResource(ctx context.Context, req *pulumirpc.RegisterResourceRequest) (*pulumirpc.RegisterResourceResponse, error) {
	e.deps, e.propDeps = req.GetDependencies(), map[string][]string{}
	for k, d := range req.GetPropertyDependencies() {
		e.propDeps[k] = d.GetUrns()
	}
	return e.engine.RegisterResource(ctx, req)
}

// TestTheEngineSeesSecretsAndDependenciesWhereTheInputsAre: a value holding a secret input's value (as it is, or
// escaped in a JSON document) reaches the engine secret, and nothing else; a property holding an input's value
// depends on the resources the input comes from, and so does the child.
func TestTheEngineSeesSecretsAndDependenciesWhereTheInputsAre(t *testing.T) {
	e := &depsEngine{}
	topic := "urn:pulumi:dev::p::aws:sns/topic:Topic::ops"
	client := through(t, e, unknownmonitor.Inputs{
		Secrets:      []string{`cost "center"`},
		Dependencies: map[string][]string{"arn:aws:sns:us-east-1:123456789012:ops": {topic}},
	})
	in, err := structpb.NewStruct(map[string]any{
		"tags":         map[string]any{"team": `cost "center"`, "managed-by": "pulumi"},
		"policy":       `{"Statement":[{"Condition":{"StringEquals":{"aws:ResourceTag/team":"cost \"center\""}}}]}`,
		"alarmActions": []any{"arn:aws:sns:us-east-1:123456789012:ops"},
		"name":         "kib-prod-alarm",
		// A reference or an asset is never made secret: a URN, a path is no value of the input's.
		"ref":   map[string]any{sig.Key: sig.ResourceReference, "urn": `urn:pulumi:dev::p::t::cost "center"`},
		"asset": map[string]any{sig.Key: sig.AssetSig, "path": `cost "center"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.RegisterResource(t.Context(),
		&pulumirpc.RegisterResourceRequest{Type: "aws:cloudwatch/metricAlarm:MetricAlarm", Name: "a", Object: in}); err != nil {
		t.Fatal(err)
	}
	got := e.registered.GetFields()
	secret := func(v *structpb.Value) bool {
		return v.GetStructValue().GetFields()[sig.Key].GetStringValue() == sig.Secret
	}
	if tags := got["tags"].GetStructValue().GetFields(); !secret(tags["team"]) || secret(tags["managed-by"]) {
		t.Errorf("tags reached the engine as %v: want team's secret, managed-by's not", tags)
	}
	if !secret(got["policy"]) {
		t.Errorf("the policy, holding the secret escaped, reached the engine as %v", got["policy"])
	}
	if got["ref"].GetStructValue().GetFields()["urn"].GetStringValue() == "" || got["asset"].GetStructValue().GetFields()["path"].GetStringValue() == "" {
		t.Errorf("ref %v, asset %v: made secret", got["ref"], got["asset"])
	}
	if secret(got["name"]) || secret(got["alarmActions"]) {
		t.Errorf("name %v, alarmActions %v: secret, made of no secret", got["name"], got["alarmActions"])
	}
	if d := e.propDeps["alarmActions"]; len(d) != 1 || d[0] != topic || !slices.Contains(e.deps, topic) {
		t.Errorf("dependencies %v, alarmActions's %v: want the topic's", e.deps, d)
	}
	if d := e.propDeps["name"]; len(d) != 0 {
		t.Errorf("name depends on %v, made of no input from a resource", d)
	}
}

// TestObject: every value secret with AllSecret, numbers too; a short secret held by a property's name makes no
// property secret but the values holding it.
func TestObject(t *testing.T) {
	s, err := structpb.NewStruct(map[string]any{"name": "kib", "count": 3, "on": true})
	if err != nil {
		t.Fatal(err)
	}
	secret := func(v *structpb.Value) bool {
		return v.GetStructValue().GetFields()[sig.Key].GetStringValue() == sig.Secret
	}
	all := unknownmonitor.Inputs{AllSecret: true}.Object(s)
	for k, v := range all.GetFields() {
		if !secret(v) {
			t.Errorf("all secret: %s = %v", k, v)
		}
	}
	some := unknownmonitor.Inputs{Secrets: []string{"a"}}.Object(s) // "name" holds "a"; its value does not
	for k, v := range some.GetFields() {
		if secret(v) {
			t.Errorf("secret %q: %s = %v, made of no secret", "a", k, v)
		}
	}
}
