package components_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/internal/argsgen"
)

// TestTheArgumentsAreTheConfigurations: args.go, the package's arguments, is what argsgen makes of the program's
// configuration (infra/config), so a key added there is an argument here with no other change (make schema
// rewrites it with -update, then the schema and the SDKs).
func TestTheArgumentsAreTheConfigurations(t *testing.T) {
	got, err := argsgen.Generate("../../infra/config")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("args.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("args.go is not what argsgen makes of infra/config: run make schema")
	}
}

// TestEveryArgumentIsDescribed: each input of the schema's resources and types has a description: the package's
// (descriptions.go), or its configuration field's doc comment.
func TestEveryArgumentIsDescribed(t *testing.T) {
	text, err := os.ReadFile("../schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Resources map[string]struct {
			InputProperties map[string]struct {
				Description string `json:"description"`
			} `json:"inputProperties"`
		} `json:"resources"`
		Types map[string]struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"types"`
	}
	if err := json.Unmarshal(text, &spec); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, res := range spec.Resources {
		for p, prop := range res.InputProperties {
			n++
			if prop.Description == "" {
				t.Errorf("%s: %s has no description: give its configuration field a doc comment, or describe it in descriptions.go", r, p)
			}
		}
	}
	for ty, typ := range spec.Types {
		for p, prop := range typ.Properties {
			n++
			if prop.Description == "" {
				t.Errorf("%s: %s has no description: give its configuration field a doc comment, or describe it in descriptions.go", ty, p)
			}
		}
	}
	if n < 60 {
		t.Errorf("%d arguments in the schema, want every one (60 or more)", n)
	}
}
