package unknownmonitor_test

import (
	"context"
	"net"
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

// TestTheEngineSeesUnknownsWhereStandInsWere: through the monitor, what holds a mark reaches the engine unknown,
// everything else as it was; a call it does not rewrite is forwarded, with its answer.
func TestTheEngineSeesUnknownsWhereStandInsWere(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{}
	srv := grpc.NewServer()
	pulumirpc.RegisterResourceMonitorServer(srv, e)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	mon, err := unknownmonitor.Serve(lis.Addr().String(), marks)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Stop()
	conn, err := grpc.NewClient(mon.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	client := pulumirpc.NewResourceMonitorClient(conn)

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
