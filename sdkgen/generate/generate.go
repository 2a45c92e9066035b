// Package generate writes a package's SDKs with Pulumi's code generators.
package generate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Languages are the SDKs generated, by directory name.
var Languages = []string{"nodejs", "python", "go"}

// tool is what the generated files say made them.
const tool = "karpenter-interruption-bus sdkgen"

// Options are how the SDKs are generated.
type Options struct {
	// Version, when set, is the SDKs' version instead of the schema's.
	Version string
	// Publish generates the TypeScript SDK as a registry publishes it: compiled before it is packed, so that it has no
	// postinstall, and TypeScript and Node's types only among its devDependencies. Without it, the SDK is generated
	// as pulumi package add generates one in a user's project (local: compiled by its postinstall).
	Publish bool
}

// FromFile generates every language's SDK from the schema at path into out/<language>, replacing what is there.
func FromFile(path, out string, opts Options) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	files, err := Generate(text, opts)
	if err != nil {
		return err
	}
	for _, lang := range Languages {
		if err := os.RemoveAll(filepath.Join(out, lang)); err != nil {
			return err
		}
	}
	for name, body := range files {
		dst := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, body, 0o644); err != nil {
			return err
		}
	}
	// The Go SDK written under a module's tree (build/sdk in the repository) is a module of its own, so that the
	// tree's go test ./... does not take it for one of its packages; the committed copy (sdk/go/kib) is the root
	// module's.
	return os.WriteFile(filepath.Join(out, "go", "go.mod"), []byte("module "+goModule+"\n\ngo 1.26\n"), 0o644)
}

// goModule is the module the Go SDK's import path (the schema's importBasePath) lies in, written as its own.
const goModule = "github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdk/go"

// Versioned is the schema text with its version set to version (a leading v dropped), every other field as it is:
// the schema a release attaches.
func Versioned(schemaText []byte, version string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(schemaText, &fields); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	v, err := json.Marshal(strings.TrimPrefix(version, "v"))
	if err != nil {
		return nil, err
	}
	fields["version"] = v
	out, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Generate returns every language's SDK for the schema text, by path "<language>/<file>".
func Generate(schemaText []byte, opts Options) (map[string][]byte, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText, &spec); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	if opts.Version != "" {
		spec.Version = strings.TrimPrefix(opts.Version, "v")
	}
	if err := goOptions(&spec); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, lang := range Languages {
		// Each generator adds its language's info to the package: bind it afresh for each.
		pkg, err := schema.ImportSpec(spec, map[string]schema.Language{"nodejs": nodejs.Importer, "python": python.Importer, "go": gogen.Importer},
			noPackages{}, schema.ValidationOptions{})
		if err != nil {
			return nil, fmt.Errorf("binding the schema: %w", err)
		}
		var files map[string][]byte
		switch lang {
		case "nodejs":
			files, err = nodejs.GeneratePackage(tool, pkg, nil, nil, !opts.Publish, nil)
		case "python":
			files, err = python.GeneratePackage(tool, pkg, nil, nil)
		case "go":
			files, err = gogen.GeneratePackage(tool, pkg, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("generating the %s SDK: %w", lang, err)
		}
		for name, body := range files {
			out[lang+"/"+name] = body
		}
	}
	return out, nil
}

// goOptions sets the Go generator's options the schema does not: input types for every object type, as a plain map
// of objects (Bus.accounts) takes its objects' input types, which the generator otherwise makes only for the types
// used as inputs.
func goOptions(spec *schema.PackageSpec) error {
	info := map[string]any{}
	if raw, ok := spec.Language["go"]; ok {
		if err := json.Unmarshal(raw, &info); err != nil {
			return fmt.Errorf("reading the schema's Go options: %w", err)
		}
	}
	info["generateExtraInputTypes"] = true
	raw, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("writing the schema's Go options: %w", err)
	}
	if spec.Language == nil {
		spec.Language = map[string]schema.RawMessage{}
	}
	spec.Language["go"] = raw
	return nil
}

// noPackages loads no other package: the schema refers to none, and binding fails if it starts to.
type noPackages struct{}

func (noPackages) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", pkg)
}

func (noPackages) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", d.Name)
}
