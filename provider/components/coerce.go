package components

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi/sdk/v3/go/property"
)

// Pulumi YAML passes a configuration value that looks like a number as a number, even when the configuration is
// declared `type: string` and the stack file quotes it: a 12-digit account ID reaches the provider as 123456789012
// (or, with a leading zero, as 12345678901), and infer refuses it ("expected a string, got a number"). The
// provider takes what a YAML user naturally writes: before infer decodes a component's inputs, every number given
// where the component's arguments (their Go types) want a string becomes that string; validation then refuses
// what is still not valid, naming the argument.

// withStringInputs wraps prov's Construct so that numbers given for string arguments become strings, by the
// argument types of each component (by its type token).
func withStringInputs(prov p.Provider, args map[string]reflect.Type) p.Provider {
	construct := prov.Construct
	prov.Construct = func(ctx context.Context, req p.ConstructRequest) (p.ConstructResponse, error) {
		if t, ok := args[string(req.Urn.Type())]; ok {
			req.Inputs = coerceMap(req.Inputs, t)
		}
		return construct(ctx, req)
	}
	return prov
}

// coerceMap coerces the inputs of the struct type t (by its fields' pulumi tags).
func coerceMap(m property.Map, t reflect.Type) property.Map {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return m
	}
	out := m
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("pulumi"), ",")
		if name == "" {
			continue
		}
		if v, ok := m.GetOk(name); ok {
			out = out.Set(name, coerce(v, f.Type, isAccountID(name)))
		}
	}
	return out
}

// coerce is v as the Go type t takes it: a number for a string becomes its decimal text, an account ID's
// zero-padded to AWS's 12 digits (YAML dropped the leading zeros); arrays, maps and objects are coerced element
// by element. Secrets, dependencies and unknowns are kept.
func coerce(v property.Value, t reflect.Type, accountID bool) property.Value {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String && v.IsNumber():
		return property.WithGoValue(v, numberText(v.AsNumber(), accountID))
	case t.Kind() == reflect.Slice && v.IsArray():
		elems := v.AsArray().AsSlice()
		for i, e := range elems {
			elems[i] = coerce(e, t.Elem(), accountID)
		}
		return property.WithGoValue(v, property.NewArray(elems))
	case t.Kind() == reflect.Map && v.IsMap():
		elems := v.AsMap().AsMap()
		for k, e := range elems {
			elems[k] = coerce(e, t.Elem(), false)
		}
		return property.WithGoValue(v, property.NewMap(elems))
	case t.Kind() == reflect.Struct && v.IsMap():
		return property.WithGoValue(v, coerceMap(v.AsMap(), t))
	}
	return v
}

// isAccountID says whether an argument holds AWS account IDs, by its name (hubAccountId, ...AccountIds).
func isAccountID(name string) bool {
	return strings.HasSuffix(name, "AccountId") || strings.HasSuffix(name, "AccountIds")
}

// numberText is f's text: an account ID's, a whole number below 10^12, as 12 digits; otherwise the shortest
// decimal form ("1.15"), which validation refuses where it is not valid.
func numberText(f float64, accountID bool) string {
	if accountID && f >= 0 && f < 1e12 && f == math.Trunc(f) {
		return fmt.Sprintf("%012d", int64(f))
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
