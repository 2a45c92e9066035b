// Command nodehost stands in for Pulumi's Node.js language host (pulumi-language-nodejs) where the module proxy does
// not serve it (sdk/nodejs/cmd/pulumi-language-nodejs answers 403): the engine test installs it in PATH under the
// real host's name, and the real CLI runs TypeScript programs with the real @pulumi/pulumi from npm through it. It
// does what the real host does, as its source reads at v3.259.0 (sdk/nodejs/cmd/pulumi-language-nodejs/main.go):
//
//   - Run: `node` on @pulumi/pulumi's own cmd/run, found as the program's `require.resolve` finds it, with the
//     arguments the real host gives it (--monitor, --engine, --organization, --project, --root-directory, --stack,
//     --pwd, --dry-run, --parallel, then the entry point and the program's arguments), the environment it adds
//     (PULUMI_CONFIG, its keys written <namespace>:config:<name> as the real host writes them for older SDKs,
//     PULUMI_CONFIG_SECRET_KEYS, PULUMI_NODEJS_TYPESCRIPT and PULUMI_NODEJS_TSCONFIG_PATH from the project's runtime
//     options, the nodeargs option before the arguments); exit code 32 is a bail (the program already said why),
//     any other a "Program exited with non-zero exit code";
//   - Cancel: interrupts the running program;
//   - GetRequiredPackages: the resource plugins of the packages under node_modules whose package.json says
//     `"pulumi": {"resource": true}`, named and versioned as the real host names them;
//   - InstallDependencies, GeneratePackage and Link: Pulumi's own libraries, as the real host calls them
//     (sdk/v3/nodejs/npm's Install and Link, pkg/v3/codegen/nodejs's GeneratePackage);
//   - About: node's path and version, the package manager;
//   - GetPluginInfo: the CLI's version, which the real host reports as its own.
//
// What the real host does that this one does not: proxy the resource monitor (the program talks to the engine's
// monitor directly), tracing, the out-of-memory advice on a crash, debuggers, `bun`, npm and yarn workspaces,
// .nvmrc and fnm, forcing tsc, plugins written in Node.js (RunPlugin), policy packs, `convert`, `new` (templates,
// runtime option prompts), `pack`, program dependencies for `pulumi about`, and warning of two @pulumi/pulumi
// versions. With PULUMI_LANGUAGE_NODEJS naming a real host, the engine tests run with it instead (docs/tests.md).
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
	"strconv"
	"strings"
	"sync"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/cgstrings"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/pluginserve"
)

// version is the CLI's: the real host is released with it.
const version = "3.259.0"

// bail is the exit code with which @pulumi/pulumi says it already told the user what went wrong.
const bail = 32

func main() {
	flag.String("tracing", "", "ignored: the real host's tracing endpoint")
	flag.String("runtime", "nodejs", "ignored: the real host's runtime (nodejs or bun); this one runs node")
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nodehost:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithCancel(context.Background())
	h := &host{cancelCtx: ctx, cancel: cancel}
	if args := flag.Args(); len(args) > 0 {
		h.engine = args[0]
	}
	return pluginserve.Serve(func(s *grpc.Server) { pulumirpc.RegisterLanguageRuntimeServer(s, h) })
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu        sync.Mutex
	engine    string
	cancelCtx context.Context // done once Cancel is called
	cancel    context.CancelFunc
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.engine = req.GetEngineAddress()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancel()
	return &emptypb.Empty{}, nil
}

// options are the project's runtime options the real host reads (parseOptions).
type options struct {
	typescript     bool
	tsconfig       string
	nodeargs       []string
	packagemanager npm.PackageManagerType
	production     bool
}

