package contract

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	kp "github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// contractPrefix is the name prefix of the contract's stacks.
const contractPrefix = "kib-contract"

// chartStack is a stack installing Karpenter version on two clusters: one through Pod Identity with the
// defaults, one through IRSA with the longest cluster name EKS allows, its own namespace and extra values.
func chartStack(version, irsaCluster string) string {
	return `config:
  aws:region: ` + region + `
  karpenter-interruption-bus:namePrefix: ` + contractPrefix + `
  karpenter-interruption-bus:clusters:
    - name: alpha
      karpenter:
        version: "` + version + `"
    - name: ` + irsaCluster + `
      identity: irsa
      oidcProviderArn: arn:aws:iam::` + account + `:oidc-provider/oidc.eks.` + region + `.amazonaws.com/id/EXAMPLE
      karpenter:
        version: "` + version + `"
        namespace: karpenter
        values:
          replicas: 1
          logLevel: debug
`
}

// chartReceivesValues renders the version's own chart with exactly the values the component passes to its
// release, and checks the controller gets the cluster's name, the queue the router forwards to and, with IRSA,
// its role; every value passed is one the chart declares.
func chartReceivesValues(t *testing.T, version, moduleDir string) {
	ch, err := loader.Load(kp.ChartDir(moduleDir))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("l", 95) + "-irsa" // 100 characters, EKS's longest cluster name
	rs := renderStack(t, chartStack(version, long))
	for _, tt := range []struct {
		cluster, namespace string
		irsa               bool
	}{{"alpha", "kube-system", false}, {long, "karpenter", true}} {
		t.Run(tt.cluster[:5], func(t *testing.T) {
			rel := find(t, rs, "kubernetes:helm.sh/v3:Release", tt.cluster, "karpenter")
			if got := rel.Inputs["version"]; got != version {
				t.Fatalf("the release installs chart %v, want %s", got, version)
			}
			routerQueue := queuename.For(queuename.Prefix(contractPrefix), tt.cluster) // where the router forwards
			find(t, rs, "aws:sqs/queue:Queue", tt.cluster, routerQueue)
			values := rel.Inputs["values"].(map[string]any)
			if unknown := unknownValues(values, ch.Values, ""); len(unknown) > 0 {
				t.Errorf("Karpenter's chart declares no value %v", unknown)
			}
			docs := renderChart(t, ch, values, rel.Inputs["namespace"].(string))
			deployment := docs["deployment.yaml"]
			env := map[string]string{}
			containers := dig(deployment, "spec", "template", "spec", "containers").([]any)
			for _, e := range dig(containers[0], "env").([]any) {
				if v, ok := dig(e, "value").(string); ok {
					env[dig(e, "name").(string)] = v
				}
			}
			if env["CLUSTER_NAME"] != tt.cluster || env["INTERRUPTION_QUEUE"] != routerQueue {
				t.Errorf("controller env CLUSTER_NAME=%q INTERRUPTION_QUEUE=%q, want %q and %q", env["CLUSTER_NAME"], env["INTERRUPTION_QUEUE"], tt.cluster, routerQueue)
			}
			if ns := dig(deployment, "metadata", "namespace"); ns != tt.namespace {
				t.Errorf("deployment in namespace %v, want %s", ns, tt.namespace)
			}
			sa := docs["serviceaccount.yaml"]
			if name := dig(sa, "metadata", "name"); name != "karpenter" || dig(deployment, "spec", "template", "spec", "serviceAccountName") != "karpenter" {
				t.Errorf("service account %v is not the one the controller runs as, or not karpenter (the identity's)", name)
			}
			ann := dig(sa, "metadata", "annotations", "eks.amazonaws.com/role-arn")
			wantRole := "arn:aws:iam::" + account + ":role/" + roleName(t, rs, tt.cluster, "KarpenterController-")
			if tt.irsa && ann != wantRole {
				t.Errorf("service account role annotation = %v, want %s", ann, wantRole)
			}
			if !tt.irsa && ann != nil {
				t.Errorf("pod identity service account has an IRSA annotation %v", ann)
			}
		})
	}
	t.Run("a value the chart does not declare is an error", func(t *testing.T) {
		typo := map[string]any{"settings": map[string]any{"interruptionQueueName": "q"}, "serviceAccount": map[string]any{"annotations": map[string]any{"any": "x"}}}
		if got := unknownValues(typo, ch.Values, ""); !slices.Equal(got, []string{"settings.interruptionQueueName"}) {
			t.Errorf("unknown values = %v, want [settings.interruptionQueueName]", got)
		}
	})
}

// unknownValues are the paths of values the chart's values.yaml does not declare. A map the chart declares
// empty (annotations, labels, node selectors) takes any key.
func unknownValues(values, defaults map[string]any, path string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		d, ok := defaults[k]
		if !ok {
			out = append(out, path+k)
			continue
		}
		sub, isMap := values[k].(map[string]any)
		dsub, dIsMap := d.(map[string]any)
		if isMap && dIsMap && len(dsub) > 0 {
			out = append(out, unknownValues(sub, dsub, path+k+".")...)
		}
	}
	return out
}

// renderChart renders the chart with values, as `helm template` would, and returns its documents by template
// file name.
func renderChart(t *testing.T, ch *chart.Chart, values map[string]any, namespace string) map[string]map[string]any {
	t.Helper()
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
