package standin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// RealKubernetesEnv names the binary of the real pulumi-kubernetes provider: with it set, the kubernetes stand-in
// is RealKubernetes, in front of it.
const RealKubernetesEnv = "KIB_STANDIN_REAL_KUBERNETES"

// RealKubernetes is the kubernetes plugin of a test that judges what the real pulumi-kubernetes provider does: every
// call goes to the real provider (started as the engine starts a plugin, with the engine's address), which
// configures itself, checks a release (pulling its chart), diffs it, and refuses what needs an API server it cannot
// reach, as it does anywhere. The one thing it cannot do here is what needs a Kubernetes API server that answers,
// which no test here has: installing, upgrading, reading and uninstalling a Helm release of a cluster the world
// says is reachable (every cluster but World.Unreachable's). Those the stand-in does, as the real provider would
// record them: the checked inputs as outputs, the inputs again under __inputs (a secret), and the release's status
// (its checkpointRelease), so that the real provider's next Diff of it compares what it would have written.
//
// What a reachable cluster's real provider does that the stand-in does not: render the chart and apply its
// manifests, wait for them to be ready (atomic, timeout, skipAwait), record the release in the cluster (Helm's
// storage), answer a refresh from the cluster.
type RealKubernetes struct {
	pulumirpc.UnimplementedResourceProviderServer

	Standin *Provider
	real    pulumirpc.ResourceProviderClient
	cmd     *exec.Cmd

	mu      sync.Mutex
	cluster string // the configured kubeconfig's current context: the cluster
}

var _ pulumirpc.ResourceProviderServer = (*RealKubernetes)(nil)

// StartRealKubernetes starts the real provider bin with the engine's address, as the engine starts a plugin, and
// connects to the port it prints first.
func StartRealKubernetes(standin *Provider, bin, engine string) (*RealKubernetes, error) {
	cmd := exec.Command(bin, engine)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the real pulumi-kubernetes provider %s: %w", bin, err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("reading the port of the real pulumi-kubernetes provider: %w", err)
	}
	conn, err := grpc.NewClient("127.0.0.1:"+strings.TrimSpace(line), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(400<<20)))
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	return &RealKubernetes{Standin: standin, real: pulumirpc.NewResourceProviderClient(conn), cmd: cmd}, nil
}

// Stop ends the real provider.
func (k *RealKubernetes) Stop() {
	if k.cmd != nil && k.cmd.Process != nil {
		_ = k.cmd.Process.Kill()
		_ = k.cmd.Wait()
	}
}

// reachable reports whether the configured cluster has an API server in the world.
func (k *RealKubernetes) reachable() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.Standin.world().Unreachable {
		if c == k.cluster {
			return false
		}
	}
	return k.cluster != ""
}

// GetPluginInfo reports the version the engine installed the plugin at, which the program's SDK asked for.
func (k *RealKubernetes) GetPluginInfo(ctx context.Context, e *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return k.Standin.GetPluginInfo(ctx, e)
}

func (k *RealKubernetes) Handshake(ctx context.Context, r *pulumirpc.ProviderHandshakeRequest) (*pulumirpc.ProviderHandshakeResponse, error) {
	return k.real.Handshake(ctx, r)
}

func (k *RealKubernetes) Parameterize(ctx context.Context, r *pulumirpc.ParameterizeRequest) (*pulumirpc.ParameterizeResponse, error) {
	return k.real.Parameterize(ctx, r)
}

func (k *RealKubernetes) GetSchema(ctx context.Context, r *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	return k.real.GetSchema(ctx, r)
}

func (k *RealKubernetes) CheckConfig(ctx context.Context, r *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return k.real.CheckConfig(ctx, r)
}

func (k *RealKubernetes) DiffConfig(ctx context.Context, r *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return k.real.DiffConfig(ctx, r)
}

// Configure configures the real provider, and the stand-in, which learns the cluster from the kubeconfig.
func (k *RealKubernetes) Configure(ctx context.Context, r *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	if _, err := k.Standin.Configure(ctx, r); err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.cluster = strings.TrimPrefix(k.Standin.callerAccount(), "kubernetes:")
	k.mu.Unlock()
	return k.real.Configure(ctx, r)
}

func (k *RealKubernetes) Invoke(ctx context.Context, r *pulumirpc.InvokeRequest) (*pulumirpc.InvokeResponse, error) {
	return k.real.Invoke(ctx, r)
}

func (k *RealKubernetes) Call(ctx context.Context, r *pulumirpc.CallRequest) (*pulumirpc.CallResponse, error) {
	return k.real.Call(ctx, r)
}

func (k *RealKubernetes) Check(ctx context.Context, r *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return k.real.Check(ctx, r)
}

