package engine_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/authority"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// The package's repository, as docs/package.md names it.
const repoPath = "karpenter-interruption-bus/karpenter-interruption-bus.git"

// gitHub stands in for github.com, this machine being offline. It serves, over HTTPS, a repository holding this
// checkout's files (as git add -A sees them, .gitignore honoured) committed and tagged tag, at repoPath, with
// git's own smart HTTP server (git http-backend), as GitHub answers a clone. The CLI reaches it by the name
// github.com, through an HTTPS proxy (HTTPS_PROXY) that tunnels github.com:443 to it and refuses every other
// host, and trusts its certificate, signed by a test authority (SSL_CERT_FILE): so the CLI clones exactly the
// documented URL. It returns the environment that points the CLI there. What GitHub does that it does not: its
// API, authentication, rate limits.
func gitHub(t *testing.T, tag string) map[string]string {
	t.Helper()
	work := t.TempDir()
	served := filepath.Join(work, "srv")
	snapshot(t, filepath.Join(served, repoPath), tag)

	bin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	vars := asGitHub(t, work, &cgi.Handler{
		Path: bin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + served, "GIT_HTTP_EXPORT_ALL=1"},
	})
	// The Go language host's go mod tidy and go build take every module from the module cache: make
	// engine-modules downloaded them before the tests (the proxy would refuse the module proxy anyway).
	vars["GOPROXY"] = "off"
	return vars
}

// asGitHub serves h as https://github.com, over HTTPS with a certificate for github.com signed by a test authority
// (SSL_CERT_FILE), through an HTTPS proxy (HTTPS_PROXY) that tunnels github.com:443 to it and refuses every other
// host; it returns the environment that points a client there.
func asGitHub(t *testing.T, work string, h http.Handler) map[string]string {
	t.Helper()
	return serveAsGitHub(t, work, h, false)
}

// asGitHubOverHTTP2 is asGitHub offering HTTP/2, as GitHub's release downloads are offered (ALPN h2 first): Go's
// client, the CLI's, then reads a body's data and its end in separate reads.
func asGitHubOverHTTP2(t *testing.T, work string, h http.Handler) map[string]string {
	t.Helper()
	return serveAsGitHub(t, work, h, true)
}

func serveAsGitHub(t *testing.T, work string, h http.Handler, http2 bool) map[string]string {
	t.Helper()
	caFile, leaf := certificates(t, work, "github.com")
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}
	srv.EnableHTTP2 = http2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	target := srv.Listener.Addr().String()

	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Host != "github.com:443" {
			http.Error(w, "offline: only github.com is served here", http.StatusForbidden)
			return
		}
		upstream, err := net.Dial("tcp", target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			upstream.Close()
			return
		}
		fmt.Fprint(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { _, _ = io.Copy(upstream, buf); upstream.Close() }()
		_, _ = io.Copy(conn, upstream)
		conn.Close()
	}))
	t.Cleanup(proxy.Close)
	return map[string]string{
		"HTTPS_PROXY": proxy.URL, "https_proxy": proxy.URL,
		"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
		"SSL_CERT_FILE": caFile,
	}
}

// snapshot makes a bare repository at dir holding the checkout's files, committed and tagged tag.
func snapshot(t *testing.T, dir, tag string) {
	t.Helper()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=engine test", "-c", "user.email=engine@test.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	gitDir := t.TempDir()
	git(gitDir, "init", "-q", "--bare", gitDir)
	git(root, "--git-dir", gitDir, "--work-tree", root, "add", "-A")
	git(root, "--git-dir", gitDir, "--work-tree", root, "commit", "-q", "-m", "snapshot of the checkout under test")
	git(root, "--git-dir", gitDir, "tag", tag)
	git(root, "clone", "-q", "--bare", gitDir, dir)
}

// certificates makes a certificate authority, written to a PEM file, and a server certificate it signs for host.
func certificates(t *testing.T, dir, host string) (string, tls.Certificate) {
	t.Helper()
	caFile := filepath.Join(dir, "ca.pem")
	cert, err := authority.Issue("engine test authority", host, caFile)
	if err != nil {
		t.Fatal(err)
	}
	return caFile, cert
}

