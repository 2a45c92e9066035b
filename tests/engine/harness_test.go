package engine_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// The real engine's tools, built by make (make engine-tools, a prerequisite of make test-engine) into build/bin
// from sdkgen/go.mod's tool directives: the Pulumi CLI (pkg/v3 v3.259.0, its version stamped) and the YAML
// language host.
var (
	repoRoot = filepath.Join("..", "..")
	binDir   = filepath.Join(repoRoot, "build", "bin")
)

// plugins are the stand-in providers, installed as the packages the program's SDKs register resources of, at the
// versions the modules pin (the SDK module's version is the plugin's: pulumi-plugin.json says the same).
var plugins = map[string]string{
	"aws":        "github.com/pulumi/pulumi-aws/sdk/v6",
	"eks":        "github.com/pulumi/pulumi-eks/sdk/v2",
	"kubernetes": "github.com/pulumi/pulumi-kubernetes/sdk/v4",
}

// pluginVersion is the version this module's build list has for the module path, without its v (go list -m:
// a test binary carries no module list of its own).
func pluginVersion(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
}

// versions are the plugins' versions, by package.
func versions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for pkg, module := range plugins {
		out[pkg] = pluginVersion(t, module)
	}
	return out
}

// The stand-in provider and the stand-in Go language host, each built once per test binary, on first use.
var (
	standinBinary = builtOnce("./cmd/standin")
	gohostBinary  = builtOnce("./cmd/gohost")
)

// builtOnce returns the path of this module's command pkg, built into a temporary directory the first time it is
// asked for: the tests that run in parallel share one build.
func builtOnce(pkg string) func(t *testing.T) string {
	build := sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "kib-engine-bin-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, filepath.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
		}
		return bin, nil
	})
	return func(t *testing.T) string {
		t.Helper()
		bin, err := build()
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
}

// env is one offline Pulumi installation: a PULUMI_HOME with the stand-ins installed as plugins, a file backend,
// the stand-ins' world and state, all in temporary directories.
type env struct {
	Home, Backend, State, WorldFile string
	Store                           *standin.Store
	// Path is put before build/bin in PATH (a language host), Extra added to the environment.
	Path  []string
	Extra map[string]string
	// Lambda is the URL of the stand-in for Lambda's API (lambdaStub), which the program and the component package's
	// provider read the account's concurrency from before declaring anything.
	Lambda string
}

