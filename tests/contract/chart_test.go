package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

const karpenterModule = "github.com/aws/karpenter-provider-aws"

// declared is one resource of the program's offline render.
type declared struct {
	Type, Name, Parent string
	Inputs             map[string]any
}

// renderStack runs the program (make render) on a stack file and returns what it declares.
func renderStack(t *testing.T, stackYAML string) []declared {
	t.Helper()
	file := filepath.Join(t.TempDir(), "Pulumi.contract.yaml")
	if err := os.WriteFile(file, []byte(stackYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/render", "-stack", "contract", "-file", file, "-format", "json")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render: %v\n%s", err, stderr.String())
	}
	var rs []declared
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// chartDir is Karpenter's chart in the v1.6.3 module (its Chart.yaml says 1.5.0: versions are stamped at
// release; the templates are v1.6.3's).
func chartDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", karpenterModule).Output()
	if err != nil {
		t.Fatalf("locating %s: %v", karpenterModule, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "charts", "karpenter")
}

// renderChart renders Karpenter's chart with values, as `helm template` would, and returns the documents by
// template file name.
func renderChart(t *testing.T, values map[string]any, namespace string) map[string]map[string]any {
	t.Helper()
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	rv, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "karpenter", Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatalf("Karpenter's chart rejects the values: %v", err)
	}
	docs := map[string]map[string]any{}
	for name, text := range files {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err == nil && doc != nil {
			docs[filepath.Base(name)] = doc
		}
	}
	return docs
}

func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

// TestChartReceivesTheBusQueue renders Karpenter's own chart with exactly the values the component passes, and
// checks the controller gets the cluster's name and the queue the router forwards to, and, with IRSA, its role.
func TestChartReceivesTheBusQueue(t *testing.T) {
	long := strings.Repeat("l", 95) + "-irsa"
	rs := renderStack(t, `config:
  karpenter-interruption-bus:clusters:
    - name: alpha
    - name: `+long+`
      identity: irsa
      oidcProviderArn: arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X
      karpenter:
        namespace: karpenter
`)
	queues, roles := map[string]string{}, map[string]string{}
	releases := map[string]declared{}
	for _, r := range rs {
		switch r.Type {
		case "aws:sqs/queue:Queue":
			queues[r.Parent] = r.Inputs["name"].(string)
		case "aws:iam/role:Role":
			if name := r.Inputs["name"].(string); strings.HasPrefix(name, "KarpenterController-") {
				roles[r.Parent] = "arn:aws:iam::123456789012:role/" + name
			}
		case "kubernetes:helm.sh/v3:Release":
			releases[r.Parent] = r
		}
	}
	for _, tt := range []struct {
		cluster, namespace string
		irsa               bool
	}{{"alpha", "kube-system", false}, {long, "karpenter", true}} {
		t.Run(tt.cluster[:5], func(t *testing.T) {
			rel, ok := releases[tt.cluster]
			if !ok {
				t.Fatalf("no Karpenter release for %s", tt.cluster)
			}
			routerQueue := queuename.For(queuename.Prefix("kib-contract"), tt.cluster) // where the router forwards this cluster's events
			if queues[tt.cluster] != routerQueue {
				t.Fatalf("the component's queue %q is not the router's %q", queues[tt.cluster], routerQueue)
			}
			docs := renderChart(t, rel.Inputs["values"].(map[string]any), rel.Inputs["namespace"].(string))
			env := map[string]string{}
			containers := dig(docs["deployment.yaml"], "spec", "template", "spec", "containers").([]any)
			for _, e := range dig(containers[0], "env").([]any) {
				if v, ok := dig(e, "value").(string); ok {
					env[dig(e, "name").(string)] = v
				}
			}
			if env["CLUSTER_NAME"] != tt.cluster || env["INTERRUPTION_QUEUE"] != routerQueue {
				t.Errorf("controller env CLUSTER_NAME=%q INTERRUPTION_QUEUE=%q, want %q and %q", env["CLUSTER_NAME"], env["INTERRUPTION_QUEUE"], tt.cluster, routerQueue)
			}
			if ns := dig(docs["deployment.yaml"], "metadata", "namespace"); ns != tt.namespace {
				t.Errorf("deployment in namespace %v, want %s", ns, tt.namespace)
			}
			sa := docs["serviceaccount.yaml"]
			if name := dig(sa, "metadata", "name"); name != "karpenter" || dig(docs["deployment.yaml"], "spec", "template", "spec", "serviceAccountName") != "karpenter" {
				t.Errorf("service account %v is not the one the controller runs as, or not karpenter (the identity's)", name)
			}
			ann := dig(sa, "metadata", "annotations", "eks.amazonaws.com/role-arn")
			wantRole := roles[tt.cluster] // the controller role the component declares
			if tt.irsa && ann != wantRole {
				t.Errorf("service account role annotation = %v, want %s", ann, wantRole)
			}
			if !tt.irsa && ann != nil {
				t.Errorf("pod identity service account has an IRSA annotation %v", ann)
			}
		})
	}
}