// goLanguageHost is a directory holding pulumi-language-go: the real host when PULUMI_LANGUAGE_GO names it
// (built from Pulumi's source at the CLI's version), or else the stand-in (cmd/gohost), as the module proxy does
// not serve the real one.
func goLanguageHost(t *testing.T) string {
	t.Helper()
	return languageHost(t, "go", gohostBinary)
}

// languageHost is a directory holding pulumi-language-<language>, for PATH: the binary PULUMI_LANGUAGE_<LANGUAGE>
// names, or else the stand-in standin builds.
func languageHost(t *testing.T, language string, standin func(*testing.T) string) string {
	t.Helper()
	host := os.Getenv("PULUMI_LANGUAGE_" + strings.ToUpper(language))
	if host != "" {
		t.Logf("the %s language host: %s", language, host)
	} else {
		host = standin(t)
	}
	dir := t.TempDir()
	if err := os.Symlink(host, filepath.Join(dir, "pulumi-language-"+language)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPackageAdd: the documented `pulumi package add <repository>.git/provider@<tag>` through the real CLI, from
// a Pulumi YAML project outside the repository, with nothing installed beforehand: the CLI clones the tag, has
// the Go language host install the provider's dependencies and build it from provider/PulumiPlugin.yaml, reads
// its schema and records the package in Pulumi.yaml; the program then previews, deploys and previews again
// with no change, the provider built and started by the host each time, with no environment variable of the
// package's.
func TestPackageAdd(t *testing.T) {
	t.Parallel()
	tag, version := "v"+release.Version, release.Version // the release this checkout is, as the examples name it
	world := standin.World{Region: region, Account: hub, Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}, Versions: versions(t)}
	e := newEnv(t, world)
	e.Path = []string{goLanguageHost(t)}
	e.Extra = gitHub(t, tag)
	dir := yamlProject(t, busProgram("kib-package-add", "  queueName: ${blue.queueName}\n"))
	source := "github.com/" + repoPath + "/provider@" + tag // as docs/package.md writes it
	pulumi(t, e, dir, "package", "add", source)

	project, err := os.ReadFile(filepath.Join(dir, "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := packageName + ": " + source; !strings.Contains(string(project), want) {
		t.Errorf("Pulumi.yaml does not record %q:\n%s", want, project)
	}
	var plugins []struct {
		Name, Kind, Version string
	}
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "plugin", "ls", "--json")), &plugins); err != nil {
		t.Fatal(err)
	}
	var installed []string
	for _, p := range plugins {
		if strings.Contains(p.Name, "provider") && p.Kind == "resource" {
			installed = append(installed, p.Name+"@"+p.Version)
		}
	}
	if len(installed) != 1 || !strings.HasSuffix(installed[0], "@"+version) {
		t.Errorf("the package's plugin installed = %v, want one at the tag %s", installed, tag)
	}

	// The provider built from a clone reports 0.0.0-dev (nothing stamps it); the CLI gives a git package the
	// version it installed, the tag (docs/package.md, "Versions").
	var schema struct{ Name, Version string }
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "package", "get-schema", source)), &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Name != packageName || schema.Version != version {
		t.Errorf("the schema of %s names %s %s, want %s %s", source, schema.Name, schema.Version, packageName, version)
	}

	deployBusProgram(t, e, dir, "kib-add")
	checkOneBus(t, e, dir)
}

// deployBusProgram runs busProgram's life cycle in dir as a user does: a stack, its configuration (the bus busName in
// the hub's account), a preview that shows the Bus, an update whose outputs name blue's queue, and a preview with no
// change.
func deployBusProgram(t *testing.T, e *env, dir, busName string) {
	t.Helper()
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, dir, "config", "set", "aws:region", region)
	pulumi(t, e, dir, "config", "set", "busName", busName)
	pulumi(t, e, dir, "config", "set", "hubAccountId", hub)
	if preview := pulumi(t, e, dir, "preview", "--non-interactive"); !strings.Contains(preview, packageName+":index:Bus") {
		t.Errorf("the preview does not show the Bus:\n%s", preview)
	}
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	if outputs := stackOutputs(t, e, dir); outputs["queueName"] != busName+"_blue" {
		t.Errorf("outputs = %v", outputs)
	}
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
}
