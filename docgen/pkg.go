package docgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// packageSchema is the part of a Pulumi package schema the reference reads (provider/schema.json).
type packageSchema struct {
	Resources map[string]struct {
		Description     string                    `json:"description"`
		InputProperties map[string]schemaProperty `json:"inputProperties"`
		RequiredInputs  []string                  `json:"requiredInputs"`
		Properties      map[string]schemaProperty `json:"properties"`
	} `json:"resources"`
	Types map[string]struct {
		Description string                    `json:"description"`
		Properties  map[string]schemaProperty `json:"properties"`
		Required    []string                  `json:"required"`
		Enum        []struct {
			Value       any    `json:"value"`
			Description string `json:"description"`
		} `json:"enum"`
	} `json:"types"`
}

type schemaProperty struct {
	Type                 string          `json:"type"`
	Ref                  string          `json:"$ref"`
	Items                *schemaProperty `json:"items"`
	AdditionalProperties *schemaProperty `json:"additionalProperties"`
	Description          string          `json:"description"`
	Secret               bool            `json:"secret"`
	Plain                bool            `json:"plain"`
}

// typeName is how the reference writes a property's type: a type of the package by its name (linked), an array
// as T[], a map as map of T.
func (p schemaProperty) typeName() string {
	switch {
	case p.Ref == "pulumi.json#/Any":
		return "any"
	case p.Ref != "":
		name := p.Ref[strings.LastIndex(p.Ref, ":")+1:]
		return fmt.Sprintf("[%s](#%s)", name, strings.ToLower(name))
	case p.Type == "array" && p.Items != nil:
		return p.Items.typeName() + "[]"
	case p.Type == "object" && p.AdditionalProperties != nil:
		return "map of " + p.AdditionalProperties.typeName()
	}
	return p.Type
}

// PackageReference is the component package's reference, read off its schema: each component's inputs and
// outputs, then each type and enum.
func PackageReference() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	text, err := os.ReadFile(filepath.Join(root, "provider", "schema.json"))
	if err != nil {
		return "", err
	}
	var s packageSchema
	if err := json.Unmarshal(text, &s); err != nil {
		return "", fmt.Errorf("reading provider/schema.json: %w", err)
	}
	var b strings.Builder
	table := func(props map[string]schemaProperty, required []string, withRequired bool) {
		if withRequired {
			b.WriteString("| input | type | required | description |\n|---|---|---|---|\n")
		} else {
			b.WriteString("| output | type | description |\n|---|---|---|\n")
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p := props[name]
			desc := markdownText.Replace(p.Description)
			if p.Secret {
				desc += " **Secret.**"
			}
			if withRequired {
				req := ""
				if slices.Contains(required, name) {
					req = "yes"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, p.typeName(), req, desc)
			} else {
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, p.typeName(), desc)
			}
		}
	}
	for _, tok := range slices.Sorted(maps.Keys(s.Resources)) {
		r := s.Resources[tok]
		fmt.Fprintf(&b, "#### %s\n\n`%s`: %s\n\n", tok[strings.LastIndex(tok, ":")+1:], tok, markdownText.Replace(r.Description))
		table(r.InputProperties, r.RequiredInputs, true)
		b.WriteString("\n")
		table(r.Properties, nil, false)
		b.WriteString("\n")
	}
	b.WriteString("#### Types\n\n")
	for _, tok := range slices.Sorted(maps.Keys(s.Types)) {
		t := s.Types[tok]
		name := tok[strings.LastIndex(tok, ":")+1:]
		fmt.Fprintf(&b, "<a id=\"%s\"></a>**%s**", strings.ToLower(name), name)
		if len(t.Enum) > 0 {
			b.WriteString(" (enum)\n\n| value | meaning |\n|---|---|\n")
			for _, e := range t.Enum {
				fmt.Fprintf(&b, "| `%v` | %s |\n", e.Value, markdownText.Replace(e.Description))
			}
		} else {
			b.WriteString("\n\n")
			table(t.Properties, t.Required, true)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
