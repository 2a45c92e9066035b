// Package providerrules holds what the providers the program declares its resources with check of their inputs
// before AWS is asked: pulumi-aws v6.83.2 runs the schema validations of the Terraform provider it bundles
// (terraform-provider-aws v5.100.0) in its Check, at every preview; pulumi-eks v2 checks its components' arguments
// when it constructs them. Each rule is transcribed from the provider's source, citing its file and schema field,
// and fails with the provider's own message, so that the mocks (every test of the program and the offline render)
// and the engine tests' stand-in providers refuse what the real providers refuse.
//
// A rule that says the provider validates nothing is a rule too: Uncovered names every property the program sets
// that has none, so that a property added without reading its provider's source fails a test.
package providerrules

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Rule is what a provider checks of one property of a resource type.
type Rule struct {
	// Property is the property's path as Pulumi names it: "maxMessageSize", "scalingConfig.maximumConcurrency";
	// "[]" stands for every element of a list ("rules[].bucketKeyEnabled"), "*" for every value of a map.
	Property string
	// Attr is the attribute's path as the provider's messages name it ("max_message_size",
	// "scaling_config.0.maximum_concurrency"); "#" stands for the element's index of the Property's "[]".
	Attr string
	// Source cites the rule: the provider's file and schema field, and what it says ("internal/service/sqs/queue.go,
	// max_message_size: validation.IntBetween(1024, 262144)").
	Source string
	// Check returns the provider's message for each problem of the value v of attr (nil when it has none); in holds
	// the resource's other inputs, for the rules that read them (ConflictsWith). A nil Check: the provider
	// validates nothing of this property (Source says so, and where).
	Check Validator
}

// Validator is one of the provider's validations of a value.
type Validator func(attr string, v resource.PropertyValue, in Inputs) []string

// Inputs are a resource's inputs, as a rule reads its siblings.
type Inputs struct{ m resource.PropertyMap }

// Set reports whether the property at path (Pulumi's name, dotted) has a value the provider takes as set: neither
// null nor, as Terraform reads a configuration, an empty string, list or map, nor false or 0 where Terraform's SDK
// takes the zero value for unset (GetOk).
func (in Inputs) Set(path string) bool {
	v, ok := in.get(path)
	if !ok {
		return false
	}
	switch {
	case v.IsComputed() || v.IsOutput() && !v.OutputValue().Known:
		return true // unknown at a preview: Terraform's SDK checks conflicts only on known values, but an unknown is set
	case v.IsNull():
		return false
	case v.IsString():
		return v.StringValue() != ""
	case v.IsArray():
		return len(v.ArrayValue()) > 0
	case v.IsObject():
		return len(v.ObjectValue()) > 0
	case v.IsBool():
		return v.BoolValue()
	case v.IsNumber():
		return v.NumberValue() != 0
	}
	return true
}

func (in Inputs) get(path string) (resource.PropertyValue, bool) {
	cur := resource.NewObjectProperty(in.m)
	for _, k := range strings.Split(path, ".") {
		cur = plain(cur)
		if !cur.IsObject() {
			return resource.PropertyValue{}, false
		}
		next, ok := cur.ObjectValue()[resource.PropertyKey(k)]
		if !ok {
			return resource.PropertyValue{}, false
		}
		cur = next
	}
	return plain(cur), true
}

// plain is v without its secret's wrapping, and a known output's value.
func plain(v resource.PropertyValue) resource.PropertyValue {
	for {
		switch {
		case v.IsSecret():
			v = v.SecretValue().Element
		case v.IsOutput() && v.OutputValue().Known:
			v = v.OutputValue().Element
		default:
			return v
		}
	}
}

// known reports whether v is a value a check can read: not unknown at a preview.
func known(v resource.PropertyValue) bool {
	return !v.IsComputed() && (!v.IsOutput() || v.OutputValue().Known)
}

// Failure is one refusal: the property (its path as Pulumi names it, with the element's index) and the provider's
// message.
type Failure struct {
	Property string
	Reason   string
}

func (f Failure) String() string { return f.Property + ": " + f.Reason }

// Check applies every rule of typ to inputs, in the order of the rules, and returns what the provider would refuse.
// A type without rules is not checked (Uncovered says so).
func Check(typ string, inputs resource.PropertyMap) []Failure {
	var out []Failure
	in := Inputs{inputs}
	for _, r := range Rules[typ] {
		if r.Check == nil {
			continue
		}
		for _, at := range expand(inputs, r.Property, r.Attr) {
			if !known(at.value) || at.value.IsNull() {
				continue
			}
			for _, reason := range r.Check(at.attr, at.value, in) {
				out = append(out, Failure{Property: at.path, Reason: reason})
			}
		}
	}
	return out
}

type located struct {
	path, attr string
	value      resource.PropertyValue
}

