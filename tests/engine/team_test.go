package engine_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// The versions the documented blocks name, which the test replaces with the releases it serves.
const (
	docsFirstVersion   = "0.3.0"
	docsUpgradeVersion = "0.4.0"
)

// documented is each command block of the docs that takes the package (README.md and docs/package.md, each block
// after its <!-- kib:<name> --> marker): the same in both, where both have it.
func documented(t *testing.T) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, doc := range []string{"README.md", filepath.Join("docs", "package.md")} {
		text, err := os.ReadFile(filepath.Join(repoRoot, doc))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		for i, l := range lines {
			name, ok := strings.CutPrefix(strings.TrimSpace(l), "<!-- kib:")
			if !ok {
				continue
			}
			name = strings.TrimSuffix(name, " -->")
			var block []string
			j := i + 1
			for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```sh"; j++ {
			}
			for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
				block = append(block, strings.TrimSpace(lines[j]))
			}
			got := strings.Join(block, "\n")
			if prev, ok := blocks[name]; ok && prev != got {
				t.Errorf("%s's %q block differs from the other document's:\n%s\nwant\n%s", doc, name, got, prev)
			}
			blocks[name] = got
		}
	}
	for _, name := range []string{"first-machine", "teammate", "upgrade"} {
		if blocks[name] == "" {
			t.Fatalf("the docs have no %q block", name)
		}
	}
	return blocks
}

// releases stands in for GitHub's release downloads of several versions: each one's archive for this machine,
// checksums.txt and install-plugin.sh (scripts/, as .goreleaser.yml attaches it). With corrupt set, every archive it
// serves has a byte changed: what a tampered mirror or a broken download gives.
type releases struct {
	assets  map[string]string // version -> the archive's name
	archive map[string][]byte
	script  []byte
	corrupt atomic.Bool
}

func (rs *releases) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, releasePath)
	version, file, found := strings.Cut(rest, "/")
	asset, known := rs.assets[version]
	if !ok || !found || !known || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(rs.archive[version])
	switch file {
	case "checksums.txt":
		_, _ = fmt.Fprintf(w, "%x  %s\n%x  %s\n", sum, asset, sha256.Sum256([]byte("another")), "pulumi-resource-"+packageName+"-v"+version+"-plan9-mips.tar.gz")
	case "install-plugin.sh":
		_, _ = w.Write(rs.script)
	case asset:
		body := bytes.Clone(rs.archive[version])
		if rs.corrupt.Load() {
			body[len(body)/2] ^= 0xff
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	default:
		http.NotFound(w, r)
	}
}

// TestATeamTakesTheReleaseAsTheDocsSay: a team's Pulumi YAML project takes the package as README.md and
// docs/package.md say, every block run verbatim but for its version, in the project's directory as the previous step
// left it, with no go in PATH, from a stand-in of GitHub's release downloads over HTTP/2 serving CHANGELOG.md's two
// newest releases (this checkout's provider stamped with each version: what the test follows is the plugin, the SDK
// and Pulumi.yaml moving; what the previous release's code deployed is its recorded stack, which the project imports):
//   - the first machine adds the previous release: its plugin installed, checked, Pulumi.yaml and the SDK at it;
//   - a teammate's clean machine, in a clone, installs what Pulumi.yaml records, checked, and previews as the first;
//   - another teammate's machine is served a corrupted archive: refused, nothing installed, the project unchanged;
//   - the upgrade moves the plugin, Pulumi.yaml and the SDK to the current release, and its preview shows what the
//     current release's "Upgrading from" notes list, nothing stateful replaced or deleted.
func TestATeamTakesTheReleaseAsTheDocsSay(t *testing.T) {
	t.Parallel()
	blocks := documented(t)
	all := changelog(t)
	cur, prev := all[0], all[1]
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "install-plugin.sh"))
	if err != nil {
		t.Fatal(err)
	}
	served := &releases{assets: map[string]string{}, archive: map[string][]byte{}, script: script}
	for _, v := range []string{prev.Version, cur.Version} {
		served.assets[v], served.archive[v] = releasedProvider(t, v)
	}
	world := standin.World{Region: region, Account: hub, Existing: []string{"blue", "green", "red"}, SpotServiceLinkedRole: []string{hub},
		Roles: []string{hub + " KarpenterController-green"}, Versions: versions(t)}
	e := newEnv(t, world)
	e.Extra = asGitHubOverHTTP2(t, t.TempDir(), served)
	// No Go: the CLI and its YAML host, the system's commands (sh, curl, awk, sha256sum).
	cli, tools := withoutGo(t)
	e.Extra["PATH"] = cli + ":" + tools + ":/usr/bin:/bin"
	e.Extra["GOROOT"], e.Extra["GOTOOLCHAIN"] = "", "local"
	e.Extra["CURL_CA_BUNDLE"] = e.Extra["SSL_CERT_FILE"]

	run := func(e *env, dir, block string, versions ...string) (string, error) {
		text := block
		for i := 0; i+1 < len(versions); i += 2 {
			text = strings.ReplaceAll(text, versions[i], versions[i+1])
		}
		cmd := exec.Command("sh", "-e", "-c", text)
		cmd.Dir = dir
		cmd.Env = os.Environ()
		for k, v := range e.Vars() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	installed := func(e *env, version string) bool {
		_, err := os.Stat(filepath.Join(e.Home, "plugins", "resource-"+packageName+"-v"+version, "pulumi-resource-"+packageName))
		return err == nil
	}
	recorded := func(dir string) (version, server string) {
		var project struct {
			Packages map[string]struct {
				Version           string `yaml:"version"`
				PluginDownloadURL string `yaml:"pluginDownloadURL"`
			} `yaml:"packages"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "Pulumi.yaml"))
		_ = yaml.Unmarshal(b, &project)
		p := project.Packages[packageName]
		return p.Version, p.PluginDownloadURL
	}
	sdkAt := func(dir, version string) bool {
		_, err := os.Stat(filepath.Join(dir, "sdks", packageName, packageName+"-"+version+".yaml"))
		return err == nil
	}

	// The first machine.
	dir := yamlProject(t, strings.ReplaceAll(upgradeProgram, "REGION", region))
	if out, err := run(e, dir, blocks["first-machine"], docsFirstVersion, prev.Version); err != nil {
		t.Fatalf("the first machine's block: %v\n%s", err, out)
	}
	if v, server := recorded(dir); v != prev.Version || server != releaseServer || !installed(e, prev.Version) || !sdkAt(dir, prev.Version) {
		t.Fatalf("the first machine: Pulumi.yaml at %q from %q, plugin installed %t, SDK at it %t; want %s from %s, all", v, server,
			installed(e, prev.Version), sdkAt(dir, prev.Version), prev.Version, releaseServer)
	}
	stack, err := os.ReadFile(filepath.Join("testdata", "recorded", "TestPackageUpgrade", prev.Version, "stack.json"))
	if err != nil {
		t.Fatalf("no recorded stack of release %s: %v", prev.Version, err)
	}
	importRecorded(t, e, dir, stack)

	// A teammate's machine, a clone of the project (its files, not what pulumi install makes).
	mate := e.WithNewHome(t, world)
	mate.Extra = e.Extra
	clone := cloneProject(t, dir)
	if out, err := run(mate, clone, blocks["teammate"]); err != nil || !installed(mate, prev.Version) || !sdkAt(clone, prev.Version) {
		t.Fatalf("the teammate's block: %v, plugin installed %t, SDK %t\n%s", err, installed(mate, prev.Version), sdkAt(clone, prev.Version), out)
	}
	pulumi(t, mate, clone, "preview", "--stack", "dev", "--non-interactive")

	// Another teammate's machine is served a corrupted archive.
	served.corrupt.Store(true)
	other := e.WithNewHome(t, world)
	other.Extra = e.Extra
	clone2 := cloneProject(t, dir)
	before, _ := os.ReadFile(filepath.Join(clone2, "Pulumi.yaml"))
	out, err := run(other, clone2, blocks["teammate"])
	after, _ := os.ReadFile(filepath.Join(clone2, "Pulumi.yaml"))
	if err == nil || !strings.Contains(out, "refused") || installed(other, prev.Version) || !bytes.Equal(before, after) {
		t.Fatalf("a corrupted archive: %v, plugin installed %t, Pulumi.yaml changed %t; want it refused, nothing installed\n%s", err,
			installed(other, prev.Version), !bytes.Equal(before, after), out)
	}
	t.Logf("a corrupted archive on a teammate's machine: %s", strings.TrimSpace(out))
	served.corrupt.Store(false)

	// The upgrade, on the first machine.
	if out, err := run(e, dir, blocks["upgrade"], docsUpgradeVersion, cur.Version); err != nil {
		t.Fatalf("the upgrade's block: %v\n%s", err, out)
	}
	if v, _ := recorded(dir); v != cur.Version || !installed(e, cur.Version) || !sdkAt(dir, cur.Version) || sdkAt(dir, prev.Version) {
		t.Fatalf("the upgrade: Pulumi.yaml at %q, plugin %s installed %t, SDK at %s %t (at %s still %t); want all moved to %s", v, cur.Version,
			installed(e, cur.Version), cur.Version, sdkAt(dir, cur.Version), prev.Version, sdkAt(dir, prev.Version), cur.Version)
	}
	var preview struct {
		Steps []struct {
			Op  string `json:"op"`
			URN string `json:"urn"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "preview", "--json", "--non-interactive")), &preview); err != nil {
		t.Fatal(err)
	}
	listed := cur.listedSteps()
	for _, st := range preview.Steps {
		typ := urnType(st.URN)
		if st.Op == "same" {
			continue
		}
		switch st.Op {
		case "delete", "replace", "create-replacement", "delete-replaced", "discard-replaced", "import-replacement":
			if slices.Contains(stateful, typ) {
				t.Errorf("the upgrade's preview would %s %s: it holds what a user keeps", st.Op, st.URN)
			}
		}
		if kind := fmt.Sprintf("%s `%s`", st.Op, typ); !listed[kind] {
			t.Errorf("the upgrade's preview shows %s %s, which CHANGELOG.md's \"Upgrading from %s\" does not list", st.Op, st.URN, prev.Version)
		}
	}
}
