// Package unknownmonitor is a resource monitor between a component and the engine that gives each value its
// children are registered with what Pulumi carries with the input it is made from. The component's code takes its
// inputs as plain values (its checks and names need them); the monitor puts back, value by value:
//   - unknown, what is made from a stand-in (infra/standin): at a preview, a component whose inputs are unknown
//     registers its children with stand-ins in their place, and the engine sees, for each child, unknown values
//     exactly where they depend on unknown inputs, and the same children the update will register;
//   - secret, what holds a secret input's value;
//   - the dependencies of the inputs whose values a property holds, on that property and on the child.
//
// Every call but the two that carry values (RegisterResource, RegisterResourceOutputs) is forwarded as it came,
// byte for byte.
package unknownmonitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
)

// Monitor is a running monitor; Addr is what the component dials instead of the engine's.
type Monitor struct {
	Addr   string
	server *grpc.Server
	conn   *grpc.ClientConn
}

// Inputs are what the monitor knows of the component's inputs.
type Inputs struct {
	// Marks are the preview's stand-ins' marks (zero: none): what holds one is unknown.
	Marks standin.Marks
	// Secrets are the values of the secret inputs: what holds one is secret. AllSecret: every value is (a secret
	// input may reach the children other than whole).
	Secrets   []string
	AllSecret bool
	// Dependencies are, for the value of each input that has any, the URNs of the resources it comes from.
	Dependencies map[string][]string
}

// Object is s, an object of values, as the engine is to see it: each field's value with what holds a mark unknown
// (Unknown), and what holds a secret secret (Secret), all of it with AllSecret.
func (in Inputs) Object(s *structpb.Struct) *structpb.Struct {
	secrets := needles(in.Secrets)
	if in.AllSecret {
		secrets = needles([]string{""})
	}
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(s.GetFields()))}
	for key, v := range s.GetFields() {
		v = Unknown(v, in.Marks)
		if len(secrets) > 0 {
			v = secret(v, secrets)
		}
		out.Fields[key] = v
	}
	return out
}

// minDependency is the shortest value the monitor finds an input's dependencies by: a shorter one ("a", "5m") would
// be found in values made of no such input.
const minDependency = 4

// needle is a value to find, as it is and escaped in a JSON document (a policy, a template), escaped once.
type needle struct{ text, escaped string }

func needles(values []string) []needle {
	out := make([]needle, len(values))
	for i, v := range values {
		quoted, _ := json.Marshal(v) // a string always marshals
		out[i] = needle{text: v, escaped: string(quoted[1 : len(quoted)-1])}
	}
	return out
}

// in says whether s holds n, as it is or escaped; "" is held by any.
func (n needle) in(s string) bool {
	return strings.Contains(s, n.text) || n.escaped != n.text && strings.Contains(s, n.escaped)
}

// dependency is an input's value and the URNs of the resources it comes from.
type dependency struct {
	value needle
	urns  []string
}

