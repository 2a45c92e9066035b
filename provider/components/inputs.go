package components

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	presource "github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/property"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/unknownmonitor"
)

// The components take outputs: an argument may be another resource's output (a cluster pulumi-eks creates in the
// same program), another stack's (a StackReference to the hub), or a secret. Only the arguments that decide which
// resources are declared, or are checked against quotas and limits before anything is (docs/package.md, "Plain
// values"), are plain: a mode or other enum, a switch, a number, and the fields tagged `plain:"why"` (an
// argument with one resource per element, a choice made on the value). The schema marks those plain, so a typed
// SDK refuses an output for them at compile time; everything else is an input.
//
// The arguments decide names and policies, and are checked (the cluster exists and is ACTIVE, its Kubernetes
// version is one Karpenter runs on, the quotas hold) on their values, by the same code as the program
// (infra.DeclareJoin, infra.DeclareBus). So the provider resolves them first: a known output or secret is taken
// as its value; an input unknown at a preview (an output of a resource not created yet) is stood for (standIns),
// and the component declares the update's children, its checks of the unknown waiting for the update, where the
// engine hands it the value. What the values lost, a monitor between the component and the engine gives back to
// what is made of them (unknownmonitor): unknown, secret, dependencies. A plain argument must be known at the
// preview: refused, naming it.

// resolution is what resolving a component's arguments found.
type resolution struct {
	// deferred are the inputs unknown at this preview, by path; unknown the same, as the steps to them.
	deferred []string
	unknown  []argPath
	// fromResources are the inputs known at this preview that come from a resource of the program (not a
	// StackReference), "<path> (from <resource>)": the resource may be one this update creates, which the checks
	// cannot find yet; fromValues are their values (fromResource: a lookup of one that finds nothing at a preview
	// waits for the update).
	fromResources, fromValues []string
	// secrets are the values of the secret arguments, which no message of the component shows; allSecret: one of
	// them may reach the children other than whole (verbatim), so every value of theirs is secret.
	secrets   []string
	allSecret bool
	// marks are this preview's stand-ins' marks (zero without a stand-in): what holds one is unknown.
	marks standin.Marks
	// dependencies are, for each value of an input that has any, the URNs of the resources it comes from.
	dependencies map[string][]string
}

// argPath is where an argument's value is: field names (their pulumi tags), list indexes, map keys.
type argPath []any

// fromResource says whether value, a known argument's, comes from a resource of the program.
func (r resolution) fromResource(value string) bool {
	return value != "" && slices.Contains(r.fromValues, value)
}

type resolutionKey struct{}

// resolutionOf is the resolution of the component being constructed in ctx (zero when none was made).
func resolutionOf(ctx context.Context) resolution {
	r, _ := ctx.Value(resolutionKey{}).(resolution)
	return r
}