// lambdaStub answers Lambda's REST protocol for the two reads of infra/concurrency, for an account of the default
// quota (1,000 concurrent executions, none reserved) with no router function yet: GET
// /2016-08-19/account-settings, and GET /2019-09-30/functions/{name}/concurrency answered 404
// ResourceNotFoundException; and STS's GetCallerIdentity (query protocol, XML), which the check asks which account
// it read in, answered with account(), the world's; and S3's HeadBucket of the archive's check (infra/bucketowner), answered
// 404 as for a name no bucket holds. What Lambda and STS do that it does not: check the request's
// signature and credentials, answer for the caller's own account, count other functions' reservations; it refuses
// every other call.
func lambdaStub(t *testing.T, account func() string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.ParseForm() == nil && r.Form.Get("Action") == "GetCallerIdentity" {
			w.Header().Set("Content-Type", "text/xml")
			a := account()
			_, _ = w.Write([]byte(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
				`<Arn>arn:aws:iam::` + a + `:user/stand-in</Arn><UserId>AIDASTANDIN</UserId><Account>` + a + `</Account>` +
				`</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`))
			return
		}
		if r.Method == http.MethodHead && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 {
			// S3's HeadBucket (path-style, the endpoint being an IP address): no bucket of the name, as S3 answers a
			// name no account holds (404, no body), which the archive's check (infra/bucketowner) takes as "missing".
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/2016-08-19/account-settings":
			_, _ = w.Write([]byte(`{"AccountLimit":{"ConcurrentExecutions":1000,"UnreservedConcurrentExecutions":1000},"AccountUsage":{"FunctionCount":0}}`))
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/2019-09-30/functions/") && strings.HasSuffix(r.URL.Path, "/concurrency"):
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"Type":"User","Message":"Function not found"}`))
		default:
			w.Header().Set("X-Amzn-ErrorType", "UnknownOperationException")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"Type":"User","Message":"the stand-in answers the account's concurrency only"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func newEnv(t *testing.T, world standin.World) *env {
	t.Helper()
	for _, tool := range []string{"pulumi", "pulumi-language-yaml"} {
		if _, err := os.Stat(filepath.Join(binDir, tool)); err != nil {
			t.Fatalf("%s is not built: make engine-tools builds the Pulumi CLI and the YAML host into build/bin (%v)", tool, err)
		}
	}
	root := t.TempDir()
	if os.Getenv("KIB_ENGINE_KEEP") != "" { // keep the backend and the stand-ins' state to look at
		root, _ = os.MkdirTemp(systemTemp, "kib-engine-")
		t.Logf("kept in %s", root)
	}
	e := &env{
		Home: filepath.Join(root, "home"), Backend: filepath.Join(root, "backend"), State: filepath.Join(root, "aws"),
		WorldFile: filepath.Join(root, "world.json"),
	}
	e.Store = &standin.Store{Dir: e.State}
	e.Lambda = lambdaStub(t, func() string {
		var w standin.World
		if b, err := os.ReadFile(e.WorldFile); err == nil {
			_ = json.Unmarshal(b, &w)
		}
		return w.Account
	})
	for _, d := range []string{e.Home, e.Backend, e.State} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.SetWorld(t, world)
	installStandins(t, e.Home, world)
	return e
}

// WithNewHome is e seen from another machine: the same backend and stand-ins, a PULUMI_HOME of its own holding the
// stand-ins' plugins only (as the registry's providers are installed on every machine), nothing of the package.
func (e *env) WithNewHome(t *testing.T, world standin.World) *env {
	t.Helper()
	other := *e
	other.Home = t.TempDir()
	other.Extra = maps.Clone(e.Extra)
	installStandins(t, other.Home, world)
	return &other
}

// installStandins installs the stand-in providers of world's versions as plugins of the PULUMI_HOME home.
func installStandins(t *testing.T, home string, world standin.World) {
	t.Helper()
	bin := standinBinary(t)
	for pkg, version := range world.Versions {
		dir := filepath.Join(home, "plugins", "resource-"+pkg+"-v"+version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(bin, filepath.Join(dir, "pulumi-resource-"+pkg)); err != nil {
			t.Fatal(err)
		}
	}
}

// SetWorld writes the stand-ins' world.
func (e *env) SetWorld(t *testing.T, w standin.World) {
	t.Helper()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.WorldFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Vars are the environment of the CLI and everything it starts: offline, nothing downloaded.
func (e *env) Vars() map[string]string {
	abs, _ := filepath.Abs(binDir)
	vars := map[string]string{
		"PULUMI_HOME":        e.Home,
		"PULUMI_BACKEND_URL": "file://" + e.Backend,
		// The passphrase secrets provider: the checkpoint holds secrets encrypted.
		"PULUMI_CONFIG_PASSPHRASE":                      "engine-test",
		"PULUMI_SKIP_UPDATE_CHECK":                      "true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION":   "true",
		"PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS": "true",
		standin.WorldEnv:                                e.WorldFile,
		standin.StateEnv:                                e.State,
		// Lambda's account settings, read with the AWS SDK's default chain, from the stand-in: no credentials of the
		// machine's, no instance metadata.
		"AWS_ENDPOINT_URL_LAMBDA": e.Lambda, "AWS_ENDPOINT_URL_STS": e.Lambda, "AWS_ENDPOINT_URL_S3": e.Lambda, "AWS_ACCESS_KEY_ID": "stand-in", "AWS_SECRET_ACCESS_KEY": "stand-in",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED": "true",
		// The YAML language host is found in PATH, as the CLI's own install puts it beside the CLI.
		"PATH": strings.Join(slices.Concat(e.Path, []string{abs, os.Getenv("PATH")}), string(os.PathListSeparator)),
	}
	for k, v := range e.Extra {
		vars[k] = v
	}
	return vars
}

// Records are what the stand-ins hold, by "type id".
func (e *env) Records(t *testing.T) []standin.Record {
	t.Helper()
	rs, err := e.Store.All()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