// Serve starts a monitor on loopback in front of target, the engine's monitor, for a component of inputs in.
func Serve(target string, in Inputs) (*Monitor, error) {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return nil, fmt.Errorf("reaching the engine's resource monitor %s: %w", target, err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("listening for the component's resource monitor: %w", err)
	}
	server := grpc.NewServer(grpc.ForceServerCodec(codec{}), grpc.UnknownServiceHandler(forward(conn)),
		grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
	desc := pulumirpc.ResourceMonitor_ServiceDesc
	desc.Methods = slices.DeleteFunc(slices.Clone(desc.Methods), func(m grpc.MethodDesc) bool {
		return m.MethodName != "RegisterResource" && m.MethodName != "RegisterResourceOutputs"
	})
	desc.Streams = nil
	var deps []dependency
	for value, urns := range in.Dependencies {
		if len(value) >= minDependency {
			deps = append(deps, dependency{value: needles([]string{value})[0], urns: urns})
		}
	}
	server.RegisterService(&desc, &rewriter{engine: pulumirpc.NewResourceMonitorClient(conn), in: in, deps: deps})
	go func() { _ = server.Serve(lis) }()
	return &Monitor{Addr: lis.Addr().String(), server: server, conn: conn}, nil
}

// Stop stops m once its calls have ended.
func (m *Monitor) Stop() {
	m.server.GracefulStop()
	_ = m.conn.Close()
}

// rewriter serves the two calls that carry values.
type rewriter struct {
	pulumirpc.UnimplementedResourceMonitorServer
	engine pulumirpc.ResourceMonitorClient
	in     Inputs
	// deps are in.Dependencies' values long enough to be found by (minDependency).
	deps []dependency
}

func (r *rewriter) RegisterResource(ctx context.Context, req *pulumirpc.RegisterResourceRequest) (*pulumirpc.RegisterResourceResponse, error) {
	// The dependencies first, of the values as the component made them. A property made from another resource's
	// output depends on that resource (the SDK says so) and not on the inputs besides: its value is unknown at a
	// preview where it is not in the update, and the two must plan the same dependencies.
	for key, v := range req.GetObject().GetFields() {
		if len(req.GetPropertyDependencies()[key].GetUrns()) > 0 {
			continue
		}
		urns := r.dependencies(v)
		if len(urns) == 0 {
			continue
		}
		if req.PropertyDependencies == nil {
			req.PropertyDependencies = map[string]*pulumirpc.RegisterResourceRequest_PropertyDependencies{}
		}
		deps := req.PropertyDependencies[key]
		if deps == nil {
			deps = &pulumirpc.RegisterResourceRequest_PropertyDependencies{}
			req.PropertyDependencies[key] = deps
		}
		for _, u := range urns {
			if !slices.Contains(deps.Urns, u) {
				deps.Urns = append(deps.Urns, u)
			}
			if !slices.Contains(req.Dependencies, u) {
				req.Dependencies = append(req.Dependencies, u)
			}
		}
	}
	req.Object = r.object(req.Object)
	return r.engine.RegisterResource(outgoing(ctx), req)
}

func (r *rewriter) RegisterResourceOutputs(ctx context.Context, req *pulumirpc.RegisterResourceOutputsRequest) (*emptypb.Empty, error) {
	req.Outputs = r.object(req.Outputs)
	return r.engine.RegisterResourceOutputs(outgoing(ctx), req)
}

// dependencies are the URNs of the resources the inputs whose values v holds come from, sorted.
func (r *rewriter) dependencies(v *structpb.Value) []string {
	var urns []string
	for _, d := range r.deps {
		if holdsAny(v, d.value) {
			urns = append(urns, d.urns...)
		}
	}
	slices.Sort(urns)
	return slices.Compact(urns)
}

// holdsAny says whether a string of v (a key too) holds value.
func holdsAny(v *structpb.Value, value needle) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return value.in(k.StringValue)
	case *structpb.Value_ListValue:
		return slices.ContainsFunc(k.ListValue.GetValues(), func(e *structpb.Value) bool { return holdsAny(e, value) })
	case *structpb.Value_StructValue:
		for key, e := range k.StructValue.GetFields() {
			if value.in(key) || holdsAny(e, value) {
				return true
			}
		}
	}
	return false
}

// object is s as the engine is to see it (Inputs.Object).
func (r *rewriter) object(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return nil
	}
	return r.in.Object(s)
}

// Secret is v with each value holding one of secrets secret ("" is held by every value): a string, a number, a
// switch, or a map whose keys hold one, as a whole. What is a secret already, or unknown, stays as it is.
func Secret(v *structpb.Value, secrets []string) *structpb.Value {
	if len(secrets) == 0 {
		return v
	}
	return secret(v, needles(secrets))
}

// secret is Secret of secrets found by.
func secret(v *structpb.Value, secrets []needle) *structpb.Value {
	held := func(s string) bool {
		return slices.ContainsFunc(secrets, func(n needle) bool { return n.in(s) })
	}
	wrap := func(v *structpb.Value) *structpb.Value {
		return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{sig.Key: structpb.NewStringValue(sig.Secret), "value": v}})
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if k.StringValue != plugin.UnknownStringValue && held(k.StringValue) {
			return wrap(v)
		}
	case *structpb.Value_NumberValue, *structpb.Value_BoolValue:
		if held("") {
			return wrap(v)
		}
	case *structpb.Value_ListValue:
		out := make([]*structpb.Value, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			out[i] = secret(e, secrets)
		}
		return structpb.NewListValue(&structpb.ListValue{Values: out})
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		switch fields[sig.Key].GetStringValue() {
		case sig.Secret, sig.ResourceReference, sig.AssetSig, sig.ArchiveSig, sig.ByteString:
			return v
		case sig.OutputValue:
			out := maps.Clone(fields)
			if value, ok := fields["value"]; ok && !proto.Equal(secret(value, secrets), value) {
				out["secret"] = structpb.NewBoolValue(true)
			}
			return structpb.NewStructValue(&structpb.Struct{Fields: out})
		}
		out := make(map[string]*structpb.Value, len(fields))
		for key, e := range fields {
			if held(key) {
				return wrap(v)
			}
			out[key] = secret(e, secrets)
		}
		return structpb.NewStructValue(&structpb.Struct{Fields: out})
	}
	return v
}

