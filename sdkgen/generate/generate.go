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
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Languages are the SDKs generated, by directory name.
var Languages = []string{"nodejs", "python"}

// tool is what the generated files say made them.
const tool = "karpenter-interruption-bus sdkgen"

// FromFile generates every language's SDK from the schema at path into out/<language>, replacing what is there;
// version, when set, is the SDKs' version instead of the schema's.
func FromFile(path, out, version string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	files, err := Generate(text, version)
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
	return nil
}

// Generate returns every language's SDK for the schema text, by path "<language>/<file>".
func Generate(schemaText []byte, version string) (map[string][]byte, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText, &spec); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	if version != "" {
		spec.Version = strings.TrimPrefix(version, "v")
	}
	out := map[string][]byte{}
	for _, lang := range Languages {
		// Each generator adds its language's info to the package: bind it afresh for each.
		pkg, err := schema.ImportSpec(spec, map[string]schema.Language{"nodejs": nodejs.Importer, "python": python.Importer}, noPackages{}, schema.ValidationOptions{})
		if err != nil {
			return nil, fmt.Errorf("binding the schema: %w", err)
		}
		var files map[string][]byte
		switch lang {
		case "nodejs":
			files, err = nodejs.GeneratePackage(tool, pkg, nil, nil, true, nil)
		case "python":
			files, err = python.GeneratePackage(tool, pkg, nil, nil)
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

// noPackages loads no other package: the schema refers to none, and binding fails if it starts to.
type noPackages struct{}

func (noPackages) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", pkg)
}

func (noPackages) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", d.Name)
}