// expand finds the values at a rule's property path: one per element where the path says "[]", one per entry where
// it says "*".
func expand(inputs resource.PropertyMap, property, attr string) []located {
	var out []located
	var walk func(v resource.PropertyValue, rest []string, path, attr string)
	walk = func(v resource.PropertyValue, rest []string, path, attr string) {
		v = plain(v)
		if len(rest) == 0 {
			out = append(out, located{path: path, attr: attr, value: v})
			return
		}
		seg := rest[0]
		switch {
		case seg == "*":
			if !v.IsObject() {
				return
			}
			m := v.ObjectValue()
			for _, k := range m.StableKeys() {
				walk(m[k], rest[1:], path+"."+string(k), attr)
			}
		case strings.HasSuffix(seg, "[]"):
			if !v.IsObject() {
				return
			}
			elem, ok := v.ObjectValue()[resource.PropertyKey(strings.TrimSuffix(seg, "[]"))]
			if !ok {
				return
			}
			elem = plain(elem)
			if !elem.IsArray() {
				return
			}
			for i, e := range elem.ArrayValue() {
				a := strings.Replace(attr, "#", fmt.Sprint(i), 1)
				walk(e, rest[1:], join(path, fmt.Sprintf("%s[%d]", strings.TrimSuffix(seg, "[]"), i)), a)
			}
		default:
			if !v.IsObject() {
				return
			}
			next, ok := v.ObjectValue()[resource.PropertyKey(seg)]
			if !ok {
				return
			}
			walk(next, rest[1:], join(path, seg), attr)
		}
	}
	walk(resource.NewObjectProperty(inputs), strings.Split(property, "."), "", attr)
	return out
}

func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// Uncovered returns the paths of the properties inputs sets that no rule of typ names (in Pulumi's form, lists as
// "[]" and map entries as "*"), sorted; every path of a type without rules.
func Uncovered(typ string, inputs resource.PropertyMap) []string {
	covered := map[string]bool{}
	for _, r := range Rules[typ] {
		covered[r.Property] = true
	}
	var out []string
	for _, p := range Paths(inputs) {
		if !coveredBy(covered, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// coveredBy reports whether p, or a property holding it (an object, a list or a map validated whole), has a rule.
func coveredBy(covered map[string]bool, p string) bool {
	for {
		if covered[p] {
			return true
		}
		if strings.HasSuffix(p, "[]") { // a list's elements, covered by the list's rule
			p = strings.TrimSuffix(p, "[]")
			continue
		}
		i := strings.LastIndex(p, ".")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// Paths returns the path of every leaf inputs sets: scalars, and objects and lists set empty; lists as "[]", the
// entries of a map named "tags" (or ending in "Tags") as "*" (their keys are the user's, not the schema's).
func Paths(inputs resource.PropertyMap) []string {
	var out []string
	var walk func(v resource.PropertyValue, path string, mapLike bool)
	walk = func(v resource.PropertyValue, path string, mapLike bool) {
		v = plain(v)
		switch {
		case v.IsObject() && len(v.ObjectValue()) > 0:
			for _, k := range v.ObjectValue().StableKeys() {
				if mapLike {
					walk(v.ObjectValue()[k], path+".*", false)
					continue
				}
				walk(v.ObjectValue()[k], join(path, string(k)), isMap(string(k)))
			}
		case v.IsArray() && len(v.ArrayValue()) > 0:
			for _, e := range v.ArrayValue() {
				walk(e, path+"[]", false)
			}
		case path != "": // a resource with no inputs sets nothing
			out = append(out, path)
		}
	}
	walk(resource.NewObjectProperty(inputs), "", false)
	slices.Sort(out)
	return slices.Compact(out)
}

// isMap reports whether a property named k is a map whose keys are the user's (tags, and string maps the program
// sets: a function's environment variables, a stack set's parameters), not an object of the schema.
func isMap(k string) bool {
	return k == "tags" || k == "tagsAll" || strings.HasSuffix(k, "Tags") || k == "variables" || k == "parameters" || k == "labels"
}

// Checked reports whether typ is a type of a provider whose rules this package holds: pulumi-aws's resources and
// its provider, and pulumi-eks's components.
func Checked(typ string) bool {
	return strings.HasPrefix(typ, "aws:") || strings.HasPrefix(typ, "eks:") || typ == "pulumi:providers:aws"
}

// Problem is the error the engine reports for a resource whose provider refused its inputs, word for word as the
// Pulumi CLI prints a refusal of pulumi-aws's Check ("<type> resource '<name>' has a problem: <the provider's
// message>. Examine values at '<name>.<property>'."): pulumi-terraform-bridge's Check failures name the property
// in the reason, not in the failure's property (pkg/tfbridge/provider.go).
func Problem(typ, name string, f Failure) string {
	return fmt.Sprintf("%s resource '%s' has a problem: %s", typ, name, Reason(name, f))
}

// Reason is a failure's reason as pulumi-terraform-bridge reports it in Check's failures.
func Reason(name string, f Failure) string {
	return fmt.Sprintf("%s. Examine values at '%s.%s'.", f.Reason, name, f.Property)
}

// Refuse returns what the provider of typ refuses of a resource named name with inputs, and, for a type of a provider
// whose rules this package holds, every property set that no rule covers: nil when there is nothing.
func Refuse(typ, name string, inputs resource.PropertyMap) error {
	if !Checked(typ) {
		return nil
	}
	var problems []string
	for _, f := range Check(typ, inputs) {
		problems = append(problems, Problem(typ, name, f))
	}
	for _, p := range Uncovered(typ, inputs) {
		problems = append(problems, fmt.Sprintf("%s resource '%s' sets %s, which no rule of offline/providerrules covers: "+
			"read what its provider checks of it (its file and schema field) and add a rule", typ, name, p))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\n"))
}
