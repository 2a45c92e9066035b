package render

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderDev renders Pulumi.dev.yaml offline, and writes it as JSON.
func renderDev(t *testing.T) ([]Resource, *bytes.Buffer) {
	t.Helper()
	rs, err := Stack(filepath.Join("..", "..", "Pulumi.dev.yaml"), "dev", Offline(), Target{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	return rs, &buf
}

func TestRenderDevStack(t *testing.T) {
	rs, buf := renderDev(t)
	var decoded []map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatalf("JSON output is not one array of objects: %v", err)
	}
	if len(decoded) != len(rs) || len(rs) < 20 {
		t.Fatalf("%d objects for %d resources", len(decoded), len(rs))
	}
	for _, o := range decoded {
		if len(o) != 5 || o["type"] == nil || o["name"] == nil || o["parent"] == nil || o["account"] == nil || o["inputs"] == nil {
			t.Fatalf("object %s: want exactly type, name, parent, account, inputs", o)
		}
	}
	var fn map[string]any
	for _, r := range rs {
		if r.Type == "aws:lambda/function:Function" {
			fn = r.Inputs
		}
	}
	if code, _ := fn["code"].(map[string]any); code["archive"] != "build/router/router.zip" {
		t.Errorf("function code renders as %v, want the archive path", fn["code"])
	}
	buf.Reset()
	if err := WriteTable(buf, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "ACCOUNT") || !strings.Contains(buf.String(), "aws:lambda/function:Function") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	render := func() string {
		rs, err := Stack(filepath.Join("..", "..", "Pulumi.dev.yaml"), "dev", Offline(), Target{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_ = WriteJSON(&buf, rs)
		return buf.String()
	}
	first := render()
	for range 3 {
		if render() != first {
			t.Fatal("two renders of the same stack differ")
		}
	}
}

func TestRenderConfigError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Pulumi.bad.yaml")
	if err := os.WriteFile(path, []byte("config:\n  karpenter-interruption-bus:clusters:\n    - name: a\n    - name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Stack(path, "bad", Offline(), Target{})
	if err == nil || !strings.Contains(err.Error(), "clusters[1].name: duplicate of clusters[0]") {
		t.Fatalf("error = %v, want the duplicate named", err)
	}
}

func TestTree(t *testing.T) {
	rs := []Resource{
		{Type: "b", Name: "child2", Parent: "comp"},
		{Type: "x:index:C", Name: "comp", component: true},
		{Type: "a", Name: "child1", Parent: "comp"},
		{Type: "a", Name: "top"},
	}
	var got []string
	for _, r := range Tree(rs) {
		got = append(got, r.Name)
	}
	if strings.Join(got, ",") != "top,comp,child1,child2" {
		t.Fatalf("tree order = %v", got)
	}
}

// TestRenderIsInTheStacksRegionAndAccount: the offline render shows the ARNs pulumi up will create, in the stack's
// aws:region and the account it is told, not the mocks' defaults.
func TestRenderIsInTheStacksRegionAndAccount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Pulumi.eu.yaml")
	stack := "config:\n  aws:region: eu-central-1\n  karpenter-interruption-bus:clusters:\n    - name: a\n"
	if err := os.WriteFile(path, []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := Stack(path, "eu", Offline(), Target{Account: "210987654321"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"arn:aws:sqs:eu-central-1:210987654321:kib-eu-central", "https://sqs.eu-central-1.amazonaws.com/210987654321/kib-eu_a",
		"arn:aws:eks:eu-central-1:210987654321:cluster/a", `\"aws:RequestedRegion\":\"eu-central-1\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the render does not show %s", want)
		}
	}
	for _, wrong := range []string{"us-east-1", "123456789012"} {
		if strings.Contains(out, wrong) {
			t.Errorf("the render shows %s, which is not the stack's", wrong)
		}
	}
}
