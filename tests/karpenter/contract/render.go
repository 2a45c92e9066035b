package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The account and region the contract's stacks are rendered in (cmd/render's default account).
const (
	account = "123456789012"
	region  = "us-east-1"
)

// declared is one resource of the program's offline render (cmd/render -format json).
type declared struct {
	Type   string         `json:"type"`
	Name   string         `json:"name"`
	Parent string         `json:"parent"`
	Inputs map[string]any `json:"inputs"`
}

var (
	renderOnce sync.Once
	renderBin  string
	errRender  error
)

// renderStack runs the program's offline render (cmd/render, built once per test binary) on a stack file's
// text and returns what it declares.
func renderStack(t *testing.T, text string) []declared {
	t.Helper()
	renderOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kib-contract-render")
		if err != nil {
			errRender = err
			return
		}
		renderBin = filepath.Join(dir, "render")
		// go run -exec cp runs `cp <render> renderBin`: Go keeps the executable go run links in its build cache, so
		// the test binaries of every module that renders (each Karpenter version's, the IAM matrix's) link it once.
		cmd := exec.Command("go", "run", "-exec", "cp", "./cmd/render", renderBin)
		cmd.Dir = root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			errRender = fmt.Errorf("building cmd/render: %w\n%s", err, out)
		}
	})
	if errRender != nil {
		t.Fatal(errRender)
	}
	file := filepath.Join(t.TempDir(), "Pulumi.contract.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(renderBin, "-stack", "contract", "-file", file, "-format", "json", "-account", account)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render: %v\n%s", err, stderr.String())
	}
	var rs []declared
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatalf("reading the render: %v", err)
	}
	return rs
}

// find returns the resource of type typ, child of parent, whose input "name" is name.
func find(t *testing.T, rs []declared, typ, parent, name string) declared {
	t.Helper()
	for _, r := range rs {
		if r.Type == typ && r.Parent == parent && r.Inputs["name"] == name {
			return r
		}
	}
	t.Fatalf("the render declares no %s named %q under %s", typ, name, parent)
	return declared{}
}

// roleName is the name of the cluster's role whose name starts with prefix (IAM names are shortened to fit).
func roleName(t *testing.T, rs []declared, cluster, prefix string) string {
	t.Helper()
	for _, r := range rs {
		if name, _ := r.Inputs["name"].(string); r.Type == "aws:iam/role:Role" && r.Parent == cluster && strings.HasPrefix(name, prefix) {
			return name
		}
	}
	t.Fatalf("the render declares no role %s... for %s", prefix, cluster)
	return ""
}