// withInputs marks plain in prov's schema exactly the arguments that decide resources (args, each component's
// argument type by its token), and resolves each component's inputs before infer copies them: refused, naming
// them, when a plain argument is unknown; the resolution handed to the constructor otherwise.
func withInputs(prov p.Provider, args map[string]reflect.Type) p.Provider {
	getSchema, construct := prov.GetSchema, prov.Construct
	prov.GetSchema = func(ctx context.Context, req p.GetSchemaRequest) (p.GetSchemaResponse, error) {
		resp, err := getSchema(ctx, req)
		if err != nil {
			return resp, err
		}
		resp.Schema, err = plainSchema(resp.Schema, args)
		return resp, err
	}
	prov.Construct = func(ctx context.Context, req p.ConstructRequest) (p.ConstructResponse, error) {
		t, ok := args[string(req.Urn.Type())]
		if !ok {
			return construct(ctx, req)
		}
		var r resolver
		req.Inputs = r.object("", nil, req.Inputs, t, within{})
		if len(r.refused) > 0 {
			slices.Sort(r.refused)
			return p.ConstructResponse{}, fmt.Errorf("%s: %s. These arguments decide which resources are declared, or are checked "+
				"against AWS's quotas and limits before anything is: give a value known at the preview (docs/package.md, \"Plain values\")",
				req.Urn.Type().Name(), strings.Join(r.refused, "; "))
		}
		var deferred []string
		for _, at := range r.unknown {
			deferred = append(deferred, pathText(at))
		}
		slices.Sort(deferred)
		slices.Sort(r.fromResources)
		res := resolution{deferred: deferred, unknown: r.unknown, fromResources: r.fromResources, fromValues: r.fromValues,
			secrets: r.secrets, allSecret: r.allSecret, dependencies: r.dependencies}
		if req.DryRun && (len(r.unknown) > 0 || len(r.fromResources) > 0) {
			// Stand-ins may take the place of values this preview does not know (standIns: the nth unknown's marks
			// are marks.Nth(n)), each with the dependencies of the input it stands for.
			res.marks = newMarks()
			for i, at := range r.unknown {
				if len(r.unknownDeps[i]) == 0 {
					continue
				}
				if res.dependencies == nil {
					res.dependencies = map[string][]string{}
				}
				arg := argumentOf(pathText(at))
				for _, whole := range []bool{false, true} {
					if k := markOf(arg, res.marks.Nth(i), whole); k != "" {
						res.dependencies[k] = append(res.dependencies[k], r.unknownDeps[i]...)
					}
				}
			}
		}
		in := unknownmonitor.Inputs{Marks: res.marks, Secrets: res.secrets, AllSecret: res.allSecret, Dependencies: res.dependencies}
		if in.Marks != (standin.Marks{}) || len(in.Secrets) > 0 || in.AllSecret || len(in.Dependencies) > 0 {
			// The component's code takes values: a monitor between it and the engine gives each value of its children
			// what Pulumi carries with the inputs it is made from (unknown, secret, dependencies).
			mon, err := unknownmonitor.Serve(req.MonitorEndpoint, in)
			if err != nil {
				return p.ConstructResponse{}, err
			}
			defer mon.Stop()
			req.MonitorEndpoint = mon.Addr
		}
		resp, err := construct(context.WithValue(ctx, resolutionKey{}, res), req)
		if err == nil {
			resp.State, err = derivedState(resp.State, in)
		}
		return resp, err
	}
	return prov
}

// newMarks draws a preview's marks (tests fix them).
var newMarks = standin.New

// verbatim are the arguments whose values reach the children whole, never cut down or hashed into a name, nor of
// any type: a secret one makes secret only what holds it (unknownmonitor.Inputs.Secrets).
var verbatim = map[string]bool{
	"hubAccountId": true, "oidcProviderArn": true, "heartbeatAlarmActions": true, "tags": true, "alarms.topicArn": true,
	"accounts.alarmTopicArn": true, "accounts.deployRoleArn": true, "redrive.principals": true, "organization.id": true,
	"organization.memberOUs": true, "router.ownerTagKeys": true,
}

// isPlain says whether the argument f is plain: an enum (a named string type), a switch, a number, or tagged
// `plain:"why"`; or an object holding one (so that a typed SDK can reach it).
func isPlain(f reflect.StructField) bool {
	if _, ok := f.Tag.Lookup("plain"); ok {
		return true
	}
	t := elemType(f.Type)
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	case reflect.String:
		return t != reflect.TypeFor[string]()
	case reflect.Struct:
		for i := range t.NumField() {
			if argName(t.Field(i)) != "" && isPlain(t.Field(i)) {
				return true
			}
		}
	}
	return false
}

// elemType is t without its pointers.
func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// argName is the argument's name, its pulumi tag's ("" for a field that is none).
func argName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("pulumi"), ",")
	return name
}

// resolver resolves a component's inputs to plain values, recording what it found.
type resolver struct {
	refused, fromResources, fromValues, secrets []string
	unknown                                     []argPath
	allSecret                                   bool
	dependencies                                map[string][]string
	// unknownDeps are the dependencies of each of unknown.
	unknownDeps [][]string
}

// within is what a value inherits from the arguments holding it.
type within struct {
	// plain: a plain argument (isPlain), which may not be a secret: it decides or names resources, whose names (their
	// URNs) are never encrypted.
	plain, secret bool
	// from is the resource of the program the value comes from ("" for none, or a StackReference).
	from string
	// deps are the URNs of the resources the value comes from.
	deps []string
	// arg is the argument the value is of, by its fields' names (no list index, no map key): tags, karpenter.values.
	arg string
}

