package outputs

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Set are the fields of v (a Stack or Cluster of interface values, such as Pulumi inputs) that are set, by their
// names, an embedded struct's as its own.
func Set(v any) map[string]any {
	out := map[string]any{}
	each(reflect.ValueOf(v), func(name string, f reflect.Value) {
		if !f.IsNil() {
			out[name] = f.Interface()
		}
	})
	return out
}

// Names are the outputs' names of v's type (a Stack, Cluster, or any part of them), in the order declared.
func Names(v any) []string {
	var out []string
	each(reflect.Zero(reflect.TypeOf(v)), func(name string, _ reflect.Value) { out = append(out, name) })
	return out
}

// Decode fills dst (a pointer to a Stack or any part of it, of Go values) with each of its outputs get returns,
// nil for one the stack does not have. It returns the names of those it does not have.
func Decode(get func(name string) (any, error), dst any) (missing []string, err error) {
	v := reflect.ValueOf(dst).Elem()
	each(v, func(name string, f reflect.Value) {
		if err != nil {
			return
		}
		var value any
		if value, err = get(name); err != nil {
			err = fmt.Errorf("reading output %s: %w", name, err)
			return
		}
		if value == nil {
			missing = append(missing, name)
			return
		}
		text, merr := json.Marshal(value)
		if merr == nil {
			merr = json.Unmarshal(text, f.Addr().Interface())
		}
		if merr != nil {
			err = fmt.Errorf("output %s: %w", name, merr)
		}
	})
	return missing, err
}

// Empty are the names of fields of s (a pointer to a Stack of Go values, or a part of it), each given by its
// address, that hold their zero value.
func Empty(s any, fields ...any) []string {
	return named(s, fields, func(f reflect.Value) bool { return f.IsZero() })
}

// Fields are the names of fields of s (a pointer to a Stack, or a part of it), each given by its address.
func Fields(s any, fields ...any) []string {
	return named(s, fields, func(reflect.Value) bool { return true })
}

// named are the names of the fields of s given by their addresses that keep holds.
func named(s any, fields []any, keep func(reflect.Value) bool) []string {
	var out []string
	each(reflect.ValueOf(s).Elem(), func(name string, f reflect.Value) {
		if slices.Contains(fields, f.Addr().Interface()) && keep(f) {
			out = append(out, name)
		}
	})
	return out
}

// Masked is what pulumi stack output --json prints for a secret output without --show-secrets.
const Masked = "[secret]"

// Parse fills dst (a pointer to a Stack of Go values, or a part of it) from r, a stack's outputs as pulumi stack
// output --json prints them: an output masked as a secret, or that the stack does not have, is left zero, and its
// name is in missing.
func Parse(r io.Reader, dst any) (missing []string, err error) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, err
	}
	return Decode(func(name string) (any, error) {
		text, ok := raw[name]
		if !ok {
			return nil, nil
		}
		var v any
		if err := json.Unmarshal(text, &v); err != nil {
			return nil, err
		}
		if v == Masked {
			return nil, nil
		}
		return v, nil
	}, dst)
}

// each calls do with every output field of the struct v, by its name, an embedded struct's in its place.
func each(v reflect.Value, do func(name string, f reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			each(v.Field(i), do)
			continue
		}
		if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); name != "" && name != "-" {
			do(name, v.Field(i))
		}
	}
}
