package components_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// TestOnlyDecisionsArePlain: the schema marks plain exactly the arguments docs/package.md's "Plain values" table
// lists (an object holding one is plain too, and only such an object), and every other argument is an input.
func TestOnlyDecisionsArePlain(t *testing.T) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText(t), &spec); err != nil {
		t.Fatal(err)
	}
	var plain, objects []string
	// walk records the plain arguments under props (at prefix), and says whether any is plain.
	var walk func(prefix string, props map[string]schema.PropertySpec) bool
	walk = func(prefix string, props map[string]schema.PropertySpec) bool {
		any := false
		for name, p := range props {
			path := prefix + name
			ts := p.TypeSpec
			for ts.Items != nil || ts.AdditionalProperties != nil {
				if ts.Items != nil {
					ts = *ts.Items
				} else {
					ts = *ts.AdditionalProperties
				}
			}
			holds := false
			if ty, ok := spec.Types[strings.TrimPrefix(ts.Ref, "#/types/")]; ok && ty.Type == "object" {
				holds = walk(path+".", ty.Properties)
			}
			switch {
			case p.Ref != "" && holds: // an object holding a plain argument: plain so that a typed SDK reaches it
				if !p.Plain {
					t.Errorf("%s holds a plain argument but is not plain", path)
				}
				objects = append(objects, path)
			case p.Plain:
				plain = append(plain, path)
			}
			any = any || holds || p.Plain
		}
		return any
	}
	for tok, r := range spec.Resources {
		walk(tok[strings.LastIndex(tok, ":")+1:]+".", r.InputProperties)
	}
	documented := plainTable(t)
	slices.Sort(plain)
	if !slices.Equal(plain, documented) {
		t.Errorf("the schema's plain arguments:\n  %s\ndocs/package.md's \"Plain values\":\n  %s", strings.Join(plain, "\n  "), strings.Join(documented, "\n  "))
	}
	if len(plain) < 20 || len(objects) < 5 {
		t.Fatalf("%d plain arguments, %d objects holding one: the walk lost the schema", len(plain), len(objects))
	}
	for _, in := range []string{"ClusterInterruption.clusterName", "ClusterInterruption.busName", "ClusterInterruption.hubAccountId",
		"ClusterInterruption.oidcProviderArn", "ClusterInterruption.controllerRoleName", "Bus.alarms.topicArn", "Bus.tags"} {
		if slices.Contains(plain, in) {
			t.Errorf("%s is plain, an input wherever a value comes from another resource or stack", in)
		}
	}
}

// plainTable are the arguments the "Plain values" table of docs/package.md lists, sorted: each row's first cell,
// `Component.path` then `.sibling`s of the same object.
func plainTable(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/package.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Plain values\n")
	if start < 0 {
		t.Fatal(`docs/package.md has no "## Plain values"`)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	cell := regexp.MustCompile("`([^`]+)`")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		base := ""
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			name := m[1]
			if strings.HasPrefix(name, ".") {
				name = base + name
			} else {
				base = name[:strings.LastIndex(name, ".")]
			}
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
