// Command gohost stands in for Pulumi's Go language host (pulumi-language-go) where the CLI uses it for a source
// plugin: `pulumi package add <repo>.git/provider@<tag>` and every later start of that package's provider. The
// module proxy does not serve the real host (sdk/go/pulumi-language-go/v3 answers 403), so the engine test
// installs this one in PATH under the real host's name. It does what the real host does for a plugin, as its
// source reads at v3.259.0 (sdk/go/pulumi-language-go/main.go):
//
//   - InstallDependencies: `go mod tidy -compat=1.18` in the plugin's directory;
//   - RunPlugin: the plugin built with the real host's flags (`-buildvcs=false -trimpath -ldflags "-w -s"`) in its
//     directory into a temporary file, then the binary run with the engine's arguments and environment in the
//     directory the engine names, its output streamed back and its exit code sent;
//   - GetRequiredPackages: the resource plugins of the modules the plugin's go.mod requires, each read from the
//     pulumi-plugin.json at its module's root or under go/ (`go list -mod=mod -m -json`);
//   - the engine's address, its first argument or else a Handshake's, which RunPlugin requires.
//
// What the real host does that this one does not: run Go programs (Run, the Automation API's inline programs
// need no host), generate SDKs and programs, check Go's minimum version, log "Compiling the program" to the
// engine, attach a debugger, read vendor/ directories and pseudo-versions, and parameterized packages. And it links
// a plugin once, where the real host links it on every start (`go build -o`): it builds by `go run -exec cp`, whose
// linked executable Go (1.24 and later) keeps in its build cache, keyed by every input, and cp copies it out. The
// same flags make the same binary. The provider's link takes 10-14 s of CPU, and the engine tests start it about 25
// times (docs/tests.md, "What make test costs").
// The engine test runs with the real host instead when PULUMI_LANGUAGE_GO names one (docs/tests.md).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"golang.org/x/mod/modfile"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/pluginserve"
)

func main() {
	flag.String("tracing", "", "ignored: the real host's tracing endpoint")
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gohost:", err)
		os.Exit(1)
	}
}

func run() error {
	h := &host{}
	if args := flag.Args(); len(args) > 0 {
		h.engine = args[0]
	}
	return pluginserve.Serve(func(s *grpc.Server) { pulumirpc.RegisterLanguageRuntimeServer(s, h) })
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engine string
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() == "" {
		return nil, errors.New("handshake without the engine's address")
	}
	h.engine = req.GetEngineAddress()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: "3.259.0"}, nil
}

func (h *host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	dir := req.GetInfo().GetProgramDirectory()
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return &pulumirpc.GetRequiredPackagesResponse{}, nil //nolint:nilerr // the real host is lenient too: no go.mod, no packages
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, fmt.Errorf("parse go.mod: %w", err)
	}
	args := []string{"list", "-mod=mod", "-m", "-json"}
	for _, r := range f.Require {
		args = append(args, r.Mod.Path)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	resp := &pulumirpc.GetRequiredPackagesResponse{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var m struct{ Path, Version, Dir string }
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("decode go list -m: %w", err)
		}
		if pkg := pluginOf(m.Path, m.Version, m.Dir); pkg != nil {
			resp.Packages = append(resp.Packages, pkg)
		}
	}
	return resp, nil
}

// pluginOf is the resource plugin a module declares in its pulumi-plugin.json, or nil.
func pluginOf(path, version, dir string) *pulumirpc.PackageDependency {
	if dir == "" {
		return nil
	}
	for _, p := range []string{filepath.Join(dir, "pulumi-plugin.json"), filepath.Join(dir, "go", "pulumi-plugin.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var pj struct {
			Resource              bool
			Name, Version, Server string
		}
		if json.Unmarshal(b, &pj) != nil || !pj.Resource {
			return nil
		}
		if pj.Name == "" { // github.com/pulumi/pulumi-aws/sdk/v6 is aws
			parts := strings.Split(path, "/")
			if len(parts) < 3 {
				return nil
			}
			_, pj.Name, _ = strings.Cut(parts[2], "-")
		}
		if pj.Version == "" {
			pj.Version = version
		}
		return &pulumirpc.PackageDependency{Name: pj.Name, Version: pj.Version, Kind: "resource", Server: pj.Server}
	}
	return nil
}

func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	cmd := exec.Command("go", "mod", "tidy", "-compat=1.18")
	cmd.Dir = req.GetInfo().GetProgramDirectory()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("`go mod tidy` failed to install dependencies: %w", err)
	}
	return closer.Close()
}

func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	if h.engine == "" {
		return errors.New("RunPlugin before Handshake")
	}
	out, err := os.CreateTemp("", "pulumi-go.*")
	if err != nil {
		return err
	}
	out.Close()
	defer os.Remove(out.Name())
	// go run -exec cp runs `cp <executable> <temp>`: Go's cached executable, or the link's output in go run's work
	// directory on the build that caches it. cp keeps the temporary file's mode (0600), hence the chmod.
	build := exec.Command("go", "run", "-exec", "cp", "-buildvcs=false", "-trimpath", "-ldflags", "-w -s", ".", out.Name())
	build.Dir = req.GetInfo().GetProgramDirectory()
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("error in compiling Go: unable to run `go build`: %w", err)
	}
	if err := os.Chmod(out.Name(), 0o755); err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()
	cmd := exec.CommandContext(server.Context(), out.Name(), req.GetArgs()...)
	cmd.Dir, cmd.Env = req.GetPwd(), req.GetEnv()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("problem executing plugin program: %w", err)
		}
		if err := server.Send(&pulumirpc.RunPluginResponse{
			Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(exit.ExitCode())}, //nolint:gosec // an exit code fits
		}); err != nil {
			return err
		}
	}
	return closer.Close()
}
