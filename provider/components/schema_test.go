package components_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blang/semver"
	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/integration"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/version"
)

var update = flag.Bool("update", false, "rewrite ../schema.json from the provider")

// schemaVersion is the version the golden schema is written at: a build without a release stamp's, which is
// what the Go language host builds (docs/package.md, "Versions"); a release build stamps its own, and the CLI
// replaces it with the tag it installed a git package at.
const schemaVersion = version.Dev

func server(t *testing.T, opts ...integration.ServerOption) integration.Server {
	t.Helper()
	prov, err := components.New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	s, err := integration.NewServer(t.Context(), components.Name, semver.MustParse(schemaVersion), append([]integration.ServerOption{integration.WithProvider(prov)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaText(t *testing.T) []byte {
	t.Helper()
	resp, err := server(t).GetSchema(p.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(resp.Schema), "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestSchemaIsGolden: the schema the provider serves is ../schema.json, the file reviewed in pull requests and
// the one the SDKs are generated from (make package).
func TestSchemaIsGolden(t *testing.T) {
	got := schemaText(t)
	golden := filepath.Join("..", "schema.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the provider's schema differs from %s: review the change, then rewrite it with go test ./components/ -run TestSchemaIsGolden -update", golden)
	}
}

// TestSchemaBindsAndIsDocumented: the schema binds with Pulumi's own schema package (what pulumi package add
// and the code generators read it with), and every component, input, output, type, property and enum value
// has a description.
func TestSchemaBindsAndIsDocumented(t *testing.T) {
	text := schemaText(t)
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		t.Fatal(err)
	}
	if _, diags, err := schema.BindSpec(spec, noPackages{}, schema.ValidationOptions{}); err != nil || diags.HasErrors() {
		t.Fatalf("the schema does not bind: %v %v", err, diags)
	}
	var undocumented []string
	props := func(where string, ps map[string]schema.PropertySpec) {
		for name, ps := range ps {
			if ps.Description == "" {
				undocumented = append(undocumented, where+"."+name)
			}
		}
	}
	for tok, r := range spec.Resources {
		if r.Description == "" {
			undocumented = append(undocumented, tok)
		}
		props(tok+" input", r.InputProperties)
		props(tok+" output", r.Properties)
	}
	for tok, ty := range spec.Types {
		props(tok, ty.Properties)
		for _, e := range ty.Enum {
			if e.Description == "" {
				undocumented = append(undocumented, fmt.Sprintf("%s value %v", tok, e.Value))
			}
		}
	}
	if len(undocumented) > 0 {
		sort.Strings(undocumented)
		t.Errorf("undocumented: %s", strings.Join(undocumented, ", "))
	}
	if len(spec.Resources) != 2 {
		t.Errorf("resources %v, want Bus and ClusterInterruption", slices.Sorted(maps.Keys(spec.Resources)))
	}
}

// TestSchemaEnumsAreTheConfiguration's: the enums are the values config validates, so neither can gain a value
// the other refuses; the kubeconfig is secret.
func TestSchemaEnumsAreTheConfigurations(t *testing.T) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaText(t), &spec); err != nil {
		t.Fatal(err)
	}
	enum := func(name string) []string {
		var out []string
		for _, e := range spec.Types[components.Name+":index:"+name].Enum {
			out = append(out, fmt.Sprint(e.Value))
		}
		return out
	}
	str := func(xs ...any) []string {
		var out []string
		for _, x := range xs {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	var modes, identities []any
	for _, m := range config.Modes {
		modes = append(modes, m)
	}
	for _, i := range config.Identities {
		identities = append(identities, i)
	}
	for name, want := range map[string][]string{
		"Mode": str(modes...), "Identity": str(identities...), "CallAs": {config.CallAsDelegatedAdmin, config.CallAsSelf},
	} {
		if got := enum(name); !slices.Equal(got, want) {
			t.Errorf("enum %s = %v, want the configuration's %v", name, got, want)
		}
	}
	if !spec.Resources[components.Name+":index:ClusterInterruption"].Properties["kubeconfig"].Secret {
		t.Error("ClusterInterruption's kubeconfig is not marked secret")
	}
}

// noPackages loads no other package: the schema refers to none, and binding fails if it starts to.
type noPackages struct{}

func (noPackages) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", pkg)
}

func (noPackages) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s: it should refer to none", d.Name)
}