func parseOptions(m map[string]any) (options, error) {
	o := options{typescript: true, packagemanager: npm.AutoPackageManager}
	for k, v := range m {
		var ok bool
		switch k {
		case "typescript":
			o.typescript, ok = v.(bool)
		case "tsconfig":
			o.tsconfig, ok = v.(string)
		case "nodeargs":
			var s string
			if s, ok = v.(string); ok {
				o.nodeargs = strings.Fields(s)
			}
		case "production":
			o.production, ok = v.(bool)
		case "packagemanager":
			var s string
			if s, ok = v.(string); ok {
				o.packagemanager = npm.PackageManagerType(s)
			}
		default:
			ok = true
		}
		if !ok {
			return o, fmt.Errorf("the runtime option %s has the wrong type: %T", k, v)
		}
	}
	return o, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the $PATH: " + err.Error()}, nil
	}
	runPath, err := resolve(ctx, node, info.GetProgramDirectory(), "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	h.mu.Lock()
	engine := h.engine
	h.mu.Unlock()

	args := append(append([]string{}, opts.nodeargs...), runPath)
	flagIf := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	flagIf("monitor", req.GetMonitorAddress())
	flagIf("engine", engine)
	flagIf("organization", req.GetOrganization())
	flagIf("project", req.GetProject())
	flagIf("root-directory", info.GetRootDirectory())
	flagIf("stack", req.GetStack())
	flagIf("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flagIf("parallel", strconv.Itoa(int(req.GetParallel())))
	args = append(append(args, info.GetEntryPoint()), req.GetArgs()...)

	cfg := map[string]string{}
	for k, v := range req.GetConfig() {
		key, err := config.ParseKey(k)
		if err != nil {
			return &pulumirpc.RunResponse{Error: err.Error()}, nil
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	cfgJSON, _ := json.Marshal(cfg)
	secrets := req.GetConfigSecretKeys()
	if secrets == nil {
		secrets = []string{}
	}
	secretsJSON, _ := json.Marshal(secrets)
	env := append(os.Environ(), "PULUMI_CONFIG="+string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretsJSON))
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	cmdCtx, cancel := context.WithCancel(h.cancelCtx)
	defer cancel()
	context.AfterFunc(ctx, cancel)
	cmd := exec.CommandContext(cmdCtx, node, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stdout, os.Stderr
	return runResponse(cmd.Run()), nil
}

// runResponse is what Run answers once the program ended with err, as the real host answers: a bail for exit code
// bail (the program said why), an error naming any other exit code, or why it could not run at all.
func runResponse(err error) *pulumirpc.RunResponse {
	if err == nil {
		return &pulumirpc.RunResponse{}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return &pulumirpc.RunResponse{Error: "Problem executing program (could not run language executor): " + err.Error()}
	}
	if exit.ExitCode() == bail {
		return &pulumirpc.RunResponse{Bail: true}
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exit.ExitCode())}
}

// resolve is what require.resolve(mod) finds from dir, with node.
func resolve(ctx context.Context, node, dir, mod string) (string, error) {
	script := fmt.Sprintf(`try { console.log(require.resolve(%q)); } catch (error) { if (error.code === 'MODULE_NOT_FOUND') { `+
		`console.error("It looks like the Pulumi SDK has not been installed. Have you run pulumi install?") } else { console.error(error.message); } process.exit(1); }`, mod)
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", errors.New(string(exit.Stderr))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// GetRequiredPackages walks the program's directory for package.json files under node_modules, as the real host's
// getPackagesFromDir does, and answers each resource plugin one declares.
func (h *host) GetRequiredPackages(_ context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	resp := &pulumirpc.GetRequiredPackagesResponse{}
	seen := map[string]bool{}
	var walk func(dir string, inNodeModules bool)
	walk = func(dir string, inNodeModules bool) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		entries, err := os.ReadDir(real)
		if err != nil {
			return
		}
		for _, e := range entries {
			path := filepath.Join(real, e.Name())
			fi, err := os.Stat(path) // follows a link, as the real host does
			switch {
			case err != nil:
			case fi.IsDir():
				walk(path, inNodeModules || filepath.Base(real) == "node_modules")
			case inNodeModules && e.Name() == "package.json":
				if pkg := packageOf(path); pkg != nil {
					resp.Packages = append(resp.Packages, pkg)
				}
			}
		}
	}
	walk(req.GetInfo().GetProgramDirectory(), false)
	return resp, nil
}

// packageOf is the resource plugin a package.json declares, or nil: named by "pulumi.name", else by the package's
// name when it is @pulumi/<name>; versioned by "pulumi.version", else the package's, with a v.
func packageOf(path string) *pulumirpc.PackageDependency {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var p struct {
		Name, Version string
		Pulumi        plugin.PulumiPluginJSON `json:"pulumi"`
	}
	if json.Unmarshal(b, &p) != nil || !p.Pulumi.Resource {
		return nil
	}
	name := p.Pulumi.Name
	if name == "" {
		var ok bool
		if name, ok = strings.CutPrefix(p.Name, "@pulumi/"); !ok {
			return nil // the real host refuses a third-party package without pulumi.name
		}
	}
	v := p.Pulumi.Version
	if v == "" {
		v = p.Version
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	return &pulumirpc.PackageDependency{Name: name, Kind: "resource", Version: v, Server: p.Pulumi.Server}
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	opts, err := parseOptions(req.GetInfo().GetOptions().AsMap())
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	if _, err := npm.Install(server.Context(), opts.packagemanager, req.GetInfo().GetProgramDirectory(), opts.production, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	opts, err := parseOptions(req.GetInfo().GetOptions().AsMap())
	if err != nil {
		return nil, err
	}
	pm, err := npm.ResolvePackageManager(opts.packagemanager, req.GetInfo().GetProgramDirectory())
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	out, _ := exec.CommandContext(ctx, node, "--version").Output()
	return &pulumirpc.AboutResponse{Executable: node, Version: strings.TrimSpace(string(out)), Metadata: map[string]string{"packagemanager": pm.Name()}}, nil
}

func (h *host) GeneratePackage(_ context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, err
	}
	pkg, diags, err := schema.BindSpec(spec, schema.NewCachedLoader(loader), schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	resp := &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}
	if diags.HasErrors() {
		return resp, nil
	}
	files, err := codegen.GeneratePackage("pulumi-language-nodejs", pkg, req.GetExtraFiles(), req.GetLocalDependencies(), req.GetLocal(),
		schema.NewCachedLoader(loader))
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		path := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	opts, err := parseOptions(req.GetInfo().GetOptions().AsMap())
	if err != nil {
		return nil, err
	}
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	cached := schema.NewCachedLoader(loader)
	dir := req.GetInfo().GetProgramDirectory()
	pm, err := npm.ResolvePackageManager(opts.packagemanager, dir)
	if err != nil {
		return nil, err
	}
	var imports bytes.Buffer
	for _, dep := range req.GetPackages() {
		desc := &schema.PackageDescriptor{Name: dep.GetPackage().GetName(), DownloadURL: dep.GetPackage().GetServer()}
		if v, err := semverOf(dep.GetPackage().GetVersion()); err == nil {
			desc.Version = v
		}
		ref, err := schema.LoadPackageReferenceV2(ctx, cached, desc)
		if err != nil {
			return nil, err
		}
		pkg, err := ref.Definition()
		if err != nil {
			return nil, err
		}
		if err := pkg.ImportLanguages(map[string]schema.Language{"nodejs": codegen.Importer}); err != nil {
			return nil, err
		}
		name := "@pulumi/" + pkg.Name
		if info, ok := pkg.Language["nodejs"].(codegen.NodePackageInfo); ok && info.PackageName != "" {
			name = info.PackageName
		} else if pkg.Namespace != "" {
			name = "@" + pkg.Namespace + "/" + pkg.Name
		}
		if err := pm.Link(ctx, dir, name, dep.GetPath()); err != nil {
			return nil, err
		}
		fmt.Fprintf(&imports, "  import * as %s from %q;\n", cgstrings.Camel(ref.Name()), name)
	}
	return &pulumirpc.LinkResponse{ImportInstructions: "You can import the SDK in your TypeScript code with:\n\n" + imports.String()}, nil
}

// semverOf is a package's version as the schema loader takes it.
func semverOf(s string) (*semver.Version, error) { return semver.New(strings.TrimPrefix(s, "v")) }
