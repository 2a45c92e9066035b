package components

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/property"
)

// Every argument of the components is a plain value, known before the preview: the arguments are the program's
// stack configuration, which config.Load validates and the preflight checks (the cluster exists, the quotas hold,
// the account's concurrency, who may assume what) before anything is declared, and they decide names and policies.
// A value another resource of the same program computes is unknown at the first preview and cannot be checked, and
// the Go SDK cannot copy an output into a plain field ("expected destination type to implement pulumi.Input or
// pulumi.Output, got string", naming no field when it is nested). So the schema says so (every input property and
// every property of an input type is plain: a typed SDK refuses an output at compile time, as TypeScript's tsc
// does), and Construct refuses an output that reaches it anyway (Pulumi YAML, untyped Python), naming each field
// and the way out, before infer copies the inputs.

// withPlainArguments marks every argument plain in prov's schema, and refuses, naming them, the arguments given as
// outputs of other resources, unknown values or secrets.
func withPlainArguments(prov p.Provider) p.Provider {
	getSchema, construct := prov.GetSchema, prov.Construct
	prov.GetSchema = func(ctx context.Context, req p.GetSchemaRequest) (p.GetSchemaResponse, error) {
		resp, err := getSchema(ctx, req)
		if err != nil {
			return resp, err
		}
		resp.Schema, err = plainSchema(resp.Schema)
		return resp, err
	}
	prov.Construct = func(ctx context.Context, req p.ConstructRequest) (p.ConstructResponse, error) {
		if err := plainInputs(req.Urn.Type().Name().String(), req.Inputs); err != nil {
			return p.ConstructResponse{}, err
		}
		return construct(ctx, req)
	}
	return prov
}

// plainSchema is the schema s with every component's input properties, and every property of the package's
// object types (which only the components' inputs use), plain, through arrays and maps.
func plainSchema(s string) (string, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(s), &spec); err != nil {
		return "", fmt.Errorf("reading the schema: %w", err)
	}
	for _, r := range spec.Resources {
		if r.IsComponent {
			for k, prop := range r.InputProperties {
				plain(&prop.TypeSpec)
				r.InputProperties[k] = prop
			}
		}
	}
	for _, t := range spec.Types {
		if t.Type == "object" {
			for k, prop := range t.Properties {
				plain(&prop.TypeSpec)
				t.Properties[k] = prop
			}
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("writing the schema: %w", err)
	}
	return string(b), nil
}

// plain marks t plain, and its items' and additional properties' types.
func plain(t *schema.TypeSpec) {
	t.Plain = true
	for _, e := range []*schema.TypeSpec{t.Items, t.AdditionalProperties} {
		if e != nil {
			plain(e)
		}
	}
}

// plainInputs refuses the inputs of the component named component that are not plain values: each unknown (an
// output not yet computed, as at the first preview), each output of another resource (a value with
// dependencies), each secret, by its path.
func plainInputs(component string, inputs property.Map) error {
	var problems []string
	for k, v := range inputs.All {
		notPlain(k, v, &problems)
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("%s takes plain values only (they name its resources and decide its policies, and are checked "+
		"before anything is declared): %s. Give the value itself, or read it from the stack's configuration or from "+
		"another stack's outputs through configuration (docs/package.md, \"Plain values\")", component, strings.Join(problems, "; "))
}

// notPlain appends to problems why v, at path, or what it holds, is not a plain value.
func notPlain(path string, v property.Value, problems *[]string) {
	switch {
	case v.IsComputed():
		*problems = append(*problems, path+" is unknown until another resource is created (an output)")
		return
	case len(v.Dependencies()) > 0:
		*problems = append(*problems, path+" is an output of "+v.Dependencies()[0].Name()+" ("+string(v.Dependencies()[0].Type())+")")
		return
	case v.Secret():
		*problems = append(*problems, path+" is a secret (the component would write it to the state in plain text)")
		return
	case v.IsArray():
		for i, e := range v.AsArray().All {
			notPlain(fmt.Sprintf("%s[%d]", path, i), e, problems)
		}
	case v.IsMap():
		for k, e := range v.AsMap().All {
			notPlain(path+"."+k, e, problems)
		}
	}
}
