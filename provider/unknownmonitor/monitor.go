// Package unknownmonitor is a resource monitor between a component and the engine that turns unknown every value
// made from a stand-in (infra/standin): at a preview, a component whose inputs are unknown registers its children
// with stand-ins in their place, and the engine sees, for each child, unknown values exactly where they depend on
// unknown inputs, and the same children the update will register. Every call but the two that carry values
// (RegisterResource, RegisterResourceOutputs) is forwarded as it came, byte for byte.
package unknownmonitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"

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

// Serve starts a monitor on loopback in front of target, the engine's monitor, turning unknown what holds marks.
func Serve(target string, marks standin.Marks) (*Monitor, error) {
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
	server.RegisterService(&desc, &rewriter{engine: pulumirpc.NewResourceMonitorClient(conn), marks: marks})
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
	marks  standin.Marks
}

func (r *rewriter) RegisterResource(ctx context.Context, req *pulumirpc.RegisterResourceRequest) (*pulumirpc.RegisterResourceResponse, error) {
	req.Object = r.object(req.Object)
	return r.engine.RegisterResource(outgoing(ctx), req)
}

func (r *rewriter) RegisterResourceOutputs(ctx context.Context, req *pulumirpc.RegisterResourceOutputsRequest) (*emptypb.Empty, error) {
	req.Outputs = r.object(req.Outputs)
	return r.engine.RegisterResourceOutputs(outgoing(ctx), req)
}

// object is s with every value holding a mark unknown (Unknown).
func (r *rewriter) object(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return nil
	}
	v := Unknown(structpb.NewStructValue(s), r.marks)
	if v.GetStructValue() == nil {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	return v.GetStructValue()
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
		sent := make(chan error, 1)
		go func() {
			for {
				f := &frame{}
				if err := ss.RecvMsg(f); err != nil {
					if errors.Is(err, io.EOF) {
						sent <- cs.CloseSend()
						return
					}
					sent <- err
					return
				}
				if err := cs.SendMsg(f); err != nil {
					sent <- err
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