// object resolves m, the inputs of the struct type t at steps, by its fields' arguments.
func (r *resolver) object(prefix string, steps argPath, m property.Map, t reflect.Type, in within) property.Map {
	t = elemType(t)
	if t.Kind() != reflect.Struct {
		return m
	}
	out := m
	for i := range t.NumField() {
		f := t.Field(i)
		name := argName(f)
		if v, ok := m.GetOk(name); ok && name != "" {
			out = out.Set(name, r.value(prefix+name, append(slices.Clip(steps), name), v, f.Type,
				within{plain: isPlain(f), secret: in.secret, from: in.from, deps: in.deps, arg: strings.TrimPrefix(in.arg+"."+name, ".")}))
		}
	}
	return out
}

// value is v, the argument at path of Go type t, as a plain value: a known output or secret as its value, an
// unknown as t's zero value (deferred, or refused when plain).
func (r *resolver) value(path string, steps argPath, v property.Value, t reflect.Type, in within) property.Value {
	t = elemType(t)
	plain := in.plain
	if v.IsComputed() {
		if plain {
			r.refused = append(r.refused, path+" is unknown at the preview (an output of a resource not created yet)")
		} else {
			r.unknown = append(r.unknown, steps)
			deps := slices.Clone(in.deps)
			for _, d := range v.Dependencies() {
				deps = append(deps, string(d))
			}
			r.unknownDeps = append(r.unknownDeps, deps)
		}
		return zeroOf(t)
	}
	if v.Secret() && !in.secret {
		if plain {
			r.refused = append(r.refused, path+" is a secret, and it decides or names the component's resources, whose "+
				"names (URNs) are never encrypted")
		}
		in.secret = true
		if !verbatim[in.arg] {
			// A secret that names resources (cut down and hashed when long) or sits in a value of any type: what is
			// made of it may not hold it whole, so every value of the component's children is secret.
			r.allSecret = true
		}
	}
	for _, d := range v.Dependencies() {
		if !slices.Contains(in.deps, string(d)) {
			in.deps = append(slices.Clip(in.deps), string(d))
		}
		if d.Type() != "pulumi:pulumi:StackReference" && in.from == "" {
			in.from = fmt.Sprintf("%s (from %s, %s)", path, d.Name(), d.Type())
			r.fromResources = append(r.fromResources, in.from)
		}
	}
	v = v.WithSecret(false).WithDependencies(nil)
	if in.secret && !v.IsString() && !v.IsArray() && !v.IsMap() {
		r.allSecret = true // a number or a switch: no text to find it by
	}
	if v.IsString() {
		if in.secret && v.AsString() != "" {
			r.secrets = append(r.secrets, v.AsString())
		}
		if in.from != "" {
			r.fromValues = append(r.fromValues, v.AsString())
		}
		if len(in.deps) > 0 && v.AsString() != "" {
			if r.dependencies == nil {
				r.dependencies = map[string][]string{}
			}
			r.dependencies[v.AsString()] = append(r.dependencies[v.AsString()], in.deps...)
		}
	}
	switch {
	case v.IsArray(): // of the slice's elements, or within an argument of any value (karpenter.values)
		elem := t
		if t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		elems := v.AsArray().AsSlice()
		for i, e := range elems {
			elems[i] = r.value(fmt.Sprintf("%s[%d]", path, i), append(slices.Clip(steps), i), e, elem, in)
		}
		return property.New(elems)
	case v.IsMap() && t.Kind() == reflect.Map:
		elems := v.AsMap().AsMap()
		for k, e := range elems {
			if in.secret && k != "" {
				// A secret map's keys are its secret too (a tag's key names a customer as its value may): what holds
				// one is secret, the map of a child's tags as a whole (unknownmonitor.Secret).
				r.secrets = append(r.secrets, k)
			}
			in.plain = plain && elemType(t.Elem()).Kind() != reflect.Struct
			elems[k] = r.value(path+"."+k, append(slices.Clip(steps), k), e, t.Elem(), in)
		}
		return property.New(elems)
	case v.IsMap() && t.Kind() == reflect.Struct:
		return property.New(r.object(path+".", steps, v.AsMap(), t, in))
	case v.IsMap(): // within an argument of any value
		elems := v.AsMap().AsMap()
		for k, e := range elems {
			elems[k] = r.value(path+"."+k, append(slices.Clip(steps), k), e, t, in)
		}
		return property.New(elems)
	}
	return v
}