func (k *RealKubernetes) Diff(ctx context.Context, r *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return k.real.Diff(ctx, r)
}

func (k *RealKubernetes) Construct(ctx context.Context, r *pulumirpc.ConstructRequest) (*pulumirpc.ConstructResponse, error) {
	return k.real.Construct(ctx, r)
}

func (k *RealKubernetes) Cancel(ctx context.Context, e *emptypb.Empty) (*emptypb.Empty, error) {
	return k.real.Cancel(ctx, e)
}

func (k *RealKubernetes) GetMapping(ctx context.Context, r *pulumirpc.GetMappingRequest) (*pulumirpc.GetMappingResponse, error) {
	return k.real.GetMapping(ctx, r)
}

func (k *RealKubernetes) GetMappings(ctx context.Context, r *pulumirpc.GetMappingsRequest) (*pulumirpc.GetMappingsResponse, error) {
	return k.real.GetMappings(ctx, r)
}

// standsIn reports whether the stand-in answers an operation on urn: a Helm release's, not in a preview, on a cluster
// the world says is reachable.
func (k *RealKubernetes) standsIn(urn string, preview bool) bool {
	return resource.URN(urn).Type() == "kubernetes:helm.sh/v3:Release" && !preview && k.reachable()
}

// Create installs a release of a reachable cluster as the stand-in, recorded as the real provider records it.
func (k *RealKubernetes) Create(ctx context.Context, r *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if !k.standsIn(r.GetUrn(), r.GetPreview()) {
		return k.real.Create(ctx, r)
	}
	resp, err := k.Standin.Create(ctx, r)
	if err != nil {
		return nil, err
	}
	props, err := checkpoint(r.GetProperties(), 1)
	if err != nil {
		return nil, err
	}
	resp.Properties = props
	return resp, nil
}

// Update upgrades a release of a reachable cluster as the stand-in, recorded as the real provider records it.
func (k *RealKubernetes) Update(ctx context.Context, r *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	if !k.standsIn(r.GetUrn(), r.GetPreview()) {
		return k.real.Update(ctx, r)
	}
	if _, err := k.Standin.Update(ctx, r); err != nil {
		return nil, err
	}
	props, err := checkpoint(r.GetNews(), 2)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.UpdateResponse{Properties: props}, nil
}

// Read answers a release of a reachable cluster from its state, as it was recorded.
func (k *RealKubernetes) Read(ctx context.Context, r *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	if !k.standsIn(r.GetUrn(), false) {
		return k.real.Read(ctx, r)
	}
	if len(r.GetProperties().GetFields()) > 0 {
		return &pulumirpc.ReadResponse{Id: r.GetId(), Properties: r.GetProperties(), Inputs: r.GetInputs()}, nil
	}
	// An import (nothing known of the release but its ID, namespace/name): the release the cluster holds, as the real
	// provider reads it from Helm's storage, recorded as it records one; none, and the import fails ("does not exist").
	resp, err := k.Standin.Read(ctx, r)
	if err != nil || resp.GetId() == "" {
		return resp, err
	}
	if resp.Properties, err = checkpoint(resp.GetInputs(), 1); err != nil {
		return nil, err
	}
	return resp, nil
}

// Delete uninstalls a release of a reachable cluster as the stand-in.
func (k *RealKubernetes) Delete(ctx context.Context, r *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	if !k.standsIn(r.GetUrn(), false) {
		return k.real.Delete(ctx, r)
	}
	return k.Standin.Delete(ctx, r)
}

// checkpoint is what the real provider records of a release installed from inputs (pulumi-kubernetes'
// checkpointRelease): the inputs, the inputs again under __inputs, a secret, and the release's status.
func checkpoint(inputs *structpb.Struct, revision int) (*structpb.Struct, error) {
	opts := plugin.MarshalOptions{KeepUnknowns: true, SkipNulls: true, KeepSecrets: true}
	in, err := plugin.UnmarshalProperties(inputs, opts)
	if err != nil {
		return nil, err
	}
	obj := in.Copy()
	obj["__inputs"] = resource.MakeSecret(resource.NewObjectProperty(in))
	str := func(k string) string {
		if v, ok := in[resource.PropertyKey(k)]; ok && v.IsString() {
			return v.StringValue()
		}
		return ""
	}
	status := map[string]any{
		"name": str("name"), "namespace": str("namespace"), "chart": "karpenter", "version": str("version"), "appVersion": str("version"),
		"revision": float64(revision), "status": "deployed",
	}
	obj["status"] = resource.NewObjectProperty(resource.NewPropertyMapFromMap(status))
	return plugin.MarshalProperties(obj, opts)
}