// Unknown is v, a value as the Pulumi wire protocol carries it, with what holds one of marks unknown: a string
// holding one; a list holding a string with the whole-list mark, a map with a key holding a mark, as a whole; an
// output value whose value holds one, as an unknown output keeping its secrecy and dependencies. A secret stays
// a secret, of an unknown value.
func Unknown(v *structpb.Value, marks standin.Marks) *structpb.Value {
	unknown := structpb.NewStringValue(plugin.UnknownStringValue)
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if marks.Holds(k.StringValue) {
			return unknown
		}
	case *structpb.Value_ListValue:
		out := make([]*structpb.Value, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			if marks.HoldsWhole(e.GetStringValue()) {
				return unknown
			}
			out[i] = Unknown(e, marks)
		}
		return structpb.NewListValue(&structpb.ListValue{Values: out})
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		switch fields[sig.Key].GetStringValue() {
		case sig.Secret:
			return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
				sig.Key: fields[sig.Key], "value": Unknown(fields["value"], marks)}})
		case sig.OutputValue:
			out := maps.Clone(fields)
			if value, ok := fields["value"]; ok && Unknown(value, marks).GetStringValue() == plugin.UnknownStringValue {
				delete(out, "value")
			} else if ok {
				out["value"] = Unknown(value, marks)
			}
			return structpb.NewStructValue(&structpb.Struct{Fields: out})
		case "":
			out := make(map[string]*structpb.Value, len(fields))
			for key, e := range fields {
				if marks.Holds(key) {
					return unknown
				}
				out[key] = Unknown(e, marks)
			}
			return structpb.NewStructValue(&structpb.Struct{Fields: out})
		}
	}
	return v
}

// outgoing carries the component's call metadata on to the engine.
func outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	return metadata.NewOutgoingContext(ctx, md.Copy())
}

// frame is a message forwarded as its bytes.
type frame struct{ payload []byte }

// codec passes frames through as they are and (un)marshals the rewriter's messages as protobuf.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if f, ok := v.(*frame); ok {
		return f.payload, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("unknownmonitor: cannot marshal %T", v)
	}
	return proto.Marshal(m)
}

func (codec) Unmarshal(data []byte, v any) error {
	if f, ok := v.(*frame); ok {
		f.payload = append(f.payload[:0], data...)
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("unknownmonitor: cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (codec) Name() string { return "proto" }

// forward sends a call the rewriter does not serve to the engine as it came, and its answer back.
func forward(conn *grpc.ClientConn) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		method, ok := grpc.MethodFromServerStream(ss)
		if !ok {
			return errors.New("unknownmonitor: a call without its method")
		}
		ctx, cancel := context.WithCancel(outgoing(ss.Context()))
		defer cancel()
		cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(codec{}))
		if err != nil {
			return err
		}
		go func() {
			// The component's messages on to the engine; a failure here ends the call, which the engine's side
			// then reports (its RecvMsg below).
			for {
				f := &frame{}
				if err := ss.RecvMsg(f); err != nil {
					if errors.Is(err, io.EOF) {
						_ = cs.CloseSend()
					} else {
						cancel()
					}
					return
				}
				if err := cs.SendMsg(f); err != nil {
					return
				}
			}
		}()
		if md, err := cs.Header(); err == nil {
			if err := ss.SendHeader(md); err != nil {
				return err
			}
		}
		for {
			f := &frame{}
			if err := cs.RecvMsg(f); err != nil {
				ss.SetTrailer(cs.Trailer())
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if err := ss.SendMsg(f); err != nil {
				return err
			}
		}
	}
}
