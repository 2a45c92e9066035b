package components_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
)

// TestYAMLExampleMatchesTheSchema: every resource of the package in examples/cluster-yaml names a component of the
// schema and gives it only inputs the schema has, every required one, each enum a value of its enum, and every
// output it reads exists. (The TypeScript and Python examples are checked against SDKs generated from the same
// schema: make package.)
func TestYAMLExampleMatchesTheSchema(t *testing.T) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText(t), &spec); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join("..", "..", "examples", "cluster-yaml", "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var program struct {
		Packages  map[string]string `yaml:"packages"`
		Resources map[string]struct {
			Type       string         `yaml:"type"`
			Properties map[string]any `yaml:"properties"`
		} `yaml:"resources"`
		Outputs map[string]string `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(text, &program); err != nil {
		t.Fatal(err)
	}
	if _, ok := program.Packages[components.Name]; !ok {
		t.Errorf("packages does not name %s", components.Name)
	}
	ours := 0
	for name, r := range program.Resources {
		if !strings.HasPrefix(r.Type, components.Name+":") {
			continue
		}
		ours++
		res, ok := spec.Resources[r.Type]
		if !ok {
			t.Errorf("%s: type %s is not in the schema", name, r.Type)
			continue
		}
		for _, req := range res.RequiredInputs {
			if _, ok := r.Properties[req]; !ok {
				t.Errorf("%s: required input %s missing", name, req)
			}
		}
		for k, v := range r.Properties {
			p, ok := res.InputProperties[k]
			if !ok {
				t.Errorf("%s: %s is not an input of %s", name, k, r.Type)
				continue
			}
			if ref := strings.TrimPrefix(p.Ref, "#/types/"); ref != p.Ref {
				ty := spec.Types[ref]
				if len(ty.Enum) > 0 && !strings.HasPrefix(fmt.Sprint(v), "${") {
					var values []string
					for _, e := range ty.Enum {
						values = append(values, fmt.Sprint(e.Value))
					}
					if !slices.Contains(values, fmt.Sprint(v)) {
						t.Errorf("%s: %s = %v, not one of %v", name, k, v, values)
					}
				}
				if m, isMap := v.(map[string]any); isMap {
					for sub := range m {
						if _, ok := ty.Properties[sub]; !ok {
							t.Errorf("%s: %s.%s is not a property of %s", name, k, sub, ref)
						}
					}
				}
			}
		}
		for out, expr := range program.Outputs {
			if field, ok := strings.CutPrefix(strings.Trim(expr, "${}"), name+"."); ok {
				if _, ok := res.Properties[field]; !ok {
					t.Errorf("output %s reads %s.%s, not an output of %s", out, name, field, r.Type)
				}
			}
		}
	}
	if ours == 0 {
		t.Error("the YAML example declares no resource of the package")
	}
}
