package components_test

import (
	"encoding/json"
	"os"
	"testing"
)

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