// zeroOf is the value standing for an unknown of type t: its zero value.
func zeroOf(t reflect.Type) property.Value {
	switch elemType(t).Kind() {
	case reflect.String:
		return property.New("")
	case reflect.Bool:
		return property.New(false)
	case reflect.Int, reflect.Int64, reflect.Float64:
		return property.New(0.0)
	case reflect.Slice:
		return property.New([]property.Value{})
	case reflect.Map, reflect.Struct:
		return property.New(map[string]property.Value{})
	}
	return property.Value{}
}

// plainSchema is the schema s with exactly the plain arguments (isPlain) of each component (args, by token)
// marked plain, and the others not, through arrays and maps and the object types they hold.
func plainSchema(s string, args map[string]reflect.Type) (string, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(s), &spec); err != nil {
		return "", fmt.Errorf("reading the schema: %w", err)
	}
	var mark func(props map[string]schema.PropertySpec, t reflect.Type)
	mark = func(props map[string]schema.PropertySpec, t reflect.Type) {
		t = elemType(t)
		for i := range t.NumField() {
			f := t.Field(i)
			prop, ok := props[argName(f)]
			if !ok {
				continue
			}
			setPlain(&prop.TypeSpec, isPlain(f))
			props[argName(f)] = prop
			if tok, elem := objectType(prop.TypeSpec, f.Type); tok != "" {
				if ty, ok := spec.Types[tok]; ok {
					mark(ty.Properties, elem)
				}
			}
		}
	}
	for tok, t := range args {
		if r, ok := spec.Resources[tok]; ok && r.IsComponent {
			mark(r.InputProperties, t)
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("writing the schema: %w", err)
	}
	return string(b), nil
}

// objectType is the token of the object type ts refers to (itself, or as the items or values it holds), and its Go
// type, from t; "" when none.
func objectType(ts schema.TypeSpec, t reflect.Type) (string, reflect.Type) {
	t = elemType(t)
	switch {
	case ts.Ref != "" && t.Kind() == reflect.Struct:
		return strings.TrimPrefix(ts.Ref, "#/types/"), t
	case ts.Items != nil && t.Kind() == reflect.Slice:
		return objectType(*ts.Items, t.Elem())
	case ts.AdditionalProperties != nil && t.Kind() == reflect.Map:
		return objectType(*ts.AdditionalProperties, t.Elem())
	}
	return "", nil
}

// setPlain marks t plain or not (infer marks every argument of a Go type other than an Input plain), and its items'
// and additional properties' types.
func setPlain(t *schema.TypeSpec, plain bool) {
	t.Plain = plain
	for _, e := range []*schema.TypeSpec{t.Items, t.AdditionalProperties} {
		if e != nil {
			setPlain(e, plain)
		}
	}
}

// derivedState is a component's outputs (state) as the monitor gives its children's values (unknownmonitor): what
// holds a mark unknown, what holds a secret input's value secret.
func derivedState(state property.Map, in unknownmonitor.Inputs) (property.Map, error) {
	if in.Marks == (standin.Marks{}) && len(in.Secrets) == 0 && !in.AllSecret {
		return state, nil
	}
	opts := plugin.MarshalOptions{KeepUnknowns: true, KeepSecrets: true, KeepResources: true, KeepOutputValues: true}
	s, err := plugin.MarshalProperties(presource.ToResourcePropertyMap(state), opts)
	if err != nil {
		return state, fmt.Errorf("reading the component's outputs: %w", err)
	}
	out, err := plugin.UnmarshalProperties(in.Object(s), opts)
	if err != nil {
		return state, fmt.Errorf("writing the component's outputs: %w", err)
	}
	return presource.FromResourcePropertyMap(out), nil
}
